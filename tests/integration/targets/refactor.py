"""One bug, two layouts of the code around it (issue 30): a quote "repair" in ``_repair`` that
turns typographic quotes into ASCII ones, inside string values too (``Xi\u2019an`` comes back as
``Xi'an``). ``parse_v1`` builds its calls with a list
comprehension and a helper; ``parse_v2`` — the same parser after an unrelated refactor — builds
them in a loop, with its JSON loading moved into a helper of its own. The damage is made in
``_repair`` either way: one bug, one signature."""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def _repair(text):
    return text.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')


def _to_call(item):
    return {"name": item["name"], "arguments": item.get("arguments", {})}


def parse_v1(text):
    match = _FENCE.search(text)
    body = match.group(1) if match else text
    data = json.loads(_repair(body))
    return [_to_call(c) for c in (data if isinstance(data, list) else [data])]


def _loads(body):
    return json.loads(_repair(body))


def parse_v2(text):
    match = _FENCE.search(text)
    data = _loads(match.group(1) if match else text)
    calls = []
    for item in data if isinstance(data, list) else [data]:
        calls.append({"name": item["name"], "arguments": item.get("arguments", {})})
    return calls
