"""Orders: the unit of work every harness sends its workers, and the line their results are filed in.

Why orders: with the engine drawing every input, sending it and judging what came back, the
engine process was the bottleneck of every harness (the parser's: its generating and judging
threads took a core between them; the executor's: ~360 µs of engine CPU per scenario, as much as
a worker spent running one). An :class:`Order` is a few hundred bytes — a seed, a count, what the
harness planned — and the worker draws its inputs from it, runs them with the
:class:`~fuzzer.isolation.worker.OrderRunner` (which pins each input, so a hang or a death is still
blamed on the exact input), judges them, and sends back one small result: counts, and the first
failures of each signature in full.

An order's inputs are a function of what it carries alone (its seed above all), never of the
worker that runs it, and the engine files results in order number (:class:`OrderLine`), so the
number of workers — or machines — changes nothing a seed's run finds.
"""

from __future__ import annotations

from typing import Any

from fuzzer.isolation.pool import Lost


def order_seed(campaign_seed: int, number: int) -> int:
    """The seed of a campaign's ``number``-th order."""
    return (campaign_seed * 1_000_003 + number) & 0xFFFFFFFF


class Order:
    """"Draw ``count`` inputs from ``seed`` and run them": ``run(runner)`` in the worker, one
    result back. ``number``: its place in the campaign (results are filed in this order);
    ``skip``: indices of inputs it must not run again (they hung or killed a worker; the engine
    holds them in ``lost``, which never travels).

    When its worker hangs or dies on an input, the pool calls :meth:`resume`: True sends the order
    again at once without that input (its inputs are a function of its seed, so the new worker
    draws the same ones); False returns the :class:`~fuzzer.isolation.pool.Lost` as its result,
    and the campaign sends the order again next round, after it has settled what the lost input
    showed (an executor that hangs every few scenarios would otherwise spend a timeout on each
    before its first finding is settled). Subclasses set :attr:`RESUMES`."""

    __slots__ = ("seed", "count", "number", "skip", "lost")

    #: Inputs one order may lose and still be sent again at once (0: never at once, see above).
    RESUMES = 0

    def __init__(self, seed: int, count: int, number: int = 0):
        self.seed, self.count, self.number = seed, count, number
        self.skip: frozenset = frozenset()
        self.lost: list = []

    def __getstate__(self) -> tuple:
        return tuple(getattr(self, name) for name in self._state())

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(self._state(), state):
            setattr(self, name, value)
        self.lost = []

    @classmethod
    def _state(cls) -> list[str]:
        """The slots that travel (every slot of the class and its bases but ``lost``)."""
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            for name in getattr(klass, "__slots__", ()):
                if name != "lost" and name not in names:
                    names.append(name)
        return names

    @property
    def size(self) -> int:
        """Sequence numbers the order may use (the pool's stride): one per input it may run."""
        return self.count

    def resume(self, lost: Lost) -> bool:
        """Keep ``lost`` and skip its input from now on; whether to send the order again at once."""
        self.lost.append(lost)
        self.skip = self.skip | {lost.index}
        return len(self.lost) < self.RESUMES

    def run(self, runner: Any) -> Any:
        raise NotImplementedError


class OrderLine:
    """A campaign's orders in the order their results are filed: by order number, whatever
    finished first, so a seed's findings, the input each is shown with and the counts never
    depend on timing or on the number of workers.

    An order a worker was lost on comes back as a :class:`~fuzzer.isolation.pool.Lost`: the lost
    input is filed as soon as every order before it is (so its finding is settled early), and
    the order stays in line to run again without it; the orders after it wait for it. An order a
    round did not get to send (it stopped early to settle a finding) stays in line too."""

    def __init__(self) -> None:
        self._line: list = []  # [order, result or None, lost inputs filed], by order number
        #: (order, Lost) of each order given up on: its worker died between its inputs again
        #: and again, with nothing to blame (the campaign notes it: its inputs did not run)
        self.given_up: list = []

    def __len__(self) -> int:
        return len(self._line)

    def add(self, order: Order) -> None:
        self._line.append([order, None, 0])

    def outstanding(self) -> int:
        """Inputs of the orders in line that are still to run (an order lost a worker on an input
        runs again without it): what a limit of executions must leave room for."""
        return sum(entry[0].count - len(entry[0].skip) for entry in self._line if not _done(entry[1]))

    def waiting(self) -> list:
        """The orders to run: never run, or lost a worker on an input since they last ran."""
        return [entry[0] for entry in self._line if not _done(entry[1])]

    def arrived(self, order: Order, result: Any) -> None:
        for entry in self._line:
            if entry[0] is order:
                entry[1] = result
                if isinstance(result, Lost) and result.index < 0:
                    entry[1] = _GIVEN_UP  # its worker died between inputs, again and again:
                    # nothing to blame and nothing more to run (what it lost is its ``lost``)
                    self.given_up.append((order, result))
                return

    def ready(self) -> list:
        """What can be filed now, in order, taken out of the line: (order, lost inputs, result)
        of each order at the front that is done — ``lost``, the :class:`Lost` s not filed yet; the
        result None for an order that is to run again (its lost inputs are filed, the orders
        after it wait) or that was given up on."""
        out = []
        while self._line:
            entry = self._line[0]
            order, result, filed = entry
            if result is None:
                break
            lost = order.lost[filed:]
            entry[2] = len(order.lost)
            if _done(result):
                out.append((order, lost, None if result is _GIVEN_UP else result))
                self._line.pop(0)
                continue
            out.append((order, lost, None))
            entry[1] = None  # to run again
            break
        return out

    def drain(self) -> list:
        """Everything still in line, as :meth:`ready` gives it, results or not (the campaign is
        ending: what came back is filed even behind an order that did not finish)."""
        out = []
        for order, result, filed in self._line:
            out.append((order, order.lost[filed:], result if _done(result) and result is not _GIVEN_UP else None))
        self._line = []
        return out


#: The result of an order given up on (nothing more to run, nothing to file but what it lost).
_GIVEN_UP = object()


def _done(result: Any) -> bool:
    return result is not None and not isinstance(result, Lost)


__all__ = ["Order", "OrderLine", "order_seed"]
