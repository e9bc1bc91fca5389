"""A Llama 3 ``<|python_tag|>`` parser that URL-decodes argument strings.

Llama 3.1 writes built-in and custom tool calls after ``<|python_tag|>`` as
``{"name": ..., "parameters": {...}}`` objects, several joined by ``;``. This parser reads them and
then passes every string argument through ``urllib.parse.unquote``, because a fine-tune it once
served percent-encoded spaces in city names (``New%20York``).

The planted bug: real values that contain a ``%`` followed by two hex digits — a URL with a
query (``?q=caf%C3%A9``), ``%2F`` in a file name, ``100%25`` — are decoded and come back changed. No generated string held such a sequence before the vocabulary of
percent-encoded values. The fix returns values as the JSON decoded them.
"""

from __future__ import annotations

import urllib.parse

from benchmarks.parsers._common import ParseError, call_object, decode_at, map_strings, skip_ws

BUG = {
    "verdict": "corruption",
    "level": "parse",
    "formats": ["llama3"],
    "description": "urllib.parse.unquote() runs on every string argument ('%2F' becomes '/')",
    "match": {"verdict": "corruption", "input": r"%[0-9a-fA-F]{2}"},
}
TRIGGER = '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris%2FFrance"}}'
EXPECTED = [{"name": "get_weather", "arguments": {"city": "Paris%2FFrance"}}]

TAG = "<|python_tag|>"


def _read(text: str, clean) -> list:
    start = text.find(TAG)
    if start < 0:
        return []
    calls, i = [], start + len(TAG)
    while True:
        value, end = decode_at(text, skip_ws(text, i))
        call = call_object(value, arguments_key="parameters")
        calls.append({"name": call["name"], "arguments": map_strings(call["arguments"], clean)})
        following = skip_ws(text, end)
        if not text.startswith(";", following):
            if any(c in text[following:] for c in "{}[];"):
                raise ParseError("unexpected text after the last call")
            return calls
        i = following + 1


def parse(text: str) -> list:
    return _read(text, urllib.parse.unquote)


def parse_fixed(text: str) -> list:
    return _read(text, lambda value: value)
