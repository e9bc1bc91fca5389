"""A hand-written balanced-bracket extractor: the first complete JSON value in the text.

Many agent utilities find "the JSON" in an answer by scanning from the first ``{`` or ``[`` and
counting brackets until the depth returns to zero, stepping over string literals (whose brackets
do not count) with a small helper. Then the value is decoded; prose and fences around it are
ignored, so bare JSON and fenced JSON both work.

The planted bug: the string-skipping helper returns the index where the string *started* when it
never finds the closing quote, instead of the end of the text. The bracket counter then sees the
same quote again, forever: an answer cut off inside a string (the commonest truncation) hangs
the parser. The fix returns the end of the text, and the unbalanced value is rejected.
"""

from __future__ import annotations

from benchmarks.parsers._common import ParseError, call_list, loads

BUG = {
    "verdict": "hang",
    "level": "parse",
    "formats": ["json", "fenced"],
    "description": "an unterminated string makes the string skipper return its start: an endless loop",
    "match": {"verdict": "hang"},
}
TRIGGER = '{"name": "get_weather", "arguments": {"city": "Par'


def _skip_string(text: str, quote: int, at_end_of_text: bool) -> int:
    """Index after the string literal that opens at ``quote``."""
    i = quote + 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        else:
            i += 1
    return len(text) if at_end_of_text else quote  # the bug: no closing quote -> "where it started"


def _balanced_end(text: str, start: int, fixed: bool) -> int:
    """Index after the bracketed value opening at ``start``, or -1 when it never closes."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i = _skip_string(text, i, fixed)
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def _extract(text: str, fixed: bool) -> list:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return []
    start = min(starts)
    end = _balanced_end(text, start, fixed)
    if end < 0:
        raise ParseError("the JSON value never closes")
    return call_list(loads(text[start:end]))


def parse(text: str) -> list:
    return _extract(text, fixed=False)


def parse_fixed(text: str) -> list:
    return _extract(text, fixed=True)
