"""The Ray back end against local workers, its start-up cost, and where the driver would saturate.

In one run, on the same machine (shared and noisy: the goals are ratios of figures measured
together, and the campaigns alternate between the two back ends, ``--rounds`` each):

1. ``--workers 2`` locally: get_weather campaigns of ``--seconds``; executions per second of
   fuzzing (start-up excluded), and the CPU the workers spent (they are this process's children).
2. ``--backend ray`` with 2 actors on a Ray instance started here: the same campaigns; executions
   per second, and the start-up (Ray, the actors, the target's import) apart.
3. The driver's ceiling: during the Ray runs, the CPU this process spent (every thread: planning,
   dispatching through Ray, receiving, filing, judging the exploration arm, confirming, shrinking)
   per execution, and the time filing one order's result took (``ToolCampaign._take``). A worker
   produces ``r`` executions per CPU-second (run 1), so the driver saturates one core at
   ``N = 1 / (driver CPU per execution x r)`` workers.

Goals (issue 29): Ray >= 0.85x the local executions/s with 2 workers on this 2-core machine, and a
projected saturation point >= 256 workers. Run from the repository root::

    .venv/bin/python benchmarks/cluster.py [--seconds 6] [--rounds 3] [--target M:A] [--no-coverage]
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
from fuzzer.engine.pipeline import run_job  # noqa: E402
from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings  # noqa: E402
from fuzzer.harnesses.parser.tool import ToolCampaign  # noqa: E402
from fuzzer.harnesses.parser.outcome import TargetSpec  # noqa: E402
from strategies._internal.tools import builtin_registry  # noqa: E402


class TimedFiling(ToolCampaign):
    """The parser harness's per-tool engine, timing how long filing each order's result takes."""

    filed = 0
    seconds = 0.0
    executions = 0
    planned = 0
    planning_s = 0.0

    def _plan(self, counts, reruns):
        started = time.perf_counter()
        orders = super()._plan(counts, reruns)
        TimedFiling.planned += len(orders)
        TimedFiling.planning_s += time.perf_counter() - started
        return orders

    def _take(self, result, order):
        started = time.perf_counter()
        try:
            return super()._take(result, order)
        finally:
            if result is not None and hasattr(result, "by_class"):
                TimedFiling.filed += 1
                TimedFiling.seconds += time.perf_counter() - started
                TimedFiling.executions += result.executions


class TimedJob(CampaignJob):
    tool_campaign = TimedFiling


def _cpu(children: bool = False) -> float:
    t = os.times()
    return t.children_user + t.children_system if children else t.user + t.system


def campaign(pool, target: str, seconds: float, coverage: bool) -> dict:
    """One campaign on a started ``pool``; its figures (start-up excluded: the pool is up)."""
    TimedFiling.filed, TimedFiling.seconds, TimedFiling.executions = 0, 0.0, 0
    TimedFiling.planned, TimedFiling.planning_s = 0, 0.0
    settings = CampaignSettings(tools=["get_weather"], target=target, budget_s=seconds, explore=coverage)
    driver_before = _cpu()
    result = run_job(TimedJob(builtin_registry(), settings, pool)).result
    fuzzing_s = max(1e-9, result.elapsed_s - result.setup_s)
    return {"rate": result.executions / fuzzing_s, "executions": result.executions,
            "driver_cpu_s": _cpu() - driver_before, "orders_filed": TimedFiling.filed,
            "filing_s": TimedFiling.seconds, "order_executions": TimedFiling.executions,
            "findings": len(result.findings), "planned": TimedFiling.planned, "planning_s": TimedFiling.planning_s}


def started(backend: str, target: str, coverage: bool) -> tuple:
    """(pool of 2 workers or actors, seconds its start took)."""
    pool = make_pool(backend, TargetSpec(target=target, cwd=ROOT, timeout=2.0, coverage=coverage), 2)
    began = time.monotonic()
    pool.start()
    return pool, time.monotonic() - began


def total(runs: list, key: str) -> float:
    return sum(run[key] for run in runs)


class Noop:
    """An order that runs nothing: what moving one order and its result costs, alone."""

    size = 1

    def run(self, runner):
        return {"by_class": {"valid": [256, 0]}, "failures": [], "seeds": [], "built": [[True]]}


def dispatch_cpu(pool, orders: int) -> float:
    """Driver CPU seconds per order to send ``orders`` no-op orders through ``pool`` and take the results."""
    from benchmarks.cluster import Noop as order  # (by its importable name, not __main__'s)

    pool.run_orders([order() for _ in range(32)])  # warm
    before = _cpu()
    for start in range(0, orders, 16):  # in rounds, as the campaign sends them
        pool.run_orders([order() for _ in range(min(16, orders - start))])
    return (_cpu() - before) / orders


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="fuzzing seconds of each campaign")
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
        moving = dispatch_cpu(ray_pool, 800)
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

    # the driver's ceiling
    executions = total(remote, "executions")
    per_execution = total(remote, "driver_cpu_s") / max(1, executions)  # driver CPU-s per execution
    worker_rate = total(local, "executions") / max(1e-9, workers_cpu)  # executions per worker CPU-s
    filed = max(1, total(remote, "orders_filed"))
    filing = total(remote, "filing_s") / filed
    per_order = total(remote, "order_executions") / filed
    planning = total(remote, "planning_s") / max(1, total(remote, "planned"))
    saturation = 1.0 / (per_execution * worker_rate) if per_execution and worker_rate else float("inf")
    print(f"driver CPU:        {per_execution * 1e6:>9.1f} us per execution ({total(remote, 'driver_cpu_s'):.2f} s for "
          f"{executions:,}; ~{per_execution * per_order * 1e3:.2f} ms per order of ~{per_order:.0f})")
    print(f"  per order:       planning {planning * 1e3:.2f} ms (the scheduler), moving it through Ray "
          f"{moving * 1e3:.2f} ms (no-op orders), filing its result {filing * 1e3:.3f} ms; the rest: the "
          "exploration arm, probing, confirming and shrinking, judged in the driver")
    print(f"one worker:        {worker_rate:>9,.0f} executions per CPU-second (~{worker_rate / max(1.0, per_order):,.1f} "
          "orders/s)")
    print(f"driver saturates:  {saturation:>9,.0f} workers (one core for the driver)")
    ok = ratio >= 0.85 and saturation >= 256
    print("goals (ray >= 0.85x local, saturation >= 256 workers):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
