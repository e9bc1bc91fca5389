"""A pass on replay is a claim that the bug is gone: one passing run is not enough for code that
fails at random. For every harness whose replay does not run passes again itself, the replay job
runs each passing entry :data:`~fuzzer.engine.confirm.PASS_RUNS` times in all: an open entry that
fails in any run is not marked fixed, and a fixed one that does is a regression.

The harness here is registered from the test and replays in this process (no worker): its answer
for an entry is a fixed function of how many times that entry was run, so the test is exact.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus.store import Entry, InMemoryStore
from fuzzer.engine.confirm import PASS_RUNS
from fuzzer.engine.harness import HARNESSES, Harness, ReplayContext, Replayed, register_harness
from fuzzer.engine.jobs.replay import ReplayJob
from fuzzer.engine.pipeline import run_job
from fuzzer.engine.verdicts import VERDICTS, VerdictInfo

KIND = "coin"


class Coin:
    """Entry text "fails-on:N": the N-th run of that entry fails (0: it never fails)."""

    def __init__(self) -> None:
        self.runs: Counter = Counter()

    def replay(self, items: list, reference: str, context: ReplayContext) -> list:
        out = []
        for path, entry in items:
            self.runs[entry.signature] += 1
            nth = int(entry.text.split(":")[1])
            failed = nth and self.runs[entry.signature] == nth
            out.append(Replayed(path, entry, entry.verdict if failed else "pass",
                                entry.signature if failed else None))
        return out


@pytest.fixture
def coin():
    coin = Coin()
    register_harness(Harness(kind=KIND, option="--coin", description="a coin", replay=coin.replay))
    VERDICTS.register(f"{KIND}:wrong", VerdictInfo("wrong", "a wrong answer", KIND))
    VERDICTS.register(f"{KIND}:stuck", VerdictInfo("stuck", "stuck", KIND, timed=True))
    yield coin
    HARNESSES.unregister(KIND)
    VERDICTS.unregister(f"{KIND}:wrong")
    VERDICTS.unregister(f"{KIND}:stuck")


def _store(*entries: tuple) -> InMemoryStore:
    store = InMemoryStore()
    for signature, fails_on, status, verdict in entries:
        store.put(Entry(text=f"fails-on:{fails_on}", signature=signature, verdict=verdict, kind=KIND, status=status))
    return store


@settings(max_examples=30, deadline=None)
@given(fails_on=st.integers(min_value=2, max_value=PASS_RUNS), status=st.sampled_from(["open", "fixed"]))
def test_a_passing_entry_that_fails_in_any_of_its_runs_does_not_pass(fails_on, status):
    coin = Coin()
    register_harness(Harness(kind=KIND, option="--coin", description="a coin", replay=coin.replay))
    try:
        store = _store(("coin-1", fails_on, status, "wrong"))
        done = run_job(ReplayJob(store, {KIND: "m:coin"}, ReplayContext(), update=True))
    finally:
        HARNESSES.unregister(KIND)
    (replayed,) = done.result.replayed
    assert replayed.status == ("fail" if status == "open" else "regression")
    assert replayed.note == f"1 failing run(s) in {PASS_RUNS}"
    assert done.exit_code == 1
    assert store.get("coin-1").status == "open"  # never marked fixed; a fixed one is re-opened


def test_an_entry_passing_every_run_passes_after_all_its_runs(coin):
    store = _store(("coin-1", 0, "open", "wrong"), ("coin-2", 0, "fixed", "wrong"))
    done = run_job(ReplayJob(store, {KIND: "m:coin"}, ReplayContext(), update=True))
    assert {r.status for r in done.result.replayed} == {"pass"} and done.exit_code == 0
    assert {r.note for r in done.result.replayed} == {f"passed {PASS_RUNS} runs"}
    assert coin.runs == {"coin-1": PASS_RUNS, "coin-2": PASS_RUNS}
    assert store.get("coin-1").status == "fixed"


def test_a_failing_entry_and_a_timed_one_run_once(coin):
    store = _store(("coin-1", 1, "open", "wrong"), ("coin-2", 0, "open", "stuck"))
    done = run_job(ReplayJob(store, {KIND: "m:coin"}, ReplayContext()))
    assert sorted(r.status for r in done.result.replayed) == ["fail", "pass"]
    assert coin.runs == {"coin-1": 1, "coin-2": 1}
