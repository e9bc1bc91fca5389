"""The vocabulary models really emit (issue 9, section 1): degenerate outputs, envelope spellings and
their truth rules, layouts drawn by valid samples and forced for probing, stacked anomalies whose truths
compose, and string values that break naive post-processing, drawn often enough to catch a cleaner.

Truths are checked the way the operator tests check them: against the strict reference parser (which
never repairs), with real jsonschema at the validate level, and by construction (a truncated stack is
a strict prefix of the text it cut)."""

from __future__ import annotations

import html
import json
from urllib.parse import unquote

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from fuzzer.targets import reference
from strategies._internal.build import Unbuildable, build_sample, replay_recipe
from strategies._internal.formats import FORMATS, LAYOUTS, layouts_for
from strategies._internal.mutations import OPERATORS
from strategies._internal.mutator import tagged_reasoning
from strategies._internal.operators.stacked_anomalies import cut_ranges
from strategies._internal.sample import Recipe
from strategies._internal.schema.banks import _HOSTILE
from strategies._internal.source import RandomSource, ReplaySource
from strategies._internal.tools import builtin_registry

REGISTRY = builtin_registry()
VALIDATE = reference.validated_parser(REGISTRY)


def strict(text: str, validate: bool = False):
    try:
        return (VALIDATE if validate else reference.parse)(text)
    except ValueError:
        return None


def samples(operator: str, formats=None, seeds=range(6), tools=None):
    """Every sample ``operator`` builds over the built-in tools, the formats it applies to and ``seeds``."""
    out = []
    for fmt in formats or FORMATS:
        for tool in tools or REGISTRY:
            if not OPERATORS[operator].applies(tool, fmt):
                continue
            for seed in seeds:
                try:
                    out.append(build_sample(RandomSource(seed), registry=REGISTRY, tool=tool, format=fmt,
                                            operator=operator))
                except Unbuildable:
                    continue
    return out


# --------------------------------------------------------------------------- degenerate outputs


def test_degenerate_outputs_hold_no_call_and_cover_what_models_emit():
    texts = {}
    for name in ("empty_output", "prose_without_call", "empty_envelope", "json_non_call", "reasoning_only"):
        built = samples(name, seeds=range(12 if name in ("empty_envelope", "json_non_call") else 4))
        assert built, name
        for sample in built:
            assert sample.calls == [] and sample.anomaly_class == "degenerate_output"
            assert strict(sample.text) in (None, []), sample.text[:200]
        texts[name] = {s.text for s in built}
    assert "" in texts["empty_output"] and any(t and not t.strip() for t in texts["empty_output"])
    for expected in ('{"role": "assistant", "content": null}', '{"tool_calls": []}',
                     '{"role": "assistant", "content": null, "tool_calls": null}', "[TOOL_CALLS][]"):
        assert any(expected in t for t in texts["empty_envelope"]), expected
    bare = {t.strip() for t in texts["json_non_call"]}
    assert {"null", "0", "true", '""'} <= bare and ("{}" in bare or any("\n{}\n" in t for t in texts["json_non_call"]))
    assert bare & {f'"{name}"' for name in REGISTRY.names()}  # a bare tool name is no call either
    assert any("<think>" in t for t in texts["reasoning_only"])
    assert any('"reasoning_content"' in t for t in texts["reasoning_only"])
    assert any("<|channel|>analysis" in t for t in texts["reasoning_only"])


def test_reasoning_only_spells_the_call_it_did_not_make():
    """A parser that reads calls out of the reasoning would return them: the truth says there are none."""
    for sample in samples("reasoning_only", formats=["hermes", "json", "react"], seeds=range(3)):
        inner = sample.text.split(">", 1)[1].rsplit("</", 1)[0]
        extracted = strict(inner.split("I will call the tool like this: ", 1)[1].strip())
        assert extracted and extracted[0]["name"] == sample.tool  # the text does spell a call
        assert sample.calls == []


def test_reasoning_only_writes_the_familys_own_reasoning_tags():
    """Qwen3, GLM, Kimi, DeepSeek and Magistral never write `<thinking>`: their engines' reasoning
    parsers read such a block as content, so a call spelled in it was a real call to a faithful parser
    (a false corruption). Each family's reasoning is written with its own tags."""
    tagged = sorted(name for name, fmt in FORMATS.items() if tagged_reasoning(fmt))
    assert {"qwen3_xml", "glm:4.5", "kimi:k2", "hermes", "mistral:v11"} <= set(tagged)
    built = samples("reasoning_only", formats=tagged, seeds=range(6), tools=[REGISTRY.tools["get_weather"]])
    assert {s.format for s in built} == set(tagged)
    for sample in built:
        style = FORMATS[sample.format].reasoning
        assert sample.text.startswith(style.open), (sample.format, sample.text[:80])
        reasoning, after = sample.text[len(style.open):].split(style.close, 1)
        assert "I will call the tool like this: " in reasoning and "I will call" not in after
        assert sample.calls == []


