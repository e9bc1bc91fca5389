"""The inputs that ran before a failure travel by reference (fuzzer/harnesses/parser/recall.py), and
a failure carries its signature (fuzzer/harnesses/parser/orders.py), run in this process:

* the inputs a failure names, drawn again by the engine from the orders it keeps, are exactly the
  texts the target ran before it — across orders, planned by the engine or by the worker, with
  inputs an order skips (they hung or killed a worker) left out, the oldest beyond HISTORY too;
* a trail names the last HISTORY inputs run, whatever the orders' sizes and skips, and orders the
  engine no longer keeps are left out;
* the signature a failure (and its smallest) carries is the one the engine's oracle gives it.
"""

from __future__ import annotations

import array
import pickle
from types import SimpleNamespace

from hypothesis import given, settings, strategies as st

from fuzzer.harnesses.parser.drawn import DrawOrder
from fuzzer.harnesses.parser.oracle import Oracle
from fuzzer.harnesses.parser.orders import FuzzOrder, _state_for, samples_of, text_of
from fuzzer.harnesses.parser.outcome import outcome_of
from fuzzer.harnesses.parser.recall import HISTORY, Trail, recall_texts
from fuzzer.harnesses.parser.schedule import SampleStream
from fuzzer.harnesses.parser.worker import Served
from fuzzer.isolation.spec import PIN_HEADER
from fuzzer.isolation.worker import OrderRunner
from fuzzer.targets.naive import parse
from tests.unit.parser_visit import FORMATS, OPERATORS, REGISTRY, TOOL, VISIT, VISIT_BLOB


class TrailSpy(Trail):
    """A worker's trail that notes, each time a failure takes the inputs before it, how many the
    target had run (the failing one included)."""

    __slots__ = ("ran", "taken")

    def __init__(self, ran: list) -> None:
        super().__init__()
        self.ran, self.taken = ran, []

    def before(self) -> tuple:
        runs = super().before()
        self.taken.append((runs, len(self.ran)))
        return runs


def test_the_inputs_before_a_failure_drawn_again_are_what_the_target_ran_and_its_signature_is_the_engine_s():
    ran: list = []

    def target(text: str) -> object:
        ran.append(text)
        return parse(text)

    served = Served(target, (ValueError,), SimpleNamespace(coverage=False, audit=False, trace_share=0))
    seq = memoryview(array.array("q", [0] * 4)).cast("B").cast("q")
    runner = OrderRunner(served, outcome_of, seq, 0, memoryview(bytearray(PIN_HEADER + 4096)), 0)
    stream = SampleStream(registry=REGISTRY, tool=REGISTRY[TOOL], formats=FORMATS, operators=OPERATORS,
                          include_valid=True, seed=3, cuts=True)
    key = "recall-test"
    orders: dict = {}
    for number in range(22):  # more than HISTORY inputs in all: the oldest fall out of a history
        seed = 1000 + number
        if number % 2 and not stream.scheduler.in_first_pass:  # planned by the worker
            order = DrawOrder(key, VISIT_BLOB, pickle.dumps(stream.arms()), seed, 256, 0, number)
        else:
            order = FuzzOrder(key, VISIT_BLOB, stream.plan(256), seed, 256, 0, number)
        if number in (4, 9):
            order.skip = frozenset({0, 5, 77, 255})  # sent again after these hung: not run, not in a history
        orders[number] = order
    state = _state_for(orders[0], runner)
    state.trail = spy = TrailSpy(ran)
    oracle = Oracle(REGISTRY, "parse")
    failures = 0
    for number in sorted(orders):
        if number >= 17:
            state.reported.clear()  # (each signature's history taken again, late: past HISTORY inputs)
        result = orders[number].run(runner)
        for sample, outcome, judgment, _count, smallest, _history, signature in result.failures:
            failures += 1
            assert signature == oracle.signature(sample, judgment, outcome)
            if smallest is not None:
                small, small_outcome, small_judgment, small_signature = smallest
                assert small_signature == oracle.signature(small, small_judgment, small_outcome)
                assert small_signature.id == signature.id
    assert failures >= 20 and len(spy.taken) >= 5
    assert sum(isinstance(order, DrawOrder) for order in orders.values()) >= 8
    assert max(n for _, n in spy.taken) > HISTORY  # some history lost its oldest inputs
    for runs, n in spy.taken:
        again = recall_texts(runs, orders.get, lambda order: samples_of(order, VISIT), text_of)
        assert again == tuple(ran[:n - 1][-HISTORY:])  # (the n-th is the failing input itself)


@settings(max_examples=300, deadline=None)
@given(orders=st.lists(st.tuples(st.integers(0, 3000), st.sets(st.integers(0, 3000), max_size=5)), max_size=8),
       forgotten=st.sets(st.integers(0, 7), max_size=2))
def test_a_trail_names_the_last_inputs_run_and_orders_no_longer_kept_are_left_out(orders, forgotten):
    """``orders``: (inputs, indices skipped) of each order a worker ran, in turn, as an order's loop
    notes them (fuzzer/harnesses/parser/orders.py: a skipped input ends a run)."""
    trail, ran = Trail(), []
    for number, (count, skip) in enumerate(orders):
        run = trail.start(number)
        for index in range(count):
            if index in skip:
                run = trail.start(number, index + 1)
                continue
            ran.append((number, index))
            run[2] = index + 1
    kept = {number: SimpleNamespace(skip=frozenset(skip)) for number, (_, skip) in enumerate(orders)
            if number not in forgotten}
    texts = recall_texts(trail.before(), kept.get,
                         lambda order: [(n, i) for n, o in kept.items() if o is order for i in range(3001)],
                         lambda item: item)
    assert texts == tuple(item for item in ran[-HISTORY:] if item[0] not in forgotten)
