"""The semantic operators write calls that break exactly the rule their class names.

Every later verdict depends on a sample's ground truth, so these tests check each operator's truth
with real jsonschema validation (Draft 2020-12, standard FormatChecker): an invalid_argument_type
sample must fail on ``type``, a missing_argument sample on ``required``, and so on; an injection
sample must stay valid with the payload verbatim in one string argument.

Two layers: operators driven directly on hand-written calls of a varied local registry (so the
original calls are known and nested objects, arrays of objects, ``$ref``, ``allOf``, ``anyOf`` and
``unevaluatedProperties`` are exercised), and — when the schema compiler and the built-in registry
are present — end to end through ``build_sample`` and ``replay_recipe``.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.validators import validator_for

from strategies._internal.operators import constraint_violation, injection_payload, words
from strategies._internal.formats import FORMATS, render
from strategies._internal.mutations import OPERATORS, MutationContext, NotApplicable
from strategies._internal.schemainfo import ITEMS, locate, resolve, schema_info, violates_type
from strategies._internal.source import RandomSource
from strategies._internal.tools import Registry, Tool, builtin_registry
from strategies._internal.build import Unbuildable, build_sample

BUILTIN = builtin_registry()

SEMANTIC = ("unknown_function", "invalid_argument_type", "missing_argument", "unexpected_argument",
            "constraint_violation", "duplicate_call", "injection_payload")
SEM_OPS = sorted(name for name, op in OPERATORS.items() if op.anomaly_class in SEMANTIC)
CONSTRAINT_VALIDATORS = {"enum", "const", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
                         "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "minItems", "maxItems",
                         "uniqueItems"}
CLASS_VALIDATORS = {"invalid_argument_type": {"type"}, "missing_argument": {"required"},
                    "unexpected_argument": {"additionalProperties", "unevaluatedProperties"},
                    "constraint_violation": CONSTRAINT_VALIDATORS}

# --------------------------------------------------------------------------- a varied local registry

LOCAL = {
    "get_weather": ({
        "type": "object",
        "properties": {"city": {"type": "string", "minLength": 1, "maxLength": 100},
                       "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                       "days": {"type": "integer", "minimum": 1, "maximum": 14}},
        "required": ["city"], "additionalProperties": False,
    }, [{"city": "Paris"}, {"city": "Oslo", "unit": "celsius", "days": 3}]),
    "searchFlights": ({
        "type": "object",
        "$defs": {"iata": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "properties": {"origin": {"$ref": "#/$defs/iata"}, "destination": {"$ref": "#/$defs/iata"},
                       "date": {"type": "string", "format": "date"},
                       "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
                       "cabin": {"anyOf": [{"type": "string", "enum": ["economy", "business"]},
                                           {"type": "null"}]}},
        "required": ["origin", "destination", "date"], "additionalProperties": False,
    }, [{"origin": "CDG", "destination": "JFK", "date": "2025-03-14"},
        {"origin": "OSL", "destination": "LHR", "date": "2025-12-01", "passengers": 2, "cabin": None}]),
    "send_email": ({
        "type": "object",
        "properties": {"to": {"type": "array", "items": {"type": "string", "format": "email"},
                              "minItems": 1, "maxItems": 5, "uniqueItems": True},
                       "subject": {"type": "string", "maxLength": 50},
                       "body": {"type": "string"}, "urgent": {"type": "boolean"}},
        "required": ["to", "subject"], "additionalProperties": False,
    }, [{"to": ["ann@example.com"], "subject": "Hi", "body": "See you at 5.", "urgent": True},
        {"to": ["a@x.io", "b@y.io"], "subject": "Report"}]),
    "calculate": ({
        "type": "object",
        "properties": {"expression": {"type": "string"},
                       "precision": {"type": "integer", "minimum": 0, "maximum": 10}},
        "required": ["expression"],
    }, [{"expression": "2 + 2"}, {"expression": "sqrt(16) * 3", "precision": 2}]),
    "create-order": ({
        "type": "object",
        "properties": {
            "items": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": False, "required": ["sku", "qty"],
                "properties": {"sku": {"type": "string", "pattern": "^SKU-\\d{4}$"},
                               "qty": {"type": "integer", "exclusiveMinimum": 0},
                               "price": {"type": "number", "multipleOf": 0.5}}}},
            "customer": {"type": "object", "required": ["name"],
                         "properties": {"name": {"type": "string"}, "email": {"type": "string", "format": "email"}}},
            "notes": {"type": ["string", "null"]},
            "delivery_date": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
        },
        "required": ["items", "customer"],
    }, [{"items": [{"sku": "SKU-0001", "qty": 2, "price": 9.5}], "customer": {"name": "Ann"}},
        {"items": [{"sku": "SKU-1234", "qty": 1}, {"sku": "SKU-9999", "qty": 3, "price": 4}],
         "customer": {"name": "Bo", "email": "bo@example.com"}, "notes": None, "delivery_date": "2025-01-31"}]),
    "set_alarm": ({
        "allOf": [{"type": "object", "properties": {"time": {"type": "string", "format": "time"}},
                   "required": ["time"]},
                  {"properties": {"label": {"type": "string", "maxLength": 40}, "enabled": {"const": True}}}],
        "unevaluatedProperties": False,
    }, [{"time": "07:30:00", "label": "wake up", "enabled": True}, {"time": "23:00:00"}]),
}
LOCAL_REGISTRY = Registry(tools={n: Tool(name=n, schema=s, description="") for n, (s, _) in LOCAL.items()},
                          source="<test>")
for _name, (_schema, _calls) in LOCAL.items():  # the fixtures themselves must be valid
    for _args in _calls:
        Draft202012Validator(_schema, format_checker=FormatChecker()).validate(_args)


@functools.lru_cache(maxsize=None)
def _validator(tool: Tool):
    """The validator of the tool's own draft (``$schema``), Draft 2020-12 by default."""
    cls = validator_for(tool.schema, default=Draft202012Validator)
    return cls(tool.schema, format_checker=FormatChecker())


