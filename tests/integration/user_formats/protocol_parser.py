"""A careful parser of the user's protocol (tests/integration/user_formats/outputs_protocol.py)."""

import json
import math


def _finite(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def parse(text):
    head, sep, rest = text.partition("[[ ## tool ## ]]")
    if not sep:
        raise ValueError("no [[ ## tool ## ]] field")
    name, sep, arguments = rest.partition("[[ ## arguments ## ]]")
    if not sep:
        raise ValueError("no [[ ## arguments ## ]] field")
    try:
        value = json.loads(arguments, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError("arguments must be an object")
    return [{"name": name.strip(), "arguments": value}]
