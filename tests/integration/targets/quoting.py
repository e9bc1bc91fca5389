"""Parsers whose error messages quote the input they could not read (issue 30).

* ReAct lines, as llama-index's ReAct output parser reads them: ``Action Input`` must be one line
  of JSON; otherwise ``ValueError("Could not extract tool use from input text: <the text>")`` —
  a valid output whose JSON is laid out over several lines is rejected, and every such output's
  message is a different text.
* Anything else is read as JSON whose end is checked the way partial-json-parser checks it:
  ``assert not rest, rest`` — the message is whatever was left of the input.
"""

from __future__ import annotations

import json
import re

_ACTION = re.compile(r"^Action:", re.MULTILINE)
_REACT = re.compile(r"Action:\s*(?P<name>[^\n]+)\nAction Input:\s*(?P<input>\{.*\})")  # one line: the bug


def parse(text):
    if _ACTION.search(text):
        match = _REACT.search(text)
        if match is None:
            raise ValueError(f"Could not extract tool use from input text: {text}")
        return [{"name": match.group("name").strip(), "arguments": json.loads(match.group("input"))}]
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        raise ValueError("no JSON")
    try:
        value, end = json.JSONDecoder().raw_decode(stripped)
    except json.JSONDecodeError as exc:
        raise ValueError(str(exc)) from None
    rest = stripped[end:]
    assert not rest.strip(), rest
    calls = value if isinstance(value, list) else [value]
    return [{"name": c["name"], "arguments": c.get("arguments", {})} for c in calls if isinstance(c, dict)
            and isinstance(c.get("name"), str)]