def _all_validators(errors) -> set:
    out = set()
    for error in errors:
        out.add(error.validator)
        out |= _all_validators(error.context or ())
    return out


def errors_of(registry, call) -> set:
    return _all_validators(_validator(registry[call["name"]]).iter_errors(call["arguments"]))


def mutate(op_name: str, registry, tool, calls: list, fmt: str, seed: int, chatter: bool = False):
    """Run one operator directly, as build_sample would, on known calls; None when not applicable."""
    source = RandomSource(seed)

    def render_in_format(new_calls, style=None):
        return render(fmt, new_calls, source, chatter=chatter, style=style)

    ctx = MutationContext(registry=registry, tool=tool, format=fmt, calls=copy.deepcopy(calls),
                          chatter=chatter, render=render_in_format)
    before = copy.deepcopy(ctx.calls)
    try:
        mutation = OPERATORS[op_name](source, ctx)
    except NotApplicable:
        return None
    assert ctx.calls == before, "an operator must not modify the context's calls"
    return mutation


def _leaves(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, path + (i,))
    else:
        yield path, value


def check_truth(op_name: str, registry, truth: list, original=None, fmt: str = "json") -> None:
    """The written calls break the rule the operator's class names (and only in the expected way)."""
    op = OPERATORS[op_name]
    assert isinstance(truth, list) and truth, "semantic truth is the calls as written"
    if original is not None:
        assert truth != original
    cls = op.anomaly_class
    if cls == "unknown_function":
        unknown = [c for c in truth if c["name"] not in registry]
        assert len(unknown) == 1
        if original is not None:
            assert len(truth) == len(original)
            changed = [(a, b) for a, b in zip(original, truth) if a != b]
            assert len(changed) == 1 and changed[0][0]["arguments"] == changed[0][1]["arguments"]
            assert changed[0][1]["name"] != changed[0][0]["name"]
    elif cls == "duplicate_call":
        assert any(truth[i] == truth[j] for i in range(len(truth)) for j in range(i + 1, len(truth)))
        if original is not None:
            assert all(c in truth for c in original)
            assert 1 <= len(truth) - len(original) <= 2
        for call in truth:
            assert not errors_of(registry, call)
    elif cls == "injection_payload":
        for call in truth:
            assert not errors_of(registry, call), "an injection sample stays otherwise valid"
        names = [t.name for t in registry]
        payloads = [p for kind in (*injection_payload.PAYLOADS, "fake_call") for p in injection_payload.payload_texts(kind, names, fmt)]
        strings = [v for c in truth for _, v in _leaves(c["arguments"]) if isinstance(v, str)]
        assert any(p in s for p in payloads for s in strings)
        if original is not None:
            assert len(truth) == len(original)
            diffs = [(p, a, b) for x, y in zip(original, truth)
                     for (p, a), (_, b) in zip(_leaves(x["arguments"]), _leaves(y["arguments"])) if a != b]
            assert len(diffs) == 1 and [x["name"] for x in original] == [y["name"] for y in truth]
            path, old, new = diffs[0]
            assert isinstance(new, str) and any(p in new for p in payloads)
    else:
        found = set()
        for call in truth:
            assert call["name"] in registry
            found |= errors_of(registry, call)
        assert found & CLASS_VALIDATORS[cls], f"{op_name}: expected {CLASS_VALIDATORS[cls]}, got {found}"


