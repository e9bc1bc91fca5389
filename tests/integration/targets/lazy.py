"""Targets that do things at first use which are not the input's doing — and one that is.

Each is the reference parser plus one behaviour: ``lazy_network`` imports a module that probes
IPv6 support at import time (urllib3's ``_has_ipv6``), the first time it parses; ``lazy_validator``
builds a jsonschema validator class the first time it parses (attrs compiles the class's methods
with ``exec``); ``eval_text`` evaluates the text it is given; ``library_eval`` has the standard
library's ``code`` module run the text (``exec`` from a library's frame, of the input).
"""

from __future__ import annotations

from fuzzer.targets.reference import parse as _reference

_VALIDATOR = []


def lazy_network(text):
    from tests.integration.targets import ipv6_probe  # noqa: F401 - imported for its side effect

    return _reference(text)


def lazy_validator(text):
    calls = _reference(text)
    if not _VALIDATOR:
        from jsonschema import validators

        cls = validators.extend(validators.Draft7Validator, {})  # a new class: attrs generates its methods
        _VALIDATOR.append(cls({"type": "object"}))
    for call in calls:
        if not _VALIDATOR[0].is_valid(call["arguments"]):
            raise ValueError("arguments are not an object")
    return calls


def eval_text(text):
    """Reads a JSON call by evaluating it as a Python literal (``true``/``false``/``null`` aside)."""
    value = eval(text, {"__builtins__": {}}, {"true": True, "false": False, "null": None})  # noqa: S307
    return value if isinstance(value, list) else [value]


def library_eval(text):
    import code

    scope = {"true": True, "false": False, "null": None}
    code.InteractiveInterpreter(scope).runsource("value = " + text.strip(), "<call>", "single")
    value = scope.get("value")
    return value if isinstance(value, list) else [value] if value is not None else []
