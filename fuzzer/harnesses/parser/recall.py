"""What an order's failures carry back of the inputs that ran before them: references, not texts.

Why: an order's result crossed the wire with, for each signature new to its worker, the texts of
the 4,096 inputs that worker ran before the failure (to confirm a failure that does not happen
alone). On the naive parser that was 120 MB in 8 seconds of two workers: a history is up to 4,096
texts, megabytes when oversized inputs are among them, and the engine keeps only the first one of
each signature (every other worker that meets the signature sends its own). On a cluster every
worker sends its own — hundreds of times the bytes, all of them through the driver.

A worker's inputs are a function of the orders it ran (their content alone:
:mod:`fuzzer.harnesses.parser.orders`), so it remembers them as runs of (order number, first
index, end index) — a :class:`Trail` — and a failure carries a few such runs. The engine keeps
the orders it planned lately and draws their samples again only when confirming a finding needs
the inputs before it (the finding did not fail alone): :class:`Recalled`. Inputs an order skips
(one that hung or killed a worker) ran nowhere: a run ends before each, so a history names
exactly the last :data:`HISTORY` inputs that ran. Orders no longer kept are left out (a
history then starts later, as when it held fewer inputs).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Iterator, Optional, Sequence

#: Inputs remembered before each one, to explain a finding that only happens after others.
HISTORY = 4096
#: Runs a worker's trail keeps (an order is one run; enough for HISTORY one-input orders).
RUNS = HISTORY


class Trail:
    """A worker's recent inputs of one tool visit as runs ``[order number, first index, end
    index]``, oldest first. The order's loop moves the end of its run past each input it ran (one
    list store: this replaced a deque of the samples themselves)."""

    __slots__ = ("runs",)

    def __init__(self) -> None:
        self.runs: deque = deque(maxlen=RUNS)

    def start(self, number: int, first: int = 0) -> list:
        """The run of an order starting now at its input ``first`` (its end moves as its inputs
        run; an input the order skips ends a run, the next one starts after it)."""
        run = [number, first, first]
        self.runs.append(run)
        return run

    def before(self) -> tuple:
        """The last :data:`HISTORY` inputs as ``((number, start, stop), ...)``, oldest first."""
        out: list = []
        total = 0
        for number, start, stop in reversed(self.runs):
            if stop <= start:
                continue
            take = min(stop - start, HISTORY - total)
            out.append((number, stop - take, stop))
            total += take
            if total >= HISTORY:
                break
        out.reverse()
        return tuple(out)


class Recalled(Sequence):
    """A history given by reference (:meth:`Trail.before`), its texts drawn again by ``recall``
    the first time they are read (a finding that fails alone never reads them)."""

    def __init__(self, runs: tuple, recall: Callable[[tuple], tuple]):
        self.runs = runs
        self._recall: Optional[Callable[[tuple], tuple]] = recall
        self._texts: Optional[tuple] = None

    @property
    def texts(self) -> tuple:
        if self._texts is None:
            recall, self._recall = self._recall, None
            self._texts = tuple(recall(self.runs)) if recall is not None else ()
        return self._texts

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, index: Any) -> Any:
        return self.texts[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)

    def __repr__(self) -> str:
        return f"Recalled({self.runs!r})"


def recall_texts(runs: tuple, orders: Callable[[int], Any], samples: Callable[[Any], list],
                 text_of: Callable[[Any], str]) -> tuple:
    """The texts of ``runs``: each kept order's samples (``orders(number)``, None when not kept;
    ``samples(order)`` draws them again), its skipped indices left out; the last :data:`HISTORY`."""
    texts: list = []
    drawn: dict = {}
    for number, start, stop in runs:
        order = orders(number)
        if order is None:
            continue
        if number not in drawn:
            drawn[number] = samples(order)
        mine, skip = drawn[number], order.skip
        texts.extend(text_of(mine[i]) for i in range(start, min(stop, len(mine))) if i not in skip)
    return tuple(texts[-HISTORY:])


__all__ = ["HISTORY", "Recalled", "Trail", "recall_texts"]
