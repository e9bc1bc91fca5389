"""The Ray back end against local workers, its start-up cost, and where the driver would saturate.

In one run, on the same machine (shared and noisy: the goals are ratios of figures measured
together, and the campaigns alternate between the two back ends, ``--rounds`` each):

1. ``--workers 2`` locally: get_weather campaigns of ``--seconds``; executions per second of
   fuzzing (start-up excluded), and the CPU the workers spent (they are this process's children).
2. ``--backend ray`` with 2 actors on a Ray instance started here: the same campaigns; executions
   per second, and the start-up (Ray, the actors, the target's import) apart.
3. The driver's ceiling. During the Ray runs, the CPU this process spent (every thread, Ray's own
   included), split into what grows with the cluster and what does not:

   * per execution: planning orders (the parser's scheduler, ``ToolCampaign._plan``), filing their
     results (``ToolCampaign._take``), the exploration arm (its havoc batches built, run and judged
     here: ``Explorer.batch``, ``ToolCampaign.execute``), moving orders and results through Ray
     (the pool's ``run_orders`` less the filing it calls), and the rest (Ray's threads, the slow
     probe, progress) — each thread's own CPU time;
   * settling (confirming, shrinking, announcing findings: ``CampaignJob._settle``) and probing the
     formats: work per finding and per tool, bounded by the budget's shrink share, not by the
     number of workers.

   On a large cluster a round is two orders per actor, sent as one call each
   (:func:`fuzzer.backends.relay.orders_per_call`); on two actors a round's calls carry four. So
   moving an order is measured both ways with no-op orders, and the figure at scale is the
   measured one with the difference swapped in; a Ray wait over the calls of 256 actors is
   measured and charged once per call. A worker runs ``r`` executions per CPU-second (run 1), so
   one driver core saturates at ``N = (1 - share) / (driver CPU per execution at scale x r)``
   workers, ``share`` being the part of the driver's time settling took here (at most the
   budget's shrink share, 30 %). The figure that counts settling as if it grew with the cluster
   (every CPU-second of the driver divided by executions, as this benchmark printed before) is
   printed too.

Goals (issue 29): Ray >= 0.85x the local executions/s with 2 workers on this 2-core machine, and a
projected saturation point >= 256 workers. Run from the repository root::

    .venv/bin/python benchmarks/cluster.py [--seconds 5] [--rounds 3] [--target M:A] [--no-coverage]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fuzzer.backends import make_pool  # noqa: E402
from fuzzer.engine.budget import SHRINK_SHARE  # noqa: E402
from fuzzer.engine.pipeline import run_job  # noqa: E402
from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings  # noqa: E402
from fuzzer.harnesses.parser.outcome import TargetSpec  # noqa: E402
from fuzzer.harnesses.parser.tool import ToolCampaign  # noqa: E402
from strategies._internal.tools import builtin_registry  # noqa: E402

#: Actors of the cluster the per-order cost at scale is projected for (the issue's goal).
AT_SCALE = 256


class Clock:
    """CPU seconds of the calling thread spent in some parts of the campaign (the thread that runs
    each part: planning and filing run in a rounds thread while the campaign's thread settles)."""

    planned = filed = executions = 0
    planning_s = filing_s = settling_s = probing_s = exploring_s = moving_s = 0.0

    @classmethod
    def reset(cls) -> None:
        cls.planned = cls.filed = cls.executions = 0
        cls.planning_s = cls.filing_s = cls.settling_s = cls.probing_s = cls.exploring_s = cls.moving_s = 0.0


def moving(run_orders):
    """A pool's ``run_orders``, adding to ``Clock.moving_s`` the CPU seconds it spent itself (its
    ``on_result`` calls, which file results and plan the next round, not counted)."""
    def call(orders, **kwargs):
        on_result, inside = kwargs.get("on_result"), [0.0]
        if on_result is not None:
            def counted(results):
                started = time.thread_time()
                try:
                    on_result(results)
                finally:
                    inside[0] += time.thread_time() - started
            kwargs["on_result"] = counted
        started = time.thread_time()
        try:
            return run_orders(orders, **kwargs)
        finally:
            Clock.moving_s += time.thread_time() - started - inside[0]
    return call


def timed(function, key: str):
    """``function``, adding the CPU seconds of each call to ``Clock.<key>``."""
    def call(*args, **kwargs):
        started = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            setattr(Clock, key, getattr(Clock, key) + time.thread_time() - started)
    return call


class TimedTool(ToolCampaign):
    """The parser harness's per-tool engine, timing planning, filing and probing."""

    def _plan(self, counts, reruns):
        started = time.thread_time()
        orders = super()._plan(counts, reruns)
        Clock.planned += len(orders)
        Clock.planning_s += time.thread_time() - started
        return orders

    def _take(self, result, order):
        started = time.thread_time()
        try:
            return super()._take(result, order)
        finally:
            Clock.filing_s += time.thread_time() - started
            if result is not None and hasattr(result, "by_class"):
                Clock.filed += 1
                Clock.executions += result.executions

    def probe(self, *args, **kwargs):
        return timed(super().probe, "probing_s")(*args, **kwargs)

    def execute(self, *args, **kwargs):  # (a batch of texts: the exploration arm's, in the fuzzing loop)
        return timed(super().execute, "exploring_s")(*args, **kwargs)


class TimedJob(CampaignJob):
    tool_campaign = TimedTool

    def _explorer(self, name, index):
        explorer = super()._explorer(name, index)
        explorer.batch = timed(explorer.batch, "exploring_s")  # (its havoc batches, built here)
        return explorer

    def _settle(self):
        steps = super()._settle()
        while True:
            started = time.thread_time()
            try:
                event = next(steps)
            except StopIteration:
                return
            finally:
                Clock.settling_s += time.thread_time() - started
            yield event


def _cpu(children: bool = False) -> float:
    t = os.times()
    return t.children_user + t.children_system if children else t.user + t.system


def campaign(pool, target: str, seconds: float, coverage: bool) -> dict:
    """One campaign on a started ``pool``; its figures (start-up excluded: the pool is up)."""
    Clock.reset()
    settings = CampaignSettings(tools=["get_weather"], target=target, budget_s=seconds, explore=coverage)
    driver_before = _cpu()
    result = run_job(TimedJob(builtin_registry(), settings, pool)).result
    fuzzing_s = max(1e-9, result.elapsed_s - result.setup_s)
    return {"rate": result.executions / fuzzing_s, "executions": result.executions, "fuzzing_s": fuzzing_s,
            "driver_cpu_s": _cpu() - driver_before, "orders_filed": Clock.filed, "filing_s": Clock.filing_s,
            "order_executions": Clock.executions, "findings": len(result.findings), "planned": Clock.planned,
            "planning_s": Clock.planning_s, "settling_s": Clock.settling_s, "probing_s": Clock.probing_s,
            "exploring_s": Clock.exploring_s, "moving_s": Clock.moving_s}


def started(backend: str, target: str, coverage: bool) -> tuple:
    """(pool of 2 workers or actors, seconds its start took)."""
    pool = make_pool(backend, TargetSpec(target=target, cwd=ROOT, timeout=2.0, coverage=coverage), 2)
    began = time.monotonic()
    pool.start()
    pool.run_orders = moving(pool.run_orders)
    return pool, time.monotonic() - began


def total(runs: list, key: str) -> float:
    return sum(run[key] for run in runs)


class Noop:
    """An order that runs nothing: what moving one order and its result costs, alone."""

    size = 1

    def run(self, runner):
        return {"by_class": {"valid": [256, 0]}, "failures": [], "seeds": [], "built": [[True]]}


def dispatch_cpu(pool, orders: int, per_actor: int) -> float:
    """Driver CPU seconds per order to send ``orders`` no-op orders through ``pool`` in rounds of
    ``per_actor`` orders per actor (as the campaign sends them), and take the results."""
    from benchmarks.cluster import Noop as order  # (by its importable name, not __main__'s)

    size = per_actor * pool.workers
    pool.run_orders([order() for _ in range(32)])  # warm
    before = _cpu()
    for start in range(0, orders, size):
        pool.run_orders([order() for _ in range(min(size, orders - start))])
    return (_cpu() - before) / orders


def wait_cpu(refs: int, repeats: int = 200) -> float:
    """Driver CPU seconds of one ``ray.wait`` over ``refs`` calls in flight (the dispatcher waits
    over every call out, once per batch of results it takes)."""
    import ray

    @ray.remote(num_cpus=0)
    class Busy:
        def hold(self, seconds: float) -> None:
            time.sleep(seconds)

    busy = Busy.remote()
    pending = [busy.hold.remote(0.01 if i else 30.0) for i in range(refs)]  # (queued behind the first)
    ray.wait(pending, num_returns=1, timeout=0)
    began = time.thread_time()
    for _ in range(repeats):
        ray.wait(pending, num_returns=1, timeout=0)
    spent = (time.thread_time() - began) / repeats
    ray.kill(busy)
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="fuzzing seconds of each campaign")
    parser.add_argument("--rounds", type=int, default=3, help="campaigns on each back end, alternating")
    parser.add_argument("--target", default="fuzzer.targets.naive:parse",
                        help="the parser (default: the bundled naive one, whose findings are confirmed and shrunk)")
    parser.add_argument("--no-coverage", dest="coverage", action="store_false",
                        help="without exploration (whose havoc batches the driver builds and judges itself)")
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # the actors unpickle this module's Noop order: the repository on their import path too
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

    children_before = _cpu(children=True)
    local_pool, local_start = started("local", args.target, args.coverage)
    ray_pool, ray_start = started("ray", args.target, args.coverage)
    local, remote = [], []
    try:
        for _ in range(args.rounds):  # alternating: a shared machine's load drifts
            local.append(campaign(local_pool, args.target, args.seconds, args.coverage))
            remote.append(campaign(ray_pool, args.target, args.seconds, args.coverage))
        moving_here = dispatch_cpu(ray_pool, 800, 8)  # this cluster's rounds: 16 orders on 2 actors
        moving_at_scale = dispatch_cpu(ray_pool, 800, 2)  # a large cluster's: two orders per actor
        waiting = wait_cpu(AT_SCALE)
    finally:
        local_pool.close()  # (its workers' CPU is counted once they are reaped)
        ray_pool.close()
    workers_cpu = _cpu(children=True) - children_before

    local_rate, ray_rate = statistics.median(r["rate"] for r in local), statistics.median(r["rate"] for r in remote)
    print(f"local, 2 workers:  {local_rate:>9,.0f} executions/s  (median of {args.rounds}; start-up {local_start:.2f} s)")
    print(f"ray, 2 actors:     {ray_rate:>9,.0f} executions/s  (median of {args.rounds}; start-up {ray_start:.2f} s: "
          "Ray, the actors, the target's import)")
    ratio = ray_rate / local_rate if local_rate else 0.0
    print(f"ray / local:       {ratio:>9.2f}x   (each round: "
          + ", ".join(f"{r['rate'] / l['rate']:.2f}" for l, r in zip(local, remote)) + ")")

    # the driver's ceiling: CPU per execution, what grows with the cluster apart from what does not
    executions = max(1, total(remote, "executions"))
    driver = total(remote, "driver_cpu_s")
    orders = max(1, total(remote, "orders_filed"))
    per_order = total(remote, "order_executions") / orders  # executions per order
    settling, probing = total(remote, "settling_s"), total(remote, "probing_s")
    parts = {"planning": total(remote, "planning_s"), "filing": total(remote, "filing_s"),
             "exploration arm": total(remote, "exploring_s")}
    parts["moving orders through Ray"] = total(remote, "moving_s")
    parts["the rest"] = max(0.0, driver - settling - probing - sum(parts.values()))
    here = sum(parts.values()) / executions  # CPU per execution, settling and probing apart
    # at scale: two orders a call instead of four, and a wait over every actor's call per call
    extra = (moving_at_scale - moving_here + waiting / 2) * orders / executions
    at_scale = here + extra
    worker_rate = total(local, "executions") / max(1e-9, workers_cpu)  # executions per worker CPU-s
    # settling does not grow with the cluster: it keeps the share of the driver's time it took here
    # (the budget holds shrinking to SHRINK_SHARE of the run), the rest is left for what does
    share = min(SHRINK_SHARE, settling / max(1e-9, total(remote, "fuzzing_s")))
    saturation = (1.0 - share) / (at_scale * worker_rate) if at_scale and worker_rate else float("inf")
    everything = driver / executions
    pessimistic = 1.0 / (everything * worker_rate) if everything and worker_rate else float("inf")
    print(f"driver CPU:        {driver:.2f} s in the Ray runs for {executions:,} executions ({orders:,} orders of "
          f"~{per_order:.0f}, the rest the exploration arm's): settling {settling:.2f} s "
          f"({settling / max(1e-9, driver):.0%}), probing {probing:.2f} s, and per execution:")
    print(f"  here:            {here * 1e6:>9.2f} us = " + " + ".join(
        f"{name} {seconds / executions * 1e6:.2f}" for name, seconds in parts.items()))
    print(f"  at {AT_SCALE} actors:  {at_scale * 1e6:>9.2f} us (moving a no-op order through Ray {moving_here * 1e3:.2f} ms "
          f"at 4 orders a call, {moving_at_scale * 1e3:.2f} ms at 2 as on a large cluster; a Ray wait over "
          f"{AT_SCALE} calls in flight {waiting * 1e3:.2f} ms per call)")
    print(f"one worker:        {worker_rate:>9,.0f} executions per CPU-second")
    print(f"driver saturates:  {saturation:>9,.0f} workers (one core: what grows with the cluster, at {AT_SCALE} "
          f"actors' costs; settling keeping the {share:.0%} of the driver's time it took here)")
    print(f"                   {pessimistic:>9,.0f} workers counting every driver CPU-second per execution (settling "
          "as if it grew with the cluster)")
    ok = ratio >= 0.85 and saturation >= AT_SCALE
    print(f"goals (ray >= 0.85x local, saturation >= {AT_SCALE} workers):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