def _json_denotes(text: str, fmt: str):
    """For the bare json format without chatter, the calls the text denotes."""
    value = json.loads(text)
    return value if isinstance(value, list) else [value]


# --------------------------------------------------------------------------- registry of operators


def test_at_least_two_operators_per_semantic_class():
    assert len(SEM_OPS) >= 18
    for cls in SEMANTIC:
        assert len([n for n in SEM_OPS if OPERATORS[n].anomaly_class == cls]) >= 2, cls


@pytest.mark.parametrize("op_name", SEM_OPS)
def test_operator_has_description(op_name):
    op = OPERATORS[op_name]
    assert op.description and op.description != op_name and len(op.description) < 120


# --------------------------------------------------------------------------- direct, on known calls

LOCAL_CASES = [(name, i) for name, (_, calls) in LOCAL.items() for i in range(len(calls))]


#: Semantic operators of JSON-carrying formats (the reasoning ones need a family with reasoning:
#: test_reasoning_closer_in_an_argument_is_the_call_as_written).
JSON_SEM_OPS = [name for name in SEM_OPS if OPERATORS[name].applies_to_format("json")]


def test_reasoning_closer_in_an_argument_is_the_call_as_written():
    from fuzzer.targets.reference import parse

    made = 0
    for seed in range(40):
        source = RandomSource(seed)
        try:
            sample = build_sample(source, registry=BUILTIN, tool=BUILTIN["send_email"], format="hermes",
                                  operator="reasoning_closer_in_argument", reasoning=True)
        except Unbuildable:
            continue
        made += 1
        assert any(c in sample.text.split("<tool_call>", 1)[1] for c in ("</think>", "[/THINK]", "<think>"))
        assert parse(sample.text) == sample.calls, sample.text  # the reference is not fooled
    assert made >= 10


@pytest.mark.parametrize("op_name", JSON_SEM_OPS)
def test_operator_truth_on_local_tools(op_name):
    op = OPERATORS[op_name]
    produced = 0
    for tool in LOCAL_REGISTRY:
        if not op.applies(tool, "json"):
            continue
        for args in LOCAL[tool.name][1]:
            calls = [{"name": tool.name, "arguments": args}]
            multi = calls + [{"name": "calculate", "arguments": {"expression": "1 + 1"}}]
            for seed in range(12):
                for base in (calls, multi):
                    m = mutate(op_name, LOCAL_REGISTRY, tool, base, "json", seed)
                    if m is None:
                        continue
                    produced += 1
                    check_truth(op_name, LOCAL_REGISTRY, m.calls, base)
                    assert _json_denotes(m.text, "json") == m.calls != base
                    assert m.description and "\n" not in m.description
    assert produced, f"{op_name} never applied to the local registry"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_operator_renders_in_every_format(fmt):
    for op_name in SEM_OPS:
        op = OPERATORS[op_name]
        for tool in LOCAL_REGISTRY:
            if not op.applies(tool, fmt):
                continue
            calls = [{"name": tool.name, "arguments": LOCAL[tool.name][1][-1]}]
            for seed in range(3):
                m = mutate(op_name, LOCAL_REGISTRY, tool, calls, fmt, seed, chatter=bool(seed % 2))
                if m is None:
                    continue
                check_truth(op_name, LOCAL_REGISTRY, m.calls, calls, fmt)
                assert m.text.strip()


