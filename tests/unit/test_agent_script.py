"""Scripts of model turns: generated from a choice sequence, replayed from it, shrinkable by it."""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import given, settings, strategies as st

from fuzzer.harnesses.agent.generation import STEPS, ScriptSetup, generate_script
from fuzzer.harnesses.agent.script import EXECUTABLE_STEPS, SHAPES, Script, ScriptError, listing, related
from strategies._internal.sample import json_equal
from strategies._internal.source import RandomSource, ReplaySource
from strategies._internal.tools import builtin_registry
from strategies.registry import DuplicateName

REGISTRY = builtin_registry()
SETUPS = {shape: ScriptSetup(REGISTRY, shape=shape, formats=("json", "hermes") if shape == "text" else ("json",))
          for shape in SHAPES}


@functools.lru_cache(maxsize=None)
def scripts(shape: str, n: int = 300) -> tuple:
    return tuple(generate_script(RandomSource(seed), SETUPS[shape]) for seed in range(n))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), shape=st.sampled_from(SHAPES))
def test_a_script_is_a_pure_function_of_its_choices(seed, shape):
    source = RandomSource(seed)
    script = generate_script(source, SETUPS[shape])
    again = generate_script(ReplaySource(source.choices), SETUPS[shape])
    assert again.to_json() == script.to_json()
    assert script.turns[-1].final or script.turns[-1].step == "runaway"


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), shape=st.sampled_from(SHAPES))
def test_stored_scripts_load_back_the_same_in_full_and_compact_form(seed, shape):
    script = generate_script(RandomSource(seed), SETUPS[shape])
    for compact in (False, True):
        text = json.dumps(script.to_json(compact=compact))
        assert Script.from_json(json.loads(text)).to_json() == script.to_json()


@settings(max_examples=30, deadline=None)
@given(choices=st.lists(st.integers(0, 10_000), max_size=120), shape=st.sampled_from(SHAPES))
def test_any_choice_sequence_makes_a_well_formed_script(choices, shape):
    script = generate_script(ReplaySource(choices), SETUPS[shape])
    assert script.turns and script.size()[0] == len(script.steps())
    assert script.turns[-1].final or script.turns[-1].step == "runaway"


@pytest.mark.parametrize("shape", SHAPES)
def test_the_calls_of_valid_steps_satisfy_their_schema(shape):
    # the unvalidated_execution oracle relies on it for calls the loop runs exactly as scripted
    from strategies._internal.schema import tool_validator

    checked = 0
    for s in scripts(shape):
        for t in s.turns:
            if t.step in EXECUTABLE_STEPS:
                for c in t.calls:
                    assert tool_validator(REGISTRY[c.name]).is_valid(c.arguments), (c.name, c.arguments)
                    checked += 1
    assert checked > 500


def test_the_simplest_choices_give_the_simplest_script():
    script = generate_script(ReplaySource([]), SETUPS["openai"])
    assert [t.step for t in script.turns] == ["final"]
    assert script.size()[0] == 1


@pytest.mark.parametrize("shape", SHAPES)
def test_every_step_kind_is_generated(shape):
    seen = {t.step for s in scripts(shape) for t in s.turns}
    assert seen == set(STEPS)


def test_step_kinds_are_a_registry_with_unique_names():
    assert list(STEPS)[:2] == ["call", "parallel"]  # simplest first: a shrunk kind becomes a call
    with pytest.raises(DuplicateName):
        STEPS.register("call", STEPS["call"])


@pytest.mark.parametrize("shape", ["openai", "anthropic", "text"])
def test_length_turns_are_cut_mid_call(shape):
    turns = [t for s in scripts(shape) for t in s.turns if t.step == "length"]
    assert turns
    for t in turns:
        assert t.truncated and t.finish == "length"
        if shape == "openai":
            with pytest.raises(ValueError):
                json.loads(t.calls[0].raw)
        elif shape == "text":
            with pytest.raises(ValueError):
                json.loads(t.text[t.text.index("{"):])


