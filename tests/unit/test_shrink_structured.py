"""Structured shrinking: regenerated candidates only, and forced variations dropped when they can be."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from fuzzer.harnesses.parser.shrink import shrink_structured, size_key
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


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_shrink_judges_each_text_and_truth_once_and_never_reuses_another_truths_judgment(data):
    """The shrinker keeps one judgment per text and truth: a candidate whose text was seen with the
    same truth gets that judgment, one whose truth differs (the number types, key order or values)
    is judged afresh and exactly as the oracle judges it."""
    from fuzzer.harnesses.parser.outcome import Outcome
    from fuzzer.harnesses.parser.oracle import Oracle
    from fuzzer.harnesses.parser.shrink import FindingShrinker
    from strategies._internal.sample import Sample

    truths = [[{"name": "get_weather", "arguments": {"city": "Paris"}}],
              [{"name": "get_weather", "arguments": {"city": "Lyon"}}],
              [{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}],
              [{"name": "get_weather", "arguments": {"city": "Paris", "days": 2.0}}],
              [{"name": "get_weather", "arguments": {"days": 2, "city": "Paris"}}], None]
    returned = data.draw(st.sampled_from(truths[:-1]))
    outcome = Outcome(kind="returned", calls=returned)
    level = data.draw(st.sampled_from(["parse", "validate"]))
    oracle, judged = Oracle(REGISTRY, level), []

    class Counting(Oracle):
        def judge(self, sample, outcome):
            judged.append(repr(sample.calls))
            return super().judge(sample, outcome)

    shrinker = FindingShrinker(lambda texts, deadline=None: [outcome] * len(texts), Counting(REGISTRY, level),
                               REGISTRY)
    drawn = data.draw(st.lists(st.sampled_from(truths), min_size=1, max_size=12))
    for truth in drawn:
        s = Sample(text='{"name": "get_weather"}', format="json", anomaly_class=None if truth else "truncation",
                   operator=None, calls=truth, tool="get_weather")
        judgment = oracle.judge(s, outcome)
        expected = oracle.signature(s, judgment, outcome).id if judgment.failed else None
        assert shrinker._signature_id(s, outcome) == expected
    assert sorted(judged) == sorted({repr(truth) for truth in drawn})


@given(st.text(max_size=30), st.sampled_from(["[", '{"a":', "((", "<b>"]), st.integers(20, 300), st.text(max_size=30))
def test_the_nesting_of_an_input_is_its_longest_repeated_run(before, unit, count, after):
    """What gets padded when a RecursionError input is kept clear of the recursion limit: the run
    of a repeated unit that is longest in characters, found whatever surrounds it."""
    from fuzzer.harnesses.parser.shrink import longest_repeat

    text = before + unit * count + after
    start, found, n = longest_repeat(text)
    assert len(found) * n >= len(unit) * count
    assert text[start:start + len(found) * n] == found * n
