"""Campaign throughput on real schemas, with exploration, and with two workers (issue 9, section 4).

Every figure is measured in this run, one after the other on the same machine, and the goals are
checked as ratios where they are ratios (the machines are shared and noisy):

* over every tool of tests/data/tools_50.json with a json.loads target: >= 10,000 executions/s per
  worker at --level parse, and --level validate >= 50% of parse;
* the built-in get_weather: >= 30,000 executions/s;
* exploration on (coverage traced, havoc arm) >= 50% of the speed with it off;
* --workers 2 >= 1.7x one worker (on 2 cores).

Run from the repository root::

    .venv/bin/python benchmarks/throughput.py [--seconds 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import closing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings  # noqa: E402
from fuzzer.harnesses.parser.outcome import TargetSpec
from fuzzer.isolation import WorkerPool  # noqa: E402
from fuzzer.engine.pipeline import run_job  # noqa: E402
from strategies._internal.tools import load_registry  # noqa: E402

TARGET = "benchmarks.json_target:parse"
TOOLS_50 = os.path.join(ROOT, "tests", "data", "tools_50.json")


def rate(*, tools_file: str | None, tools: list | None, level: str = "parse", seconds: float,
         coverage: bool = False, workers: int = 1) -> float:
    """Executions per second of a fuzzing campaign (start-up excluded: measured from budget start)."""
    registry = load_registry(tools_file)
    if tools_file:
        os.environ["TOOLFUZZ_TOOLS"] = tools_file
    names = tools or registry.names()
    settings = CampaignSettings(tools=names, target=TARGET, level=level, budget_s=seconds, formats=["json"],
                                explore=coverage, slow=False, confirm=False)
    spec = TargetSpec(target=TARGET, cwd=ROOT, coverage=coverage)
    with closing(WorkerPool(spec, workers=workers)) as pool:  # started by the job, as the CLI's is
        result = run_job(CampaignJob(registry, settings, pool)).result
    fuzzing_s = max(1e-9, result.elapsed_s - result.setup_s)
    return result.executions / fuzzing_s


#: The configurations measured, by name: rate()'s keyword arguments.
CONFIGURATIONS = {
    "parse": dict(tools_file=TOOLS_50, tools=None),
    "validate": dict(tools_file=TOOLS_50, tools=None, level="validate"),
    "weather": dict(tools_file=None, tools=["get_weather"]),
    "explore_on": dict(tools_file=None, tools=["get_weather"], coverage=True),
    "two": dict(tools_file=None, tools=["get_weather"], workers=2),
}


def best_rates(seconds: float, rounds: int) -> dict:
    """Each configuration's best rate over ``rounds`` rounds, every round measuring all of them
    one after the other. On a shared machine another process's burst slows whatever runs during
    it (one 8 s measurement of the same configuration ranged 12,500-22,000/s here); the best of
    interleaved rounds is each one's least disturbed run, as timeit takes the minimum time."""
    best: dict = {}
    for _ in range(rounds):
        for name, kwargs in CONFIGURATIONS.items():
            best[name] = max(best.get(name, 0.0), rate(seconds=seconds, **kwargs))
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of measurements (each figure: its best)")
    args = parser.parse_args()
    best = best_rates(args.seconds, max(1, args.rounds))
    parse, validate, weather, explore_on, two = (best[k] for k in ("parse", "validate", "weather", "explore_on", "two"))
    explore_off = one = weather  # the same configuration: get_weather, one worker, exploration off
    rows = [
        ("tools_50, parse, 1 worker", parse, parse >= 10_000, ">= 10,000/s"),
        ("tools_50, validate / parse", validate / parse, validate >= 0.5 * parse, ">= 0.50"),
        ("get_weather, 1 worker", weather, weather >= 30_000, ">= 30,000/s"),
        ("exploration on / off", explore_on / explore_off, explore_on >= 0.5 * explore_off, ">= 0.50"),
        ("2 workers / 1 worker", two / one, two >= 1.7 * one, ">= 1.70"),
    ]
    print(f"validate: {validate:,.0f}/s   exploration on: {explore_on:,.0f}/s, off: {explore_off:,.0f}/s   "
          f"1 worker: {one:,.0f}/s, 2 workers: {two:,.0f}/s   (cores: {os.cpu_count()})")
    ok = True
    for name, value, met, goal in rows:
        shown = f"{value:,.0f}/s" if value > 100 else f"{value:.2f}"
        print(f"{name:<30} {shown:>12}   goal {goal:<12} {'met' if met else 'NOT met'}")
        ok = ok and met
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