def test_anthropic_length_turns_hold_only_the_keys_written_before_the_cut():
    turns = [t for s in scripts("anthropic") for t in s.turns if t.step == "length"]
    full = {tool.name: set(tool.schema.get("properties", {})) for tool in REGISTRY}
    for t in turns:
        call = t.calls[0]
        assert set(call.arguments) <= full[call.name]
        assert json.loads(call.raw) == call.arguments


def test_a_repeat_is_the_same_call_as_json_even_with_its_keys_reordered():
    reordered = 0
    for s in scripts("openai"):
        for i, t in enumerate(s.turns):
            if t.step != "repeat":
                continue
            call = t.calls[0]
            assert any(c.name == call.name and json_equal(c.arguments, call.arguments)
                       for earlier in s.turns[:i] for c in earlier.calls)
            source_turn = s.turns[int(t.note.split()[1].rstrip("'s")) - 1]  # "turn 3's call again"
            original = next(c for c in source_turn.calls if json_equal(c.arguments, call.arguments))
            if "reordered" in t.note:
                reordered += 1
                assert list(json.loads(call.raw)) == list(reversed(list(json.loads(original.raw))))
            else:
                assert call.raw == original.raw
    assert reordered


def test_calls_follow_the_chain_of_results_and_chain_breaks_do_not():
    followed = broken = 0
    for s in scripts("openai"):
        last = None
        for t in s.turns:
            if last is not None and t.calls and t.step in EXECUTABLE_STEPS and t.mode != "stuck":
                verdict = related(t.calls[0].arguments, [c.result for c in last.calls])
                if t.chain_break:
                    broken += verdict is False
                else:
                    assert verdict in (True, None), listing(s)
                    followed += verdict is True
            if t.step in EXECUTABLE_STEPS:
                last = t
    assert followed > 50 and broken > 10


def test_every_result_ref_is_unique_except_a_runaway_answering_the_same():
    for s in scripts("openai"):
        refs = {}
        for i, t in enumerate(s.turns):
            for c in t.calls:
                refs.setdefault(c.result["ref"], set()).add(i)
        for ref, where in refs.items():
            if len(where) > 1:
                assert {s.turns[i].mode for i in where} <= {"same", "stuck"}, ref


def test_deleting_a_step_removes_exactly_that_step():
    checked = 0
    for seed in range(120):
        source = RandomSource(seed)
        script = generate_script(source, SETUPS["openai"])
        choices = tuple(source.choices)
        for k in range(len(script.spans)):
            shorter = generate_script(ReplaySource(script.without_step(choices, k)), SETUPS["openai"])
            kept = [script.turns[g[0]].step for i, g in enumerate(script.steps()) if i != k]
            now = [shorter.turns[g[0]].step for g in shorter.steps()]
            assert len(now) == len(kept)
            # the other steps keep their kinds (a repeat with nothing left to repeat becomes a call)
            assert all(a == b or (a, b) == ("repeat", "call") for a, b in zip(kept, now))
            checked += 1
    assert checked > 100


def test_the_listing_numbers_the_steps():
    script = next(s for s in scripts("openai") if len(s.steps()) >= 3)
    lines = listing(script).splitlines()
    assert lines[0].startswith("user: ")
    assert [line.split(".")[0].strip() for line in lines[1:]] == [str(i) for i in range(1, len(script.steps()) + 1)]


@pytest.mark.parametrize("data, message", [
    ({}, "non-empty 'turns'"),
    ({"turns": []}, "non-empty 'turns'"),
    ({"turns": [{"step": "final"}], "shape": "grpc"}, "shape 'grpc'"),
    ({"turns": [{"calls": []}]}, "malformed"),
])
def test_a_malformed_stored_script_is_one_clear_error(data, message):
    with pytest.raises(ScriptError, match=message):
        Script.from_json(data)


def test_setup_refuses_unknown_shapes_and_formats():
    with pytest.raises(ScriptError, match="unknown model shape"):
        ScriptSetup(REGISTRY, shape="grpc")
    with pytest.raises(ScriptError, match="unknown format"):
        ScriptSetup(REGISTRY, shape="text", formats=("yaml",))
