"""A parser with one ``raise ValueError("no tool call found")`` reached for two reasons, one per
format: its hermes path "repairs" single quotes (an apostrophe in a value breaks the JSON), and
its fence regex ends in ``$`` (text after the fence is refused). Two bugs worded alike: two
findings, each keyed with its format. ``FIXED_HERMES`` (``parse_fixed_hermes``) has the first bug
fixed and the second still there."""

from __future__ import annotations

import json
import re


def _extract(text, repair):
    if "<tool_call>" in text:
        blocks = re.findall(r"<tool_call>\s*(.*?)\s*</tool_call>", text, re.DOTALL)
        return [json.loads(b.replace("'", '"') if repair else b) for b in blocks]
    match = re.search(r"```(?:json)?\s*(.*?)\s*```$", text, re.DOTALL | re.IGNORECASE)
    data = json.loads(match.group(1))
    return data if isinstance(data, list) else [data]


def _parse(text, repair):
    try:
        calls = _extract(text.strip(), repair)
    except Exception:
        calls = None
    if not calls:
        raise ValueError("no tool call found")
    return [{"name": c["name"], "arguments": c.get("arguments", {})} for c in calls]


def parse(text):
    return _parse(text, repair=True)


def parse_fixed_hermes(text):
    return _parse(text, repair=False)
