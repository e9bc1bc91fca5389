"""Operators of the ``invalid_argument_type`` class (semantic: the truth is the calls as written). An argument of the wrong JSON type: "2" for 2, "true" for true, a scalar for an array.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from strategies._internal.mutations import Mutation, MutationContext, mutator
from strategies._internal.schemainfo import FieldInfo, violates_type
from strategies._internal.operators.calls import _is_number, Candidates, _has_field, _value_mutation
from strategies._internal.operators.words import number_words


def _typed(candidates: Callable[[FieldInfo, Any], list]) -> Candidates:
    """Keep the candidates that really violate the field's ``type``."""
    def wrapped(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
        return [(v, note) for v, note in candidates(f, value) if violates_type(v, f.types)]
    return wrapped


def _declared(f: FieldInfo) -> bool:
    return f.types is not None


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value)) if abs(value) >= 1 or value == 0 else json.dumps(value)
    return json.dumps(value)


@mutator("number_as_string", anomaly_class="invalid_argument_type",
         applies=_has_field(lambda f: _declared(f) and f.allows("integer") and not f.allows("string")))
def number_as_string(source: Any, ctx: MutationContext) -> Mutation:
    """A number written as a string ("2" for 2)."""
    return _value_mutation(
        source, ctx, lambda f: _declared(f) and not f.allows("string"),
        _typed(lambda f, v: [(_number_text(v), "")] if _is_number(v) else []), "number_as_string")


@mutator("number_as_words", anomaly_class="invalid_argument_type",
         applies=_has_field(lambda f: _declared(f) and f.allows("integer") and not f.allows("string")))
def number_as_words(source: Any, ctx: MutationContext) -> Mutation:
    """A number spelled out in English ("two" for 2)."""
    def words(f: FieldInfo, v: Any) -> list:
        if not _is_number(v) or abs(v) >= 10 ** 12:
            return []
        n = round(v)
        out = [(number_words(n), "")]
        if n == v and 0 < n < 20:
            out.append((number_words(n).capitalize(), ""))
        return out

    return _value_mutation(source, ctx, lambda f: _declared(f) and not f.allows("string"),
                           _typed(words), "number_as_words")


@mutator("boolean_as_string", anomaly_class="invalid_argument_type",
         applies=_has_field(lambda f: _declared(f) and f.allows("boolean") and not f.allows("string")))
def boolean_as_string(source: Any, ctx: MutationContext) -> Mutation:
    """A boolean written as a string ("true" for true, "yes" for true)."""
    def words(f: FieldInfo, v: Any) -> list:
        if not isinstance(v, bool):
            return []
        return [(w, "") for w in (("true", "True", "yes", "1") if v else ("false", "False", "no", "0"))]

    return _value_mutation(source, ctx, lambda f: _declared(f) and not f.allows("string"),
                           _typed(words), "boolean_as_string")


@mutator("scalar_for_array", anomaly_class="invalid_argument_type",
         applies=_has_field(lambda f: _declared(f) and f.allows("array")))
def scalar_for_array(source: Any, ctx: MutationContext) -> Mutation:
    """A single value where an array is required ("a@x.com" for ["a@x.com"])."""
    def scalars(f: FieldInfo, v: Any) -> list:
        if not isinstance(v, list) or not v:
            return []
        out = [(v[0], "first element")]
        if all(isinstance(x, str) or _is_number(x) for x in v) and len(v) > 1:
            out.append((", ".join(str(x) for x in v), "joined"))
        return out

    return _value_mutation(source, ctx, lambda f: _declared(f) and f.allows("array"),
                           _typed(scalars), "scalar_for_array")


@mutator("array_for_scalar", anomaly_class="invalid_argument_type",
         applies=_has_field(lambda f: _declared(f) and not f.allows("array")))
def array_for_scalar(source: Any, ctx: MutationContext) -> Mutation:
    """A scalar wrapped in a list (["Paris"] for "Paris")."""
    return _value_mutation(
        source, ctx, lambda f: _declared(f) and not f.allows("array"),
        _typed(lambda f, v: [([v], "")] if isinstance(v, (str, int, float, bool)) else []),
        "array_for_scalar")


@mutator("object_for_string", anomaly_class="invalid_argument_type",
         applies=_has_field(lambda f: _declared(f) and f.allows("string") and not f.allows("object")))
def object_for_string(source: Any, ctx: MutationContext) -> Mutation:
    """An object where a string is required ({"value": "Paris"} for "Paris")."""
    def wrap(f: FieldInfo, v: Any) -> list:
        if not isinstance(v, str):
            return []
        keys = ["value", "name", "text"] + ([f.name] if f.name and f.name not in ("value", "name", "text") else [])
        return [({k: v}, "") for k in keys]

    return _value_mutation(source, ctx, lambda f: _declared(f) and not f.allows("object"),
                           _typed(wrap), "object_for_string")


@mutator("null_for_required", anomaly_class="invalid_argument_type",
         applies=_has_field(lambda f: _declared(f) and f.required and not f.nullable))
def null_for_required(source: Any, ctx: MutationContext) -> Mutation:
    """null for a required argument that is not nullable."""
    return _value_mutation(source, ctx, lambda f: _declared(f) and f.required and not f.nullable,
                           _typed(lambda f, v: [(None, "")] if v is not None else []), "null_for_required")


@mutator("stringified_json_argument", anomaly_class="invalid_argument_type",
         applies=_has_field(lambda f: _declared(f) and not f.allows("string")
                            and (f.allows("array") or f.allows("object"))))
def stringified_json_argument(source: Any, ctx: MutationContext) -> Mutation:
    """An array or object argument double-encoded as a JSON string ("[\\"a\\"]" for ["a"])."""
    def dumped(f: FieldInfo, v: Any) -> list:
        if not isinstance(v, (list, dict)):
            return []
        return [(json.dumps(v, ensure_ascii=False), ""), (json.dumps(v, separators=(",", ":")), "compact")]

    return _value_mutation(source, ctx, lambda f: _declared(f) and not f.allows("string"),
                           _typed(dumped), "stringified_json_argument")
