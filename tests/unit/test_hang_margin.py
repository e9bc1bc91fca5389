"""A hang is kept with margin: the input shrinking keeps must still hang at twice the timeout.

Shrinking a hang finds the least input that still hangs, which sits at the timeout: a slower or
less loaded machine later and it finishes in time (a stored hang ran in 1.55 s against 2 s, and
replay marked the unfixed bug fixed). The target here is a model of a worker pool, so nothing
runs and no clock is read: an input of ``n`` marks "takes" ``cost * n`` seconds, and is hung when
that is over the timeout the run was given.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.inputs import raw_sample
from fuzzer.harnesses.parser.outcome import Outcome
from fuzzer.harnesses.parser.oracle import Oracle, Verdict
from fuzzer.engine.hangs import HANG_MARGIN
from fuzzer.harnesses.parser.shrink import FindingShrinker
from strategies._internal.tools import load_registry

REGISTRY = load_registry(None)
ORACLE = Oracle(REGISTRY, "parse")
STUCK = (("slow.py", "parse"), ("slow.py", "_scan"))


class ModelPool:
    """``run(texts, timeout=)`` as the pool answers, for a target whose time is ``seconds(text)``."""

    def __init__(self, seconds, timeout: float):
        self.seconds, self.timeout, self.timeouts = seconds, timeout, []

    def run(self, texts, deadline=None, timeout=None, **_):
        limit = timeout or self.timeout
        self.timeouts.append(limit)
        if deadline is not None and time.monotonic() >= deadline:
            return [None] * len(texts)  # as the pool: nothing runs once the deadline has passed
        return [Outcome("hung", frames=STUCK, elapsed=limit, detail=f"no result within {limit:g} s")
                if self.seconds(t) > limit else Outcome("returned", calls=[], elapsed=self.seconds(t)) for t in texts]


def shrink_hang(pool: ModelPool, text: str, budget_s: float = 30.0):
    sample = raw_sample(text)
    (outcome,) = pool.run([text])
    judgment = ORACLE.judge(sample, outcome)
    assert judgment.verdict is Verdict.HANG
    signature = ORACLE.signature(sample, judgment, outcome).id
    return FindingShrinker(pool.run, ORACLE, REGISTRY).shrink(sample, outcome, Verdict.HANG, signature,
                                                             budget_s=budget_s, hang_timeout=pool.timeout)


@settings(max_examples=40, deadline=None)
@given(cost=st.floats(0.001, 0.05), timeout=st.sampled_from([0.5, 1.0, 2.0]), extra=st.integers(0, 300),
       prefix=st.sampled_from(["", "<tool_call>", "```json\n"]))
def test_a_hang_that_grows_with_its_input_is_kept_hanging_at_twice_the_timeout(cost, timeout, extra, prefix):
    least = int(timeout / cost) + 1  # the fewest marks that hang at the timeout
    pool = ModelPool(lambda t: cost * t.count("x"), timeout)
    shrunk = shrink_hang(pool, prefix + "x" * (least + extra) + "!")
    assert cost * shrunk.sample.text.count("x") > HANG_MARGIN * timeout  # it hangs at twice the timeout
    assert shrunk.observation.kind == "hung" and "no margin" not in shrunk.note
    assert HANG_MARGIN * timeout in pool.timeouts  # checked by running it so, not assumed


def test_a_hang_of_any_size_is_kept_as_shrunk():
    pool = ModelPool(lambda t: float("inf") if "<" in t else 0.0, 1.0)
    shrunk = shrink_hang(pool, "some prose <tool_call> and more")
    assert shrunk.sample.text == "<" and "margin" not in shrunk.note


def test_a_slowness_between_the_timeout_and_twice_it_is_said_to_have_no_margin():
    """1.5 s whatever the input, against 1 s: no padding makes it hang at 2 s. It is kept (the
    finding is real) and says so; replay then never counts it fixed on finishing in time."""
    pool = ModelPool(lambda t: 1.5 if "x" in t else 0.0, 1.0)
    shrunk = shrink_hang(pool, "x" * 50)
    assert shrunk.sample.text == "x"
    assert "no margin: given 2 s (twice the timeout) it ended (returned) after 1.50 s" in shrunk.note


def test_no_margin_is_claimed_when_no_time_was_left_to_check_it():
    pool = ModelPool(lambda t: 0.01 * t.count("x"), 1.0)
    shrunk = shrink_hang(pool, "x" * 150, budget_s=1e-9)  # a deadline that has passed when it is checked
    assert shrunk.sample.text == "x" * 150
    assert "not checked with margin: no time was left to run it with a 2 s timeout" in shrunk.note


# -- replay: a hang entry passes only well inside the timeout, twice --------------------------------


def _replay_hang(elapsed_per_run: list, timeout: float = 2.0):
    """Replay one hang entry on a model target whose n-th run takes elapsed_per_run[n] (None: hung)."""
    from corpus.store import Entry
    from fuzzer.harnesses.parser.harness import replay_entries

    entry = Entry(text="<tool_call>", signature="hang-000000000001", verdict="hang", truth_known=False,
                  scenario={"frames": [list(f) for f in STUCK]})
    runs = iter(elapsed_per_run)

    def run(texts, deadline=None, fresh=False, **_):
        out = []
        for _text in texts:
            took = next(runs)
            out.append(Outcome("hung", frames=STUCK, elapsed=timeout) if took is None
                       else Outcome("returned", calls=[], elapsed=took))
        return out

    (replayed,) = replay_entries([("e.json", entry)], run=run, registry=REGISTRY, level="parse", timeout=timeout)
    assert next(runs, "all used") == "all used"  # exactly as many runs as planned
    return replayed


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_a_hang_entry_passes_when_it_finishes_well_inside_the_timeout_twice(first, second):
    assert _replay_hang([first, second]).status == "pass"


@given(st.floats(1.0001, 1.999))
def test_a_hang_entry_that_merely_finished_in_time_still_hangs(took):
    replayed = _replay_hang([took])
    assert replayed.status == "fail" and replayed.signature == "hang-000000000001"
    assert replayed.note.startswith(f"still hanging: it finished in {took:.2f} s, not well inside the 2 s timeout")


@pytest.mark.parametrize("second", [None, 1.5])
def test_one_run_well_inside_the_timeout_is_not_enough(second):
    replayed = _replay_hang([0.01, second])
    assert replayed.status == "fail" and replayed.note.startswith("still hanging")
