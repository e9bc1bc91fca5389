"""Confirm a finding in a fresh worker before it is reported.

A worker that has run thousands of inputs may carry state between them (a cache, a global
counter, a half-reset parser). A failure that only happens after other inputs is real, but a
report that says "this input fails" when it does not fail alone sends the user chasing a ghost
(ClusterFuzz marks such crashes *unreliable*; libFuzzer measures stability). So every finding is
re-run alone in a newly forked worker:

* it fails the same way -> confirmed;
* it does not, but does after the inputs that ran before it -> *history-dependent*: the earlier
  inputs are reduced (ddmin, each test in a fresh worker) to the shortest sequence that still
  makes it fail, and that sequence is part of the finding and of its reproduce command;
* neither -> not reproducible (flaky), said so in the report.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional, Sequence

ALONE, HISTORY, FLAKY, UNKNOWN = "alone", "history", "flaky", "unknown"
#: Fresh-worker runs one history reduction may make.
MAX_TESTS = 60


def text_of(item: Any) -> str:
    """A remembered input: a Sample, or a cut-off of one (``Cut``)."""
    base = getattr(item, "base", None)
    return base.text[:item.end] if base is not None else item.text


class Confirmer:
    """``run(texts, deadline=, fresh=True)`` runs texts in order in a new worker; ``same(outcome)``
    says whether the last one failed with the finding's signature."""

    def __init__(self, run: Callable[..., list]):
        self.run = run

    def confirm(self, text: str, history: Sequence[Any], same: Callable[[Any], bool],
                deadline: Optional[float]) -> tuple[str, tuple]:
        """(status, the shortest history that reproduces it: () unless status is HISTORY)."""
        first = self.run([text], deadline=deadline, fresh=True)[0]
        if first is None:
            return UNKNOWN, ()
        if same(first):
            return ALONE, ()
        earlier = [text_of(item) for item in history]
        if not earlier:
            return FLAKY, ()
        if not self._reproduces(earlier, text, same, deadline):
            return FLAKY, ()
        return HISTORY, tuple(self._reduce(earlier, text, same, deadline))

    def _reproduces(self, earlier: list[str], text: str, same: Callable[[Any], bool],
                    deadline: Optional[float]) -> bool:
        outcomes = self.run(earlier + [text], deadline=deadline, fresh=True)
        return bool(outcomes) and outcomes[-1] is not None and same(outcomes[-1])

    def _reduce(self, earlier: list[str], text: str, same: Callable[[Any], bool],
                deadline: Optional[float]) -> list[str]:
        """ddmin (Zeller) over the earlier inputs, keeping their order."""
        tests = 0
        current = list(earlier)
        granularity = 2
        while len(current) >= 2:
            if tests >= MAX_TESTS or (deadline is not None and time.monotonic() >= deadline):
                break
            size = max(1, len(current) // granularity)
            chunks = [current[i:i + size] for i in range(0, len(current), size)]
            reduced = False
            for i in range(len(chunks)):
                for candidate in (chunks[i], [x for j, c in enumerate(chunks) if j != i for x in c]):
                    if not candidate or len(candidate) >= len(current):
                        continue
                    tests += 1
                    if self._reproduces(candidate, text, same, deadline):
                        current, reduced = candidate, True
                        granularity = 2 if candidate is chunks[i] else max(granularity - 1, 2)
                        break
                if reduced or tests >= MAX_TESTS:
                    break
            if not reduced:
                if granularity >= len(current):
                    break
                granularity = min(len(current), granularity * 2)
        return current


__all__ = ["ALONE", "Confirmer", "FLAKY", "HISTORY", "UNKNOWN", "text_of"]
