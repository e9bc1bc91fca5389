"""Validators: the jsonschema validator of a tool's arguments schema (its own draft, formats checked).

The generator, the oracle and the bundled reference target all validate through :func:`tool_validator`,
so a value is valid for one exactly when it is valid for the others.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from strategies.json_schemas import validator_class

#: A string longer than this is shown cut in the errors of :data:`_SHORT_ERRORS`' keywords.
SHOWN_CHARS = 200


def _shown(instance: str) -> str:
    return repr(instance) if len(instance) <= SHOWN_CHARS else \
        f"{instance[:SHOWN_CHARS]!r}... ({len(instance):,} characters)"


def _ValidationError(message: str) -> Any:
    from jsonschema.exceptions import ValidationError

    return ValidationError(message)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not re.search(pattern, instance):
        yield _ValidationError(f"{_shown(instance)} does not match {pattern!r}")


def _max_length(validator: Any, limit: int, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and len(instance) > limit:
        yield _ValidationError(f"{_shown(instance)} {'is expected to be empty' if limit == 0 else 'is too long'}")


#: jsonschema's keywords whose error message holds the whole string: a 100,000-character
#: argument failing its ``pattern`` cost ~50 us in the repr alone, on every judgment of it
#: (``is_valid`` builds the first error too), and shrinking such a finding judges thousands of
#: candidates. The same checks (the same ``re.search``, the same length test), a cut message.
_SHORT_ERRORS = {"pattern": _pattern, "maxLength": _max_length}
_CLASSES: dict = {}


def validator_for_schema(schema: Any) -> Any:
    """The jsonschema validator class for a schema (its ``$schema``, or the draft its keywords
    imply: :func:`~strategies.json_schemas.validator_class`), with :data:`_SHORT_ERRORS`."""
    from jsonschema import _keywords, validators

    base = validator_class(schema)
    cls = _CLASSES.get(base)
    if cls is None:
        own = {name: fast for name, fast in _SHORT_ERRORS.items()
               if base.VALIDATORS.get(name) is getattr(_keywords, name, None)}  # only jsonschema's own
        cls = _CLASSES[base] = validators.extend(base, own) if own else base
    return cls


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
