"""A Hermes / Qwen parser that strips invisible characters from the output before parsing.

Byte-order marks and zero-width characters break tag matching (``<tool_call>`` preceded by a
BOM, a ZWSP between ``<tool`` and ``_call>``), so this parser deletes U+200B..U+200D, U+2060 and
U+FEFF from the output, then reads the ``<tool_call>`` tags.

The planted bug: the deletion runs on the whole output, also inside string values, where those
characters are content — the zero-width joiner inside emoji sequences (👩‍💻 is 👩 U+200D 💻),
joiners in Indic and Persian text, a word joiner a user typed. The fix strips them only in front
of the output, where a BOM or stray marker sits.
"""

from __future__ import annotations

import re

from benchmarks.parsers import hermes_regex

BUG = {
    "verdict": "corruption",
    "level": "parse",
    "formats": ["hermes"],
    "description": "zero-width characters are deleted from the whole output, also inside string values",
    "match": {"verdict": "corruption", "input": "[\u200b-\u200d\u2060\ufeff]"},
}
TRIGGER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "\U0001F469\u200d\U0001F4BB"}}\n</tool_call>'
EXPECTED = [{"name": "get_weather", "arguments": {"city": "\U0001F469\u200d\U0001F4BB"}}]

INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"
_INVISIBLE = re.compile(f"[{INVISIBLE}]")


def parse(text: str) -> list:
    return hermes_regex.parse_fixed(_INVISIBLE.sub("", text))


def parse_fixed(text: str) -> list:
    return hermes_regex.parse_fixed(text.lstrip(INVISIBLE))
