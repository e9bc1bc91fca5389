"""What virtual time buys the executor harness: scenarios per second per worker, against a naive
loop that runs the same scenarios with real sleeps, in the same run.

The issue's goal: at least 2,000 scenarios/s per worker. Run from the repository root::

    .venv/bin/python benchmarks/executor.py [--seconds 8] [--baseline-s 6] [--seed 0]

For each executor (a hand-written retry loop with exponential backoff that honours Retry-After,
defined below, and the bundled robust example: pydantic + tenacity + pybreaker) it prints

* ``campaign``: the whole job (generate, run in one worker, judge) for ``--seconds`` of budget, as
  ``fuzz executor --budget`` runs it (start-up included, shrinking off) — scenarios / wall second;
* ``worker``: scenarios / second of the worker's own time inside scenarios, in wall time and in
  CPU time (what one worker with a core to itself runs: the load-independent number);
* ``real sleeps``: the same scenarios run by a plain loop whose tools and executor really sleep
  (gaps, latencies, backoff), for at most ``--baseline-s`` seconds;
* the ratio of the first to the last.

The machine's load changes the absolute numbers (CPU time is printed too); the ratio is the point.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fuzzer.harnesses.executor.faults import latency_of, ok_result  # noqa: E402
from fuzzer.harnesses.executor.http import failure_for  # noqa: E402
from fuzzer.harnesses.executor.job import ExecutorCampaign, ExecutorSettings  # noqa: E402
from fuzzer.harnesses.executor.policy import Policy  # noqa: E402
from fuzzer.harnesses.executor.scenario import ScenarioGenerator  # noqa: E402
from fuzzer.engine.pipeline import run_job  # noqa: E402
from strategies._internal.tools import builtin_registry  # noqa: E402

TRANSIENT = {429, 500, 502, 503, 504}


def make_executor(tools):
    """A typical hand-written executor: up to 5 attempts, exponential backoff (0.1 s doubling,
    capped at 5 s, up to 1 s of jitter), Retry-After honoured, 4xx not retried, errors returned
    as structured results."""

    def execute(name, arguments):
        tool = tools.get(name)
        if tool is None:
            return {"error": "unknown tool"}
        for attempt in range(1, 6):
            try:
                return tool(**arguments)
            except Exception as exc:  # noqa: BLE001
                response = getattr(exc, "response", None)
                status = getattr(response, "status_code", None)
                transient = status in TRANSIENT if status else isinstance(exc, (TimeoutError, ConnectionError))
                if not transient or attempt == 5:
                    return {"error": type(exc).__name__}
                wait = min(0.1 * 2 ** (attempt - 1), 5.0) + random.uniform(0, 1.0)
                retry_after = getattr(response, "headers", {}).get("Retry-After") if response is not None else None
                if retry_after and str(retry_after).isdigit():
                    wait = max(wait, float(retry_after))
                time.sleep(wait)
        return {"error": "gave up"}

    return execute


class _RealTool:
    """The baseline's tool: the same fault schedule, with latencies slept for real."""

    def __init__(self, name, state):
        self.name, self.state = name, state

    def __call__(self, **arguments):
        step = self.state["step"]
        self.state["attempts"][self.name] = attempt = self.state["attempts"].get(self.name, 0) + 1
        fault = step.schedule.fault_for(attempt) if step.name == self.name else step.schedule.then.__class__("ok")
        time.sleep(latency_of(fault))
        if fault.spec.returns:
            return ok_result(self.name, attempt)
        raise failure_for(fault, self.name, time.time())


def real_sleeping_loop(factory, scenarios, registry, budget_s):
    """Scenarios completed per second by a plain loop that really waits."""
    state: dict = {"step": None, "attempts": {}}
    tools = {name: _RealTool(name, state) for name in registry.names()}
    start, done = time.perf_counter(), 0
    for scenario in scenarios:
        execute = factory(tools)
        for step in scenario.steps:
            if time.perf_counter() - start + step.gap > budget_s:
                return done, time.perf_counter() - start
            time.sleep(step.gap)
            state["step"], state["attempts"] = step, {}
            try:
                execute(step.name, dict(step.arguments))
            except Exception:  # noqa: BLE001
                pass
            if time.perf_counter() - start > budget_s:
                return done, time.perf_counter() - start
        done += 1
    return done, time.perf_counter() - start


def measure(ref, factory, *, seconds, seed, baseline_s):
    registry = builtin_registry()
    settings = ExecutorSettings(executor=ref, budget_s=seconds, seed=seed, shrink=False)
    cpu = time.process_time()
    final = run_job(ExecutorCampaign(settings, registry=registry, policy=Policy()))
    engine_cpu = time.process_time() - cpu
    r = final.result
    campaign_rate = r.executions / r.elapsed_s
    worker_rate = r.executions / r.usage.real_s if r.usage.real_s else float("inf")
    worker_cpu_rate = r.executions / r.usage.cpu_s if r.usage.cpu_s else float("inf")
    generator = ScenarioGenerator(registry, Policy(), seed=seed)
    same = [generator.generate() for _ in range(200)]
    done, took = real_sleeping_loop(factory, same, registry, baseline_s)
    real_rate = done / took
    virtual_per_scenario = r.usage.virtual_s / r.executions
    bound = 1.0 / virtual_per_scenario if virtual_per_scenario else float("inf")
    return {"executor": ref, "scenarios": r.executions, "campaign": campaign_rate, "worker": worker_rate,
            "worker_cpu": worker_cpu_rate,
            "engine_cpu_us": engine_cpu / r.executions * 1e6, "real": real_rate, "real_done": done,
            "real_bound": bound, "virtual_per_scenario": virtual_per_scenario, "findings": len(r.findings)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="budget of each campaign")
    parser.add_argument("--baseline-s", type=float, default=6.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from fuzzer.targets import executor_robust

    rows = [measure("benchmarks.executor:make_executor", make_executor, seconds=args.seconds, seed=args.seed,
                    baseline_s=args.baseline_s),
            measure("fuzzer.targets.executor_robust:make_executor", executor_robust.make_executor,
                    seconds=args.seconds, seed=args.seed, baseline_s=args.baseline_s)]
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"{'executor':46} {'campaign/s':>11} {'worker/s':>9} {'worker/CPU s':>13} {'real sleeps/s':>14} "
          f"{'ratio':>10}")
    for row in rows:
        real = row["real"] if row["real_done"] else row["real_bound"]
        mark = "" if row["real_done"] else " (bound)"
        print(f"{row['executor']:46} {row['campaign']:11,.0f} {row['worker']:9,.0f} {row['worker_cpu']:13,.0f} "
              f"{real:14.3f} {row['campaign'] / real if real else float('inf'):10,.0f}x{mark}")
        print(f"  {row['scenarios']} scenarios, {row['virtual_per_scenario']:.1f} s of virtual time each; "
              f"engine {row['engine_cpu_us']:.0f} us CPU per scenario; the real-sleeping loop finished "
              f"{row['real_done']} in {args.baseline_s:g} s; {row['findings']} violations")
    wall, cpu = rows[0]["campaign"], rows[0]["worker_cpu"]
    print(f"goal >= 2,000 scenarios/s per worker: {'met' if wall >= 2000 else 'not met'} in wall time "
          f"({wall:,.0f}/s on this machine's load); a worker with a core to itself: {cpu:,.0f}/s "
          f"({'met' if cpu >= 2000 else 'not met'})")


if __name__ == "__main__":
    main()
