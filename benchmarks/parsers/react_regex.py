"""A ReAct parser built on one regular expression, in the style of LangChain's ReAct output parsers.

``Action:[ \\t]*([^\\n]*?)[ \\t]*\\r?\\n[ \\t]*Action Input:[ \\t]*`` finds each action: the tool name is
the rest of the ``Action:`` line without surrounding blanks (CRLF-safe), the next line must be
``Action Input:``, and the JSON arguments are decoded from there (indented JSON included). The
answers are right on every layout.

The planted bug is the time it takes: three adjacent quantifiers that can all match the same
blanks (``[ \\t]*``, ``[^\\n]*?``, ``[ \\t]*``) make a line of n blanks after ``Action:`` cost O(n³),
and every further ``Action:`` on a line that has no ``Action Input:`` after it rescans that line:
O(n²). ReDoS reports against agent frameworks' ReAct regexes are exactly this. The fix scans
with ``str.find`` and skips a failed line at once (same answers, linear time).
"""

from __future__ import annotations

import re

from benchmarks.parsers._common import ParseError, decode_at, make_call

BUG = {
    "verdict": "slow",
    "level": "parse",
    "formats": ["react"],
    "description": "the Action regex backtracks polynomially (cubic in blanks after 'Action:')",
    "match": {"verdict": ["slow", "hang"]},
}
#: 3,000 blanks after "Action:": ~50 s with the regex, microseconds with the scan.
TRIGGER = "Thought: hm\nAction:" + " " * 3000 + "x"

_ACTION = re.compile(r"Action:[ \t]*([^\n]*?)[ \t]*\r?\n[ \t]*Action Input:[ \t]*")


def _after_blanks(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t":
        index += 1
    return index


def _call_at(text: str, name: str, start: int) -> tuple:
    arguments, end = decode_at(text, start)
    if not isinstance(arguments, dict):
        raise ParseError("Action Input must be a JSON object")
    return make_call(name, arguments), end


def parse(text: str) -> list:
    calls, pos = [], 0
    while True:
        match = _ACTION.search(text, pos)
        if match is None:
            return calls
        call, pos = _call_at(text, match.group(1), match.end())
        calls.append(call)


def parse_fixed(text: str) -> list:
    calls, pos = [], 0
    while True:
        action = text.find("Action:", pos)
        if action < 0:
            return calls
        newline = text.find("\n", action)
        if newline < 0:
            return calls
        following = _after_blanks(text, newline + 1)
        if not text.startswith("Action Input:", following):
            pos = newline + 1  # no later "Action:" on this line can match either
            continue
        name = text[action + len("Action:"):newline]
        if name.endswith("\r"):
            name = name[:-1]
        call, pos = _call_at(text, name.strip(" \t"), _after_blanks(text, following + len("Action Input:")))
        calls.append(call)
