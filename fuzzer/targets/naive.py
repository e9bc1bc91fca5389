"""The naive target: the tool-call parser people copy from blog posts, written the hurried way.

It exists so toolfuzz has a realistic victim to find bugs in (benchmarks, demos, the engine's own
tests). No bug was planted: these are the real weaknesses of the pattern as it circulates —

* the single-quote "repair" turns every apostrophe in a value into a quote and breaks it
  (``"it's"`` -> ``"it"s"``), or silently changes a value;
* the trailing-comma "repair" regex also rewrites commas inside string values (``"a, }"``);
* ``json.loads`` accepts ``NaN``/``Infinity`` and keeps the last of duplicate keys;
* JSON that is not an object (a number, a string, a list of strings) raises ``TypeError``/``KeyError``
  instead of a clean ``ValueError``; a missing ``name`` raises ``KeyError``;
* deep nesting raises ``RecursionError``;
* anything but bare JSON or a ```json fence (tags, pythonic calls, OpenAI messages) is rejected or
  misread, and arguments are not checked to be an object.

Do not fix it: its value is in being typical.
"""

from __future__ import annotations

import json
import re


def parse(text):
    """Extract tool calls from model output (bare JSON or a ```json fence)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        # the model sometimes wraps the JSON in a markdown fence
        match = re.search(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
        candidate = match.group(1) if match else text
        candidate = candidate.replace("'", '"')  # "repair" single quotes
        candidate = re.sub(r",\s*([}\]])", r"\1", candidate)  # "repair" trailing commas
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError as exc:
            raise ValueError(f"could not parse tool call: {exc}")
    calls = data if isinstance(data, list) else [data]
    return [{"name": c["name"], "arguments": c.get("arguments", {})} for c in calls]
