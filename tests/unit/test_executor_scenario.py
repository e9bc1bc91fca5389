"""Scenarios: generated from choice sequences, realized again from them, stored and reloaded."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.harnesses.executor.faults import FaultError
from fuzzer.harnesses.executor.policy import Policy
from fuzzer.harnesses.executor.scenario import Genome, ScenarioGenerator, call_is_valid, scenario_from_json
from strategies._internal.schema import tool_validator
from strategies._internal.tools import builtin_registry

REGISTRY = builtin_registry()


def _generator(seed: int = 0, **kwargs) -> ScenarioGenerator:
    return ScenarioGenerator(REGISTRY, Policy(), flavors=("builtin", "requests", "httpx"), seed=seed, **kwargs)


def test_the_same_seed_gives_the_same_scenarios():
    a, b = _generator(5), _generator(5)
    assert [a.generate() for _ in range(30)] == [b.generate() for _ in range(30)]
    assert [s.wire() for s in (_generator(6).generate() for _ in range(5))] != [a.generate().wire() for _ in range(5)]


_SHARED = [_generator(seed) for seed in range(2)]


@given(st.integers(0, 2 ** 16))
@settings(max_examples=40, deadline=None)
def test_a_scenario_is_a_pure_function_of_its_genome(seed):
    generator = _SHARED[seed % 2]  # generators build their call pools once; realize must not care
    for _ in range(seed % 5):
        generator.generate()
    scenario = generator.generate()
    assert generator.realize(scenario.genome) == scenario


def test_validity_is_what_jsonschema_says():
    generator = _SHARED[1]
    anomalies = 0
    for _ in range(150):
        for step in generator.generate().steps:
            expected = step.name in REGISTRY and tool_validator(REGISTRY[step.name]).is_valid(step.arguments)
            assert step.valid == expected, step
            anomalies += step.anomaly is not None
            if step.anomaly is None:
                assert step.valid
    assert anomalies > 50


def test_edited_genomes_stay_well_formed_and_zero_choices_are_the_simplest():
    generator = _SHARED[1]
    scenario = generator.generate()
    zero = Genome(header=(0, 0), steps=tuple(((), ()) for _ in scenario.genome.steps))
    simplest = generator.realize(zero)
    assert all(s.schedule.size == 0 and s.gap == 0 and s.anomaly is None and s.name == generator.tools[0]
               for s in simplest.steps)
    assert simplest.size_key() < scenario.size_key() or scenario == simplest


def test_scenarios_round_trip_through_json_and_validity_is_recomputed():
    generator = _SHARED[0]
    for _ in range(20):
        scenario = generator.generate()
        loaded = scenario_from_json(scenario.to_json(), REGISTRY)
        assert loaded == scenario
        assert loaded.describe() == scenario.describe()


@pytest.mark.parametrize("data, message", [
    ({"steps": []}, "scenario.steps: expected a non-empty list"),
    ({"steps": [{"arguments": {}}]}, "scenario.steps[0]: expected an object with a string 'name'"),
    ({"steps": [{"name": "x", "gap": -1}]}, "scenario.steps[0].gap: expected a number of seconds >= 0"),
    ({"steps": [{"name": "x", "schedule": {"faults": [{"kind": "nope"}]}}]}, "unknown fault kind 'nope'"),
    ({"format": 9, "steps": [{"name": "x"}]}, "scenario.format: unsupported version 9"),
    ([], "scenario: expected an object, got list"),
])
def test_bad_stored_scenarios_name_the_field(data, message):
    with pytest.raises(FaultError) as info:
        scenario_from_json(data, REGISTRY)
    assert message in str(info.value)


def test_unknown_tools_and_bad_arguments_are_invalid_calls():
    assert not call_is_valid(REGISTRY, "get_wether", {"city": "Paris"})
    assert not call_is_valid(REGISTRY, "get_weather", {"city": 3})
    assert call_is_valid(REGISTRY, "get_weather", {"city": "Paris"})


def test_gaps_straddle_the_breaker_reset_window():
    gaps = _generator().gaps
    assert 0.0 in gaps and any(g > Policy().breaker.reset_timeout for g in gaps)
    assert any(0 < g < Policy().breaker.reset_timeout for g in gaps)
