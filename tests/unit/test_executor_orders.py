"""The executor campaign's orders (fuzzer/harnesses/executor/orders.py): results are filed by order number
whatever finished first, an order a worker was lost on runs again without the lost scenario and
holds back the orders after it, and a worker's copy of the generator draws what the engine's does."""

from __future__ import annotations

import pickle

from fuzzer.engine.orders import OrderLine, order_seed
from fuzzer.harnesses.executor.orders import ScenarioOrder, ScenarioResult
from fuzzer.harnesses.executor.policy import Policy
from fuzzer.harnesses.executor.scenario import ScenarioGenerator
from fuzzer.harnesses.parser.outcome import Outcome
from fuzzer.isolation.pool import Lost
from strategies._internal.tools import builtin_registry


def orders(n: int) -> list:
    return [ScenarioOrder("k", b"", order_seed(0, i), 32, False) for i in range(n)]


def lost_on(index: int) -> Lost:
    return Lost(Outcome("hung", detail="no result within 2 s"), "scenario", "", True, index)


def test_results_are_filed_by_order_number_whatever_arrives_first():
    a, b, c = orders(3)
    line = OrderLine()
    for order in (a, b, c):
        line.add(order)
    results = {order: ScenarioResult(scenarios=i + 1) for i, order in enumerate((a, b, c))}
    line.arrived(c, results[c])
    assert line.ready() == []  # a and b first
    line.arrived(a, results[a])
    assert line.ready() == [(a, [], results[a])]
    line.arrived(b, results[b])
    assert line.ready() == [(b, [], results[b]), (c, [], results[c])]
    assert len(line) == 0


def test_an_order_lost_on_a_scenario_runs_again_without_it_and_holds_back_the_next():
    a, b = orders(2)
    line = OrderLine()
    line.add(a)
    line.add(b)
    hang = lost_on(5)
    assert a.resume(hang) is False  # sent again by the campaign's next round, not at once
    later = ScenarioResult(scenarios=32)
    line.arrived(a, hang)
    line.arrived(b, later)
    assert line.ready() == [(a, [hang], None)]  # the hang is filed now; b waits for a
    assert line.waiting() == [a] and a.skip == {5}
    assert line.ready() == []  # the hang is filed once
    done = ScenarioResult(scenarios=31)
    line.arrived(a, done)
    assert line.ready() == [(a, [], done), (b, [], later)]


def test_draining_files_what_came_back_even_behind_an_order_that_did_not_finish():
    a, b = orders(2)
    line = OrderLine()
    line.add(a)
    line.add(b)
    result = ScenarioResult(scenarios=32)
    line.arrived(b, result)
    assert line.drain() == [(a, [], None), (b, [], result)]


def test_a_worker_s_copy_of_the_generator_draws_the_engine_s_scenarios():
    registry = builtin_registry()
    engine = ScenarioGenerator(registry, Policy(), seed=4).with_every_pool()
    worker = pickle.loads(pickle.dumps(engine))
    for seed in (order_seed(4, 0), order_seed(4, 9)):
        engine.restart(seed)
        worker.restart(seed)
        drawn = [engine.generate() for _ in range(40)]
        assert [s.wire() for s in drawn] == [worker.generate().wire() for _ in range(40)]
        assert [engine.realize(s.genome).wire() for s in drawn] == [s.wire() for s in drawn]


class _Runner:
    """A worker's scenario runner as far as an order sees it: a tally of the violations it sent
    back whole, which ``run_direct`` adds to (one per scenario here)."""

    def __init__(self) -> None:
        self.sent: dict = {}
        self.last_order = -1
        self.tallies: list = []

    def run_direct(self, scenario, judge: bool):
        self.tallies.append(dict(self.sent))
        self.sent["v"] = self.sent.get("v", 0) + 1
        return {"calls": 0}, "{}"


class _Pins:
    """An order runner reduced to what a ScenarioOrder uses: its pins and the worker's ScenarioRunner."""

    def __init__(self, served: object) -> None:
        self.served = served

    def enter(self, tag: str, index: int) -> None:
        pass


def test_an_order_run_out_of_its_number_s_sequence_counts_what_it_sends_whole_afresh():
    """Which scenario of a violation travels back whole (and so becomes its finding) must depend on
    the orders alone: an order a worker runs after a higher-numbered one (run again after a worker
    was lost on it) starts from an empty tally, and leaves the worker's as it was."""
    import zlib

    setup = zlib.compress(pickle.dumps(ScenarioGenerator(builtin_registry(), Policy(), seed=1).with_every_pool()))
    runner = _Runner()
    first, second, third = (ScenarioOrder("k-tally", setup, order_seed(1, n), 2, True, n) for n in (0, 1, 2))
    second.run(_Pins(runner))
    third.run(_Pins(runner))
    assert runner.tallies == [{}, {"v": 1}, {"v": 2}, {"v": 3}] and runner.last_order == 2
    first.run(_Pins(runner))  # out of sequence
    assert runner.tallies[4:] == [{}, {"v": 1}]
    assert runner.sent == {"v": 4} and runner.last_order == 2
    ScenarioOrder("k-tally", setup, order_seed(1, 3), 1, True, 3).run(_Pins(runner))
    assert runner.tallies[6:] == [{"v": 4}]


def test_an_order_whose_worker_died_between_scenarios_every_time_is_given_up_and_kept_for_a_note():
    a, b = orders(2)
    line = OrderLine()
    line.add(a)
    line.add(b)
    nothing_pinned = Lost(Outcome("died", detail="the worker process died (signal 9)"), "", "", True, -1)
    line.arrived(a, nothing_pinned)
    line.arrived(b, ScenarioResult(scenarios=32))
    assert [None if result is None else result.scenarios for _order, _lost, result in line.ready()] == [None, 32]
    assert line.given_up == [(a, nothing_pinned)]


class _FilingJob:
    """What filing a result needs of the campaign: the tally, and a finding book that holds nothing."""

    def __init__(self):
        from fuzzer.engine.campaign_result import Tally

        self.tally = Tally()
        self.book = self
        self.offered: list = []

    def find(self, signature_id):
        return None

    def offer(self, failure):
        self.offered.append(failure)


def test_failing_scenarios_a_worker_counted_are_failures_in_by_class():
    """A judging worker sends whole only the first few scenarios of each signature and counts the
    rest; which ones it sends depends on the orders it ran before. by_class counted failures of the
    whole ones only, so one seed's report differed with how the orders fell on the workers (59
    against 57 failing scenarios, two local workers against two Ray actors)."""
    from fuzzer.harnesses.executor.job import ExecutorSettings, ExecutorSubject

    result = ScenarioResult()
    quiet = {"calls": 1, "virtual_s": 0.0, "real_s": 0.0, "cpu_s": 0.0, "faults": {}}
    result.add(quiet)
    result.add({**quiet, "violations": [["retry_violation", "retry_violation-1"], ["leaked_secret", "leaked_secret-2"]]})
    result.add({**quiet, "violations": [["retry_violation", "retry_violation-1"]]})
    subject = ExecutorSubject(ExecutorSettings(executor="m:make"), registry=builtin_registry(), policy=Policy())
    job = _FilingJob()
    assert subject.file(orders(1)[0], result, job) == 3
    stats = job.tally.by_class["scenarios"]
    assert (stats.executions, stats.failures) == (3, 2)
    assert subject.result.scenarios_by_verdict == {"retry_violation": 2, "leaked_secret": 1}
    assert pickle.loads(pickle.dumps(result)).failing == 2  # (it travels from the worker)
