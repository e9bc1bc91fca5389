"""Large pools: the parser's orders planned in the workers, and bigger orders.

Why: on a cluster the driver is one core for every worker. Measured on the naive parser
(``benchmarks/cluster.py``), it spent per execution planning orders with the scheduler
(:meth:`~fuzzer.harnesses.parser.schedule.SampleStream.plan`) and, per order of 256, a fixed
cost moving it through Ray and filing its result: the driver saturated at ~20 workers. So:

* **Planned from a snapshot and the order's seed, wherever that happens.** Once the scheduler's
  first pass is over (every operator tried once, planned by the engine's scheduler as always),
  an order's families are a function of the scheduler's state when the order is planned — the
  arms still in play, the classes' weights, the arms known to build
  (:class:`~fuzzer.harnesses.parser.schedule.Arms`) — and of the order's seed alone:
  :func:`steady_plan`. The order carries the snapshot (pickled once per change and shared by
  every order planned from it) and the worker evaluates it (:class:`DrawOrder`: WORKERS); the
  engine can evaluate it too and send the families (SNAPSHOTS). Either way the samples, their
  ground truth and what a seed's run finds are the same: only where the planning runs differs.
  What building found reaches the engine's scheduler after the round, as before (a DrawOrder
  sends it per arm, :meth:`DrawOrder.built`, which tells the scheduler what the attempts one by
  one would), so the next snapshot is a fixed point of the run. A small pool keeps the engine's
  scheduler drawing every family from its one stream (ENGINE), so what a seed finds there is
  what it found before large pools planned this way.
* **Bigger orders** (:func:`order_size`): what moving and filing an order costs the driver is
  spread over more executions — 256 per eighth of the pool's workers, up to 8,192 (on 256
  workers; an order of the naive parser is then ~0.3 s of a worker's CPU).

The exploration arm stays on the driver (its havoc batch between rounds, judged there): at scale
its turn is one batch between rounds of thousands of orders, so its cost per execution shrinks
with the cluster (and so does its share of the executions).

The mode depends on the number of workers alone, which the local and the Ray back end share: with
the same seed and worker count both run the same orders.
"""

from __future__ import annotations

import pickle
from typing import Any

from fuzzer.harnesses.parser.orders import FuzzOrder, OrderResult
from fuzzer.harnesses.parser.schedule import Arms, SampleStream

#: How orders are planned past the scheduler's first pass: by the engine's scheduler (one stream
#: of draws: a small pool's), or from the scheduler's snapshot and each order's seed, by the
#: engine or by the workers (a large pool's; the same samples either way).
ENGINE, SNAPSHOTS, WORKERS = "engine", "snapshots", "workers"
PLANNING = (ENGINE, SNAPSHOTS, WORKERS)
#: Workers from which a pool is large (orders planned in the workers, bigger orders).
LARGE_POOL = 32
#: Workers per multiple of the base order size (a pool of 64 runs orders of 8 x 256).
WORKERS_PER_STEP = 8
#: The largest multiple of the base order size (from 256 workers: orders of 32 x 256).
MOST_STEPS = 32
#: Decoded snapshots a worker keeps per visit (every order of a round brings the same one).
KEPT = 8


def large(workers: int) -> bool:
    """Whether a pool of ``workers`` runs its orders as a large one does (see the module docstring)."""
    return workers >= LARGE_POOL


def order_size(base: int, workers: int) -> int:
    """Executions of one structured order: ``base`` (the batch size), times the pool's workers
    over :data:`WORKERS_PER_STEP` on a large pool (at most :data:`MOST_STEPS` times)."""
    if not large(workers):
        return base
    return base * max(1, min(MOST_STEPS, workers // WORKERS_PER_STEP))


def steady_plan(arms: Arms, seed: int, count: int) -> list:
    """The families of an order of ``count`` samples planned past the scheduler's first pass:
    from the snapshot ``arms`` and the order's ``seed`` alone (the engine's and a worker's are
    this one function)."""
    return SampleStream.steady(arms, seed).plan(count)


def _kept(state: Any, blob: bytes) -> Arms:
    """``blob`` unpickled, once per visit (every order of a round brings the same one)."""
    kept = state.kept
    value = kept.get(blob)
    if value is None:
        if len(kept) >= KEPT:
            kept.clear()
        value = kept[blob] = pickle.loads(blob)
    return value


class DrawOrder(FuzzOrder):
    """"Plan ``count`` samples from the scheduler's snapshot ``arms`` (a pickled
    :class:`~fuzzer.harnesses.parser.schedule.Arms`) and the seed, build, run and judge them":
    :class:`FuzzOrder` with its families planned in the worker (:func:`steady_plan`)."""

    __slots__ = ("arms",)

    def __init__(self, key: str, visit: bytes, arms: bytes, seed: int, count: int, reruns: int, number: int = 0):
        super().__init__(key, visit, [], seed, count, reruns, number)
        self.arms = arms

    @property
    def size(self) -> int:
        # a family announces itself and has a sample at least: at most ``count`` families
        return 2 * self.count + self.reruns

    def families(self, state: Any) -> list:
        return steady_plan(_kept(state, self.arms), self.seed, self.count)

    def built(self, result: OrderResult, family: Any, built: list, state: Any) -> None:
        """Per arm not known to build when the snapshot was taken: [failures before its first
        build, whether it built] (``result.built`` is that dict, for
        :meth:`~fuzzer.harnesses.parser.schedule.SampleStream.tally`). The scheduler retires an
        arm after failures with no build and ignores the failures of an arm that built, so this is
        all the attempts one by one would tell it."""
        tally = result.built
        if tally.__class__ is list:
            tally = result.built = {}
        known = _kept(state, self.arms).successes
        for op, ok, *where in built:
            if op is None:
                continue
            arm = (where[0] if where else family[0].format, op)
            if arm in known:
                continue
            counts = tally.get(arm)
            if counts is None:
                counts = tally[arm] = [0, False]
            if counts[1]:
                continue
            if ok:
                counts[1] = True
            else:
                counts[0] += 1


__all__ = ["DrawOrder", "ENGINE", "LARGE_POOL", "PLANNING", "SNAPSHOTS", "WORKERS", "large", "order_size",
           "steady_plan"]
