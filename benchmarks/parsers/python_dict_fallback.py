"""A JSON parser with a fallback for models that print a Python dict instead of JSON.

Models trained on Python often answer ``{'name': 'get_weather', 'arguments': {'city': 'Paris'}}``
or use ``True``/``None``. This parser finds the JSON span (first bracket to last) and decodes it;
when that fails it reads the span as a Python literal — escapes JSON does not have (``\\x41``) are
refused and surrogate pairs joined, so both readings agree on what a string holds.

The planted bug: the fallback is ``eval(span, {"__builtins__": {}}, {"true": True, ...})``, the
snippet every Q&A thread offers. Each malformed answer is run as code in the parsing process. The
answers are right, so only the ``unsafe`` verdict reports it. The fix reads the literal with
``ast`` (nothing is evaluated).
"""

from __future__ import annotations

import json
import re

from benchmarks.parsers._common import PY_MAX_SOURCE, ParseError, call_list, is_json_value, literal, loads, parse_python

BUG = {
    "verdict": "unsafe",
    "level": "parse",
    "formats": ["json"],
    "description": "output that is not JSON is eval()'d as a Python dict (builtins removed)",
    "match": {"verdict": "unsafe"},
}
TRIGGER = "{'name': 'get_weather', 'arguments': {'city': 'Paris'}}"

_JSON_NAMES = {"true": True, "false": False, "null": None}
#: An escape in a Python string literal that JSON strings do not have (``\\'`` is the quote itself).
_NON_JSON_ESCAPE = re.compile(r"\\[^\"\\/bfnrtu'\n]")


def _span(text: str):
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    end = max(text.rfind("}"), text.rfind("]"))
    return None if not starts or end < min(starts) else text[min(starts):end + 1]


def _by_eval(span: str):
    try:
        value = eval(span, {"__builtins__": {}}, dict(_JSON_NAMES))  # noqa: S307 - the planted bug
    except Exception as exc:  # SyntaxError, NameError, TypeError, RecursionError, MemoryError ...
        raise ParseError(f"neither JSON nor a Python literal: {type(exc).__name__}") from None
    if not is_json_value(value):
        raise ParseError("the Python literal is not a JSON value")
    return value


def _by_ast(span: str):
    return literal(parse_python(span), _JSON_NAMES)


def _json_string(value: str) -> str:
    """A Python string as JSON would hold it: ``"\\ud83d\\ude00"`` is one character in JSON, two in Python."""
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _json_keys_and_strings(value):
    if isinstance(value, dict):
        return {_json_string(k): _json_keys_and_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_keys_and_strings(v) for v in value]
    return _json_string(value) if isinstance(value, str) else value


def _read(text: str, python_literal) -> list:
    span = _span(text)
    if span is None:
        return []
    if len(span) > PY_MAX_SOURCE:
        raise ParseError(f"output too large ({len(span)} characters)")
    try:
        value = loads(span)
    except json.JSONDecodeError:
        if _NON_JSON_ESCAPE.search(span.replace("\\\\", "")):
            raise ParseError("a string escape JSON does not have") from None
        value = _json_keys_and_strings(python_literal(span))
    return call_list(value)


def parse(text: str) -> list:
    return _read(text, _by_eval)


def parse_fixed(text: str) -> list:
    return _read(text, _by_ast)
