"""A validating Hermes parser (``--level validate``) that checks calls with ``jsonschema``.

It reads the ``<tool_call>`` tags and validates every call's arguments against its tool's JSON
Schema with the validator class the schema's draft calls for, rejecting unknown tools, schema
violations and duplicates — the guard between the model and the tools.

The planted bug: the validator is built without a ``FormatChecker``. In jsonschema, ``format`` is
an annotation unless a format checker is passed, so ``"format": "email"`` checks nothing and a
recipient ``"bob at example"`` goes to the mail tool. The fix passes ``FormatChecker()``.
"""

from __future__ import annotations


from benchmarks.parsers import hermes_regex
from benchmarks.parsers._common import check_calls, schema_validators

BUG = {
    "verdict": "missed_anomaly",
    "level": "validate",
    "formats": ["hermes"],
    "description": "jsonschema validators are built without a FormatChecker, so 'format' is never checked",
    "match": {"verdict": "missed_anomaly", "text": r"\(format\)"},
}
TRIGGER = '<tool_call>\n{"name": "send_email", "arguments": {"recipients": ["bob at example"]}}\n</tool_call>'



def parse(text: str) -> list:
    return check_calls(hermes_regex.parse_fixed(text), schema_validators(check_formats=False))


def parse_fixed(text: str) -> list:
    return check_calls(hermes_regex.parse_fixed(text), schema_validators())
