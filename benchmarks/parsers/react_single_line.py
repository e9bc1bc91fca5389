"""A ReAct parser that reads ``Action:`` and ``Action Input:`` as one line each.

The simplest ReAct reader in the wild: find the ``Action:`` line, take the tool name from it,
take the next line's text after ``Action Input:`` and ``json.loads`` it.

The planted bug: the arguments are assumed to fit on that one line. Models often pretty-print
the JSON (``{\\n  "city": "Paris"\\n}``) and then the line holds only ``{``, so a perfectly valid
call is rejected. The fix decodes the JSON from where it starts, across lines.
"""

from __future__ import annotations

from benchmarks.parsers._common import ParseError, decode_at, loads, make_call, skip_ws

BUG = {
    "verdict": "false_reject",
    "level": "parse",
    "formats": ["react"],
    "description": "the Action Input JSON is read from its line only, so indented JSON is rejected",
    "match": {"verdict": "false_reject", "input": r"Action Input:[ \t]*[{\[][ \t]*\r?\n"},
}
TRIGGER = 'Thought: I need the weather.\nAction: get_weather\nAction Input: {\n  "city": "Paris"\n}'
EXPECTED = [{"name": "get_weather", "arguments": {"city": "Paris"}}]


def _lines_with_offsets(text: str) -> list:
    out, offset = [], 0
    for line in text.split("\n"):
        out.append((offset, line))
        offset += len(line) + 1
    return out


def _read(text: str, whole_json: bool) -> list:
    lines = _lines_with_offsets(text)
    calls = []
    index = 0
    while index < len(lines):
        _, line = lines[index]
        stripped = line.strip()
        if not stripped.startswith("Action:"):
            index += 1
            continue
        name = stripped[len("Action:"):].strip()
        if index + 1 >= len(lines) or not lines[index + 1][1].strip().startswith("Action Input:"):
            raise ParseError("Action: must be followed by an Action Input: line")
        offset, input_line = lines[index + 1]
        start = offset + input_line.index("Action Input:") + len("Action Input:")
        if whole_json:
            arguments, end = decode_at(text, skip_ws(text, start))
            line_end = text.find("\n", end)
            if text[end:line_end if line_end >= 0 else len(text)].strip():
                raise ParseError("unexpected text after the Action Input JSON")
            while index < len(lines) and lines[index][0] < end:  # resume on the line after the JSON
                index += 1
        else:
            arguments = loads(input_line[start - offset:])
            index += 2
        calls.append(make_call(name, arguments))
    return calls


def parse(text: str) -> list:
    return _read(text, whole_json=False)


def parse_fixed(text: str) -> list:
    return _read(text, whole_json=True)
