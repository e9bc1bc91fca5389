"""A Hermes ``<tool_call>`` scanner written against the chat template's exact output.

The chat template of Hermes-style models renders each call as ``<tool_call>\\n{json}\\n</tool_call>``,
and this parser takes those tokens literally: it looks for ``"<tool_call>\\n"``, decodes the JSON,
and expects ``"\\n</tool_call>"`` after it.

The planted bug: the newlines are part of the tokens, so the same calls laid out another way —
no newline, CRLF, a tab, a blank line — are not found at all (no call returned). The fix allows
any whitespace between the tags and the JSON.
"""

from __future__ import annotations

from benchmarks.parsers._common import ParseError, call_object, decode_at, skip_ws

BUG = {
    "verdict": "false_reject",
    "level": "parse",
    "formats": ["hermes"],
    "description": "the tags are matched with the template's newlines, so other layouts are not seen",
    "match": {"verdict": "false_reject", "input": r"<tool_call>(?!\n[{\[])|(?<![}\]]\n)</tool_call>"},
}
TRIGGER = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
EXPECTED = [{"name": "get_weather", "arguments": {"city": "Paris"}}]


def _scan(text: str, open_tag: str, close_tag: str, strict_layout: bool) -> list:
    calls = []
    start = text.find(open_tag)
    while start >= 0:
        begin = start + len(open_tag)
        value, end = decode_at(text, begin if strict_layout else skip_ws(text, begin))
        calls.append(call_object(value))
        if not strict_layout:
            end = skip_ws(text, end)
        if text.startswith(close_tag, end):
            end += len(close_tag)
        elif end < len(text):
            raise ParseError("<tool_call> is not closed by </tool_call>")
        start = text.find(open_tag, end)
    return calls


def parse(text: str) -> list:
    """Calls written exactly as the chat template writes them."""
    return _scan(text, "<tool_call>\n", "\n</tool_call>", strict_layout=True)


def parse_fixed(text: str) -> list:
    """Calls in ``<tool_call>`` tags, with any whitespace around the JSON."""
    return _scan(text, "<tool_call>", "</tool_call>", strict_layout=False)
