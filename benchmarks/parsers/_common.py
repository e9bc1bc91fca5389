"""What the benchmark parsers share: strict JSON, the shape of a call, Python literals, validators.

Every parser in this package is correct except for one planted bug. The parts that are not the
bug — no NaN, no float overflowing to infinity, deep nesting rejected instead of crashing, a call
is ``{"name": str, "arguments": dict}`` — are the same in all of them, so they live here once (a
real code base keeps them in its utils module too). A parser's own envelope handling, cleaning
and validation stay in its module, where the bug is.

Everything that fails here raises :class:`ParseError`, a ``ValueError``: the target contract's
clean rejection.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import os
from typing import Any, Callable, Iterable, Optional

WHITESPACE = " \t\r\n"


class ParseError(ValueError):
    """The text holds no call this parser can read (a clean rejection)."""


# ----------------------------------------------------------------------------------------------------
# strict JSON


def _reject_constant(name: str) -> Any:
    raise ParseError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ParseError(f"number {text[:40]} is out of range")
    return value


DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def loads(text: str) -> Any:
    """``text`` as one JSON document; NaN, overflow and too-deep nesting are rejected."""
    try:
        return DECODER.decode(text)
    except RecursionError:
        raise ParseError("JSON nested too deeply") from None


def decode_at(text: str, index: int) -> tuple:
    """The JSON document starting exactly at ``index`` and the offset after it."""
    try:
        return DECODER.raw_decode(text, index)
    except RecursionError:
        raise ParseError("JSON nested too deeply") from None


def skip_ws(text: str, index: int) -> int:
    while index < len(text) and text[index] in WHITESPACE:
        index += 1
    return index


# ----------------------------------------------------------------------------------------------------
# calls


def make_call(name: Any, arguments: Any) -> dict:
    """A checked call: a non-empty string name and an object of arguments."""
    if not isinstance(name, str) or not name:
        raise ParseError(f"the tool name must be a non-empty string, got {name!r:.60}")
    if not isinstance(arguments, dict):
        raise ParseError(f"arguments must be an object, got {type(arguments).__name__}")
    return {"name": name, "arguments": arguments}


#: Keys a call object may carry besides its arguments (ignored).
ENVELOPE_KEYS = frozenset({"name", "id", "type", "index"})


def call_object(obj: Any, arguments_key: str = "arguments") -> dict:
    """``{"name": ..., "arguments": {...}}``; an ``id``/``type``/``index`` is ignored, absent arguments
    are ``{}``, and arguments under an unknown key (``args``, ``input``...) are rejected, not lost."""
    if not isinstance(obj, dict) or "name" not in obj:
        raise ParseError("a call must be an object with a name")
    if arguments_key in obj:
        return make_call(obj["name"], obj[arguments_key])
    if not set(obj) <= ENVELOPE_KEYS:
        raise ParseError(f"a call without {arguments_key!r} but with {sorted(set(obj) - ENVELOPE_KEYS)!r:.80}")
    return make_call(obj["name"], {})


def call_list(value: Any, arguments_key: str = "arguments") -> list:
    """A call object or a list of them."""
    items = value if isinstance(value, list) else [value]
    return [call_object(item, arguments_key) for item in items]


def is_json_value(value: Any, depth: int = 0) -> bool:
    """Is ``value`` made only of JSON types (finite numbers, string keys)?"""
    if depth > 200:
        return False
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(is_json_value(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_json_value(v, depth + 1) for k, v in value.items())
    return False


def map_strings(value: Any, clean: Callable[[str], str]) -> Any:
    """``value`` with ``clean`` applied to every string inside it (keys left alone)."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [map_strings(v, clean) for v in value]
    if isinstance(value, dict):
        return {k: map_strings(v, clean) for k, v in value.items()}
    return value


