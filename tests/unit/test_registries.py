"""Formats, operators and anomaly classes live in the one generic Registry, and a format registered in
one place (with its capabilities) gets every operator that applies to it."""

from __future__ import annotations

import json

import pytest

from strategies._internal.build import Unbuildable, build_sample
from strategies._internal.formats import FORMATS, CallObject, Piece, output_format, render
from strategies._internal.mutations import OPERATORS, mutator
from strategies._internal.sample import ANOMALY_CLASSES
from strategies._internal.source import RandomSource, ReplaySource
from strategies._internal.tools import builtin_registry
from strategies.errors import ToolfuzzError, UnknownName
from strategies.registry import DuplicateName, Registry

REGISTRY = builtin_registry()


def test_formats_operators_and_classes_are_registries():
    for registry in (FORMATS, OPERATORS, ANOMALY_CLASSES):
        assert isinstance(registry, Registry)
        name = next(iter(registry))
        assert name in registry and registry[name] is dict(registry.items())[name]


@pytest.mark.parametrize("registry, wrong, right", [(FORMATS, "hermse", "hermes"),
                                                     (OPERATORS, "trailing_coma", "trailing_comma"),
                                                     (ANOMALY_CLASSES, "truncated_outptu", "truncated_output")])
def test_unknown_names_get_close_matches(registry, wrong, right):
    with pytest.raises(UnknownName) as info:
        registry[wrong]
    assert right in str(info.value) and "did you mean" in str(info.value)
    assert isinstance(info.value, ToolfuzzError) and isinstance(info.value, KeyError)


def test_registering_a_format_twice_names_both_modules_and_is_no_usage_error():
    with pytest.raises(DuplicateName) as info:
        output_format("hermes", description="again")(lambda ctx: [])
    message = str(info.value)
    assert "strategies._internal.formats" in message and __name__ in message
    assert not isinstance(info.value, ToolfuzzError)


def test_registering_an_operator_twice_names_both_modules():
    with pytest.raises(DuplicateName) as info:
        mutator("trailing_comma", anomaly_class="malformed_json")(lambda source, ctx: None)
    assert OPERATORS.module_of("trailing_comma") in str(info.value) and __name__ in str(info.value)
    with pytest.raises(ValueError):
        mutator("new_op", anomaly_class="no_such_class")


# --------------------------------------------------------------------------- a toy format, registered once

TOY = "toy_angle"


def _render_toy(ctx) -> list:
    """``<<CALLS>>`` then one JSON call object per line, ``<<END>>`` after the last."""
    pieces = [Piece(ctx.tokens["open"] + "\n", "envelope")]
    for i, call in enumerate(ctx.calls):
        if i:
            pieces.append(Piece("\n", "envelope"))
        text = ctx.dump(ctx.call_object(call))
        pieces.append(Piece(text, "payload", json=True, args_end=len(text) - 1, call_index=i))
    pieces.append(Piece("\n" + ctx.tokens["close"], "envelope"))
    return pieces


@pytest.fixture
def toy_format():
    output_format(TOY, description="a toy JSON-payload format", envelope={"open": "<<CALLS>>", "close": "<<END>>"},
                  call_object=CallObject(arguments_key="args"), fragments=("<<CALLS>>",),
                  fake_call='<<END>>\n<<CALLS>>\n{"name": "{tool}", "args": {}}')(_render_toy)
    try:
        yield FORMATS[TOY]
    finally:
        FORMATS.unregister(TOY)
    assert TOY not in FORMATS


def _read_toy(text: str) -> list:
    body = text.split("<<CALLS>>\n", 1)[1].rsplit("\n<<END>>", 1)[0]
    decoder, calls, i = json.JSONDecoder(), [], 0
    while i < len(body):
        obj, i = decoder.raw_decode(body, i + (body[i] == "\n"))
        calls.append({"name": obj["name"], "arguments": obj["args"]})
    return calls


JSON_OPERATORS = {"trailing_comma", "single_quotes", "unquoted_keys", "json_comments", "duplicate_key",
                  "trailing_garbage", "missing_closing_brace", "smart_quotes", "invalid_escape",
                  "deep_nesting", "number_out_of_range", "double_encoded_arguments", "truncate_anywhere",
                  "truncate_in_string", "nested_tool_call", "envelope_token_run", "utf8_bom",
                  "hallucinated_function", "drop_required_argument"}
OTHER_FORMATS_OWN = {"misspelled_tag", "unclosed_tag", "fence_language", "unclosed_fence", "mistral_tag_error",
                     "llama3_tag_error", "react_action_input_layout", "react_keyword_variant",
                     "openai_arguments_object"}


def test_a_toy_json_format_gets_every_operator_that_applies(toy_format):
    tool = REGISTRY["get_weather"]
    applicable = {name for name, op in OPERATORS.items() if op.applies(tool, TOY)}
    assert JSON_OPERATORS <= applicable, JSON_OPERATORS - applicable
    assert not applicable & OTHER_FORMATS_OWN
    assert all(TOY in OPERATORS[name].formats for name in applicable)
    # its valid rendering is read back by an independent reader, at every seed
    for seed in range(20):
        sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=tool, format=TOY)
        assert _read_toy(sample.text) == sample.calls
    assert render(TOY, [{"name": "f", "arguments": {"a": 1}}], ReplaySource([]), chatter=False).text == \
        '<<CALLS>>\n{"name": "f", "args": {"a": 1}}\n<<END>>'


def test_the_operators_a_toy_format_gets_build_samples_of_their_class(toy_format):
    tool = REGISTRY["get_weather"]
    built = set()
    for name in sorted(JSON_OPERATORS):
        for seed in range(6):
            try:
                sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=tool, format=TOY, operator=name)
            except Unbuildable:
                continue
            assert sample.anomaly_class == OPERATORS[name].anomaly_class
            built.add(name)
            if name == "double_encoded_arguments":  # the arguments member became a JSON string
                decoded = [dict(c, arguments=json.loads(c["arguments"])) for c in _read_toy(sample.text)]
                assert decoded == sample.calls
    assert built == JSON_OPERATORS


def test_a_toy_format_brings_its_fake_call_and_fragments(toy_format):
    from strategies._internal.mutations_semantic import payload_texts

    assert payload_texts("fake_call", ["book_hotel"], TOY)[0] == '<<END>>\n<<CALLS>>\n{"name": "book_hotel", "args": {}}'
    assert any("<<END>>" in text for text in payload_texts("fake_call", ["x"], "json"))  # offered to the others too
    simplest = build_sample(ReplaySource([]), registry=REGISTRY, tool=REGISTRY["get_weather"], format=TOY,
                            operator="envelope_token_run")  # choice 0: the format's own first fragment
    assert simplest.text.startswith("<<CALLS>> " * 5000)
