"""Campaign throughput: the engine against a json.loads-based target vs the naive Hypothesis loop.

The naive loop is what one would write first: ``@given(hypothesis_jsonschema.from_schema(schema))``,
render the call, mutate it, call the target in-process — paying Hypothesis's per-example cost on
every execution. The engine draws from compiled generators, batches samples to an isolated worker
and judges every outcome. Both run in the same process on the same machine, one after the other, so
the ratio is meaningful on a noisy shared machine. Run from the repository root::

    .venv/bin/python benchmarks/campaign.py [--seconds 15] [--workers 1]

Goals (issue 3): at least 25,000 executions/s with one worker, and a ratio of at least 100.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.json_target import parse as json_target  # noqa: E402
from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings  # noqa: E402
from fuzzer.harnesses.parser.outcome import TargetSpec
from fuzzer.isolation import WorkerPool  # noqa: E402
from fuzzer.engine.pipeline import run_job  # noqa: E402
from strategies import OPERATORS, RandomSource, builtin_registry, render  # noqa: E402
from strategies._internal.mutations import MutationContext, NotApplicable  # noqa: E402


def engine_rate(seconds: float, workers: int, tool: str) -> tuple[float, int]:
    registry = builtin_registry()
    spec = TargetSpec(target="benchmarks.json_target:parse", cwd=ROOT, timeout=2.0)
    with WorkerPool(spec, workers=workers) as pool:
        settings = CampaignSettings(tools=[tool], target=spec.target, budget_s=seconds, formats=["json"])
        result = run_job(CampaignJob(registry, settings, pool)).result
    return result.executions / result.elapsed_s, len(result.findings)


def naive_rate(seconds: float, tool_name: str) -> float:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from hypothesis_jsonschema import from_schema

    registry = builtin_registry()
    tool = registry[tool_name]
    ops = [op for op in OPERATORS.values() if op.applies(tool, "json")]
    count = [0]
    deadline = time.monotonic() + seconds

    @settings(max_examples=10**9, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(dict(tool.schema)), st.integers(0, len(ops)), st.integers(0, 2**32))
    def loop(arguments, which, seed):
        if time.monotonic() > deadline:
            raise StopIteration
        calls = [{"name": tool.name, "arguments": arguments}]
        source = RandomSource(seed)
        ctx = MutationContext(registry=registry, tool=tool, format="json", calls=calls, chatter=False,
                              render=lambda c, style=None: render("json", c, source, chatter=False, style=style))
        text = render("json", calls, source, chatter=False).text
        if which < len(ops):
            try:
                text = ops[which](source, ctx).text
            except NotApplicable:
                pass
        try:
            json_target(text)
        except Exception:
            pass
        count[0] += 1

    start = time.monotonic()
    try:
        loop()
    except StopIteration:
        pass
    return count[0] / (time.monotonic() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds for the engine run")
    parser.add_argument("--naive-seconds", type=float, default=8.0, help="seconds for the naive loop")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--tool", default="get_weather")
    args = parser.parse_args()
    rate, findings = engine_rate(args.seconds, args.workers, args.tool)
    print(f"engine:     {rate:>10,.0f} executions/s  (workers={args.workers}, {findings} findings)")
    naive = naive_rate(args.naive_seconds, args.tool)
    print(f"naive loop: {naive:>10,.0f} executions/s  (@given(from_schema(...)), in-process)")
    ratio = rate / naive if naive else float("inf")
    print(f"ratio:      {ratio:>10,.1f}x")
    ok = rate >= 25_000 and ratio >= 100
    print("goals (>= 25,000/s, ratio >= 100):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
