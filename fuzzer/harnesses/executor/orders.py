"""Scenarios drawn, run and judged in the workers: the executor campaign's orders.

Why: with the engine drawing every scenario, sending it, and decoding (and often judging) its
trace, the engine spent ~360 µs of CPU per scenario, as much as a worker spent running one; one
worker idled a third of the time and a second worker added almost nothing. A
:class:`ScenarioOrder` is a seed and a count: the worker draws the scenarios from a copy of the
campaign's :class:`~fuzzer.harnesses.executor.scenario.ScenarioGenerator` (its call pools drawn by the
engine and sent once per campaign, so both sides draw and replay exactly the same calls), runs
each through the :class:`~fuzzer.isolation.worker.OrderRunner` (which pins it, so a hang or a
death is still blamed on the exact scenario), and sends back a :class:`ScenarioResult`: the
counts of the scenarios that kept every promise or broke one only in ways already reported, and
in full the scenarios that came back with their trace (a violation the worker had not sent three
times yet, or every scenario when the workers do not judge: :func:`fuzzer.harnesses.executor.job.workers_judge`).

The same way as the parser campaign's :mod:`fuzzer.harnesses.parser.orders`: an order's scenarios are a function
of its seed alone, and the engine files results in the orders' order, so the worker count
changes nothing a seed's run finds.
"""

from __future__ import annotations

import pickle
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

#: What an order pins each of its scenarios with (the pool's Lost carries it back).
TAG = "scenario"
#: Campaign generators a worker keeps (a campaign sends one; replays and tests may send others).
GENERATORS = 2


@dataclass
class Usage:
    """What scenarios cost and what they met, added up from their summaries (the shape of
    :func:`~fuzzer.harnesses.executor.worker.summary_of`): calls, virtual, real and CPU seconds,
    and the attempts that met each fault kind. A worker adds up an order's scenarios, the
    campaign the orders'."""

    calls: int = 0
    virtual_s: float = 0.0
    real_s: float = 0.0
    cpu_s: float = 0.0
    faults: dict = field(default_factory=dict)  # fault kind -> attempts that met it

    def add(self, summary: dict) -> None:
        self.calls += summary["calls"]
        self.virtual_s += float(summary["virtual_s"])
        self.real_s += float(summary["real_s"])
        self.cpu_s += float(summary["cpu_s"])
        faults = self.faults
        for kind, n in summary["faults"].items():
            faults[kind] = faults.get(kind, 0) + n

    def summary(self) -> dict:
        """The total, in :func:`~fuzzer.harnesses.executor.worker.summary_of`'s shape."""
        return {"calls": self.calls, "virtual_s": self.virtual_s, "real_s": self.real_s, "cpu_s": self.cpu_s,
                "faults": self.faults}


@dataclass
class ScenarioResult:
    """What a worker sends back for one order. The counts are those of the scenarios it judged
    and sent without their trace (:meth:`ScenarioRunner.judged`'s summaries, added up);
    ``traced``: the others, in order, for the engine to judge and file: (index in the order, the
    summary when the worker judged it or None, its trace as JSON text, or None and why the
    runner itself failed)."""

    scenarios: int = 0
    failing: int = 0  # of those, the scenarios that broke a promise (the report's by_class failures)
    usage: Usage = field(default_factory=Usage)
    by_verdict: dict = field(default_factory=dict)  # verdict -> scenarios that broke it
    seen: dict = field(default_factory=dict)  # signature id -> scenarios that showed it
    traced: list = field(default_factory=list)

    @property
    def executions(self) -> int:
        return self.scenarios + len(self.traced)

    def add(self, summary: dict) -> None:
        """One judged scenario's summary (see :func:`~fuzzer.harnesses.executor.worker.summary_of`)."""
        self.scenarios += 1
        self.usage.add(summary)
        violations = summary.get("violations", ())
        self.failing += bool(violations)
        for verdict in {verdict for verdict, _id in violations}:
            self.by_verdict[verdict] = self.by_verdict.get(verdict, 0) + 1
        for _verdict, signature_id in violations:
            self.seen[signature_id] = self.seen.get(signature_id, 0) + 1


