"""The Ray back end against local workers, its start-up cost, and where the driver would saturate.

In one run, one after the other on the same machine (the machines are shared and noisy, so the
goals are ratios of figures measured together):

1. ``--workers 2`` locally: a get_weather campaign for ``--seconds``; executions per second of
   fuzzing (start-up excluded), and the CPU the workers spent (they are this process's children).
2. ``--backend ray`` with 2 actors on a Ray instance started here: the same campaign; executions
   per second, and the start-up (Ray, the actors, the target's import) apart.
3. The driver's ceiling: during the Ray run, the CPU this process spent (every thread: planning,
   dispatching through Ray, receiving, filing, judging the exploration arm, confirming, shrinking)
   per execution, and the time filing one order's result took (``ToolCampaign._take``). A worker
   produces ``r`` executions per CPU-second (run 1), so the driver saturates one core at
   ``N = 1 / (driver CPU per execution x r)`` workers.

Goals (issue 29): Ray >= 0.85x the local executions/s with 2 workers on this 2-core machine, and a
projected saturation point >= 256 workers. Run from the repository root::

    .venv/bin/python benchmarks/cluster.py [--seconds 12] [--target M:A] [--no-coverage]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fuzzer.backends import make_pool  # noqa: E402
from fuzzer.engine.pipeline import run_job  # noqa: E402
from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings  # noqa: E402
from fuzzer.harnesses.parser.tool import ToolCampaign  # noqa: E402
from fuzzer.isolation import TargetSpec  # noqa: E402
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


def campaign(backend: str, target: str, seconds: float, workers: int, coverage: bool = True) -> dict:
    """One campaign on ``backend``; its figures (the pool is started, and timed, before the job)."""
    TimedFiling.filed, TimedFiling.seconds, TimedFiling.executions = 0, 0.0, 0
    TimedFiling.planned, TimedFiling.planning_s = 0, 0.0
    spec = TargetSpec(target=target, cwd=ROOT, timeout=2.0, coverage=coverage)
    settings = CampaignSettings(tools=["get_weather"], target=target, budget_s=seconds, explore=coverage)
    pool = make_pool(backend, spec, workers)
    children_before = _cpu(children=True)
    started = time.monotonic()
    pool.start()
    startup = time.monotonic() - started
    driver_before = _cpu()
    try:
        result = run_job(TimedJob(builtin_registry(), settings, pool)).result
        driver = _cpu() - driver_before
    finally:
        pool.close()
    fuzzing_s = max(1e-9, result.elapsed_s - result.setup_s)
    return {"rate": result.executions / fuzzing_s, "executions": result.executions, "startup_s": startup,
            "driver_cpu_s": driver, "workers_cpu_s": _cpu(children=True) - children_before,
            "orders_filed": TimedFiling.filed, "filing_s": TimedFiling.seconds,
            "order_executions": TimedFiling.executions, "findings": len(result.findings),
            "planned": TimedFiling.planned, "planning_s": TimedFiling.planning_s,
            "backend": result.backend}


class Noop:
    """An order that runs nothing: what moving one order and its result costs, alone."""

    size = 1

    def run(self, runner):
        return {"by_class": {"valid": [256, 0]}, "failures": [], "seeds": [], "built": [[True]]}


def dispatch_cpu(backend: str, orders: int) -> float:
    """Driver CPU seconds per order to send ``orders`` no-op orders to 2 workers and take the results."""
    pool = make_pool(backend, TargetSpec(target="benchmarks.json_target:parse", cwd=ROOT), 2)
    try:
        from benchmarks.cluster import Noop as order  # (by its importable name, not __main__'s)

        pool.start()
        pool.run_orders([order() for _ in range(32)])  # warm
        before = _cpu()
        for start in range(0, orders, 16):  # in rounds, as the campaign sends them
            pool.run_orders([order() for _ in range(min(16, orders - start))])
        return (_cpu() - before) / orders
    finally:
        pool.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0, help="fuzzing seconds of each campaign")
    parser.add_argument("--target", default="fuzzer.targets.naive:parse",
                        help="the parser (default: the bundled naive one, whose findings are confirmed and shrunk)")
    parser.add_argument("--no-coverage", dest="coverage", action="store_false",
                        help="without exploration (whose havoc batches the driver builds and judges itself)")
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # the actors unpickle this module's Noop order: the repository on their import path too
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

    local = campaign("local", args.target, args.seconds, 2, args.coverage)
    print(f"local, 2 workers:  {local['rate']:>9,.0f} executions/s  (start-up {local['startup_s']:.2f} s, "
          f"{local['findings']} findings)")
    remote = campaign("ray", args.target, args.seconds, 2, args.coverage)
    backend = remote["backend"]
    print(f"ray, 2 actors:     {remote['rate']:>9,.0f} executions/s  (start-up {remote['startup_s']:.2f} s: Ray, "
          f"{backend['actors_started']} actors, the target's import; {remote['findings']} findings)")
    ratio = remote["rate"] / local["rate"] if local["rate"] else 0.0
    print(f"ray / local:       {ratio:>9.2f}x")

    # the driver's ceiling
    per_execution = remote["driver_cpu_s"] / max(1, remote["executions"])  # driver CPU-s per execution
    worker_rate = local["executions"] / max(1e-9, local["workers_cpu_s"])  # executions per worker CPU-s
    filing = remote["filing_s"] / max(1, remote["orders_filed"])
    per_order = remote["order_executions"] / max(1, remote["orders_filed"])
    saturation = 1.0 / (per_execution * worker_rate) if per_execution and worker_rate else float("inf")
    print(f"driver CPU:        {per_execution * 1e6:>9.1f} us per execution ({remote['driver_cpu_s']:.2f} s for "
          f"{remote['executions']:,}; ~{per_execution * per_order * 1e3:.2f} ms per order of ~{per_order:.0f})")
    print(f"filing one order:  {filing * 1e3:>9.3f} ms ({remote['orders_filed']} orders' results filed)")
    print(f"one worker:        {worker_rate:>9,.0f} executions per CPU-second "
          f"(~{worker_rate / max(1.0, per_order):,.1f} orders/s)")
    print(f"driver saturates:  {saturation:>9,.0f} workers (one core for the driver)")
    planning = remote["planning_s"] / max(1, remote["planned"])
    moving = dispatch_cpu("ray", 800)
    print(f"  of which, per order: planning {planning * 1e3:.2f} ms (the scheduler, in the driver), moving it "
          f"through Ray {moving * 1e3:.2f} ms (driver CPU, no-op orders), filing {filing * 1e3:.3f} ms")
    ok = ratio >= 0.85 and saturation >= 256
    print("goals (ray >= 0.85x local, saturation >= 256 workers):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
