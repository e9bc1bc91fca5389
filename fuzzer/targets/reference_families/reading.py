"""What every family reader of the reference parser reads with: strict JSON at an offset (no
NaN or Infinity, no float overflow to inf, no duplicate keys, no raw control characters), the
tokens a family expects, tool names, calls, values written raw between tags, envelopes written one
after another or as a section of calls, and the rule for the prose around a call. Every scan is
``str.find`` or a single pass, no regular expression (see :mod:`fuzzer.targets.reference`)."""

from __future__ import annotations

import json
import math
from typing import Any


WS = " \t\n\r"
#: Characters that never appear in prose around a call (chatter is built without them).
_STRUCTURAL = "{}[]<>`\ufeff"
_REACT_WORDS = ("Action:", "Action Input:")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} overflows to {value}")
    return value


def _unique_pairs(pairs: list) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r:.60} in JSON object")
            seen.add(key)
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_reject_constant,
                            parse_float=_finite_float, strict=True)


def skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in WS:
        i += 1
    return i


def decode_at(text: str, i: int) -> tuple:
    """The JSON document starting exactly at ``i`` and the offset after it."""
    try:
        return _DECODER.raw_decode(text, i)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON: {exc}") from None


def loads(text: str) -> Any:
    """A whole string as one JSON document (surrounding whitespace allowed)."""
    value, end = decode_at(text, skip_ws(text, 0))
    if skip_ws(text, end) != len(text):
        raise ValueError("extra data after the JSON document")
    return value


def call(name: Any, arguments: Any, where: str) -> dict:
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: the tool name must be a non-empty string, got {name!r:.60}")
    if not isinstance(arguments, dict):
        raise ValueError(f"{where}: arguments must be a JSON object, got {type(arguments).__name__}")
    return {"name": name, "arguments": arguments}


def repeated(text: str, start: int, opener: str, one: Any) -> tuple:
    """Envelopes written one after another: ``one(text, i) -> (calls, end)`` while ``opener`` follows."""
    calls: list = []
    i = start
    while True:
        found, end = one(text, i)
        calls += found
        following = skip_ws(text, end)
        if not text.startswith(opener, following):
            return calls, end
        i = following


def section(text: str, start: int, begin: str, end: str, one: Any) -> tuple:
    """A block of calls from ``begin`` to ``end``, whitespace between them: ``one(text, i) -> (call,
    end of it)`` for each call in it."""
    calls: list = []
    i = start + len(begin)
    while True:
        i = skip_ws(text, i)
        if text.startswith(end, i):
            return calls, i + len(end)
        call, i = one(text, i)
        calls.append(call)


def is_json(text: str) -> bool:
    try:
        loads(text)
    except ValueError:
        return False
    return True


def raw_value(raw: str, forbidden: tuple) -> Any:
    """A value written raw between tags: JSON when it is strict JSON, a Python literal's value for
    ``True``/``False``/``None``, else the string itself (which may not look like padding or tags)."""
    if raw != raw.strip() or "\r" in raw or any(token in raw for token in forbidden):
        raise ValueError(f"ambiguous value {raw!r:.60}")
    if raw in _PY_LITERALS:
        return _PY_LITERALS[raw]
    if not raw:
        return raw
    try:
        return loads(raw)
    except ValueError:
        return raw


_PY_LITERALS = {"True": True, "False": False, "None": None}


def expect(text: str, i: int, token: str, what: str) -> int:
    if not text.startswith(token, i):
        raise ValueError(f"expected {token!r} {what}")
    return i + len(token)


def name_until(text: str, i: int, delimiter: str, where: str, missing: str) -> tuple:
    """The tool name from ``i`` up to ``delimiter`` (checked by :func:`tag_name`) and where the
    delimiter starts; ``missing``: the error when it never comes."""
    close = text.find(delimiter, i)
    if close < 0:
        raise ValueError(missing)
    return tag_name(text[i:close], where), close


def tag_name(name: str, where: str) -> str:
    if not name or any(c.isspace() or c in "<>|" for c in name):
        raise ValueError(f"{where}: invalid name {name!r:.60}")
    return name


def check_prose(prose: str, *, react: bool = False) -> None:
    for c in _STRUCTURAL:
        if c in prose:
            raise ValueError(f"unexpected {c!r} in the text around the call")
    if not react:
        for word in _REACT_WORDS:
            if word in prose:
                raise ValueError(f"unexpected {word!r} in the text around the call")
    elif "Action Input:" in prose:
        raise ValueError("Action Input: without a preceding Action:")


__all__ = ["WS", "call", "check_prose", "decode_at", "expect", "is_json", "loads", "name_until", "raw_value",
           "repeated", "section", "skip_ws", "tag_name"]
