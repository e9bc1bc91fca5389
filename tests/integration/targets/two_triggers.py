"""A parser with two bugs behind one ``raise ValueError("no tool call found")``: its hermes path
refuses a value that is not ASCII, its fence path a value holding an apostrophe. A value such as
``Côte d'Ivoire`` trips both; the findings are two all the same, one per format."""

from __future__ import annotations

import json
import re


def parse(text):
    if "<tool_call>" in text:
        payloads = re.findall(r"<tool_call>\s*(.*?)\s*</tool_call>", text, re.DOTALL)
        ok = str.isascii
    else:
        match = re.search(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL | re.IGNORECASE)
        payloads = [match.group(1)] if match else []
        ok = lambda value: "'" not in value  # noqa: E731
    calls = []
    for payload in payloads:
        data = json.loads(payload)
        calls += data if isinstance(data, list) else [data]
    bad = any(isinstance(v, str) and not ok(v) for c in calls for v in c.get("arguments", {}).values())
    if bad or not calls:
        raise ValueError("no tool call found")
    return [{"name": c["name"], "arguments": c.get("arguments", {})} for c in calls]