# --------------------------------------------------------------------------- envelope spellings


def test_envelope_spellings_keep_their_truth_and_are_written_in_every_call_object_format():
    call_formats = {name for name, fmt in FORMATS.items() if fmt.call_object}
    seen_keys = set()
    for name in ("arguments_key_renamed", "name_key_renamed", "call_object_wrapped", "extra_envelope_keys"):
        built = samples(name, seeds=range(3))
        assert {s.format for s in built} == (call_formats - {"openai"} if name == "call_object_wrapped"
                                              else call_formats), name
        for sample in built:
            assert OPERATORS[name].truth == "faithful" and sample.calls and sample.calls[0]["name"] == sample.tool
            read = strict(sample.text)
            # the reference never repairs; but a spelling that is another format's call object is no
            # misspelling ({"name", "arguments"}, Llama 3's {"name", "parameters"} with or without
            # "type": "function"): it is valid wherever a JSON call object goes
            other_format = any(k in sample.description for k in ("'parameters'", "'arguments'", "type"))
            # Mistral's v3 chat template writes each call's "id" last: its own valid call object
            other_format = other_format or (sample.format == "mistral" and sample.description == "extra envelope keys id")
            assert read is None or (other_format and read == sample.calls), sample.text
            seen_keys |= {k for k in ("parameters", "args", "input", "function", "tool", "tool_name", "function_call",
                                      '"id"', '"index"', '"type"') if k in sample.text}
    assert {"parameters", "args", "input", "function", "tool", "tool_name", "function_call", '"id"', '"index"'} \
        <= seen_keys


def test_absent_or_null_arguments_are_the_call_as_written_and_a_missing_argument_at_validate_level():
    built = samples("arguments_missing", seeds=range(4))
    assert {"absent", "null"} == {s.description.split()[-1] for s in built}
    for sample in built:
        assert all(call["arguments"] == {} for call in sample.calls)
        assert strict(sample.text) is None
        tool = REGISTRY[sample.tool]
        requires = bool(tool.schema.get("required"))
        # the truth breaks the validate-level promise exactly when the tool requires arguments
        assert jsonschema.Draft202012Validator(tool.schema).is_valid({}) == (not requires)


def test_arguments_of_the_wrong_type_denote_no_call():
    built = samples("arguments_wrong_type", seeds=range(4))
    assert {"list", "text", "first value"} == {s.description.split(" as ")[-1] for s in built}
    for sample in built:
        assert sample.calls is None and strict(sample.text) is None
    openai = [s for s in built if s.format == "openai"]
    for sample in openai:  # OpenAI arguments stay a string, but not the JSON of an object
        arguments = json.loads(sample.text[sample.text.index("{"):sample.text.rindex("}") + 1]
                               )["tool_calls"][0]["function"]["arguments"]
        assert isinstance(arguments, str)
        try:
            assert not isinstance(json.loads(arguments), dict)
        except ValueError:
            pass


def test_reasoning_before_the_call_keeps_the_call():
    built = samples("reasoning_before_call", seeds=range(3))
    assert {"hermes", "openai", "anthropic", "react"} <= {s.format for s in built}
    for sample in built:
        assert sample.calls and strict(sample.text) in (None, sample.calls)
        assert "<think" in sample.text or "<thinking>" in sample.text or "<reasoning>" in sample.text or \
            "reasoning_content" in sample.text or '"thinking"' in sample.text


# --------------------------------------------------------------------------- layouts


def test_valid_samples_draw_layouts_and_shrink_to_the_usual_one():
    labels = set()
    for seed in range(300):
        sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=REGISTRY["get_weather"],
                              format=["hermes", "json", "openai", "fenced", "react"][seed % 5])
        labels |= set(sample.layout.split(", "))
        assert strict(sample.text) == sample.calls
        zeroed = replay_recipe(Recipe(**{**sample.recipe.to_json(), "choices": (0,) * len(sample.recipe.choices)}),
                               REGISTRY)
        assert zeroed.layout == "usual"
    assert {"usual", "compact JSON", "no space after ':'", "indent 2", "indent 4", "indent 0", "ascii escapes",
            "arguments first", "no gap", "CRLF", "trailing newline", "```JSON"} <= labels


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_probe_sample_can_be_built_in_every_layout_of_a_format_at_both_levels(fmt):
    """What the engine's probing builds: a valid sample of one format in one named layout; the recipe
    replays it, and the reference reads it at both levels."""
    for layout in layouts_for(fmt):
        for seed in range(3):
            try:
                sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=REGISTRY["send_email"], format=fmt,
                                      layout=layout, chatter=seed == 1, multi=seed == 2)
            except Unbuildable:
                continue
            assert sample.recipe.layout == layout and replay_recipe(sample.recipe, REGISTRY) == sample
            assert sample.layout == LAYOUTS[layout].layout.label()
            assert strict(sample.text) == sample.calls, (layout, sample.text)
            assert strict(sample.text, validate=True) == sample.calls, (layout, sample.text)


