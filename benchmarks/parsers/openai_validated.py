"""An OpenAI message reader that validates calls before an agent runs them (``--level validate``).

After decoding ``tool_calls`` it checks each call against its tool's JSON Schema (jsonschema, with
format checking) and drops the message if a call names an unknown tool, breaks its schema, or
repeats an earlier call — models do emit the same call twice, and running a payment twice is the
kind of bug this guard exists for.

The planted bug: "repeats" is decided on ``json.dumps(arguments)``, i.e. on the text as the model
wrote it. The same call with its arguments in another order (``{"a": 1, "b": 2}`` then
``{"b": 2, "a": 1}``) dumps differently and both copies are returned. The fix compares the
arguments as JSON values.
"""

from __future__ import annotations

import json

from benchmarks.parsers._common import check_calls, schema_validators
from benchmarks.parsers.openai_message import read_calls

BUG = {
    "verdict": "missed_anomaly",
    "level": "validate",
    "formats": ["openai"],
    "description": "duplicate calls are detected on json.dumps(arguments), so a reordered duplicate passes",
    "match": {"verdict": "missed_anomaly", "text": r"duplicate"},
}
TRIGGER = ('{"tool_calls": ['
           '{"id": "call_1", "type": "function", "function": {"name": "get_weather", '
           '"arguments": "{\\"city\\": \\"Paris\\", \\"unit\\": \\"celsius\\"}"}}, '
           '{"id": "call_2", "type": "function", "function": {"name": "get_weather", '
           '"arguments": "{\\"unit\\": \\"celsius\\", \\"city\\": \\"Paris\\"}"}}]}')



def _as_written(call: dict) -> tuple:
    return call["name"], json.dumps(call["arguments"])


def parse(text: str) -> list:
    return check_calls(read_calls(text), schema_validators(), key=_as_written)


def parse_fixed(text: str) -> list:
    return check_calls(read_calls(text), schema_validators())
