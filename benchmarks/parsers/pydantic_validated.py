"""A validating JSON parser (``--level validate``) that checks arguments with pydantic models.

Frameworks that let users declare tools as JSON Schema often turn each schema into a pydantic
model (``create_model``) and validate the model's arguments with it. This parser does that for
the subset of JSON Schema tool definitions use — types, ``enum``, ``anyOf``, nested objects,
arrays, string / number / array bounds, ``pattern``, ``format``, ``multipleOf``, ``uniqueItems``,
``additionalProperties: false`` — and falls back to jsonschema for a tool whose schema uses
anything else. Valid calls are returned as written.

The planted bug: the models validate in pydantic's default *lax* mode, which coerces ``"2"`` to
``2`` and ``"true"`` / ``"yes"`` to ``True``. Validation passes and the parser returns the call as
written, with the string where the schema requires a number — the model's type error goes
straight to the tool. The fix validates in strict mode.
"""

from __future__ import annotations

import functools
import json
import re
from fractions import Fraction
from typing import Annotated, Any, Literal, Union

from benchmarks.parsers import json_in_prose
from benchmarks.parsers._common import ParseError, canonical, check_calls, registry

BUG = {
    "verdict": "missed_anomaly",
    "level": "validate",
    "formats": ["json"],
    "description": "pydantic's lax mode accepts '2' for an integer and 'yes' for a boolean",
    "match": {"verdict": "missed_anomaly", "text": r"\(type\)"},
}
TRIGGER = ('{"name": "search_flights", "arguments": {"from_city": "Paris", "to_city": "Rome", '
           '"date": "2025-06-01", "passenger_count": "2"}}')

#: The JSON Schema keywords the model builder understands (annotations included).
SUPPORTED = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "anyOf", "minLength",
    "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minItems", "maxItems", "uniqueItems", "description", "title", "default", "examples",
})


class Unsupported(Exception):
    """The schema uses a keyword (or form) the model builder does not translate."""


def _fail(message: str):
    raise ValueError(message)


def _string_checks(schema: dict):
    from jsonschema import FormatChecker

    checker = FormatChecker()
    pattern = re.compile(schema["pattern"]) if "pattern" in schema else None

    def check(value: str) -> str:
        if len(value) < schema.get("minLength", 0):
            _fail("string too short")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            _fail("string too long")
        if pattern is not None and not pattern.search(value):
            _fail("string does not match the pattern")
        if "format" in schema and not checker.conforms(value, schema["format"]):
            _fail(f"not a valid {schema['format']}")
        return value

    return check


def _multiple(value: Any, step: Any) -> bool:
    """``multipleOf`` exactly as jsonschema decides it (floats by quotient, exact on overflow)."""
    if isinstance(step, float):
        quotient = value / step
        try:
            return int(quotient) == quotient
        except OverflowError:
            return (Fraction(value) / Fraction(step)).denominator == 1
    return not value % step


def _number_checks(schema: dict, integer: bool):
    for key in ("exclusiveMinimum", "exclusiveMaximum"):
        if isinstance(schema.get(key), bool):
            raise Unsupported("draft-4 boolean exclusive bounds")

    def check(value: Any) -> Any:
        if integer and isinstance(value, float) and not value.is_integer():
            _fail("not an integer")
        if "minimum" in schema and value < schema["minimum"]:
            _fail("below the minimum")
        if "maximum" in schema and value > schema["maximum"]:
            _fail("above the maximum")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            _fail("not above the exclusive minimum")
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            _fail("not below the exclusive maximum")
        step = schema.get("multipleOf")
        if step is not None and not _multiple(value, step):
            _fail("not a multiple")
        return value

    return check


def _array_checks(schema: dict):
    def check(value: list) -> list:
        if len(value) < schema.get("minItems", 0):
            _fail("too few items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            _fail("too many items")
        if schema.get("uniqueItems") and len({canonical(v) for v in value}) != len(value):
            _fail("items are not unique")
        return value

    return check


def _annotation(schema: Any, path: str) -> Any:
    from pydantic import AfterValidator

    if schema is True or schema == {}:
        return Any
    if not isinstance(schema, dict) or set(schema) - SUPPORTED:
        raise Unsupported(f"{path}: {sorted(set(schema) - SUPPORTED) if isinstance(schema, dict) else schema!r}")
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    if "anyOf" in schema:
        return Union[tuple(_annotation(s, f"{path}/anyOf") for s in schema["anyOf"])]
    kinds = schema.get("type")
    if kinds is None:
        return Any
    if isinstance(kinds, list):
        return Union[tuple(_annotation(dict(schema, type=k), path) for k in kinds)]
    if kinds == "string":
        return Annotated[str, AfterValidator(_string_checks(schema))]
    if kinds == "integer":
        return Annotated[Union[int, float], AfterValidator(_number_checks(schema, integer=True))]
    if kinds == "number":
        return Annotated[float, AfterValidator(_number_checks(schema, integer=False))]
    if kinds == "boolean":
        return bool
    if kinds == "null":
        return None
    if kinds == "array":
        items = _annotation(schema.get("items", True), f"{path}/items")
        return Annotated[list[items], AfterValidator(_array_checks(schema))]
    if kinds == "object":
        return _model(schema, path)
    raise Unsupported(f"{path}: type {kinds!r}")


def _model(schema: dict, path: str) -> Any:
    from pydantic import ConfigDict, Field, create_model

    extra = schema.get("additionalProperties", True)
    if extra not in (True, False):
        raise Unsupported(f"{path}: additionalProperties schema")
    if "properties" not in schema:
        return dict[str, Any] if extra else Annotated[dict, Field(max_length=0)]
    required = set(schema.get("required", ()))
    fields = {}
    for i, (key, sub) in enumerate(schema["properties"].items()):
        annotation = _annotation(sub, f"{path}/properties/{key}")
        # The default of an optional field is never validated; an explicit null still is.
        fields[f"field_{i}"] = (annotation, Field(alias=key) if key in required else Field(None, alias=key))
    config = ConfigDict(extra="forbid" if extra is False else "allow", populate_by_name=False)
    return create_model(re.sub(r"\W", "_", path), __config__=config, **fields)


@functools.lru_cache(maxsize=1)
def _models() -> dict:
    """``{tool name: pydantic model or None}``; None: validated with jsonschema instead."""
    from jsonschema import FormatChecker
    from jsonschema.validators import validator_for

    models = {}
    for tool in registry():
        schema = dict(tool.schema)
        try:
            models[tool.name] = (_model(schema, tool.name), None)
        except Unsupported:
            models[tool.name] = (None, validator_for(schema)(schema, format_checker=FormatChecker()))
    return models


def _validate(calls: list, strict: bool) -> list:
    models = _models()
    for call in calls:
        if call["name"] not in models:
            raise ParseError(f"unknown tool {call['name']!r:.80}")
        model, fallback = models[call["name"]]
        if model is None:
            check_calls([call], {call["name"]: fallback})
            continue
        try:
            model.model_validate_json(json.dumps(call["arguments"]), strict=strict)
        except ValueError as exc:  # pydantic's ValidationError
            raise ParseError(f"{call['name']}: {str(exc).splitlines()[0]:.200}") from None
    if len({(c["name"], canonical(c["arguments"])) for c in calls}) != len(calls):
        raise ParseError("duplicate calls")
    return calls


def parse(text: str) -> list:
    return _validate(json_in_prose.parse_fixed(text), strict=False)


def parse_fixed(text: str) -> list:
    return _validate(json_in_prose.parse_fixed(text), strict=True)
