"""A Mistral ``[TOOL_CALLS]`` parser: the tag, then a JSON list of ``{"name", "arguments"}`` objects.

Modelled on the Mistral tool parsers of serving stacks: after ``[TOOL_CALLS]`` decode the JSON
list and build each call from ``item["name"]`` and ``item["arguments"]``.

The planted bug: ``item["arguments"]`` assumes the key is there. Models leave it out for tools
without parameters, or spell it ``parameters`` / ``args`` / ``input`` (as other templates do), and
the parser dies with ``KeyError`` instead of reading the call or rejecting it. Every generated
call has ``arguments``; only other envelope spellings reach the bug. The fix reads absent
arguments as ``{}`` and rejects arguments under another key.
"""

from __future__ import annotations

from typing import Optional

from benchmarks.parsers._common import ParseError, call_object, decode_at, make_call, skip_ws

BUG = {
    "verdict": "crash",
    "level": "parse",
    "formats": ["mistral"],
    "description": "item['arguments'] raises KeyError when a call has no 'arguments' key",
    "match": {"verdict": "crash", "text": r"KeyError"},
}
TRIGGER = '[TOOL_CALLS][{"name": "get_weather", "parameters": {"city": "Paris"}}]'

TAG = "[TOOL_CALLS]"


def tool_call_items(text: str) -> Optional[list]:
    """The JSON list after ``[TOOL_CALLS]`` (None when the text has no tag)."""
    start = text.find(TAG)
    if start < 0:
        return None
    value, _ = decode_at(text, skip_ws(text, start + len(TAG)))
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ParseError("[TOOL_CALLS] must be followed by a JSON list of call objects")
    return value


def parse(text: str) -> list:
    items = tool_call_items(text)
    return [] if items is None else [make_call(item.get("name"), item["arguments"]) for item in items]


def parse_fixed(text: str) -> list:
    items = tool_call_items(text)
    return [] if items is None else [call_object(item) for item in items]
