"""Shrinking a generated sample's choice sequence: :func:`shrink_choices`.

The caller replays each candidate sequence and re-renders the sample, so its ground truth is
recomputed by construction (DESIGN.md, "Shrinking keeps the meaning"); the predicate answers with a
size key of the sample produced, or None. Candidates are proposed in batches and asked through
:class:`corpus.predicate.Evaluator`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from corpus.predicate import DEFAULT_BATCH, ChoicesTest, Evaluator, run_stages


Choices = tuple[int, ...]


class _ChoiceShrinker:
    def __init__(self, choices: Choices, key: Any, evaluator: Evaluator):
        self.best = choices
        self.best_key = key
        self.ev = evaluator

    def order(self, key: Any, choices: Choices) -> tuple[Any, int, Choices]:
        return (key, len(choices), choices)

    def _better(self, key: Any, choices: Choices) -> bool:
        try:
            return self.order(key, choices) < self.order(self.best_key, self.best)
        except TypeError:
            raise TypeError(f"the predicate's keys must be comparable; got {key!r} and {self.best_key!r}") from None

    def try_batch(self, candidates: Sequence[Choices]) -> Optional[int]:
        """Evaluate in batches; adopt the best improvement of the first batch that has one.

        When several candidates of that batch improve, their union is not known to pass; only the
        best single one is adopted, so every adopted sequence was seen to pass.
        """
        bs = self.ev.batch_size
        pending = [(i, c) for i, c in enumerate(candidates) if c != self.best]
        for start in range(0, len(pending), bs):
            chunk = pending[start:start + bs]
            answers = self.ev.evaluate([c for _i, c in chunk])
            better = [(self.order(k, c), i) for (i, c), k in zip(chunk, answers)
                      if k is not None and self._better(k, c)]
            if better:
                (key, _n, choices), i = min(better)
                self.best, self.best_key = choices, key
                return i
        return None

    def strip_trailing_zeros(self) -> bool:
        b = self.best
        end = len(b)
        while end and b[end - 1] == 0:
            end -= 1
        return end < len(b) and self.try_batch([b[:end]]) is not None

    def delete_blocks(self, size: int) -> bool:
        progressed = False
        i = 0
        while i + size <= len(self.best):
            b = self.best
            positions = list(range(i, min(len(b) - size + 1, i + self.ev.batch_size)))
            hit = self.try_batch([b[:p] + b[p + size:] for p in positions])
            if hit is None:
                i = positions[-1] + 1
            else:
                progressed = True
                i = positions[hit]
        return progressed

    def zero_each(self) -> bool:
        progressed = False
        i = 0
        while i < len(self.best):
            b = self.best
            positions = [p for p in range(i, len(b)) if b[p] != 0][: self.ev.batch_size]
            if not positions:
                break
            cands = [b[:p] + (0,) + b[p + 1:] for p in positions]
            answers = self.ev.evaluate(cands)
            ok = [p for p, c, k in zip(positions, cands, answers) if k is not None and self._better(k, c)]
            if len(ok) > 1:  # zero them all at once if that passes too
                combined = tuple(0 if q in ok else v for q, v in enumerate(b))
                if self.try_batch([combined]) is not None:
                    progressed = True
                    i = ok[-1] + 1
                    continue
            hit = self.try_batch(cands)
            if hit is None:
                i = positions[-1] + 1
            else:
                progressed = True
                i = positions[hit] + 1
        return progressed

    def lower_each(self) -> bool:
        """Per position, batched bisection toward 0: try up to 8 evenly spaced smaller values (the
        largest is one less), narrow to the interval below the best that passed; a round where none
        passes ends the position."""
        progressed = False
        for p in range(len(self.best)):
            if p >= len(self.best):
                break
            lo = -1
            while True:
                b = self.best
                if p >= len(b):
                    break
                hi = b[p]
                if hi - lo <= 1:
                    break
                span = hi - lo - 1
                m = min(span, 8)
                values = sorted({lo + 1 + (span - 1) * j // max(m - 1, 1) for j in range(m)} if m > 1 else {lo + 1})
                cands = [b[:p] + (v,) + b[p + 1:] for v in values]
                answers = self.ev.evaluate(cands)
                better = [(self.order(k, c), v) for c, v, k in zip(cands, values, answers)
                          if k is not None and self._better(k, c)]
                if better:
                    (key, _n, choices), v = min(better)
                    self.best, self.best_key = choices, key
                    progressed = True
                    failing = [x for x, k in zip(values, answers) if k is None and x < v]
                    lo = max(failing) if failing else lo
                else:
                    # Nothing lower passes, down to hi - 1: zooming into (values[-1], hi) would cost
                    # a round per factor 8 of the value, almost always for nothing (a value a little
                    # smaller rarely makes a sample smaller), and most positions end here.
                    break
        return progressed

    def run(self) -> None:
        while True:
            progressed = self.strip_trailing_zeros()
            for size in (8, 4, 2, 1):
                progressed |= self.delete_blocks(size)
            progressed |= self.zero_each()
            progressed |= self.lower_each()
            if not progressed:
                return


def shrink_choices(choices: Sequence[int], test: ChoicesTest, *, budget_s: float | None = None,
                   max_tests: int | None = None, batch_size: int = DEFAULT_BATCH, status: dict | None = None) -> Choices:
    """The best choice sequence found: smallest key, ties broken by shortlex of the choices.

    ``test(candidates) -> list[key | None]``: None when the replayed sample is not interesting
    (another signature, or passing), otherwise a sortable size key of the sample it produced, e.g.
    ``(len(text), text)``. Replay pads a short sequence with zeros and clamps out-of-range values
    (``ReplaySource``), so every candidate is well formed. Passes, repeated until a round makes no
    progress: strip trailing zeros; delete blocks of 8, 4, 2, 1 choices at every position; zero each
    choice; lower each choice by batched bisection toward 0. The result is never longer than
    ``choices`` and its key is never larger than the input's.

    ``status``, when given, gets ``complete``: False when the budget stopped the search early.
    Raises :class:`NotInteresting` when ``choices`` itself does not pass.
    """
    start = tuple(int(c) for c in choices)
    ev, key = Evaluator.starting(test, start, cache_key=lambda c: c, passes=lambda key: key is not None,
                                 budget_s=budget_s, max_tests=max_tests, batch_size=batch_size,
                                 nothing="the choice sequence does not pass the predicate")
    shrinker = _ChoiceShrinker(start, key, ev)
    run_stages(status, shrinker.run)
    return shrinker.best


__all__ = ["shrink_choices"]
