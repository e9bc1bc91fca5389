"""A fenced-JSON parser that repairs "double-escaped" Unicode in the arguments.

Some models (and some serializers in front of them) write non-ASCII text twice escaped:
``"caf\\\\u00e9"`` in the JSON, i.e. the value ``caf\\u00e9`` with a literal backslash. This parser
reads the ```json fence and then "repairs" every string value, turning ``\\uXXXX`` text into the
character it names.

The planted bug: the repair cannot tell a double escape from text that really is a backslash
sequence — a Windows path (``C:\\u0041pps``), a regex, code the user asked to send — and rewrites
it. The fix leaves string values exactly as the JSON decoded them.
"""

from __future__ import annotations

import re

from benchmarks.parsers._common import call_list, map_strings
from benchmarks.parsers.fenced_json import fenced_value, json_language

BUG = {
    "verdict": "corruption",
    "level": "parse",
    "formats": ["fenced"],
    "description": "every literal '\\uXXXX' in a string value is 'repaired' into the character",
    "match": {"verdict": "corruption", "input": r"\\\\u[0-9a-fA-F]{4}"},
}
TRIGGER = '```json\n{"name": "get_weather", "arguments": {"city": "C:\\\\u0041pps"}}\n```'
EXPECTED = [{"name": "get_weather", "arguments": {"city": "C:\\u0041pps"}}]

_DOUBLE_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})")


def _repair(value: str) -> str:
    return _DOUBLE_ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), value)


def parse(text: str) -> list:
    found, value = fenced_value(text, json_language)
    return [] if not found else [dict(call, arguments=map_strings(call["arguments"], _repair))
                                 for call in call_list(value)]


def parse_fixed(text: str) -> list:
    found, value = fenced_value(text, json_language)
    return call_list(value) if found else []
