"""The one kernel of each JSON and JSON Schema mechanism: equality and canonical forms, types, pointers
and $ref, allOf merging, drafts, and the shortlex order."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import example, given, settings, strategies as st

from strategies.json_schemas import (
    ignores_ref_siblings, legacy_draft, merge_schemas, normalize_local, normalize_openapi, pointer,
    resolve_pointer, validator_class,
)
from strategies.json_values import (
    canonical, canonical_json, copy_json, json_equal, json_identical, json_kind, json_type_name, json_types, shortlex,
)

scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from([0.0, 1.0, 2.5, -1.0]) | \
    st.sampled_from(["", "1", "a", "true"])
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["a", "b", "c"]), inner, max_size=3), max_leaves=6)


def test_python_equality_is_not_json_equality():
    assert True == 1 and {"x": True} == {"x": 1}  # why the kernel exists
    assert not json_equal(True, 1) and not json_equal({"x": True}, {"x": 1}) and not json_equal([0], [False])
    assert json_equal(2, 2.0) and json_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not json_equal("2", 2) and not json_equal([1, 2], [2, 1]) and not json_equal(None, False)
    assert not json_equal(float("nan"), float("nan"))
    assert json_equal({"a": 1, "b": 2}, {"b": 2, "a": 1}) and json_equal((1, 2), [1, 2])


@settings(max_examples=300, deadline=None)
@given(values, values)
def test_canonical_forms_agree_with_json_equal(a, b):
    assert (canonical(a) == canonical(b)) == json_equal(a, b)
    assert (canonical_json(a) == canonical_json(b)) == json_equal(a, b)
    assert json_equal(a, json.loads(json.dumps(a))) and json_equal(copy_json(a), a)


exact_values = st.recursive(
    scalars | st.sampled_from([-0.0, float("nan"), 2, 2.0, 1, True, 0, False]),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner) | st.dictionaries(
        st.sampled_from(["a", "b", "c"]), inner, max_size=3), max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(exact_values, exact_values)
@example({"a": 1, "b": [2]}, {"b": [2], "a": 1}).via("key order")
@example([1], [1.0]).via("number types")
@example({"a": True}, {"a": 1}).via("booleans")
def test_identical_documents_are_those_with_the_same_repr(a, b):
    """json_identical keys a cache of judgments: it must tell apart exactly what a repr tells apart
    (number types, key order, -0.0, lists and tuples), and find a copy the same."""
    assert json_identical(a, b) == (repr(a) == repr(b))
    assert json_identical(a, copy_json(a)) == (repr(a) == repr(copy_json(a)))
    assert not json_identical(a, b) or json_equal(a, b) or "nan" in repr(a)


@given(values)
def test_copies_are_deep(value):
    copied = copy_json([value])
    copied[0] = "changed"
    assert json_equal([value], json.loads(json.dumps([value])))


def test_types():
    assert json_types(2) == json_types(2.0) == {"integer", "number"} and json_types(2.5) == {"number"}
    assert json_types(True) == {"boolean"} and json_types(None) == {"null"} and json_types((1,)) == {"array"}
    assert [json_type_name(v) for v in (None, True, 1, 1.0, "", [], {})] == [
        "null", "boolean", "integer", "number", "string", "array", "object"]
    assert json_kind(1) == json_kind(1.5) == "number" and json_kind(object()) == "other"


def test_pointers_resolve_escapes_indices_percent_encoding_and_anchors():
    root = {"$defs": {"a/b": {"x": 1}, "m~n": [{"y": 2}], "sp ace": {"z": 3}},
            "items": {"$anchor": "item", "type": "string"}}
    assert resolve_pointer(root, "#" + pointer("$defs", "a/b")) == {"x": 1}
    assert pointer("$defs", "m~n", 0) == "/$defs/m~0n/0" and resolve_pointer(root, "#/$defs/m~0n/0") == {"y": 2}
    assert resolve_pointer(root, "#/$defs/sp%20ace") == {"z": 3}
    assert resolve_pointer(root, "#item") == root["items"] and resolve_pointer(root, "#") is root
    for bad in ("#/$defs/missing", "#/$defs/m~0n/7", "#/$defs/m~0n/x", "other.json#/a", "#nope", "#/items/type/x"):
        with pytest.raises(KeyError):
            resolve_pointer(root, bad)


def test_drafts():
    assert legacy_draft({"properties": {"n": {"minimum": 0, "exclusiveMinimum": True}}}) == 4
    assert legacy_draft({"items": [{"type": "string"}]}) == 7 and legacy_draft({"type": "object"}) is None
    assert validator_class({"type": "object"}) is jsonschema.Draft202012Validator
    assert validator_class({"$schema": "http://json-schema.org/draft-07/schema#"}) is jsonschema.Draft7Validator
    assert validator_class({"exclusiveMaximum": True, "maximum": 3}) is jsonschema.Draft4Validator
    assert ignores_ref_siblings({"$schema": "http://json-schema.org/draft-07/schema#"})
    assert not ignores_ref_siblings({"type": "object"})


def test_legacy_and_openapi_forms():
    assert normalize_local({"minimum": 3, "exclusiveMinimum": True}) == {"exclusiveMinimum": 3}
    assert normalize_local({"items": [{"type": "string"}], "additionalItems": False}) == {
        "prefixItems": [{"type": "string"}], "items": False}
    assert normalize_openapi({"type": "object", "properties": {"a": {"type": "string", "nullable": True,
                                                                     "enum": ["x"], "default": {"nullable": True}}}}) \
        == {"type": "object", "properties": {"a": {"type": ["string", "null"], "enum": ["x", None],
                                                   "default": {"nullable": True}}}}


simple_schemas = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["integer", "number", "string", ["integer", "string"], ["null", "number"]]),
    "minimum": st.integers(-3, 3), "maximum": st.integers(-3, 3), "enum": st.lists(scalars, min_size=1, max_size=3),
    "minLength": st.integers(0, 2), "const": scalars, "multipleOf": st.sampled_from([1, 2, 3])})


@settings(max_examples=200, deadline=None)
@given(simple_schemas, simple_schemas, st.lists(scalars, min_size=5, max_size=10))
def test_exact_merge_is_the_conjunction_and_lossy_merge_is_sound(a, b, probes):
    both = {"allOf": [a, b]}
    merged = merge_schemas(a, b)
    lossy = merge_schemas(a, b, lossy=True)
    for value in probes:
        truth = jsonschema.Draft202012Validator(both).is_valid(value)
        if merged is False:
            assert not truth
        elif merged is not None:
            assert jsonschema.Draft202012Validator(merged).is_valid(value) == truth, (merged, value)
        if truth:  # every keyword kept by the lossy merge applies: valid values stay valid
            assert jsonschema.Draft202012Validator(lossy).is_valid(value), (lossy, value)


def test_merge_compares_keyword_values_as_json():
    assert merge_schemas({"const": True}, {"const": 1}) is None  # not "equal": True is not 1
    assert merge_schemas({"const": 1}, {"const": 1.0}) == {"const": 1}


def test_shortlex_orders_by_length_then_content():
    assert sorted(["bb", "a", "ab", ""], key=shortlex) == ["", "a", "ab", "bb"]
    assert shortlex((0, 5)) < shortlex((1, 0, 0))
