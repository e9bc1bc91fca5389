"""JSON values as JSON sees them: equality, a canonical form, types, copies, and the size order of inputs.

One implementation of each, used by every layer (strategies, the oracle, the corpus, the bundled
reference target). Python's ``==`` is wrong for JSON values: it says ``True == 1`` and
``{"x": 1} == {"x": True}``, so it must never decide whether two calls are the same. Here:

* key order is ignored, list order is kept;
* ``"2"`` is not ``2`` and ``true`` is not ``1``; ``2`` equals ``2.0`` (JSON has one number type, and
  JSON Schema's ``enum`` / ``const`` / ``uniqueItems`` agree); NaN equals nothing.

This module imports only the standard library, so the corpus (which never imports Hypothesis) and
the reference target can use it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["JSON_TYPES", "canonical", "canonical_json", "copy_json", "json_equal", "json_identical", "json_kind",
           "json_type_name", "json_types", "shortlex"]


#: The seven JSON Schema type names.
JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: key order ignored, list order kept, ``"2"`` is not ``2``, ``true`` is
    not ``1``, ``2`` equals ``2.0``, NaN equals nothing. Tuples count as arrays, mappings as objects."""
    ca, cb = a.__class__, b.__class__
    if ca is cb and (ca is str or ca is int):
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if ca is dict or isinstance(a, Mapping):
        if not (cb is dict or isinstance(b, Mapping)) or len(a) != len(b):
            return False
        for key, value in a.items():
            if key not in b or not json_equal(value, b[key]):
                return False
        return True
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return ca is cb and a == b


def json_identical(a: Any, b: Any) -> bool:
    """The very same document: same types (``1`` is not ``1.0``, ``true`` is not ``1``), same keys in
    the same order, same items. Stricter than :func:`json_equal`: what a cache of judgments keyed
    by a value needs, where two values json_equal holds equal may still be judged apart (a
    draft-3 ``integer`` rejects ``2.0``; jsonschema's errors follow key order)."""
    ca = a.__class__
    if ca is not b.__class__:
        return False
    if ca is dict:
        if len(a) != len(b):
            return False
        for (key, value), (other_key, other) in zip(a.items(), b.items()):
            if key != other_key or not json_identical(value, other):
                return False
        return True
    if ca is list or ca is tuple:
        return len(a) == len(b) and all(json_identical(x, y) for x, y in zip(a, b))
    if ca is float:
        return repr(a) == repr(b)  # -0.0 is not 0.0; a NaN is the NaN it was
    return a == b


def canonical(value: Any) -> Any:
    """A hashable key with exactly :func:`json_equal`'s equality: ``canonical(a) == canonical(b)`` iff
    ``json_equal(a, b)`` (for values without NaN). For sets of calls, ``uniqueItems`` and duplicates."""
    if value is None or isinstance(value, bool):
        return ("b", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, (int, float)):
        return ("n", value)  # 1 == 1.0 and hash(1) == hash(1.0): one number type
    if isinstance(value, Mapping):
        return ("o", frozenset((k, canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("a", tuple(canonical(v) for v in value))
    return ("?", repr(value))


def canonical_json(value: Any) -> str:
    """A canonical JSON text: keys sorted, no whitespace, integral floats written as integers, so two
    values have the same text iff they are :func:`json_equal` (non-JSON leaves use ``repr``)."""
    return json.dumps(_integral(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=repr)


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 63:
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _integral(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_integral(v) for v in value]
    return value


def json_types(value: Any) -> frozenset:
    """The JSON Schema types a Python value satisfies (``2`` and ``2.0`` are both integer and number)."""
    if value is None:
        return _NULL
    if isinstance(value, bool):
        return _BOOLEAN
    if isinstance(value, int):
        return _INTEGER
    if isinstance(value, float):
        return _INTEGER if value.is_integer() else _NUMBER
    if isinstance(value, str):
        return _STRING
    if isinstance(value, (list, tuple)):
        return _ARRAY
    if isinstance(value, Mapping):
        return _OBJECT
    return frozenset()


_NULL, _BOOLEAN, _STRING = frozenset({"null"}), frozenset({"boolean"}), frozenset({"string"})
_INTEGER, _NUMBER = frozenset({"integer", "number"}), frozenset({"number"})
_ARRAY, _OBJECT = frozenset({"array"}), frozenset({"object"})


def json_type_name(value: Any) -> str:
    """The most specific JSON type word for messages: ``integer`` (a Python int), ``number`` (a float),
    ``null``, ``boolean``, ``string``, ``array``, ``object``; else the Python type's name."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def json_kind(value: Any) -> str:
    """The JSON kind a value has when ints and floats are one ``number`` kind (what a corruption of a
    value's type is described by): null, boolean, number, string, array, object, or ``other``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number"
    if value is None or isinstance(value, (bool, str, list, tuple, Mapping)):
        return json_type_name(value)
    return "other"


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars) — several times faster than
    ``copy.deepcopy``, which matters because operators copy calls on every sample."""
    cls = value.__class__
    if cls is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if cls is list:
        return [copy_json(v) for v in value]
    if cls in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)


def shortlex(items: Sequence) -> tuple:
    """The size order of inputs (texts, choice sequences): shorter first, then element order.
    Smaller is better; every minimizer and the corpus rank candidates by it."""
    return (len(items), items)