class ScenarioOrder:
    """"Draw ``count`` scenarios from ``seed`` with the generator ``setup`` (pickled and compressed,
    sent with every order — small enough to queue behind a running one — and unpickled once per
    worker under ``key``), run them, judge them if ``judge``."

    When its worker hangs or dies on a scenario, the pool calls :meth:`resume`: the order is sent
    again without that scenario (its scenarios are a function of its seed), and ``lost`` (engine
    side only) keeps the pool's :class:`~fuzzer.isolation.pool.Lost` for the engine to judge."""

    __slots__ = ("key", "setup", "seed", "count", "judge", "number", "skip", "lost")

    def __init__(self, key: str, setup: bytes, seed: int, count: int, judge: bool, number: int = 0):
        self.key, self.setup, self.seed, self.count, self.judge = key, setup, seed, count, judge
        self.number = number  # its place in the campaign (see run: which scenarios travel whole)
        self.skip: frozenset = frozenset()
        self.lost: list = []

    def __getstate__(self) -> tuple:
        return self.key, self.setup, self.seed, self.count, self.judge, self.number, self.skip

    def __setstate__(self, state: tuple) -> None:
        self.key, self.setup, self.seed, self.count, self.judge, self.number, self.skip = state
        self.lost = []

    @property
    def size(self) -> int:
        return self.count

    def resume(self, lost: Any) -> bool:
        """Keep ``lost`` and skip its scenario from now on. False: the pool is not to send the
        order again at once: the campaign does, in its next round, after it has confirmed (and
        shrunk) what the lost scenario showed — an executor that hangs every few scenarios would
        otherwise spend a timeout on each before its first finding is settled."""
        self.lost.append(lost)
        self.skip = self.skip | {lost.index}
        return False


    def run(self, runner: Any) -> ScenarioResult:
        """In the worker: draw, run, and count or send back each scenario. Each is pinned by its
        index before it runs (a hang or a death is blamed on it) and run by the worker's
        :class:`~fuzzer.harnesses.executor.worker.ScenarioRunner` directly, without the JSON text a
        scenario sent by the engine travels as; a trace travels back as its JSON text, and the
        scenario as its index (the engine draws it again from the order's seed).

        A judging worker sends back the first few scenarios of each violation it sees, and the
        engine files a finding from the first it is sent, in order number: the first scenario of
        the whole campaign that showed it, as one worker that judges nothing would give — provided
        each worker runs its orders in ascending number. An order run out of that sequence (one
        run again after a worker was lost on it, or queued again behind a later one) counts
        against a fresh tally, so its own first of each violation comes back whole whatever the
        worker ran before it."""
        scenarios = runner.served  # the worker's ScenarioRunner
        if self.number > scenarios.last_order:
            scenarios.last_order = self.number
            return self._run(runner, scenarios)
        sent, scenarios.sent = scenarios.sent, {}
        try:
            return self._run(runner, scenarios)
        finally:
            scenarios.sent = sent

    def _run(self, runner: Any, scenarios: Any) -> ScenarioResult:
        generator = _generator_for(self)
        generator.restart(self.seed)
        result, skip = ScenarioResult(), self.skip
        for index in range(self.count):
            scenario = generator.generate()
            if skip and index in skip:
                continue  # it hung or killed a worker: the engine holds it
            runner.enter(TAG, index)
            try:
                summary, trace = scenarios.run_direct(scenario, self.judge)
            except Exception as exc:  # noqa: BLE001 - the runner's own failure, as a text's would be
                result.traced.append((index, None, None, f"{type(exc).__name__}: {exc}"[:300]))
                continue
            if trace is None:
                result.add(summary)
            else:
                result.traced.append((index, summary, trace, None))
        return result


_GENERATORS: "OrderedDict[str, Any]" = OrderedDict()


def _generator_for(order: ScenarioOrder) -> Any:
    generator = _GENERATORS.get(order.key)
    if generator is None:
        generator = _GENERATORS[order.key] = pickle.loads(zlib.decompress(order.setup))
        while len(_GENERATORS) > GENERATORS:
            _GENERATORS.popitem(last=False)
    else:
        _GENERATORS.move_to_end(order.key)
    return generator


__all__ = ["ScenarioOrder", "ScenarioResult", "TAG", "Usage"]
