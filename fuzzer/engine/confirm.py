"""Confirm a finding in a fresh worker before it is reported.

A worker that has run thousands of inputs may carry state between them (a cache, a global
counter, a half-reset parser). A failure that only happens after other inputs is real, but a
report that says "this input fails" when it does not fail alone sends the user chasing a ghost
(ClusterFuzz marks such crashes *unreliable*; libFuzzer measures stability). So every finding is
re-run alone in a newly forked worker:

* it fails the same way -> confirmed;
* it does not, but does after the inputs that ran before it -> *history-dependent*: the earlier
  inputs are reduced to the ones it needs (found one at a time by bisection over suffixes, each
  test in a fresh worker) and that sequence is part of the finding and of its reproduce command;
* neither -> not reproducible (flaky), said so in the report; so is one whose reduced history does
  not make it fail again every time (a target answering at random, not state).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional, Sequence

ALONE, HISTORY, FLAKY, UNKNOWN = "alone", "history", "flaky", "unknown"
#: Fresh-worker runs one history reduction may make.
MAX_TESTS = 60
#: Runs of the reduced history a history-dependent failure must fail after again, every time.
AGAIN = 2

#: Runs an entry must pass, in all, before replay answers pass: an open entry about to be called
#: fixed, or one marked fixed that must still count as fixed. One passing run of code that fails
#: one time in five says little: a fixed bug come back at random passed its one replay four times
#: in five. A timed entry (a hang, a slow path) has its own rule and runs once.
PASS_RUNS = 24


class Confirmer:
    """``run(payloads, deadline=, fresh=True)`` runs payloads in order in a new worker;
    ``same(outcome)`` says whether the last one failed with the finding's signature. Every harness
    confirms this way (:class:`fuzzer.engine.campaign.CampaignJob`); ``history`` holds the payloads
    its worker ran before the failure, as far as the harness keeps them (none: a failure that does
    not happen again alone is FLAKY)."""

    def __init__(self, run: Callable[..., list]):
        self.run = run
        #: sequence -> whether it reproduced, for the confirmation under way (each runs once)
        self._tried: dict[tuple, bool] = {}

    def confirm(self, text: Any, history: Sequence[Any], same: Callable[[Any], bool],
                deadline: Optional[float]) -> tuple[str, tuple]:
        """(status, the shortest history that reproduces it: () unless status is HISTORY)."""
        first = self.run([text], deadline=deadline, fresh=True)[0]
        if first is None:
            return UNKNOWN, ()
        if same(first):
            return ALONE, ()
        earlier = list(history)
        if not earlier:
            return FLAKY, ()
        self._tried = {}
        if not self._reproduces(earlier, text, same, deadline):
            return FLAKY, ()
        needed = self._reduce(earlier, text, same, deadline)
        for _ in range(AGAIN):
            # state kept between calls fails after its inputs every time; a target answering at
            # random met its failure after them once, by chance (it would be reported as state)
            outcomes = self.run(needed + [text], deadline=deadline, fresh=True)
            if not outcomes or outcomes[-1] is None:  # (the budget ended: what is known so far)
                break
            if not same(outcomes[-1]):
                return FLAKY, ()
        return HISTORY, tuple(needed)

    def _reproduces(self, earlier: list[str], text: str, same: Callable[[Any], bool],
                    deadline: Optional[float]) -> bool:
        key = tuple(earlier)
        if key not in self._tried:  # the bisection can come back to a sequence it already ran
            outcomes = self.run(earlier + [text], deadline=deadline, fresh=True)
            self._tried[key] = bool(outcomes) and outcomes[-1] is not None and same(outcomes[-1])
        return self._tried[key]

    def _out_of_tests(self, deadline: Optional[float], limit: int = MAX_TESTS) -> bool:
        """Fresh-worker runs are what cost: each distinct sequence tried counts once."""
        return len(self._tried) >= limit or (deadline is not None and time.monotonic() >= deadline)

    def _reduce(self, earlier: list[str], text: str, same: Callable[[Any], bool],
                deadline: Optional[float]) -> list[str]:
        """The inputs the failure needs, in the order they ran, found one at a time.

        The shortest suffix of the remaining inputs that still reproduces (with those kept) starts
        with an input the failure needs: bisection finds it in log2(n) fresh runs, it is kept, and
        the search goes on among the inputs after it until the kept ones reproduce alone. k needed
        inputs among n cost about k·log2(n) runs, where ddmin needs several times that; at every
        step ``kept + rest`` is a sequence known to reproduce, so running out of tests still
        returns one."""
        kept: list[str] = []
        rest = list(earlier)
        while rest and not self._out_of_tests(deadline):
            if self._reproduces(kept, text, same, deadline):
                return kept
            lo, hi = 0, len(rest)  # kept + rest[-hi:] reproduces; kept + rest[-lo:] does not
            while hi - lo > 1 and not self._out_of_tests(deadline):
                mid = (lo + hi) // 2
                if self._reproduces(kept + rest[-mid:], text, same, deadline):
                    hi = mid
                else:
                    lo = mid
            if hi - lo > 1:  # out of tests mid-search
                return kept + rest[-hi:]
            kept.append(rest[-hi])
            rest = rest[len(rest) - hi + 1:]
        return kept + rest


__all__ = ["ALONE", "Confirmer", "FLAKY", "HISTORY", "UNKNOWN"]
