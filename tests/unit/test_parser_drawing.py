"""Orders planned in the workers (fuzzer/harnesses/parser/drawn.py), in this process:

* an order a worker plans from the scheduler's snapshot and its seed (DrawOrder) builds exactly
  the samples — texts and ground truth — of the order the engine plans from them (FuzzOrder with
  steady_plan), whatever the snapshot (arms retired or not) and the seed;
* what a worker tells the scheduler per arm leaves it as the attempts told one by one do;
* a pool of 32 workers or more plans in the workers and runs bigger orders, a smaller one plans
  with the engine's scheduler as before.

(That a campaign finds the same either way: tests/integration/test_orders.py.)
"""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fuzzer.harnesses.parser.campaign import CampaignSettings
from fuzzer.harnesses.parser.drawn import DrawOrder, steady_plan
from fuzzer.harnesses.parser.orders import FuzzOrder, OrderResult, samples_of, text_of
from fuzzer.harnesses.parser.schedule import RETIRE_AFTER, SampleStream, Variation
from fuzzer.harnesses.parser.subject import ParserSubject
from tests.unit.parser_visit import FORMATS, OPERATORS, REGISTRY, TOOL, VISIT, VISIT_BLOB


def steady_stream(seed: int) -> SampleStream:
    """The structured arm of ``TOOL`` with its first pass planned (what the engine holds when it
    starts planning from snapshots)."""
    stream = SampleStream(registry=REGISTRY, tool=REGISTRY[TOOL], formats=FORMATS, operators=OPERATORS,
                          include_valid=True, seed=seed, cuts=True)
    while stream.scheduler.in_first_pass:
        stream.plan(256)
    stream.scheduler.close_first_pass()
    return stream


def arms_of(stream: SampleStream, retire: list) -> object:
    """``stream``'s snapshot once the arms ``retire`` ((format, operator) pairs) failed to build
    :data:`RETIRE_AFTER` times (retired)."""
    for fmt, op in retire:
        for _ in range(RETIRE_AFTER):
            stream.scheduler.failed_to_build(fmt, op)
    return stream.arms()


def described(samples: list) -> list:
    """What must be equal of two runs' samples: text, ground truth, format, operator, class, recipe."""
    out = []
    for sample in samples:
        whole = sample.materialize() if hasattr(sample, "materialize") else sample
        out.append((text_of(sample), whole.calls, whole.format, whole.operator, whole.anomaly_class, whole.recipe))
    return out


SOME_ARMS = sorted({(fmt, op) for fmt in FORMATS for op in OPERATORS})


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream_seed=st.integers(0, 2**16), order_seed=st.integers(0, 2**32 - 1), count=st.integers(1, 400),
       retire=st.lists(st.sampled_from(SOME_ARMS), max_size=12, unique=True))
def test_a_worker_plans_and_builds_the_samples_the_engine_would(stream_seed, order_seed, count, retire):
    arms = arms_of(steady_stream(stream_seed), retire)
    engine = FuzzOrder("k", VISIT_BLOB, steady_plan(arms, order_seed, count), order_seed, count, 0)
    worker = DrawOrder("k", VISIT_BLOB, pickle.dumps(arms), order_seed, count, 0)
    mine, theirs = samples_of(worker, VISIT), samples_of(engine, VISIT)
    assert 0 < len(mine) <= count  # (an operator finds nothing to mutate in some calls: fewer samples)
    assert described(mine) == described(theirs)
    retired = set(retire)  # (the sweep's cut-offs of valid samples are no arm of the scheduler's)
    assert not any((s.format, s.operator) in retired for s in mine if not hasattr(s, "base"))


def family_of(fmt: str) -> tuple:
    return (Variation(fmt), [], 0)


@settings(max_examples=200, deadline=None)
@given(rounds=st.lists(st.lists(st.lists(st.tuples(st.sampled_from(SOME_ARMS[:24]), st.booleans()), max_size=30),
                                max_size=4), min_size=1, max_size=4))
def test_what_a_worker_tells_per_arm_leaves_the_scheduler_as_each_attempt_would(rounds):
    """``rounds``: orders of attempts ((format, operator), built?). The engine hears of a round's
    orders after the round, one by one (FuzzOrder: every attempt) or per arm (DrawOrder)."""
    one_by_one, per_arm = steady_stream(7), steady_stream(7)
    for orders in rounds:
        blob = pickle.dumps(per_arm.arms())  # the snapshot the round's orders were planned from
        results = []
        for attempts in orders:
            order = DrawOrder("k", VISIT_BLOB, blob, 0, 1, 0)
            result = OrderResult()
            state = SimpleNamespace(kept={})
            for (fmt, op), ok in attempts:
                order.built(result, family_of(fmt), [(op, ok)], state)
            results.append(result)
        for attempts in orders:
            for (fmt, op), ok in attempts:
                one_by_one.feedback(family_of(fmt), [(op, ok)])
        for result in results:
            if result.built:
                per_arm.tally(result.built)
        assert per_arm.arms() == one_by_one.arms()


def subject_on(workers: int, **settings: object) -> ParserSubject:
    return ParserSubject(REGISTRY, CampaignSettings(tools=[TOOL], target="x:y", **settings),
                         SimpleNamespace(workers=workers), SimpleNamespace())


@pytest.mark.parametrize("workers, planning, size", [
    (1, "engine", 256), (2, "engine", 256), (31, "engine", 256), (32, "workers", 1024), (64, "workers", 2048),
    (256, "workers", 8192), (4096, "workers", 8192)])
def test_a_large_pool_plans_in_the_workers_and_bigger_orders_and_a_small_one_as_before(workers, planning, size):
    """The mode depends on the number of workers alone (the local and the Ray back end share it)."""
    subject = subject_on(workers)
    assert (subject.planning, subject.order_size) == (planning, size)
    assert subject_on(workers, planning="snapshots").planning == "snapshots"
    assert subject_on(workers, batch_size=100).order_size == size * 100 // 256


def test_a_planning_that_does_not_exist_is_refused():
    with pytest.raises(ValueError, match="planning must be one of engine, snapshots, workers"):
        subject_on(2, planning="driver").planning
