"""A Hermes / Qwen ``<tool_call>`` parser built on the regular expression serving stacks use.

Modelled on vLLM's ``Hermes2ProToolParser``: ``<tool_call>(.*?)</tool_call>|<tool_call>(.*)``
(the second branch reads a last tag the model never closed), each body decoded as JSON. Text
outside the tags is the model's prose and is ignored.

The planted bug: the lazy ``(.*?)`` stops at the first ``</tool_call>`` it sees, also when that
text is inside a JSON string — a model asked about its own protocol writes exactly that — so a
valid call whose argument holds ``</tool_call>`` is cut in half and rejected. The fix decodes the
JSON first and only then expects the closing tag.
"""

from __future__ import annotations

import re

from benchmarks.parsers._common import ParseError, call_object, decode_at, loads, skip_ws

BUG = {
    "verdict": "false_reject",
    "level": "parse",
    "formats": ["hermes"],
    "description": "the lazy tag regex ends a call at a '</tool_call>' inside a string argument",
    "match": {"verdict": "false_reject", "input": r"</tool_call>.*</tool_call>"},
}
TRIGGER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "</tool_call>"}}\n</tool_call>'
EXPECTED = [{"name": "get_weather", "arguments": {"city": "</tool_call>"}}]

OPEN, CLOSE = "<tool_call>", "</tool_call>"
_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)", re.DOTALL)


def parse(text: str) -> list:
    """The calls in ``<tool_call>`` tags (``[]`` when there is none)."""
    return [call_object(loads(closed or unclosed)) for closed, unclosed in _TOOL_CALL.findall(text)]


def parse_fixed(text: str) -> list:
    """The same, decoding each call's JSON before looking for its closing tag."""
    calls = []
    start = text.find(OPEN)
    while start >= 0:
        value, end = decode_at(text, skip_ws(text, start + len(OPEN)))
        calls.append(call_object(value))
        end = skip_ws(text, end)
        if text.startswith(CLOSE, end):
            end += len(CLOSE)
        elif end < len(text):  # the second branch: only a last, unclosed tag may lack CLOSE
            raise ParseError("<tool_call> is not closed by </tool_call>")
        start = text.find(OPEN, end)
    return calls
