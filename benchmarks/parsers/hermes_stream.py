"""A hand-written ``<tool_call>`` scanner of the kind streaming servers use (no regex, one pass).

It walks the output tag by tag with an index: find ``<tool_call>``, decode the JSON after it,
step over ``</tool_call>``, repeat. An empty tag pair — a model that opened a call and thought
better of it — is skipped.

The planted bug: the "skip an empty tag" branch ``continue``s without moving the index past the
tag, so the scanner finds the same empty tag forever (the request hangs). No generated call is
ever empty; only an output such as ``<tool_call></tool_call>`` — a deleted span, a degenerate
output — reaches the branch. The fix advances past the empty pair.
"""

from __future__ import annotations

from benchmarks.parsers._common import ParseError, call_object, decode_at, skip_ws

BUG = {
    "verdict": "hang",
    "level": "parse",
    "formats": ["hermes"],
    "description": "an empty <tool_call></tool_call> pair is skipped without advancing: an endless loop",
    "match": {"verdict": "hang"},
}
TRIGGER = "<tool_call></tool_call>"

OPEN, CLOSE = "<tool_call>", "</tool_call>"


def _scan(text: str, advance_past_empty: bool) -> list:
    calls = []
    pos = 0
    while True:
        start = text.find(OPEN, pos)
        if start < 0:
            return calls
        body = skip_ws(text, start + len(OPEN))
        if text.startswith(CLOSE, body):  # an empty tag pair: nothing to call
            if advance_past_empty:
                pos = body + len(CLOSE)
            continue
        value, end = decode_at(text, body)
        calls.append(call_object(value))
        end = skip_ws(text, end)
        if text.startswith(CLOSE, end):
            end += len(CLOSE)
        elif end < len(text):
            raise ParseError("<tool_call> is not closed by </tool_call>")
        pos = end


def parse(text: str) -> list:
    return _scan(text, advance_past_empty=False)


def parse_fixed(text: str) -> list:
    return _scan(text, advance_past_empty=True)
