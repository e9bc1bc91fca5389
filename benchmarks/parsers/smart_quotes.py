"""A JSON-in-prose parser that normalizes typographic quotes before decoding.

Chat front ends and some models turn the JSON's ``"`` into “ ” (the ``smart_quotes`` accident), so
this parser maps “ ” „ ‟ to ``"`` before it finds the JSON span (first bracket to last bracket) and
decodes it.

The planted bug: the normalization runs on the whole text, also inside string values that really
hold typographic quotes (``She said “hi”``, any German or French text), which then end the JSON
string early: a valid call is rejected. The fix normalizes only text that has no ASCII quote at
all (the accident replaces every one of them) and otherwise decodes the text as written.
"""

from __future__ import annotations

from benchmarks.parsers import json_in_prose

BUG = {
    "verdict": "false_reject",
    "level": "parse",
    "formats": ["json"],
    "description": "typographic quotes are replaced by '\"' everywhere, also inside string values",
    "match": {"verdict": ["false_reject", "corruption"], "input": "[\u201c\u201d\u201e\u201f]"},
}
TRIGGER = '{"name": "send_email", "arguments": {"recipients": ["a@example.com"], "body": "She said \u201chi\u201d"}}'
EXPECTED = [{"name": "send_email", "arguments": {"recipients": ["a@example.com"], "body": "She said \u201chi\u201d"}}]

_TO_ASCII = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"'})


def parse(text: str) -> list:
    return json_in_prose.parse_fixed(text.translate(_TO_ASCII))


def parse_fixed(text: str) -> list:
    if '"' not in text:
        text = text.translate(_TO_ASCII)
    return json_in_prose.parse_fixed(text)
