"""A ReAct parser (``Thought:`` / ``Action:`` / ``Action Input:``) that walks the output line by line.

Each line that starts with ``Action:`` names a tool; the next line must be ``Action Input:``
followed by the arguments as JSON, which may span several lines (indented JSON); then the walk
goes on after the JSON. Thoughts and prose are skipped.

The planted bug: the tool name is cleaned with ``.strip(" ")`` — spaces only. A model (or a
Windows client) that ends lines with CRLF, or puts a tab after ``Action:``, produces the name
``"get_weather\\r"`` — which then matches no tool. The fix strips all whitespace.
"""

from __future__ import annotations

from benchmarks.parsers._common import ParseError, decode_at, make_call, skip_ws

BUG = {
    "verdict": "corruption",
    "level": "parse",
    "formats": ["react"],
    "description": "the Action name is stripped of spaces only, so CRLF or a tab stays in the tool name",
    "match": {"verdict": "corruption", "text": r"function name"},
}
TRIGGER = 'Thought: I need the weather.\r\nAction: get_weather\r\nAction Input: {"city": "Paris"}'
EXPECTED = [{"name": "get_weather", "arguments": {"city": "Paris"}}]

ACTION, INPUT = "Action:", "Action Input:"


def _walk(text: str, clean_name) -> list:
    calls = []
    offset = 0
    while offset < len(text):
        newline = text.find("\n", offset)
        line_end = len(text) if newline < 0 else newline
        if not text.startswith(ACTION, offset):
            offset = line_end + 1
            continue
        name = clean_name(text[offset + len(ACTION):line_end])
        following = line_end + 1
        while following < len(text) and text[following] in " \t":
            following += 1
        if not text.startswith(INPUT, following):
            raise ParseError("Action: must be followed by an Action Input: line")
        arguments, end = decode_at(text, skip_ws(text, following + len(INPUT)))
        calls.append(make_call(name, arguments))
        newline = text.find("\n", end)
        rest_end = len(text) if newline < 0 else newline
        if text[end:rest_end].strip():
            raise ParseError("unexpected text after the Action Input JSON")
        offset = rest_end + 1
    return calls


def parse(text: str) -> list:
    return _walk(text, lambda name: name.strip(" "))


def parse_fixed(text: str) -> list:
    return _walk(text, str.strip)
