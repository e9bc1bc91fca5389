"""The "find the JSON in the model's answer" parser: one regular expression, then ``json.loads``.

Blog posts and agent starter kits extract the JSON from chatty output with
``re.search(r"[\\[{].*[\\]}]", text, re.DOTALL)`` — from the first opening bracket to the last
closing one — and read it as one call or a list of calls. Prose around the JSON holds no brackets,
so the span is always the JSON, and the answers are right.

The planted bug is the time it takes: when the text holds many opening brackets and no closing
bracket after them (a truncated answer, a model stuck repeating ``{``), the regex retries from
every opening bracket and scans to the end each time — O(n²): 20,000 braces take seconds. The fix
finds the same span with ``str.find`` / ``str.rfind`` (linear).
"""

from __future__ import annotations

import re

from benchmarks.parsers._common import call_list, loads

BUG = {
    "verdict": "slow",
    "level": "parse",
    "formats": ["json"],
    "description": "re.search(r'[\\[{].*[\\]}]', DOTALL) is quadratic when no bracket closes",
    "match": {"verdict": ["slow", "hang"]},
}
#: 200,000 braces and no closing one: ~four minutes with the regex, milliseconds with find().
TRIGGER = "{" * 200_000

_JSON_SPAN = re.compile(r"[\[{].*[\]}]", re.DOTALL)


def parse(text: str) -> list:
    match = _JSON_SPAN.search(text)
    return [] if match is None else call_list(loads(match.group()))


def parse_fixed(text: str) -> list:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    end = max(text.rfind("}"), text.rfind("]"))
    if not starts or end < min(starts):
        return []
    return call_list(loads(text[min(starts):end + 1]))