LOCAL_APPLICABLE = [(op_name, case, fmt) for op_name in SEM_OPS for case in LOCAL_CASES for fmt in sorted(FORMATS)
                    if OPERATORS[op_name].applies(LOCAL_REGISTRY[case[0]], fmt)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_property_any_operator_any_local_call(data, seed):
    op_name, case, fmt = data.draw(st.sampled_from(LOCAL_APPLICABLE))
    tool = LOCAL_REGISTRY[case[0]]
    calls = [{"name": tool.name, "arguments": LOCAL[tool.name][1][case[1]]}]
    m = mutate(op_name, LOCAL_REGISTRY, tool, calls, fmt, seed)
    assume(m is not None)  # an operator that never applies fails the filter health check
    check_truth(op_name, LOCAL_REGISTRY, m.calls, calls, fmt)


def test_operators_replay_from_their_choices():
    """Same choices, same mutation: the operator draws every decision from the source."""
    from strategies._internal.source import ReplaySource

    tool = LOCAL_REGISTRY["searchFlights"]
    calls = [{"name": tool.name, "arguments": LOCAL[tool.name][1][1]}]
    for op_name in SEM_OPS:
        if not OPERATORS[op_name].applies(tool, "hermes"):
            continue
        for seed in range(4):
            first = RandomSource(seed)
            ctx = MutationContext(LOCAL_REGISTRY, tool, "hermes", copy.deepcopy(calls), False,
                                  lambda c, style=None, s=first: render("hermes", c, s, chatter=False))
            try:
                m1 = OPERATORS[op_name](first, ctx)
            except NotApplicable:
                continue
            again = ReplaySource(first.choices)
            ctx2 = MutationContext(LOCAL_REGISTRY, tool, "hermes", copy.deepcopy(calls), False,
                                   lambda c, style=None, s=again: render("hermes", c, s, chatter=False))
            assert OPERATORS[op_name](again, ctx2) == m1


def test_static_applicability_follows_schema_features():
    weather, calc, order = LOCAL_REGISTRY["get_weather"], LOCAL_REGISTRY["calculate"], LOCAL_REGISTRY["create-order"]
    assert OPERATORS["extra_argument"].applies(weather, "json")
    assert not OPERATORS["extra_argument"].applies(calc, "json")  # extra properties allowed
    assert OPERATORS["extra_argument"].applies(order, "json")  # nested items forbid extras
    assert not OPERATORS["wrapped_arguments"].applies(order, "json")
    assert OPERATORS["enum_value_outside"].applies(weather, "json")
    assert not OPERATORS["enum_value_outside"].applies(calc, "json")
    assert OPERATORS["natural_language_date"].applies(LOCAL_REGISTRY["searchFlights"], "json")
    assert OPERATORS["natural_language_date"].applies(order, "json")  # date-like pattern
    assert not OPERATORS["natural_language_date"].applies(weather, "json")
    assert OPERATORS["duplicate_array_items"].applies(LOCAL_REGISTRY["send_email"], "json")
    assert OPERATORS["not_multiple_of"].applies(order, "json")
    no_required = Tool("ping", {"type": "object", "properties": {"x": {"type": "string"}}})
    assert not OPERATORS["drop_all_arguments"].applies(no_required, "json")
    assert not OPERATORS["drop_required_argument"].applies(no_required, "json")


def test_unknown_names_avoid_the_registry_and_unrepresentable_names():
    registry = Registry(tools={n: Tool(n, {"type": "object"}) for n in
                               ("get_weather", "fetch_weather", "GetWeather", "functions.get_weather")})
    tool = registry["get_weather"]
    calls = [{"name": "get_weather", "arguments": {}}]
    seen = set()
    for op_name in ("hallucinated_function", "function_name_typo", "function_name_case",
                    "function_namespace_prefix"):
        for fmt in ("json", "pythonic"):
            for seed in range(30):
                m = mutate(op_name, registry, tool, calls, fmt, seed)
                assert m is not None
                name = m.calls[0]["name"]
                assert name not in registry
                if fmt == "pythonic":
                    assert all(part.isidentifier() for part in name.split("."))
                seen.add(name)
    assert {"getWeather", "GET_WEATHER", "tools.get_weather"} <= seen and len(seen) > 30


def test_name_derivations_are_generic():
    assert words.hallucinated_names("get_weather")[0] == "fetch_weather"
    assert "get_forecast" in words.hallucinated_names("get_weather")
    assert {"book_flights", "cancel_flight"} <= set(words.hallucinated_names("search_flights"))
    assert "fetchStockPrice" in words.hallucinated_names("getStockPrice")
    assert "compute" in words.hallucinated_names("calculate")
    assert "get_widget" in words.hallucinated_names("widget")
    for name in ("get_weather", "x", "ListAllThings", "do-it"):
        assert name not in words.hallucinated_names(name)
        assert name not in words.typo_names(name)
        assert name not in words.case_changed_names(name)
    assert "location" in words.synonyms("city") and "to" in words.synonyms("recipients")
    assert "departure_day" in words.synonyms("departure_date")
    assert words.synonyms("zzq") == ["zzq_value", "zzq_name"]
    assert words.number_words(21) == "twenty-one" and words.number_words(-3) == "minus three"
    assert words.number_words(1002) == "one thousand two"


@given(st.floats(-1e6, 1e6, allow_nan=False), st.sampled_from([0.5, 0.01, 2, 3, 0.25]))
def test_is_multiple_agrees_with_jsonschema(value, step):
    valid = Draft202012Validator({"multipleOf": step}).is_valid(value)
    assert constraint_violation.is_multiple(value, step) == valid


# --------------------------------------------------------------------------- schemainfo


def test_schemainfo_follows_refs_and_merges_allof():
    flights = schema_info(LOCAL_REGISTRY["searchFlights"])
    assert flights.properties["origin"].pattern == "^[A-Z]{3}$"
    assert flights.properties["origin"].types == {"string"}
    assert flights.properties["cabin"].types == {"string", "null"} and flights.properties["cabin"].nullable
    assert flights.required == ("origin", "destination", "date") and flights.extra_forbidden
    alarm = schema_info(LOCAL_REGISTRY["set_alarm"])
    assert set(alarm.properties) == {"time", "label", "enabled"}
    assert alarm.required == ("time",) and alarm.extra_forbidden
    assert alarm.properties["enabled"].enum == (True,) and alarm.properties["enabled"].types is None
    order = schema_info(LOCAL_REGISTRY["create-order"])
    qty = order.field(("items", ITEMS, "qty"))
    assert qty.exclusive_minimum == 0 and qty.required
    assert order.object_at(("items", ITEMS)).extra_forbidden and not order.root.extra_forbidden
    assert order.properties["notes"].nullable
    args = LOCAL["create-order"][1][1]
    assert list(locate(args, ("items", ITEMS, "price"))) == [("items", 1, "price")]


def test_schemainfo_is_conservative_about_unknowns():
    info = schema_info({"type": "object", "properties": {
        "a": {"anyOf": [{"type": "string"}, {"minimum": 3}]},  # a branch without a type
        "b": {"$ref": "https://example.com/remote.json"},
        "c": {"type": "integer", "exclusiveMinimum": True, "minimum": 5},  # draft-04 style
        "d": {"type": "string", "nullable": True}}})
    assert info.properties["a"].types is None and not violates_type(1, info.properties["a"].types)
    assert info.properties["b"].types is None
    assert info.properties["c"].exclusive_minimum == 5 and info.properties["c"].minimum is None
    assert info.properties["d"].nullable
    assert resolve({"$ref": "#/nope"}, {}) == {}
    assert not info.extra_forbidden


def test_schemainfo_ignores_ref_siblings_before_2019_09():
    defs = {"s": {"type": "string"}}
    modern = schema_info({"$defs": defs, "properties": {"a": {"$ref": "#/$defs/s", "maxLength": 3}}})
    legacy = schema_info({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": defs,
                          "properties": {"a": {"$ref": "#/definitions/s", "maxLength": 3}}})
    assert modern.properties["a"].max_length == 3 and modern.properties["a"].types == {"string"}
    assert legacy.properties["a"].max_length is None and legacy.properties["a"].types == {"string"}


def test_injection_respects_string_constraints():
    tool = Tool("t", {"type": "object", "additionalProperties": False, "required": ["code", "note"],
                      "properties": {"code": {"type": "string", "pattern": "^[A-Z]+$"},
                                     "tag": {"type": "string", "enum": ["a", "b"]},
                                     "note": {"type": "string", "maxLength": 40}}})
    registry = Registry(tools={"t": tool})
    calls = [{"name": "t", "arguments": {"code": "ABC", "tag": "a", "note": "hi"}}]
    for op_name in ("sql_injection", "shell_injection", "path_traversal", "prompt_injection", "nested_tool_call"):
        for seed in range(20):
            m = mutate(op_name, registry, tool, calls, "hermes", seed)
            if m is None:
                continue
            args = m.calls[0]["arguments"]
            assert args["code"] == "ABC" and args["tag"] == "a"  # never a pattern or enum field
            assert len(args["note"]) <= 40
            check_truth(op_name, registry, m.calls, calls, "hermes")


def test_type_violations_respect_type_lists():
    tool = Tool("t", {"type": "object", "required": ["n", "s"],
                      "properties": {"n": {"type": ["integer", "string"]}, "s": {"type": ["string", "null"]},
                                     "b": {"type": "boolean"}}})
    registry = Registry(tools={"t": tool})
    calls = [{"name": "t", "arguments": {"n": 2, "s": "x", "b": True}}]
    assert mutate("number_as_string", registry, tool, calls, "json", 0) is None
    assert mutate("null_for_required", registry, tool, calls, "json", 0) is not None  # n is not nullable
    for seed in range(20):
        m = mutate("null_for_required", registry, tool, calls, "json", seed)
        assert m.calls[0]["arguments"]["s"] == "x"
        m = mutate("boolean_as_string", registry, tool, calls, "json", seed)
        assert m.calls[0]["arguments"]["b"] in ("true", "True", "yes", "1")


# --------------------------------------------------------------------------- end to end (build_sample)


def _builtin():
    from strategies._internal.tools import builtin_registry

    return builtin_registry()


def _tools_50():
    from strategies._internal.tools import load_registry

    return load_registry(Path(__file__).resolve().parents[1] / "data" / "tools_50.json")


def _build(registry, tool, fmt, op_name, seed):
    from strategies._internal.build import Unbuildable, build_sample

    try:
        return build_sample(RandomSource(seed), registry=registry, tool=tool, format=fmt, operator=op_name)
    except Unbuildable:
        return None


def _end_to_end(registry, tools, seeds):
    from strategies._internal.build import replay_recipe

    built = {n: 0 for n in SEM_OPS}
    for op_name in SEM_OPS:
        op = OPERATORS[op_name]
        for tool in tools:
            for fmt in sorted(FORMATS):
                if not op.applies(tool, fmt):
                    continue
                for seed in seeds:
                    sample = _build(registry, tool, fmt, op_name, seed)
                    if sample is None:
                        continue
                    built[op_name] += 1
                    assert sample.anomaly_class == op.anomaly_class and sample.operator == op_name
                    check_truth(op_name, registry, sample.calls, None, fmt)
                    assert replay_recipe(sample.recipe, registry) == sample
    return built


def test_end_to_end_builtin_registry():
    registry = _builtin()
    built = _end_to_end(registry, list(registry), range(3))
    for cls in SEMANTIC:
        assert any(built[n] for n in SEM_OPS if OPERATORS[n].anomaly_class == cls), cls


def test_end_to_end_varied_tools_file():
    registry = _tools_50()
    tools = list(registry)[:: max(1, len(registry) // 8)]
    built = _end_to_end(registry, tools, range(2))
    assert sum(built.values()) > 0


def _applicable(registry):
    return [(op_name, tool.name, fmt) for op_name in SEM_OPS for tool in registry for fmt in sorted(FORMATS)
            if OPERATORS[op_name].applies(tool, fmt)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers())
def test_property_build_sample_truth(data, seed):
    """Any applicable (operator, built-in tool, format) and any seed: the declared class, a true truth."""
    from strategies._internal.build import replay_recipe

    registry = _builtin()
    op_name, tool_name, fmt = data.draw(st.sampled_from(_applicable(registry)))
    sample = _build(registry, registry[tool_name], fmt, op_name, seed)
    assume(sample is not None)
    assert sample.anomaly_class == OPERATORS[op_name].anomaly_class
    check_truth(op_name, registry, sample.calls, None, fmt)
    assert replay_recipe(sample.recipe, registry) == sample


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_shrunk_choices_build_the_same_class_or_unbuildable(data, seed):
    """Zeroed, truncated or edited choice sequences (what a shrinker tries) still build a sample of
    the same class with a true truth, or raise Unbuildable: never another exception."""
    from strategies._internal.build import Unbuildable, build_sample
    from strategies._internal.source import ReplaySource

    registry = _builtin()
    op_name, tool_name, fmt = data.draw(st.sampled_from(_applicable(registry)))
    tool = registry[tool_name]
    sample = _build(registry, tool, fmt, op_name, seed)
    assume(sample is not None)
    choices = list(sample.recipe.choices)
    cut = data.draw(st.integers(0, len(choices)))
    edits = data.draw(st.lists(st.tuples(st.integers(0, max(0, len(choices) - 1)), st.integers(0, 3)), max_size=4))
    edited = list(choices)
    for index, value in edits:
        if edited:
            edited[index] = value
    for variant in ([0] * len(choices), choices[:cut], [], edited):
        try:
            again = build_sample(ReplaySource(variant), registry=registry, tool=tool, format=fmt,
                                 operator=op_name, chatter=sample.recipe.chatter, multi=sample.recipe.multi)
        except Unbuildable:
            continue
        assert again.anomaly_class == OPERATORS[op_name].anomaly_class
        check_truth(op_name, registry, again.calls, None, fmt)
