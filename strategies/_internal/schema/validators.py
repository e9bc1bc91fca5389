"""Validators: the jsonschema validator of a tool's arguments schema (its own draft, formats checked).

The generator, the oracle and the bundled reference target all validate through :func:`tool_validator`,
so a value is valid for one exactly when it is valid for the others.
"""

from __future__ import annotations

from typing import Any, Callable

from strategies.json_schemas import validator_class

#: The jsonschema validator class for a schema (its ``$schema``, or the draft its keywords imply).
validator_for_schema = validator_class


def _make_validator(schema: Any, cls: Any) -> Callable[[Any], bool]:
    from jsonschema import FormatChecker

    return cls(schema, format_checker=FormatChecker()).is_valid


_VALIDATORS: dict[int, tuple[Any, Any]] = {}


def tool_validator(tool: Any) -> Any:
    """A cached jsonschema validator (with format checking) for ``tool``'s arguments schema."""
    from jsonschema import FormatChecker

    hit = _VALIDATORS.get(id(tool))
    if hit is None or hit[0] is not tool:
        schema = tool.schema
        hit = _VALIDATORS[id(tool)] = (tool, validator_for_schema(schema)(schema, format_checker=FormatChecker()))
    return hit[1]
