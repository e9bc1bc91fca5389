"""Shrinking a failing scenario to the shortest call sequence and the smallest schedule.

The predicate is "the scenario, run again, still violates with this signature" — judged afresh
each time, so a shrunk scenario means what its verdict says. Two stages, every candidate run
through the worker pool in batches:

1. **Steps**: cut the scenario after the failing call, try that call alone, then delete calls one
   at a time, until no single deletion keeps the signature (the shortest sequence that still
   builds the state — say, the five failures that open a breaker — is what remains).
2. **Choices**: each remaining step is two choice sequences (its gap and schedule; its call),
   shrunk with :func:`corpus.minimize.shrink_choices` and re-realized by the generator, so faults
   become ``ok`` or simpler kinds, runs get shorter, parameters smaller, anomalous calls valid and
   arguments simpler wherever the failure allows. A scenario loaded from a file (no genome) gets
   stage 1 only.

Smaller means :meth:`Scenario.size_key`: fewer steps, fewer failing faults, fewer anomalies,
shorter gaps, shorter text.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Optional

from corpus.minimize import NotInteresting, shrink_choices
from fuzzer.harnesses.executor.scenario import Genome, Scenario

#: (scenarios) -> one (trace, violations) per scenario
Runner = Callable[[list], list]


class ScenarioShrinker:
    def __init__(self, run: Runner, generator: Any, signature_id: str, *, budget_s: Optional[float]):
        """``run(scenarios)`` gives (trace, violations) per scenario, (None, None) for one the
        budget left no time for. A real-time hang costs the watchdog's whole timeout per candidate,
        so for one the candidates are tried one at a time, smallest first, until one keeps it."""
        self._run = run
        self._generator = generator
        self._signature = signature_id
        self._one_at_a_time = False  # set when the scenario hung in real time (see shrink)
        self._deadline = None if budget_s is None else time.monotonic() + budget_s
        self._cache: dict[str, Any] = {}
        self.best: Optional[tuple] = None  # (scenario, trace, violation)
        self.stopped_by_budget = False

    def _left(self) -> Optional[float]:
        return None if self._deadline is None else self._deadline - time.monotonic()

    def _out_of_time(self) -> bool:
        left = self._left()
        if left is not None and left <= 0:
            self.stopped_by_budget = True
            return True
        return False

    def _evaluate(self, scenarios: list) -> list:
        """(trace, violation) per scenario when it keeps the signature, else None."""
        todo = [s for s in scenarios if s.wire() not in self._cache]
        if todo:
            for s, (trace, violations) in zip(todo, self._run(todo)):
                if trace is None:  # not run: the budget ended (not cached: it says nothing)
                    self.stopped_by_budget = True
                    continue
                hit = next((v for v in violations if v.signature.id == self._signature), None)
                self._cache[s.wire()] = (trace, hit) if hit is not None else None
        return [self._cache.get(s.wire()) for s in scenarios]

    def _evaluate_until_one_keeps(self, candidates: list) -> list:
        """:meth:`_evaluate` one candidate at a time, stopping at the first that keeps the
        signature (or at the budget); those not tried are None."""
        answers: list = []
        for candidate in candidates:
            if self._out_of_time():
                break
            answers += self._evaluate([candidate])
            if answers[-1] is not None:
                break
        return answers + [None] * (len(candidates) - len(answers))

    def _adopt(self, candidates: list) -> bool:
        """Adopt the smallest candidate that keeps the signature and is smaller than the best."""
        if not candidates or self._out_of_time():
            return False
        if self._one_at_a_time:
            candidates = sorted(candidates, key=Scenario.size_key)
            answers = self._evaluate_until_one_keeps(candidates)
        else:
            answers = self._evaluate(candidates)
        good = [(c.size_key(), i) for i, (c, a) in enumerate(zip(candidates, answers)) if a is not None]
        if not good:
            return False
        key, i = min(good)
        if self.best is not None and key >= self.best[0].size_key():
            return False
        trace, violation = answers[i]
        self.best = (candidates[i], trace, violation)
        return True

    def shrink(self, scenario: Scenario, known: Optional[tuple] = None) -> Optional[tuple]:
        """The smallest (scenario, trace, violation) found, or None if it does not reproduce.
        ``known``: (trace, violation) of a run of ``scenario`` already made (its confirmation)."""
        if known is not None:
            self._cache[scenario.wire()] = known
        first = self._evaluate([scenario])[0]
        if first is None:
            return None
        self.best = (scenario, *first)
        self._one_at_a_time = first[0].kind == "hung"
        self._steps()
        if self.best[0].genome is not None:
            self._choices()
            self._steps()
        return self.best

    # -- stage 1 -----------------------------------------------------------------------------------
    def _without(self, scenario: Scenario, keep: list) -> Scenario:
        steps = tuple(scenario.steps[i] for i in keep)
        genome = scenario.genome
        if genome is not None:
            genome = Genome(header=genome.header, steps=tuple(genome.steps[i] for i in keep))
        return replace(scenario, steps=steps, genome=genome)

    def _steps(self) -> None:
        scenario, _trace, violation = self.best
        if violation.step is None and self._one_at_a_time and len(scenario.steps) > 1:
            # a real-time hang does not say in which call: each call alone, smallest first — the
            # ones that do not hang come back at once, and the first that does is adopted (one
            # timeout, where deleting the calls one by one costs one for each call kept)
            self._adopt([self._without(scenario, [i]) for i in range(len(scenario.steps))])
        if violation.step is not None and violation.step + 1 < len(scenario.steps):
            self._adopt([self._without(scenario, list(range(violation.step + 1)))])
        if violation.step is not None and len(self.best[0].steps) > 1:
            # the failing call alone: most failures need no state, and it costs one run (a hang's
            # deletions one at a time cost a timeout each)
            self._adopt([self._without(self.best[0], [self.best[2].step])])
        progressed = True
        while progressed and not self._out_of_time():
            scenario = self.best[0]
            n = len(scenario.steps)
            if n <= 1:
                return
            progressed = self._adopt([self._without(scenario, [j for j in range(n) if j != i]) for i in range(n)])

    # -- stage 2 -----------------------------------------------------------------------------------
    def _choices(self) -> None:
        for index in range(len(self.best[0].steps)):
            for part in (0, 1):
                if index >= len(self.best[0].steps) or self._out_of_time():
                    return
                self._shrink_part(index, part)

    def _shrink_part(self, index: int, part: int) -> None:
        base = self.best[0]
        genome = base.genome
        generator = self._generator

        def with_choices(choices: tuple) -> Scenario:
            steps = list(genome.steps)
            pair = list(steps[index])
            pair[part] = tuple(choices)
            steps[index] = tuple(pair)
            return generator.realize(Genome(header=genome.header, steps=tuple(steps)))

        def test(candidates: list) -> list:
            scenarios = [with_choices(c) for c in candidates]
            answers = self._evaluate(scenarios)
            return [s.size_key() if a is not None else None for s, a in zip(scenarios, answers)]

        try:
            best = shrink_choices(genome.steps[index][part], test, budget_s=self._left())
        except NotInteresting:
            return
        candidate = with_choices(best)
        self._adopt([candidate])


def shrink_scenario(scenario: Scenario, signature_id: str, run: Runner, generator: Any, *,
                    budget_s: Optional[float], known: Optional[tuple] = None) -> tuple[Optional[tuple], bool]:
    """``(best (scenario, trace, violation) or None, stopped by the budget)``."""
    shrinker = ScenarioShrinker(run, generator, signature_id, budget_s=budget_s)
    return shrinker.shrink(scenario, known), shrinker.stopped_by_budget


__all__ = ["ScenarioShrinker", "shrink_scenario"]