def test_a_recipe_names_its_forced_layout_and_old_recipes_still_load():
    sample = build_sample(RandomSource(0), registry=REGISTRY, tool=REGISTRY["get_weather"], format="hermes",
                          layout="crlf")
    assert Recipe.from_json(json.loads(json.dumps(sample.recipe.to_json()))) == sample.recipe
    old = {"tool": "get_weather", "format": "json", "operator": None, "choices": [0, 1]}
    assert Recipe.from_json(old).layout is None
    with pytest.raises(KeyError):
        build_sample(ReplaySource([]), registry=REGISTRY, tool=REGISTRY["get_weather"], format="json", layout="crfl")


# --------------------------------------------------------------------------- stacked anomalies


def test_stacked_anomalies_compose_their_truths():
    by_operator = {name: samples(name, seeds=range(4)) for name in ("noise_and_syntax", "noise_and_semantic",
                                                                    "noise_then_truncation")}
    for name, built in by_operator.items():
        assert len({s.format for s in built}) >= 8, name
        for sample in built:
            got = strict(sample.text)
            parts = sample.description.split(", then ")
            assert len(parts) >= 2, sample.description  # at least two operators, named in order
            assert all(part.split(" (")[0] in OPERATORS or part.startswith("cut") for part in parts)
            if name == "noise_then_truncation":
                assert sample.calls is None and got in (None, [])
            elif name == "noise_and_semantic":
                assert sample.calls and got in (None, sample.calls)  # rejected, or read as written
                # the truth is as written, and it really breaks the promise its semantic part names
                broken = [c for c in sample.calls if c["name"] not in REGISTRY or not jsonschema.Draft202012Validator(
                    REGISTRY[c["name"]].schema, format_checker=jsonschema.FormatChecker()).is_valid(c["arguments"])]
                duplicated = len({json.dumps(c, sort_keys=True) for c in sample.calls}) < len(sample.calls)
                injected = parts[1].split(" (")[0] in {n for n, o in OPERATORS.items()
                                                       if o.anomaly_class == "injection_payload"}
                assert broken or duplicated or injected, sample.description
            else:
                assert got is None or got == sample.calls
    assert any(len(s.description.split(", then ")) == 3 for s in by_operator["noise_then_truncation"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(original=st.text(alphabet="ab{}", min_size=3, max_size=30), data=st.data())
def test_a_cut_of_an_edited_text_lands_inside_the_original_call(original, data):
    """cut_ranges: every offset it allows, mapped back through the edit, is before the content's end."""
    from strategies._internal.formats import Piece, Rendered

    end = data.draw(st.integers(1, len(original)))
    rendered = Rendered("json", [], (Piece(original, "payload", json=True, args_end=end),), False)
    at = data.draw(st.integers(0, len(original)))
    edit = data.draw(st.text(alphabet="xy,", max_size=4))
    text = original[:at] + edit + original[at:]
    assume(text != original)
    for lo, hi in cut_ranges(rendered, text):
        for cut in range(lo, hi):
            head = text[:cut]
            # the head is a prefix of the edited text that misses some of the original's content
            kept = len(head) - (len(edit) if cut >= at + len(edit) else max(0, min(cut - at, len(edit))))
            assert kept < end


# --------------------------------------------------------------------------- strings that break post-processing


def _clean(value: str) -> str:
    """What a naive parser does to strings: collapse whitespace, unescape HTML and percent-encoding,
    decode backslash escapes, drop zero-width characters."""
    value = " ".join(value.split())
    value = unquote(html.unescape(value))
    for zero_width in ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"):
        value = value.replace(zero_width, "")
    return value.replace("\\n", "\n").replace("\\t", "\t")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_values_that_break_naive_post_processing_are_drawn_often_enough_to_catch_a_cleaner():
    caught = total = 0
    hostile_seen = set()
    for seed in range(300):
        sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=REGISTRY["calculate"], format="json")
        values = list(_strings(sample.calls))
        total += 1
        caught += any(_clean(v) != v for v in values)
        hostile_seen |= {h for h in _HOSTILE for v in values if h in v}
    assert caught / total >= 0.2, (caught, total)  # a cleaner fails a fifth of valid samples or more
    categories = {"New  York": "spaces", "Tom &amp; Jerry": "entities", "C:\\new\\table": "backslashes",
                  "caf%C3%A9": "percent", "**bold** text": "markdown", "“curly”": "quotes", "abcабв": "scripts",
                  "zero\u200bwidth": "zero-width"}
    assert len(hostile_seen) >= 20 and {h for h in categories if h in hostile_seen}, hostile_seen
