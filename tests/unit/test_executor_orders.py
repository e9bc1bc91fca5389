"""The executor campaign's orders (fuzzer/executor/orders.py): results are filed by order number
whatever finished first, an order a worker was lost on runs again without the lost scenario and
holds back the orders after it, and a worker's copy of the generator draws what the engine's does."""

from __future__ import annotations

import pickle

from fuzzer.executor.orders import OrderLine, ScenarioOrder, ScenarioResult, order_seed
from fuzzer.executor.policy import Policy
from fuzzer.executor.scenario import ScenarioGenerator
from fuzzer.isolation.outcome import Outcome
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
