"""Agent-harness throughput: episodes per second per worker, against a naive Hypothesis state machine.

The naive way to test a tool-use loop with Hypothesis is a ``RuleBasedStateMachine`` whose rules
append model turns (a call with ``hypothesis_jsonschema.from_schema`` arguments, a repeat, an empty
answer, a cut-off call, ...) and whose teardown plays the script against the loop in-process and
checks it — paying Hypothesis's per-step cost and the schema strategies' per-draw cost on every
episode. The harness draws scripts from compiled generators, plays them in an isolated worker
process (watchdog, batching) and judges each with every oracle. Both drive the same loop, one
after the other in the same process, so the ratio is meaningful on a noisy shared machine::

    .venv/bin/python benchmarks/agent.py [--seconds 10] [--workers 1] [--agent M:A] [--model-shape openai]

Goal (issue 12): at least 500 episodes/s per worker, shown with the ratio to the naive machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fuzzer.harnesses.agent.checks import Episode, judge  # noqa: E402
from fuzzer.harnesses.agent.job import AgentCampaign, AgentSettings  # noqa: E402
from fuzzer.harnesses.agent.policy import AgentPolicy  # noqa: E402
from fuzzer.harnesses.agent.generation import FINAL_ANSWERS  # noqa: E402
from fuzzer.harnesses.agent.script import Script, ScriptCall, Turn, link_results  # noqa: E402
from fuzzer.harnesses.agent.worker import loop_maker, play  # noqa: E402
from fuzzer.engine.pipeline import run_job  # noqa: E402
from fuzzer.engine.references import load_target  # noqa: E402
from strategies._internal.tools import builtin_registry  # noqa: E402

GOAL = 500.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def harness_rate(agent: str, shape: str, seconds: float, workers: int) -> tuple[float, float, int]:
    """(episodes/s per worker, episodes per worker CPU-second, distinct failures).

    The workers' CPU time reaches this process when the pool closes (the zygote reaps its workers,
    this process reaps the zygote), so it is counted exactly, start-up imports included."""
    settings = AgentSettings(agent=agent, shape=shape, budget_s=seconds, workers=workers, cwd=ROOT, seed=1)
    before = _children_cpu()
    result = run_job(AgentCampaign(settings)).result
    cpu = _children_cpu() - before
    played = result.executions + result.shrink_executions  # the workers also played the shrinking's episodes
    return result.executions / result.fuzzing_s / workers, played / cpu, len(result.findings)


def naive_rate(agent: str, shape: str, seconds: float) -> tuple[float, float, int]:
    """(episodes/s, episodes per CPU-second, failing episodes) of the Hypothesis state machine."""
    from hypothesis import HealthCheck, settings
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test
    from hypothesis_jsonschema import from_schema

    registry = builtin_registry()
    tools = list(registry)
    arguments_of = {t.name: from_schema(dict(t.schema)) for t in tools}  # built once, as a user would
    policy = AgentPolicy()
    make_loop = loop_maker(load_target(agent, cwd=ROOT), agent)
    structured = shape != "text"
    episodes = [0]
    failures = [0]
    deadline = time.monotonic() + seconds

    def scripted(name: str, arguments: dict) -> ScriptCall:
        return ScriptCall(name, arguments, raw=json.dumps(arguments) if structured else None)

    def text_of(calls: list) -> str:
        body = [{"name": c.name, "arguments": c.arguments} for c in calls]
        return "" if structured else json.dumps(body[0] if len(body) == 1 else body)

    class Script_(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.turns: list = []

        @rule(data=st.data(), tool=st.sampled_from(tools))
        def call(self, data, tool):
            calls = [scripted(tool.name, data.draw(arguments_of[tool.name]))]
            self.turns.append(Turn("call", calls, text=text_of(calls), finish="tool_calls"))

        @rule(data=st.data(), tools_=st.lists(st.sampled_from(tools), min_size=2, max_size=3))
        def parallel(self, data, tools_):
            calls = [scripted(t.name, data.draw(arguments_of[t.name])) for t in tools_]
            self.turns.append(Turn("parallel", calls, text=text_of(calls), finish="tool_calls"))

        @rule(which=st.integers(0, 10))
        def repeat(self, which):
            earlier = [c for t in self.turns for c in t.calls]
            if earlier:
                c = earlier[which % len(earlier)]
                self.turns.append(Turn("repeat", [scripted(c.name, c.arguments)], text=text_of([c]),
                                       finish="tool_calls"))

        @rule(data=st.data(), tool=st.sampled_from(tools))
        def length(self, data, tool):
            arguments = data.draw(arguments_of[tool.name])
            raw = json.dumps(arguments)[:-1]
            self.turns.append(Turn("length", [ScriptCall(tool.name, None, raw=raw if structured else None)],
                                   text=text_of([scripted(tool.name, arguments)])[:-2], finish="length",
                                   truncated=True))

        @rule()
        def empty(self):
            self.turns.append(Turn("empty"))

        def teardown(self):
            if time.monotonic() > deadline:
                return
            answer = FINAL_ANSWERS[0]
            turns = self.turns + [Turn("final", text=answer, content=answer, final=True)]
            link_results(turns)
            script = Script(user="What is the weather in Paris?", turns=turns, shape=shape)
            trace = play(script, make_loop, registry, policy.caps)
            failures[0] += bool(judge(Episode(script, trace, policy, registry)))
            episodes[0] += 1

    start, cpu = time.monotonic(), time.process_time()
    while time.monotonic() < deadline:
        run_state_machine_as_test(Script_, settings=settings(
            max_examples=50, stateful_step_count=6, deadline=None, database=None,
            suppress_health_check=list(HealthCheck)))
    return (episodes[0] / (time.monotonic() - start), episodes[0] / (time.process_time() - cpu), failures[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--agent", default="fuzzer.targets.agent_state_machine:run")
    parser.add_argument("--model-shape", default="openai", choices=("openai", "anthropic", "text"))
    args = parser.parse_args()
    load = os.getloadavg()[0]
    ours, ours_cpu, found = harness_rate(args.agent, args.model_shape, args.seconds, args.workers)
    theirs, theirs_cpu, failed = naive_rate(args.agent, args.model_shape, args.seconds)
    print(f"loop {args.agent}, {args.model_shape} model, {args.seconds:g} s each; load average {load:.1f} on "
          f"{os.cpu_count()} cores (a loaded machine lowers the wall-clock rates, not the CPU ones)")
    print(f"  toolfuzz agent harness   {ours:8.0f} episodes/s per worker, {ours_cpu:6.0f} per worker CPU-second "
          f"({args.workers} worker(s), isolated, {found} distinct failures)")
    print(f"  Hypothesis state machine {theirs:8.0f} episodes/s,            {theirs_cpu:6.0f} per CPU-second "
          f"(in-process, {failed} failing episodes)")
    print(f"  ratio {ours / theirs:.1f}x wall clock, {ours_cpu / theirs_cpu:.1f}x CPU; goal >= {GOAL:.0f} episodes/s "
          f"per worker: {'met' if ours >= GOAL else 'NOT met'} (CPU-bound: {'met' if ours_cpu >= GOAL else 'NOT met'})")


if __name__ == "__main__":
    main()
