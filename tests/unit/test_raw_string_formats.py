"""Formats that write string values raw and other values as JSON, with nothing between them (GLM
4.5/4.7, Qwen3-Coder XML), write ``["a"]`` alike for the array and for the string: only the tool's schema tells them apart,
and that is how the serving engines' parsers read them (vLLM's ``glm4_moe`` and ``qwen3coder``: a
string where the schema allows one or declares nothing, JSON otherwise).

A sample whose truth rests on the other reading judged a correct, schema-aware parser wrong (a
trial's GLM and Qwen3 parsers written like vLLM's got "array came back as a string" corruptions
from ``array_for_scalar``, ``object_for_string``, ``null_for_required``, ``extra_argument``,
``argument_case_changed``, ``wrapped_arguments``, and from a hallucinated function's numbers). The property: every top-level argument of
every sample's truth in such a format has the type the schema reading gives its text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies._internal.build import Unbuildable, build_sample
from strategies._internal.formats import FORMATS
from strategies._internal.mutator import NotApplicable
from strategies._internal.source import RandomSource
from strategies._internal.tools import builtin_registry, load_registry
from strategies.errors import ToolfuzzError

REGISTRY = builtin_registry()
#: Fifty tools of every schema shape (oneOf, dependencies, untyped properties).
VARIED = load_registry(str(Path(__file__).resolve().parents[1] / "data" / "tools_50.json"))
RAW = sorted(name for name in FORMATS if FORMATS[name].schema_typed)
#: The operators whose values a raw-string format could write ambiguously, and valid samples (None).
OPERATORS = [None, "array_for_scalar", "object_for_string", "null_for_required", "number_as_string",
             "boolean_as_string", "extra_argument", "renamed_argument", "argument_case_changed",
             "wrapped_arguments", "hallucinated_function", "function_name_case",
             "truncate_anywhere", "truncate_last_call"]  # the last two: a truth of no call at all


def _read_by_schema(tool, key: str, value) -> bool:
    """Whether a schema-aware parser gives ``value`` its type back: a string is always read as
    one; a non-string only where the tool (None: not in the registry) declares the key with a
    ``type`` that admits the value and no string (elsewhere vLLM's parsers keep the raw text)."""
    if isinstance(value, str):
        return True
    schema = (tool.schema.get("properties") or {}).get(key) if tool is not None else None
    declared = schema.get("type") if isinstance(schema, dict) else None
    if declared is None:
        return False
    declared = {declared} if isinstance(declared, str) else set(declared)
    kind = ("null" if value is None else "boolean" if isinstance(value, bool) else
            "integer" if isinstance(value, int) else "number" if isinstance(value, float) else
            "array" if isinstance(value, list) else "object")
    admitted = kind in declared or (kind == "integer" and "number" in declared)
    return "string" not in declared and admitted


def test_the_formats_typed_by_the_schema_alone_are_the_ones_expected():
    """DeepSeek V3.2 says string="true|false" and Gemma 4 quotes its strings: their text types
    every value, so they keep every operator."""
    assert {"qwen3_xml", "glm:4.5", "glm:4.7"} <= set(RAW)
    assert not {"deepseek:v3.2", "gemma:4", "json", "hermes"} & set(RAW)


TOOLS = [(REGISTRY, name) for name in REGISTRY.names()] + [(VARIED, name) for name in VARIED.names()]


@settings(max_examples=400, deadline=None)
@given(fmt=st.sampled_from(RAW), operator=st.sampled_from(OPERATORS), pair=st.sampled_from(TOOLS),
       seed=st.integers(0, 2**32))
def test_every_top_level_value_of_a_raw_format_s_truth_reads_back_by_the_schema(fmt, operator, pair, seed):
    registry, name = pair
    try:
        sample = build_sample(RandomSource(seed), registry=registry, tool=registry[name], format=fmt,
                              operator=operator)
    except (Unbuildable, ToolfuzzError, NotApplicable, ValueError):
        return  # the operator does not apply to this tool here: nothing is judged
    for call in sample.calls or []:
        tool = registry[call["name"]] if call["name"] in registry.names() else None
        for key, value in (call.get("arguments") or {}).items():
            assert _read_by_schema(tool, key, value), (sample.text, call)
        if operator is None:  # an argument left out never makes a valid call invalid (a oneOf's)
            from jsonschema import validators

            validator = validators.validator_for(tool.schema)(tool.schema)
            assert validator.is_valid(call["arguments"]), (sample.text, call)


@pytest.mark.parametrize("operator", ["array_for_scalar", "object_for_string", "extra_argument"])
def test_a_json_format_still_gets_the_type_changing_operators(operator):
    """What a raw-string format cannot say, JSON says: the operators still apply there."""
    built = 0
    for seed in range(40):
        try:
            sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=REGISTRY["get_weather"],
                                  format="json", operator=operator)
        except (Unbuildable, ToolfuzzError, NotApplicable, ValueError):
            continue
        built += any(not isinstance(v, str) for c in sample.calls for v in c["arguments"].values())
    assert built > 0


@settings(max_examples=150, deadline=None)
@given(fmt=st.sampled_from(RAW), tool=st.sampled_from(REGISTRY.names()), seed=st.integers(0, 2**32))
def test_the_campaign_s_family_builder_keeps_to_the_same_rule(fmt, tool, seed):
    """A campaign builds its samples in families (one draw, several operators): the same rule."""
    from strategies._internal.build import build_family

    for sample in build_family(RandomSource(seed), registry=REGISTRY, tool=REGISTRY[tool], format=fmt,
                               operators=OPERATORS):
        for call in (sample.calls or []) if sample is not None else []:
            known = REGISTRY[call["name"]] if call["name"] in REGISTRY.names() else None
            for key, value in (call.get("arguments") or {}).items():
                assert _read_by_schema(known, key, value), (sample.text, call)
