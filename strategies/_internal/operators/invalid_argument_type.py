"""Operators of the ``invalid_argument_type`` class (semantic: the truth is the calls as written). An argument of the wrong JSON type: "2" for 2, "true" for true, a scalar for an array.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Callable, Optional

from strategies._internal.mutator import MutationContext
from strategies._internal.schemainfo import FieldInfo, violates_type
from strategies._internal.operators.calls import _is_number, Candidates, _value_operator
from strategies._internal.operators.words import number_words


def _typed(candidates: Callable[[FieldInfo, Any], list]) -> Candidates:
    """Keep the candidates that really violate the field's ``type``."""
    @functools.wraps(candidates)
    def wrapped(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
        return [(v, note) for v, note in candidates(f, value) if violates_type(v, f.types)]
    return wrapped


def _declared(f: FieldInfo) -> bool:
    return f.types is not None


def _type_operator(name: str, wanted: Callable[[FieldInfo], bool],
                   applies: Optional[Callable[[FieldInfo], bool]] = None) -> Callable:
    """Register operator ``name`` of this class: the decorated ``candidates(field, value)`` (its docstring
    is the description), kept where they violate the field's ``type`` (:func:`_typed`), over the fields
    with a declared type that ``wanted`` accepts; it applies to a tool with a declared-type field that
    ``applies`` (by default ``wanted``) accepts."""
    applies = applies or wanted

    def register(candidates: Callable[[FieldInfo, Any], list]) -> Callable[[FieldInfo, Any], list]:
        _value_operator(name, anomaly_class="invalid_argument_type", wanted=lambda f: _declared(f) and wanted(f),
                        applies=lambda f: _declared(f) and applies(f))(_typed(candidates))
        return candidates

    return register


def _not_string(f: FieldInfo) -> bool:
    return not f.allows("string")


def _integer_not_string(f: FieldInfo) -> bool:
    return f.allows("integer") and not f.allows("string")


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value)) if abs(value) >= 1 or value == 0 else json.dumps(value)
    return json.dumps(value)


@_type_operator("number_as_string", _not_string, applies=_integer_not_string)
def number_as_string(f: FieldInfo, v: Any) -> list:
    """A number written as a string ("2" for 2)."""
    return [(_number_text(v), "")] if _is_number(v) else []


@_type_operator("number_as_words", _not_string, applies=_integer_not_string)
def number_as_words(f: FieldInfo, v: Any) -> list:
    """A number spelled out in English ("two" for 2)."""
    if not _is_number(v) or abs(v) >= 10 ** 12:
        return []
    n = round(v)
    out = [(number_words(n), "")]
    if n == v and 0 < n < 20:
        out.append((number_words(n).capitalize(), ""))
    return out


@_type_operator("boolean_as_string", _not_string, applies=lambda f: f.allows("boolean") and not f.allows("string"))
def boolean_as_string(f: FieldInfo, v: Any) -> list:
    """A boolean written as a string ("true" for true, "yes" for true)."""
    if not isinstance(v, bool):
        return []
    return [(w, "") for w in (("true", "True", "yes", "1") if v else ("false", "False", "no", "0"))]


@_type_operator("scalar_for_array", lambda f: f.allows("array"))
def scalar_for_array(f: FieldInfo, v: Any) -> list:
    """A single value where an array is required ("a@x.com" for ["a@x.com"])."""
    if not isinstance(v, list) or not v:
        return []
    out = [(v[0], "first element")]
    if all(isinstance(x, str) or _is_number(x) for x in v) and len(v) > 1:
        out.append((", ".join(str(x) for x in v), "joined"))
    return out


@_type_operator("array_for_scalar", lambda f: not f.allows("array"))
def array_for_scalar(f: FieldInfo, v: Any) -> list:
    """A scalar wrapped in a list (["Paris"] for "Paris")."""
    return [([v], "")] if isinstance(v, (str, int, float, bool)) else []


@_type_operator("object_for_string", lambda f: not f.allows("object"),
                applies=lambda f: f.allows("string") and not f.allows("object"))
def object_for_string(f: FieldInfo, v: Any) -> list:
    """An object where a string is required ({"value": "Paris"} for "Paris")."""
    if not isinstance(v, str):
        return []
    keys = ["value", "name", "text"] + ([f.name] if f.name and f.name not in ("value", "name", "text") else [])
    return [({k: v}, "") for k in keys]


@_type_operator("null_for_required", lambda f: f.required and not f.nullable)
def null_for_required(f: FieldInfo, v: Any) -> list:
    """null for a required argument that is not nullable."""
    return [(None, "")] if v is not None else []


@_type_operator("stringified_json_argument", _not_string,
                applies=lambda f: not f.allows("string") and (f.allows("array") or f.allows("object")))
def stringified_json_argument(f: FieldInfo, v: Any) -> list:
    """An array or object argument double-encoded as a JSON string ("[\\"a\\"]" for ["a"])."""
    if not isinstance(v, (list, dict)):
        return []
    return [(json.dumps(v, ensure_ascii=False), ""), (json.dumps(v, separators=(",", ":")), "compact")]
