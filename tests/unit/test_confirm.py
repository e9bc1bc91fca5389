"""Confirming a finding: alone, after the inputs it needs, or not at all.

The worker is simulated by a function of the texts run in one fresh worker, so the property is
about the reduction itself: whatever inputs the failure needs, the history reported reproduces it
and none of its inputs can be dropped.
"""

from __future__ import annotations


from hypothesis import given, settings, strategies as st

from fuzzer.engine.confirm import AGAIN, ALONE, FLAKY, HISTORY, MAX_TESTS, Confirmer


class StatefulTarget:
    """Fails on ``trigger`` only when every input of ``needed`` ran earlier in the same worker."""

    def __init__(self, trigger: str, needed: set[str]):
        self.trigger, self.needed, self.fresh_runs = trigger, needed, 0

    def run(self, texts, deadline=None, fresh=False):
        assert fresh, "confirmation always runs in a fresh worker"
        self.fresh_runs += 1
        seen: set[str] = set()
        outcomes = []
        for text in texts:
            outcomes.append("failed" if text == self.trigger and self.needed <= seen else "passed")
            seen.add(text)
        return outcomes


def remembered(texts):
    """What the worker ran before the failure, as the payloads confirmation replays (the parser
    harness turns the samples it remembers into their texts: fuzzer.harnesses.parser.orders.text_of)."""
    return list(texts)


def same(outcome) -> bool:
    return outcome == "failed"


@settings(max_examples=60, deadline=None)
@given(size=st.integers(min_value=1, max_value=4096), data=st.data())
def test_the_history_reported_reproduces_and_none_of_it_can_be_dropped(size, data):
    texts = [f"input {i}" for i in range(size)]
    k = data.draw(st.integers(min_value=1, max_value=min(3, size)))
    needed = set(data.draw(st.lists(st.sampled_from(texts), min_size=k, max_size=k, unique=True)))
    target = StatefulTarget("the trigger", needed)
    status, reduced = Confirmer(target.run).confirm("the trigger", remembered(texts), same, deadline=None)
    assert status == HISTORY
    assert set(reduced) == needed  # exactly the inputs the failure needs, nothing else
    assert list(reduced) == [t for t in texts if t in needed]  # in the order they ran
    assert target.fresh_runs <= 1 + 1 + MAX_TESTS + AGAIN  # alone, whole history, reductions, runs again


def test_a_failure_that_happens_alone_is_confirmed_with_no_history():
    target = StatefulTarget("the trigger", set())
    assert Confirmer(target.run).confirm("the trigger", remembered(["a", "b"]), same, deadline=None) == (ALONE, ())


def test_a_failure_no_history_explains_is_flaky():
    target = StatefulTarget("the trigger", {"never ran"})
    assert Confirmer(target.run).confirm("the trigger", remembered(["a", "b"]), same, deadline=None) == (FLAKY, ())
    assert Confirmer(target.run).confirm("the trigger", [], same, deadline=None) == (FLAKY, ())


class ChanceTarget:
    """Fails on ``trigger`` in the fresh runs numbered in ``failing`` only, whatever ran before it:
    a target answering at random, not one keeping state."""

    def __init__(self, trigger: str, failing: set[int]):
        self.trigger, self.failing, self.fresh_runs = trigger, failing, 0

    def run(self, texts, deadline=None, fresh=False):
        run, self.fresh_runs = self.fresh_runs, self.fresh_runs + 1
        return ["failed" if text == self.trigger and run in self.failing else "passed" for text in texts]


@settings(max_examples=200, deadline=None)
@given(size=st.integers(min_value=1, max_value=300), failing=st.sets(st.integers(min_value=1, max_value=80),
                                                                      max_size=2))
def test_a_failure_met_after_other_inputs_by_chance_is_never_reported_as_state(size, failing):
    """It did not fail alone (run 0); after other inputs it failed in one or two runs (once the
    history reduction took a sequence that happened to fail) but not every time: not reproducible,
    never "depends on earlier inputs" with a history that does not make it fail."""
    target = ChanceTarget("the trigger", failing)
    status, reduced = Confirmer(target.run).confirm("the trigger", remembered(f"input {i}" for i in range(size)),
                                                    same, deadline=None)
    assert status == FLAKY and reduced == ()