def canonical(value: Any) -> Any:
    """A hashable form in which equal JSON values are equal (key order ignored, 1 == 1.0, True != 1)."""
    if isinstance(value, dict):
        return ("object", frozenset((k, canonical(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("array", tuple(canonical(v) for v in value))
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    return (type(value).__name__, value)


# ----------------------------------------------------------------------------------------------------
# Python literals (pythonic calls)

#: Pythonic sources larger than this are refused: ``ast`` needs ~1.5 s per MB of dense literals.
PY_MAX_SOURCE = 256 * 1024


def bracketed(text: str) -> Optional[str]:
    """From the first ``[`` to the last ``]`` (prose around a pythonic list holds neither), or None."""
    start, end = text.find("["), text.rfind("]")
    return text[start:end + 1] if 0 <= start < end else None


def parse_python(source: str) -> ast.AST:
    """``source`` as one Python expression (``ast`` only: nothing is compiled or run)."""
    if len(source) > PY_MAX_SOURCE:
        raise ParseError(f"pythonic payload too large ({len(source)} characters)")
    import warnings

    try:
        with warnings.catch_warnings():  # "invalid escape sequence": Python accepts it, so do we
            warnings.simplefilter("ignore")
            return ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise ParseError(f"not a Python expression: {exc}") from None


def literal(node: ast.AST, names: Optional[dict] = None) -> Any:
    """A JSON value written as a Python literal; anything else is rejected.

    ``names`` maps bare names to values (e.g. JSON's ``true``/``false``/``null``)."""
    if names and isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, (str, bool, int)):
            return value
        if isinstance(value, float) and math.isfinite(value):
            return value
        raise ParseError(f"{type(value).__name__} literal is not a JSON value")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        value = node.operand.value
        return literal(ast.Constant(-value if isinstance(node.op, ast.USub) else value))
    if isinstance(node, ast.List):
        return [literal(elt, names) for elt in node.elts]
    if isinstance(node, ast.Dict):
        result: dict = {}
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise ParseError("dict keys must be string literals")
            result[key.value] = literal(value, names)
        return result
    raise ParseError(f"{type(node).__name__} is not a literal")


def dotted_name(node: ast.AST) -> str:
    """``get_weather`` or ``functions.get_weather``."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise ParseError("a pythonic call must name a function")
    parts.append(node.id)
    return ".".join(reversed(parts))


def keyword_arguments(node: ast.Call) -> dict:
    """The arguments of ``f(a=1, **{"from": 2})`` as a dict; positional arguments are rejected."""
    if node.args:
        raise ParseError("pythonic calls take keyword arguments only")
    arguments: dict = {}
    for kw in node.keywords:
        items = [(kw.arg, literal(kw.value))] if kw.arg is not None else _unpacked(kw.value)
        for key, value in items:
            if key in arguments:
                raise ParseError(f"argument {key!r:.60} given twice")
            arguments[key] = value
    return arguments


def _unpacked(node: ast.AST) -> list:
    value = literal(node)
    if not isinstance(value, dict):
        raise ParseError("** must unpack a dict literal")
    return list(value.items())


# ----------------------------------------------------------------------------------------------------
# validate level

#: The environment variable the CLI sets to its ``--tools`` (see fuzzer.targets.reference).
TOOLS_ENV = "TOOLFUZZ_TOOLS"


def registry() -> Any:
    """The tools being fuzzed: ``$TOOLFUZZ_TOOLS`` when the CLI set it, else the built-in registry."""
    from strategies import load_registry

    return load_registry(os.environ.get(TOOLS_ENV) or None)


def schema_validators(*, check_formats: bool = True) -> dict:
    """``{tool name: jsonschema validator}`` for the tools being fuzzed (each schema's own draft),
    built once per process and setting."""
    return _schema_validators(check_formats, os.environ.get(TOOLS_ENV) or None)


@functools.lru_cache(maxsize=4)
def _schema_validators(check_formats: bool, tools: Optional[str]) -> dict:
    from jsonschema import FormatChecker
    from jsonschema.validators import validator_for

    validators = {}
    for tool in registry():
        cls = validator_for(dict(tool.schema))
        validators[tool.name] = cls(dict(tool.schema), format_checker=FormatChecker() if check_formats else None)
    return validators


def check_calls(calls: Iterable[dict], validators: dict, key: Optional[Callable[[dict], Any]] = None) -> list:
    """Every call names a known tool and satisfies its schema; no call repeats (by ``key``)."""
    calls = list(calls)
    seen: set = set()
    key = key or (lambda call: (call["name"], canonical(call["arguments"])))
    for call in calls:
        validator = validators.get(call["name"])
        if validator is None:
            raise ParseError(f"unknown tool {call['name']!r:.80}")
        try:
            error = next(iter(validator.iter_errors(call["arguments"])), None)
        except RecursionError:
            raise ParseError("arguments nested too deeply") from None
        if error is not None:
            raise ParseError(f"{call['name']}: {error.message:.200}")
        k = key(call)
        if k in seen:
            raise ParseError(f"duplicate call of {call['name']!r:.80}")
        seen.add(k)
    return calls
