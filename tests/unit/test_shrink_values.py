"""The value pass of shrinking (fuzzer.harnesses.parser.shrink_values) on real recipes, with a predicate in place
of a target: what it keeps still holds, nothing grows, and no single removal is left."""

from __future__ import annotations

import json
import time

from hypothesis import assume, given, settings, strategies as st

from fuzzer.harnesses.parser.promise import Promise
from fuzzer.harnesses.parser.shrink_values import call_edits, shrink_values, value_size
from strategies._internal.build import Unbuildable, build_sample, replay_recipe
from strategies._internal.source import RandomSource
from strategies._internal.tools import load_registry

REGISTRY = load_registry(None)
PROMISE = Promise(REGISTRY)


def values(calls) -> str:
    return json.dumps([c["arguments"] for c in calls], ensure_ascii=False)


def quote_bug(sample, _observation) -> bool:
    """Fails while some argument holds an apostrophe (a quote "repair" that breaks it)."""
    return sample.calls is not None and "'" in values(sample.calls)


def sample_with_quote(seed: int, fmt: str, operator=None):
    for attempt in range(200):
        try:
            sample = build_sample(RandomSource(seed * 1000 + attempt), registry=REGISTRY, tool=REGISTRY["search_flights"],
                                  format=fmt, operator=operator)
        except Unbuildable:
            continue
        if quote_bug(sample, None):
            return sample
    return None


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), fmt=st.sampled_from(["json", "fenced", "hermes", "react"]))
def test_a_value_is_reduced_to_the_character_the_bug_needs_and_nothing_else_can_go(seed, fmt):
    sample = sample_with_quote(seed, fmt)
    assume(sample is not None)
    shrunk = shrink_values(sample, None, registry=REGISTRY, promise=PROMISE, observe=lambda s: [1] * len(s),
                           keeps=quote_bug, deadline=time.monotonic() + 30)
    assert shrunk.complete and shrunk.one_minimal
    best = shrunk.sample
    assert quote_bug(best, None) and len(best.text) <= len(sample.text)
    assert best.format == sample.format and best.truth_known  # the same meaning: rebuilt, truth recomputed
    # 1-minimal: every single removal that leaves valid calls loses the apostrophe
    drawn: list = []
    replay_recipe(best.recipe, REGISTRY, drawn=drawn)
    for removal, calls in call_edits(drawn[-1]):
        if removal and all(PROMISE.call_ok(c) for c in calls):
            assert not quote_bug(replay_recipe(best.recipe, REGISTRY, calls=calls), None) or \
                len(replay_recipe(best.recipe, REGISTRY, calls=calls).text) > len(best.text)
    # and the values are no bigger than those the sample was made from
    before: list = []
    replay_recipe(sample.recipe, REGISTRY, drawn=before)
    assert value_size(drawn[-1]) <= value_size(before[-1])
    assert any("'" in v for v in strings(best.calls))


def strings(value) -> list:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def test_edits_only_ever_make_the_values_smaller():
    calls = [{"name": "f", "arguments": {"a": "xyz", "b": [1, {"c": "d"}], "e": {}}}]
    for removal, edited in call_edits(calls):
        assert value_size(edited) < value_size(calls)


def test_a_sample_its_recipe_does_not_make_is_left_alone():
    sample = sample_with_quote(1, "json")
    import dataclasses

    other = dataclasses.replace(sample, text=sample.text + " ")
    shrunk = shrink_values(other, None, registry=REGISTRY, promise=PROMISE, observe=lambda s: [1] * len(s),
                           keeps=quote_bug, deadline=time.monotonic() + 5)
    assert shrunk.sample is other and not shrunk.one_minimal
