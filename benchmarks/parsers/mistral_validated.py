"""A validating Mistral parser (``--level validate``): schema-check every call before running it.

It reads the ``[TOOL_CALLS]`` list, then checks each call against its tool's JSON Schema
(jsonschema, formats checked) and for duplicates, rejecting the output if anything is off.

The planted bug: a call without an ``arguments`` key is read as ``{}`` and waved through as
"nothing to validate" — but a tool with required parameters called without any is exactly what
validation must stop (the executor then runs ``book_hotel()`` with no dates). Generated calls always
carry ``arguments``, so only an envelope spelling without them reaches the bug. The fix validates
every call, whatever its envelope.
"""

from __future__ import annotations


from benchmarks.parsers._common import call_object, check_calls, schema_validators
from benchmarks.parsers.mistral_tags import tool_call_items

BUG = {
    "verdict": "missed_anomaly",
    "level": "validate",
    "formats": ["mistral"],
    "description": "a call without an 'arguments' key skips schema validation",
    "match": {"verdict": "missed_anomaly", "text": r"required"},
}
TRIGGER = '[TOOL_CALLS][{"name": "book_hotel"}]'



def parse(text: str) -> list:
    items = tool_call_items(text) or []
    calls = [call_object(item) for item in items]
    check_calls([call for call, item in zip(calls, items) if "arguments" in item], schema_validators())
    return calls


def parse_fixed(text: str) -> list:
    return check_calls([call_object(item) for item in tool_call_items(text) or []], schema_validators())
