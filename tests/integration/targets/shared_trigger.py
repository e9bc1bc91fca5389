"""Two paths refusing one thing, an apostrophe in a value: the hermes path "repairs" single quotes
and breaks the JSON, the fence path refuses a payload holding one. One finding listing both
formats (the same trigger, the same rejection); fixing one path leaves the other's outputs
rejected."""

from __future__ import annotations

import json
import re

FENCE_FIXED = False


def _hermes(text):
    blocks = re.findall(r"<tool_call>\s*(.*?)\s*</tool_call>", text, re.DOTALL)
    try:
        return [json.loads(b.replace("'", '"')) for b in blocks]
    except json.JSONDecodeError:
        return None


def _fenced(text):
    match = re.search(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL | re.IGNORECASE)
    if not match or ("'" in match.group(1) and not FENCE_FIXED):
        return None
    data = json.loads(match.group(1))
    return data if isinstance(data, list) else [data]


def parse(text):
    calls = _hermes(text) if "<tool_call>" in text else _fenced(text)
    if not calls:
        raise ValueError("no tool call found")
    return [{"name": c["name"], "arguments": c.get("arguments", {})} for c in calls]
