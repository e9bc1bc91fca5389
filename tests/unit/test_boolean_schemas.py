"""Boolean schemas: ``true`` (every value) and ``false`` (no value) wherever a subschema may stand.

A tools file ``{"booltool": true}``, or ``true`` / ``false`` under ``properties``, ``items``,
``additionalProperties``, ``anyOf`` members, ``not``, ``if``/``then``/``else`` ... is valid JSON
Schema. Every part of the generator must read them: the compiler, the operators' applicability and
schema facts, the validators. The property: whatever the schema, generation raises nothing but
:class:`InvalidSchema` (a schema that admits no call), every value it gives validates, every
operator raises nothing but Unbuildable, and each sample's truth keeps (valid) or breaks (the
semantic classes) the validate-level promise as its class says.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from jsonschema import Draft202012Validator

from fuzzer.harnesses.parser.oracle import Oracle
from strategies._internal.build import Unbuildable, build_sample
from strategies._internal.mutations import OPERATORS
from strategies._internal.operators.textual import _may_have_arguments, _may_have_numbers, _may_have_strings
from strategies._internal.schema import compile_tool, tool_validator, unsupported_tools
from strategies._internal.source import RandomSource, ReplaySource
from strategies._internal.tools import Registry, Tool, load_registry
from strategies.errors import InvalidSchema
from strategies.json_schemas import without_boolean_narrowing

#: Classes whose truth must break the validate-level promise (injection payloads keep it on purpose,
#: duplicates need two calls the operator may not have drawn).
BREAKS_PROMISE = {"unknown_function", "invalid_argument_type", "missing_argument", "unexpected_argument",
                  "constraint_violation"}
NAMES = st.sampled_from(["a", "b", "c"])
LEAVES = st.sampled_from([True, False, {}, {"type": "string"}, {"type": "integer", "minimum": 0},
                          {"enum": [1, "x", None]}, {"type": "boolean"}])


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    names = st.lists(NAMES, unique=True, max_size=2)
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(NAMES, children, max_size=3)},
                              optional={"required": names, "additionalProperties": children,
                                        "propertyNames": st.booleans(), "unevaluatedProperties": st.booleans(),
                                        "dependentSchemas": st.dictionaries(NAMES, st.booleans(), max_size=2)}),
        st.fixed_dictionaries({"type": st.just("array")},
                              optional={"items": children, "prefixItems": st.lists(children, max_size=2),
                                        "maxItems": st.integers(0, 3)}),
        st.builds(lambda key, branches: {key: branches}, st.sampled_from(["anyOf", "oneOf", "allOf"]),
                  st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda base, sub: dict(base, **{"not": sub}), LEAVES.filter(lambda s: isinstance(s, dict)),
                  st.booleans()),
        st.fixed_dictionaries({"type": st.just("integer"), "if": st.booleans()},
                              optional={"then": children, "else": children}),
    )


SCHEMAS = st.recursive(LEAVES, _extend, max_leaves=6)
#: A tool's schema: true, false, or an object of arguments holding boolean subschemas.
TOOL_SCHEMAS = st.one_of(st.booleans(), st.fixed_dictionaries(
    {"type": st.just("object"), "properties": st.dictionaries(NAMES, SCHEMAS, max_size=3)},
    optional={"required": st.lists(NAMES, unique=True, max_size=2), "additionalProperties": SCHEMAS}))


def _registry(schema) -> Registry:
    other = Tool(name="other", description="", schema={"type": "object", "properties": {"q": {"type": "string"}},
                                                       "required": ["q"]})
    return Registry({"booltool": Tool(name="booltool", description="", schema=schema), "other": other})


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(schema=TOOL_SCHEMAS, seed=st.integers(0, 2 ** 16))
def test_boolean_subschemas_anywhere_generate_valid_calls_and_honest_samples(schema, seed):
    registry = _registry(schema)
    tool = registry["booltool"]
    try:
        node = compile_tool(tool)
    except InvalidSchema:
        return  # a schema that admits no call: reported as unsupported, one line (see below)
    validator = tool_validator(tool)
    for source in (RandomSource(seed), RandomSource(seed + 1), ReplaySource(())):
        value = node.generate(source)
        assert isinstance(value, dict) and validator.is_valid(value), (schema, value)
    promise = Oracle(registry, "validate").promise
    for name in sorted(OPERATORS):
        if not OPERATORS[name].applies(tool, "json"):
            continue
        try:
            sample = build_sample(RandomSource(seed), registry=registry, tool=tool, format="json", operator=name)
        except Unbuildable:
            continue
        assert sample.anomaly_class == OPERATORS[name].anomaly_class
        if sample.anomaly_class in BREAKS_PROMISE and sample.calls:
            assert promise.problem_key(sample.calls) is not None, (name, schema, sample.calls)
    valid = build_sample(RandomSource(seed), registry=registry, tool=tool, format="hermes")
    assert promise.problem_key(valid.calls) is None, (schema, valid.calls)


@pytest.mark.parametrize("schema", [
    True,
    {"type": "object", "properties": {"a": True, "b": False}, "required": ["a"]},
    {"type": "object", "properties": {"xs": {"type": "array", "items": True}, "ys": {"type": "array", "items": False}},
     "required": ["xs", "ys"]},
    {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
    {"type": "object", "properties": {"a": {"anyOf": [True, {"type": "integer"}]},
                                      "b": {"oneOf": [False, {"type": "string"}]}}, "required": ["a", "b"]},
    {"type": "object", "$defs": {"T": True, "F": False}, "properties": {"a": {"$ref": "#/$defs/T"},
                                                                        "b": {"$ref": "#/$defs/F"}}},
    {"type": "object", "properties": {"a": {"type": "string", "not": True}, "b": {"type": "string", "not": False}}},
    {"type": "object", "properties": {"a": {"type": "integer", "if": False, "then": False, "else": {"minimum": 5}}},
     "required": ["a"]},
    {"type": "object", "properties": {"a": {"type": "string"}}, "propertyNames": True, "unevaluatedProperties": True,
     "dependentSchemas": {"a": True, "b": False}},
])
def test_each_place_a_boolean_may_stand_compiles_natively_and_validates(schema):
    tool = Tool(name="t", description="", schema=schema)
    node = compile_tool(tool)
    for seed in range(60):
        value = node.generate(RandomSource(seed))
        assert tool_validator(tool).is_valid(value), (seed, value)
    assert "PoolNode" not in repr(node)  # decided here, not left to the hypothesis-jsonschema fallback


@pytest.mark.parametrize("schema, pointer", [
    (False, "/t"),
    ({"type": "object", "properties": {"a": False}, "required": ["a"]}, "/t/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "string", "not": True}}, "required": ["a"]}, "/t/properties/a"),
    ({"type": "object", "propertyNames": False, "required": ["a"]}, "/t"),
])
def test_a_schema_false_makes_nothing_valid_and_says_where(schema, pointer):
    registry = Registry({"t": Tool(name="t", description="", schema=schema, pointer="/t")})
    reasons = unsupported_tools(registry)
    assert set(reasons) == {"t"} and f"at {pointer}" in reasons["t"], reasons


def test_a_boolean_tools_file_loads_and_its_tool_takes_any_arguments(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"booltool": True, "never": False}))
    registry = load_registry(str(path))
    assert set(unsupported_tools(registry)) == {"never"}
    booltool = registry["booltool"]
    assert _may_have_arguments(booltool) and _may_have_strings(booltool) and _may_have_numbers(booltool)
    values = [compile_tool(booltool).generate(RandomSource(seed)) for seed in range(40)]
    assert any(values) and all(isinstance(v, dict) for v in values)


def test_true_as_a_flag_is_not_taken_for_a_subschema():
    # uniqueItems: true is a flag, not "any value": a numbers-only schema still has no strings
    tool = Tool(name="t", description="", schema={"type": "object", "properties": {
        "n": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}}})
    assert not _may_have_strings(tool)


@pytest.mark.parametrize("schema, simplified", [
    ({"not": False, "type": "string"}, {"type": "string"}),
    ({"not": True, "type": "string"}, False),
    ({"if": True, "then": {"minimum": 1}, "else": False}, {"allOf": [{"minimum": 1}]}),
    ({"if": False, "then": {"minimum": 1}}, {}),
    ({"propertyNames": False}, {"maxProperties": 0}),
    ({"dependentSchemas": {"a": True, "b": False}}, {"properties": {"b": False}}),
    ({"unevaluatedProperties": True, "then": True}, {}),
    ({"type": "string"}, {"type": "string"}),
])
def test_boolean_narrowing_keywords_are_applied_exactly(schema, simplified):
    assert without_boolean_narrowing(schema) == simplified
    for value in ("", "a", 0, 5, {}, {"a": 1}, {"b": 1}, [], None):  # the same values pass both
        assert Draft202012Validator(schema).is_valid(value) == Draft202012Validator(simplified).is_valid(value)
