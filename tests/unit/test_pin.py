"""The hypothesis pin: hypothesis-jsonschema (our fallback) must work with the installed hypothesis.

hypothesis 6.170.10 and later break hypothesis-jsonschema 0.23.1 ("'many' object has no attribute
'more'"), see DESIGN.md "Performance design" and the pin in pyproject.toml.
"""

from __future__ import annotations

from importlib.metadata import version

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import FormatChecker

from strategies._internal.schema import validator_for_schema
from strategies._internal.tools import builtin_registry

BUILTIN = builtin_registry()


def _parse(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3] if part.isdigit())


def test_installed_hypothesis_is_below_the_breaking_release():
    installed = version("hypothesis")
    assert _parse(installed) < (6, 170, 10), (
        f"hypothesis {installed} is installed, but 6.170.10 and later break hypothesis-jsonschema 0.23.1 "
        "('many' object has no attribute 'more'); keep hypothesis<6.170.10 (see /work/shared/DESIGN.md, "
        "'Performance design', and pyproject.toml)")


def test_hypothesis_jsonschema_is_the_supported_release():
    assert _parse(version("hypothesis-jsonschema"))[:2] == (0, 23)


@pytest.mark.parametrize("name", BUILTIN.names())
def test_from_schema_draws_valid_builtin_arguments(name):
    schema = BUILTIN[name].schema
    validator = validator_for_schema(schema)(schema, format_checker=FormatChecker())
    drawn = []

    # arrays of items (send_email) exercise the st.lists "many" machinery the breaking release changed
    @settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(value):
        assert validator.is_valid(value), value
        drawn.append(value)

    check()
    assert drawn


def test_from_schema_lists_of_objects_work():
    schema = {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["a"],
                                                        "properties": {"a": {"type": "integer"}}}}

    @settings(max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data):
        value = data.draw(from_schema(schema))
        assert value and all(isinstance(item["a"], int) for item in value)

    check()
