"""A json.loads-based target for the benchmarks: bare JSON calls only, everything else rejected.

Strict enough to pass its own campaign almost everywhere (NaN and overflowing numbers rejected,
deep nesting rejected), so the benchmark measures the execution loop, not the shrinker.
"""

import json


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def _finite(text):
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError("number out of range")
    return value


def parse(text):
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError("too deeply nested") from None
    calls = data if isinstance(data, list) else [data]
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) \
                or not isinstance(call.get("arguments"), dict):
            raise ValueError("not a tool call")
    return calls
