"""What both minimizers share: the order of inputs, and asking a batched predicate.

The engine runs targets in isolated worker processes, where one message of many inputs costs about
as much as one message of one input (DESIGN.md, "Isolation is affordable when batched"). So every
predicate is *batched*: it takes a list of candidates and answers for each. An :class:`Evaluator`
asks it with a cache (a candidate is never evaluated twice, and cached answers do not count against
``max_tests``), in batches, within the time and test budget (:class:`OutOfBudget` stops a
minimizer with the best result so far). :func:`shortlex` is the size order of inputs everywhere.
The minimizers themselves: :mod:`corpus.minimize`.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable, Hashable, Optional, Sequence

from strategies.errors import ToolfuzzError


def shortlex(text: str) -> tuple[int, str]:
    """The size order of inputs, everywhere (minimizers, the corpus, findings): shorter first, then
    code-point order. Smaller is better."""
    return (len(text), text)


TextTest = Callable[[list[str]], Sequence[bool]]
ChoicesTest = Callable[[list[tuple[int, ...]]], Sequence[Any]]

#: candidates per predicate call; one worker message in the engine
DEFAULT_BATCH = 256


class NotInteresting(ToolfuzzError, ValueError):
    """The input given to a minimizer does not pass its predicate, so there is nothing to shrink."""


class OutOfBudget(Exception):
    """Raised inside a minimizer when its time or test budget is spent; the best so far is returned."""


def text_id(text: str) -> bytes:
    # surrogatepass: model output may hold lone surrogates, which plain UTF-8 refuses
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class Evaluator:
    """Calls a batched predicate with caching, batching and the time / test budget."""

    def __init__(self, test: Callable[[list[Any]], Sequence[Any]], *, cache_key: Callable[[Any], Hashable],
                 budget_s: Optional[float], max_tests: Optional[int], batch_size: int):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size!r}")
        self._test = test
        self._cache_key = cache_key
        self._cache: dict[Hashable, Any] = {}
        self._deadline = None if budget_s is None else time.monotonic() + budget_s
        self._max_tests = max_tests
        self.batch_size = batch_size
        self.tests = 0  # candidates evaluated by the predicate
        self.calls = 0  # predicate calls (batches)

    @classmethod
    def starting(cls, test: Callable[[list[Any]], Sequence[Any]], start: Any, *, cache_key: Callable[[Any], Hashable],
                 passes: Callable[[Any], bool], budget_s: Optional[float], max_tests: Optional[int], batch_size: int,
                 nothing: str) -> tuple["Evaluator", Any]:
        """An evaluator for shrinking ``start``, and the predicate's answer for ``start``: asked
        first, outside the budget (the budget counts from then), and :class:`NotInteresting`
        (``nothing``: what did not pass) when it does not ``passes``."""
        ev = cls(test, cache_key=cache_key, budget_s=None, max_tests=None, batch_size=batch_size)
        answer = ev.evaluate([start])[0]
        if not passes(answer):
            raise NotInteresting(f"{nothing}, so there is nothing to shrink")
        ev._deadline = None if budget_s is None else time.monotonic() + budget_s
        ev._max_tests = None if max_tests is None else max_tests + ev.tests
        return ev, answer

    def _check_budget(self) -> None:
        if self._max_tests is not None and self.tests >= self._max_tests:
            raise OutOfBudget()
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise OutOfBudget()

    def evaluate(self, candidates: Sequence[Any]) -> list[Any]:
        """The predicate's answer for each candidate (at most ``batch_size`` of them).

        When the test budget is smaller than the number of new candidates, only the first ones are
        evaluated and the rest answer as failing; the next call raises :class:`OutOfBudget`.
        """
        keys = [self._cache_key(c) for c in candidates]
        todo: list[int] = []
        seen: dict[Hashable, int] = {}
        for i, k in enumerate(keys):
            if k not in self._cache and k not in seen:
                seen[k] = i
                todo.append(i)
        if todo:
            self._check_budget()
            if self._max_tests is not None:
                todo = todo[: self._max_tests - self.tests]
            answers = list(self._test([candidates[i] for i in todo]))
            if len(answers) != len(todo):
                raise ValueError(f"the predicate returned {len(answers)} answers for {len(todo)} candidates")
            self.tests += len(todo)
            self.calls += 1
            for i, answer in zip(todo, answers):
                self._cache[keys[i]] = answer
        return [self._cache.get(k) for k in keys]


def run_stages(status: dict | None, *stages: Callable[[], Any]) -> None:
    """Run the stages until the budget stops them; record in ``status`` whether all finished."""
    try:
        for stage in stages:
            stage()
        complete = True
    except OutOfBudget:
        complete = False
    if status is not None:
        status["complete"] = complete


__all__ = ["ChoicesTest", "DEFAULT_BATCH", "Evaluator", "NotInteresting", "OutOfBudget", "TextTest", "run_stages",
           "shortlex", "text_id"]
