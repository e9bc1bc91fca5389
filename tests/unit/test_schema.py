"""The JSON Schema -> generator compiler: every generated value validates with real jsonschema.

Validation uses the schema's own draft (``validator_for_schema``) WITH ``FormatChecker()``, over the
built-in registry and the 50+ varied tools of ``tests/data/tools_50.json``, through both fast
backends (RandomSource, ReplaySource) and the Hypothesis backend.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from jsonschema import Draft202012Validator, FormatChecker

from strategies._internal.regex import UnsupportedPattern, compile_pattern
from strategies._internal.schema import (
    OneOfNode, PoolNode, compile_schema, compile_tool, tool_arguments, tool_validator, unsupported_tools,
    validator_for_schema,
)
from strategies._internal.source import HypothesisSource, RandomSource, ReplaySource
from strategies._internal.tools import Registry, Tool, builtin_registry, load_registry
from strategies.errors import InvalidSchema

DATA = Path(__file__).resolve().parents[1] / "data" / "tools_50.json"
BUILTIN = builtin_registry()
FIFTY = load_registry(str(DATA))
ALL_TOOLS = list(BUILTIN) + list(FIFTY)
IDS = [f"{'builtin' if i < len(BUILTIN) else 'file'}:{t.name}" for i, t in enumerate(ALL_TOOLS)]


def _errors(tool, value):
    return [e.message for e in tool_validator(tool).iter_errors(value)]


def _check(schema, value):
    cls = validator_for_schema(schema)
    errors = [e.message for e in cls(schema, format_checker=FormatChecker()).iter_errors(value)]
    assert not errors, (value, errors)


def test_the_data_file_is_large_and_varied():
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    assert len(raw) >= 50
    text = DATA.read_text(encoding="utf-8")
    for keyword in ("$ref", "$defs", "definitions", "oneOf", "anyOf", "allOf", "prefixItems", "uniqueItems",
                    "multipleOf", "nullable", "patternProperties", '"not"', '"if"', '"format"', '"pattern"'):
        assert keyword in text, keyword


def test_every_tool_compiles():
    assert unsupported_tools(BUILTIN) == {}
    assert unsupported_tools(FIFTY) == {}


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=IDS)
def test_random_source_values_validate(tool):
    node = compile_tool(tool)
    for seed in range(150):
        source = RandomSource(seed)
        value = node.generate(source)
        assert isinstance(value, dict)
        assert not _errors(tool, value), (seed, value, _errors(tool, value))
        # the recorded choices replay to the same value
        assert node.generate(ReplaySource(source.choices)) == value


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=IDS)
def test_zero_and_truncated_choices_still_validate(tool):
    """Shrinking replays shortened or zeroed sequences: they must still yield valid values."""
    node = compile_tool(tool)
    assert not _errors(tool, node.generate(ReplaySource([])))
    for seed in range(20):
        source = RandomSource(seed)
        node.generate(source)
        choices = source.choices
        for variant in (choices[: len(choices) // 2], [0] * len(choices), [c // 2 for c in choices],
                        [10 ** 9] * len(choices)):
            value = node.generate(ReplaySource(variant))
            assert not _errors(tool, value), (variant, value)


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_hypothesis_source_values_validate(data):
    tool = data.draw(st.sampled_from(ALL_TOOLS))
    value = tool_arguments(HypothesisSource(data.draw), tool)
    assert not _errors(tool, value), (tool.name, value)


@st.composite
def weather_arguments(draw):
    return compile_tool(BUILTIN["get_weather"]).generate(HypothesisSource(draw))


@settings(max_examples=150, deadline=None)
@given(weather_arguments())
def test_composite_strategy_for_get_weather(arguments):
    assert not _errors(BUILTIN["get_weather"], arguments)
    assert set(arguments) <= {"city", "date", "unit"} and arguments["city"]


def test_zero_choices_are_the_simplest_values():
    node = compile_tool(BUILTIN["get_weather"])
    assert node.generate(ReplaySource([])) == {"city": "a"}
    assert compile_schema({"type": "integer", "minimum": -5, "maximum": 5}).generate(ReplaySource([])) == 0
    assert compile_schema({"type": "integer", "minimum": 7}).generate(ReplaySource([])) == 7
    assert compile_schema({"type": "string"}).generate(ReplaySource([])) == ""
    assert compile_schema({"enum": ["b", "a"]}).generate(ReplaySource([])) == "b"
    assert compile_schema({"type": "array", "items": {"type": "integer"}, "minItems": 2}).generate(
        ReplaySource([])) == [0, 0]


def test_strings_are_realistic_and_hostile():
    node = compile_schema({"type": "string"})
    values = [node.generate(RandomSource(seed)) for seed in range(3000)]
    joined = "".join(values)
    for fragment in ("'", '"', "\\", "\n", "é", "北京"):
        assert fragment in joined, fragment
    assert any(re.search(r", ?[}\]]", v) for v in values)
    assert any(ord(ch) > 0xFFFF for ch in joined)  # emoji outside the BMP
    assert any(" " in v and v.isascii() and v[:1].isupper() for v in values)  # words/sentences


@pytest.mark.parametrize("schema", [
    {"type": "string", "minLength": 3, "maxLength": 5},
    {"type": "string", "format": "date"}, {"type": "string", "format": "date-time"},
    {"type": "string", "format": "time"}, {"type": "string", "format": "email"},
    {"type": "string", "format": "uri"}, {"type": "string", "format": "uuid"},
    {"type": "string", "format": "ipv4"}, {"type": "string", "format": "ipv6"},
    {"type": "string", "format": "hostname"}, {"type": "string", "format": "email", "maxLength": 12},
    {"type": "string", "pattern": "^[a-z]+$", "minLength": 4, "maxLength": 6},
    {"type": "string", "pattern": r"^(?!test)\w{3}$"},
    {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
    {"type": "number", "exclusiveMinimum": 1.5, "maximum": 1.75},
    {"type": "number", "multipleOf": 0.1, "minimum": 0.05, "maximum": 2},
    {"type": "number", "multipleOf": 0.01},
    {"type": "integer", "exclusiveMinimum": 3, "exclusiveMaximum": 6},
    {"type": "integer", "multipleOf": 7, "minimum": 10, "maximum": 100},
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "minimum": 0,
     "exclusiveMinimum": True, "maximum": 1, "exclusiveMaximum": True},
    {"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": True, "minItems": 3},
    {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True, "maxItems": 5},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
     "items": [{"type": "string"}, {"type": "null"}], "additionalItems": {"type": "integer"}},
    {"oneOf": [{"type": "integer"}, {"type": "number", "multipleOf": 0.5}]},
    {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 2}]},
    {"allOf": [{"type": "integer", "minimum": 3}, {"maximum": 9}, {"multipleOf": 3}]},
    {"type": "object", "minProperties": 2, "maxProperties": 3, "additionalProperties": {"type": "integer"}},
    {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
    {"type": "object", "properties": {"k": {"type": "string"}}, "propertyNames": {"maxLength": 3}},
    {"type": "string", "not": {"enum": ["", "a"]}},
    {}, True,
])
def test_keyword_coverage(schema):
    node = compile_schema(schema)
    for seed in range(150):
        _check(schema, node.generate(RandomSource(seed)))
    _check(schema, node.generate(ReplaySource([])))


def test_recursive_refs_are_bounded():
    schema = {"$defs": {"t": {"type": "object", "required": ["v"], "additionalProperties": False,
                              "properties": {"v": {"type": "integer"},
                                             "kids": {"type": "array", "items": {"$ref": "#/$defs/t"}},
                                             "next": {"$ref": "#/$defs/t"}}}},
              "$ref": "#/$defs/t"}
    node = compile_schema(schema)

    def depth(value):
        if not isinstance(value, dict):
            return 0
        children = value.get("kids", []) + ([value["next"]] if "next" in value else [])
        return 1 + max((depth(c) for c in children), default=0)

    depths = []
    for seed in range(300):
        value = node.generate(RandomSource(seed))
        _check(schema, value)
        depths.append(depth(value))
    assert max(depths) >= 3  # it does recurse...
    assert max(depths) <= 6  # ...but stops past the bound


def test_oneof_matches_exactly_one_branch():
    schema = {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]}
    node = compile_schema(schema)
    assert isinstance(node, OneOfNode)
    validator = Draft202012Validator(schema)
    for seed in range(300):
        assert validator.is_valid(node.generate(RandomSource(seed)))


def test_default_and_examples_are_likely_values():
    node = compile_schema({"type": "string", "default": "Paris", "examples": ["Xi'an"]})
    values = {node.generate(RandomSource(seed)) for seed in range(400)}
    assert {"Paris", "Xi'an"} <= values


def test_nullable_generates_null_and_loader_makes_it_standard(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"f": {"type": "object", "properties": {
        "x": {"type": "string", "nullable": True}}, "required": ["x"]}}))
    tool = load_registry(str(path))["f"]
    assert tool.schema["properties"]["x"]["type"] == ["string", "null"]
    values = [compile_tool(tool).generate(RandomSource(s))["x"] for s in range(300)]
    assert None in values and any(isinstance(v, str) for v in values)


def test_fallback_pool_is_deterministic_and_simplest_first():
    # unevaluatedProperties has no native generator, checked or not: the pool is the generator
    schema = {"type": "object", "patternProperties": {"^x_[a-z]+$": {"type": "integer"}},
              "additionalProperties": False, "minProperties": 1, "unevaluatedProperties": False}
    node = compile_schema(schema)
    assert isinstance(node, PoolNode)
    values = node.values()
    assert values and all(Draft202012Validator(schema).is_valid(v) for v in values)
    lengths = [len(json.dumps(v, ensure_ascii=False)) for v in values]
    assert lengths == sorted(lengths)
    assert node.generate(ReplaySource([])) == values[0]


def test_unsupported_schema_raises_with_pointer():
    tool = Tool(name="impossible", schema={"type": "object", "required": ["a"], "properties": {
        "a": {"type": "integer", "minimum": 5, "maximum": 1}}})
    with pytest.raises(InvalidSchema) as info:
        compile_tool(tool)
    assert "tool 'impossible'" in str(info.value) and "/properties/a" in str(info.value)
    registry = Registry(tools={"impossible": tool, "ok": BUILTIN["calculate"]})
    assert list(unsupported_tools(registry)) == ["impossible"]
    with pytest.raises(InvalidSchema, match=r"at /properties/x: .*does not resolve"):
        compile_schema({"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}})


def test_compile_tool_is_cached_per_tool():
    tool = BUILTIN["book_hotel"]
    assert compile_tool(tool) is compile_tool(tool)
    twin = Tool(name=tool.name, schema={"type": "object", "properties": {}, "additionalProperties": False})
    assert compile_tool(twin) is not compile_tool(tool)
    assert compile_tool(twin).generate(RandomSource(1)) == {}


@pytest.mark.parametrize("pattern", [
    r"^\d{4}-\d{2}-\d{2}$", r"^[A-Z]{1,5}(\.[A-Z]{1,2})?$", r"^(a|bc)+\1$", r"[^\s\"]+", r"(?i)^abc[x-z]$",
    r"^[\u4e00-\u9fff]{2,4}$", r"^\+?[1-9]\d{1,14}$", r"^(?P<q>['\"]).*(?P=q)$", r"^[\w.+-]+@[\w-]+\.\w+$",
    r"^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$",
])
def test_regex_generator_matches(pattern):
    gen = compile_pattern(pattern)
    for seed in range(200):
        value = gen.generate(RandomSource(seed))
        assert re.search(pattern, value), (pattern, value)
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    assert re.search(pattern, gen.generate(ReplaySource([])))


def test_regex_invalid_pattern_is_reported():
    with pytest.raises(UnsupportedPattern, match="not a valid regular expression"):
        compile_pattern("a(")


def test_pattern_strings_come_from_a_cached_plan_of_verified_values():
    """One choice per pattern string: most draws pick a pre-verified value, some walk a fresh one;
    choice 0 is the shortest; tools with the same pattern share the plan."""
    import re as _re

    from strategies._internal.schema.patterns import PlannedStringNode

    email = r"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$"
    schema = {"type": "string", "pattern": email}
    node = compile_schema(schema)
    assert isinstance(node, PlannedStringNode) and len(node.values) >= 64
    assert node.values == sorted(node.values, key=lambda v: (len(v), v))
    assert all(_re.search(email, v) for v in node.values)
    assert node.generate(ReplaySource([])) == node.values[0]
    source = RandomSource(5)
    drawn = [node.generate(source) for _ in range(2000)]
    assert all(_re.search(email, v) for v in drawn)
    fresh = [v for v in drawn if v not in node.values]
    assert fresh and len(set(drawn)) > 100  # fresh walks keep the variety beyond the plan
    assert compile_schema({"type": "string", "pattern": email, "description": "another tool"}).values is node.values
    bounded = compile_schema({"type": "string", "pattern": r"^[a-z]+$", "maxLength": 3})
    assert all(len(v) <= 3 for v in bounded.values) and bounded.values[0] == "a"


NARROWING_SCHEMAS = [
    {"type": "object", "patternProperties": {"^[a-z][a-z0-9_]*$": {"type": "string"}}, "additionalProperties": False},
    {"type": "object", "patternProperties": {"^x_[a-z]+$": {"type": "integer"}}, "additionalProperties": False,
     "minProperties": 1},
    {"type": "number", "not": {"maximum": 0}},
    {"type": "object", "properties": {"country": {"enum": ["US", "CA", "FR"]}, "value": {"type": "number"}},
     "required": ["country"], "if": {"properties": {"country": {"not": {"const": "US"}}}},
     "then": {"required": ["value"]}, "additionalProperties": False},
    {"type": "object", "properties": {"card": {"type": "string", "pattern": "^[0-9]{16}$"}, "address": {"type": "string"}},
     "dependentRequired": {"card": ["address"]}, "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "propertyNames": {"maxLength": 3}},
]


@pytest.mark.parametrize("schema", NARROWING_SCHEMAS, ids=lambda s: ",".join(sorted(set(s) - {"type"})))
def test_narrowing_keywords_are_generated_natively_and_checked_without_a_hypothesis_pool(schema, monkeypatch):
    """``not``, ``if``/``then``, ``dependentRequired``, ``patternProperties``, ``propertyNames``: the
    rest of the subschema is compiled natively and each value checked against the whole, so no
    hypothesis-jsonschema pool (0.2–2 s each) is drawn for a value the native walk can give."""
    from strategies._internal.schema import fallback

    def no_pool(*_args):
        raise AssertionError("a hypothesis-jsonschema pool was drawn")

    monkeypatch.setattr(fallback, "_draw_pool", no_pool)
    monkeypatch.setattr(fallback, "_POOL_CACHE", {})
    node = compile_schema(schema)
    validator = Draft202012Validator(schema)
    values = [node.generate(RandomSource(seed)) for seed in range(300)]
    assert all(validator.is_valid(v) for v in values)
    assert len({json.dumps(v, sort_keys=True) for v in values}) >= 20  # varied, not one safe value


@pytest.mark.parametrize("schema", NARROWING_SCHEMAS, ids=lambda s: ",".join(sorted(set(s) - {"type"})))
def test_a_draw_whose_native_attempts_all_fail_gets_a_valid_value_without_a_hypothesis_pool(schema, monkeypatch):
    """The rare value whose every native attempt fails the whole subschema (about 1 draw in 3,000
    for an if/then) comes from what the compile-time seeds gave, simplest first: no pool, which
    cost a worker up to 2 s in the middle of its budget."""
    from strategies._internal.schema import fallback
    from strategies._internal.schema.nodes import CheckedNode

    def no_pool(*_args):
        raise AssertionError("a hypothesis-jsonschema pool was drawn")

    monkeypatch.setattr(fallback, "_draw_pool", no_pool)
    monkeypatch.setattr(fallback, "_POOL_CACHE", {})
    node = compile_schema(schema)
    assert isinstance(node, CheckedNode)
    attempts = []
    node.inner = lambda source: attempts.append(1)  # null: valid for none of them
    validator = Draft202012Validator(schema)
    values = [node.generate(RandomSource(seed)) for seed in range(50)]
    assert attempts and all(validator.is_valid(v) for v in values)
    assert len({json.dumps(v, sort_keys=True) for v in values}) >= 2
    simplest = node.generate(ReplaySource(()))  # choice 0: the simplest value the seeds gave
    assert validator.is_valid(simplest) and all(len(json.dumps(simplest)) <= len(json.dumps(v)) for v in values)


# a draw that keeps failing falls back to the pool, which hypothesis-jsonschema draws with @given
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.nested_given])
@given(schema=st.sampled_from(NARROWING_SCHEMAS), choices=st.lists(st.integers(0, 2**16), max_size=40))
def test_any_choice_sequence_yields_a_valid_value_for_narrowing_keywords(schema, choices):
    """Shrinking replays truncated and zeroed choice sequences: whatever they are, the checked node
    (its retries, then the pool) never gives an invalid value."""
    assert Draft202012Validator(schema).is_valid(compile_schema(schema).generate(ReplaySource(choices)))


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="abcABC0", max_size=400), limit=st.integers(0, 300))
def test_the_validator_with_cut_messages_judges_exactly_as_jsonschema(text, limit):
    """pattern and maxLength errors show a long string cut (its repr cost more than the check),
    and judge every string exactly as jsonschema's own keywords do."""
    import jsonschema

    from strategies._internal.schema.validators import SHOWN_CHARS

    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^[A-C]+$", "maxLength": limit}}}
    ours = validator_for_schema(schema)(schema)
    theirs = jsonschema.Draft202012Validator(schema)
    assert ours.is_valid({"a": text}) == theirs.is_valid({"a": text})
    assert sorted(e.validator for e in ours.iter_errors({"a": text})) == \
        sorted(e.validator for e in theirs.iter_errors({"a": text}))
    assert all(len(e.message) < SHOWN_CHARS + 100 for e in ours.iter_errors({"a": text}))
