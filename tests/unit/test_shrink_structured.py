"""Structured shrinking: regenerated candidates only, and forced variations dropped when they can be."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from fuzzer.shrink import shrink_structured, size_key
from strategies._internal.build import build_sample
from strategies._internal.source import RandomSource
from strategies._internal.tools import load_registry

REGISTRY = load_registry(None)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), fmt=st.sampled_from(["json", "openai", "hermes", "fenced"]))
def test_a_failure_of_any_call_shrinks_from_several_calls_to_one(seed, fmt):
    sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=REGISTRY["get_weather"], format=fmt, multi=True)
    assert sample.recipe.multi and len(sample.calls) >= 2

    def observe(samples):
        return ["failed"] * len(samples)

    def keeps(candidate, observation):  # the bug: any get_weather call in this format fails
        return candidate.format == fmt and bool(candidate.calls)

    shrunk = shrink_structured(sample, "failed", registry=REGISTRY, observe=observe, keeps=keeps, budget_s=10)
    assert len(shrunk.sample.calls) == 1
    assert size_key(shrunk.sample) <= size_key(sample)
    assert keeps(shrunk.sample, "failed")
