"""The executor campaign: scenarios drawn, run under injected faults and judged in the workers;
the engine's one campaign loop (:class:`fuzzer.engine.campaign.CampaignJob`) over an
:class:`ExecutorSubject`.

::

    job = ExecutorCampaign(settings, registry=registry, policy=policy)
    final = run_job(job, [console, JsonReportHandler(path), ...])

What is the executor's own: the orders (:class:`~fuzzer.harnesses.executor.orders.ScenarioOrder`:
a seed and a count, the scenarios drawn in the worker from the campaign's generator), filing
their results (the scenarios a worker judged are counted; those that came back whole with their
trace are judged here and their violations offered to the finding book), showing a finding again
(its scenario in a fresh worker) and shrinking it (:func:`~fuzzer.harnesses.executor.shrink.shrink_scenario`:
the shortest call sequence and the smallest schedule). Budget, confirmation, the shrink window,
announcing and Ctrl-C are the engine's, the same as every harness's.
"""

from __future__ import annotations

import itertools
import os
import pickle
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from fuzzer.engine.budget import shrink_stopped_note
from fuzzer.engine.campaign import CampaignJob, CampaignSettings
from fuzzer.engine.campaign_result import CampaignResult
from fuzzer.engine.decisions import campaign_exit_code
from fuzzer.engine.events import FindingRecorded, JobStarted, NonFatalError, Phase, PhaseStarted
from fuzzer.engine.orders import order_seed
from fuzzer.engine.pipeline import Job
from fuzzer.engine.results import FAILED, PASSED, SKIPPED, JobResult, TestCase
from fuzzer.engine.subject import Failure, Subject
from fuzzer.engine.warmup import WarmUp, warmup_limit
from fuzzer.harnesses.executor.checks import CHECKS, judge
from fuzzer.harnesses.executor.findings import ExecutorFinding, replay_command
from fuzzer.harnesses.executor.orders import ScenarioOrder, ScenarioResult, Usage
from fuzzer.harnesses.executor.policy import PolicyError
from fuzzer.harnesses.executor.scenario import ScenarioGenerator
from fuzzer.harnesses.executor.shrink import shrink_scenario
from fuzzer.harnesses.executor.worker import (YOUNG_OBJECTS, ExecutorSpec, Trace, WorkerConfig, decode_policy,
                                              encode_policy, load_json, summary_of, young_collections_every)
from strategies._internal.tools import registry_digest

#: Scenarios per order (a few to tens of milliseconds of a worker's time).
ORDER_SCENARIOS = 32
#: Seconds of shrinking a finding may take at most.
SHRINK_S = 8.0
#: The class every scenario is counted under (the report's by_class).
SCENARIOS = "scenarios"
_CAMPAIGNS = itertools.count()


@dataclass
class ExecutorSettings:
    executor: str
    tools_file: Optional[str] = None
    policy_file: Optional[str] = None
    seed: int = 0
    budget_s: Optional[float] = None
    max_examples: Optional[int] = None
    timeout: float = 2.0
    memory_limit_mb: Optional[int] = 4096
    http: bool = False
    implementations: Optional[str] = None
    shrink: bool = True
    workers: int = 1
    max_steps: int = 12
    cwd: str = field(default_factory=os.getcwd)
    max_failures: Optional[int] = None  # stop after this many distinct violations (-x: 1)
    ignore: frozenset = frozenset()  # signatures never reported
    backend: str = "local"  # where the orders run (fuzzer.backends): local workers, or Ray actors
    ray_address: Optional[str] = None  # the cluster a ray back end joins (None: a Ray instance of its own)

    def worker_config(self, policy: Any, registry: Any) -> WorkerConfig:
        return WorkerConfig(executor=self.executor, tools_file=_absolute(self.tools_file, self.cwd), cwd=self.cwd,
                            http=self.http, implementations=self.implementations,
                            non_idempotent=policy.non_idempotent_tools(registry.names()),
                            async_tools=policy.async_tools, http_responses=dict(policy.http_responses),
                            invocation_cap=max(100, 10 * (policy.max_attempts or 10)),
                            flavors=list(available_flavors(policy)), policy=encode_policy(policy),
                            warmup_s=warmup_limit(self.timeout))

    def command(self) -> tuple:
        """The command that replays a scenario, from any directory: files by absolute path, and the
        directory the executor was found through (not an installed module) on PYTHONPATH."""
        return replay_command(executor=self.executor, tools_file=_absolute(self.tools_file, self.cwd),
                              policy_file=_absolute(self.policy_file, self.cwd), http=self.http,
                              implementations=self.implementations, timeout=self.timeout, cwd=self.cwd)

    def campaign(self) -> CampaignSettings:
        return CampaignSettings(seed=self.seed, budget_s=self.budget_s, max_examples=self.max_examples,
                                shrink=self.shrink, max_failures=self.max_failures, ignore=self.ignore)


def _absolute(path: Optional[str], cwd: str) -> Optional[str]:
    if path and os.path.exists(os.path.join(cwd, path)):
        return os.path.abspath(os.path.join(cwd, path))
    return path


def judged_by(settings: ExecutorSettings, policy: Any) -> dict:
    """A finding's tools file (absolute) and policy, which its corpus entry keeps for replay."""
    return {"tools_file": _absolute(settings.tools_file, settings.cwd), "policy": policy}


def open_pool(settings: ExecutorSettings, policy: Any, registry: Any) -> Any:
    """The executor's workers on the settings' back end (local worker processes, or Ray actors
    each holding one), started (a load failure raises a one-line TargetError; a policy naming an
    exception type the workers cannot import, a PolicyError)."""
    from fuzzer.backends import make_pool, workers_of
    from fuzzer.isolation.spec import load_timeout

    spec = ExecutorSpec(config=settings.worker_config(policy, registry), cwd=settings.cwd, timeout=settings.timeout,
                        memory_limit_mb=settings.memory_limit_mb)
    # the load timeout bounds the import; the warm-up after it bounds itself
    pool = make_pool(settings.backend, spec, workers_of(settings.workers), address=settings.ray_address,
                     load_timeout=load_timeout(settings.budget_s))
    try:
        pool.start()
    except BaseException:
        pool.close()  # (a Ray instance started for the run is stopped too)
        raise
    unresolved = (pool.info or {}).get("unresolved_raises") or []
    if unresolved:
        pool.close()
        name, why = unresolved[0]
        raise PolicyError(f"{policy.source}: raises: {name!r}: {why}")
    return pool


def workers_judge(pool: Any, policy: Any, registry: Any) -> bool:
    """Whether ``pool``'s workers judge with exactly ``policy`` and ``registry`` (then an order may
    ask them to: :class:`~fuzzer.harnesses.executor.orders.ScenarioOrder`)."""
    info = pool.info or {}
    return (bool(info.get("judges")) and decode_policy(pool.spec.config.policy) == policy
            and info.get("registry") == registry_digest(registry))


def run_scenarios(pool: Any, scenarios: list, *, deadline: Optional[float] = None, fresh: bool = False) -> list:
    """One :class:`Trace` per scenario, in order (None for one the deadline left no time to run)."""
    return pool.run([s.wire() for s in scenarios], deadline=deadline, fresh=fresh) if scenarios else []


def available_flavors(policy: Any) -> tuple:
    """The ``error_types`` whose library is installed (``builtin`` always is)."""
    import importlib.util

    return tuple(f for f in policy.error_types if f == "builtin" or importlib.util.find_spec(f) is not None) or ("builtin",)


@dataclass
class ExecutorResult(CampaignResult):
    job: str = "executor"
    units_word: str = "scenarios"
    policy: Any = None
    http: bool = False
    workers: int = 1
    tools: list = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)  # what the scenarios cost and met, added up
    scenarios_by_verdict: dict = field(default_factory=dict)  # verdict -> scenarios that violated it (not findings)

    def summary_lines(self) -> list[str]:
        from fuzzer.harnesses.executor.render import summary_lines

        return summary_lines(self)

    def test_cases(self) -> list[TestCase]:
        from fuzzer.engine.results import finding_detail

        cases = [TestCase(classname="toolfuzz.executor", name=f.signature.id, status=FAILED,
                          message=f.signature.title, detail=finding_detail(f)) for f in self.findings]
        if self.problem:
            cases.append(TestCase("toolfuzz.executor", "campaign", FAILED, f"nothing tested: {self.problem}"))
        elif self.executions:
            failed = {f.verdict for f in self.findings}
            cut = str(self.stop_reason) == "interrupted"  # not a pass a CI reader could take for one
            cases += [TestCase(classname="toolfuzz.executor", name=verdict, status=SKIPPED if cut else PASSED,
                               message=f"interrupted after {self.executions} scenarios" if cut
                               else f"{self.executions} scenarios")
                      for verdict in CHECKS if verdict not in failed]
        return cases

    def to_report(self) -> dict[str, Any]:
        return {
            **self.base_report(),
            "job": "executor",
            "executor": self.label,
            "tools": self.tools,
            "http": self.http,
            "workers": self.workers,
            "policy": self.policy.to_json() if self.policy is not None else None,
            "policy_source": self.policy.source if self.policy is not None else None,
            "scenarios": self.executions,
            "calls": self.usage.calls,
            "virtual_s": round(self.usage.virtual_s, 3),
            "worker_s": round(self.usage.real_s, 3),  # real seconds the workers spent inside scenarios
            "worker_cpu_s": round(self.usage.cpu_s, 3),  # ... of which CPU seconds
            "scenarios_by_verdict": dict(sorted(self.scenarios_by_verdict.items())),
            "faults": dict(sorted(self.usage.faults.items())),
        }


class ExecutorSubject(Subject):
    """The executor harness's half of a campaign (see the module docstring)."""

    kind = "executor"
    order_size = ORDER_SCENARIOS

    def __init__(self, settings: ExecutorSettings, *, registry: Any, policy: Any, pool: Any = None):
        self.settings, self.registry, self.policy = settings, registry, policy
        self.label = settings.executor
        self.pool = pool
        self.result = ExecutorResult(label=settings.executor, policy=policy, seed=settings.seed, http=settings.http,
                                     workers=settings.workers)
        self.generator: Optional[ScenarioGenerator] = None
        self._setup = b""
        self._key = f"{os.getpid()}#{next(_CAMPAIGNS)}"
        self._judge_there = False
        #: signature id -> scenarios a worker counted before its finding was filed
        self._seen: dict[str, int] = {}
        self._gc: Any = None

    def settings_json(self) -> dict:
        s = self.settings
        return {"executor": s.executor, "tools": s.tools_file, "policy": self.policy.source, "http": s.http}

    # -- the campaign's shape ----------------------------------------------------------------------
    def start(self, job: Any) -> None:
        if self.pool is None:
            self.pool = job.pool = open_pool(self.settings, self.policy, self.registry)
        self._gc = young_collections_every(YOUNG_OBJECTS)
        self._gc.__enter__()

    def close(self) -> None:
        if self._gc is not None:
            self._gc.__exit__(None, None, None)
            self._gc = None

    def started(self, job: Any) -> Iterator[Any]:
        from strategies._internal.schema import unsupported_tools

        s, r = self.settings, self.result
        broken = unsupported_tools(self.registry)  # a tool whose schema is false has no call to draw
        for name, why in broken.items():
            yield NonFatalError(f"{name}: skipped, cannot generate its arguments: {why}")
        warmup = (self.pool.info or {}).get("warmup")
        note = WarmUp(**warmup).note(f"executor {s.executor!r}", warmup_limit(s.timeout)) if warmup else None
        if note:
            r.notes.append(note)
            yield NonFatalError(note)
        offered = (self.pool.info or {}).get("tools", [])
        tools = [t for t in offered if t in self.registry and t not in broken]
        r.tools = tools
        if not tools:
            r.problem = ("every tool's schema is unsupported" if broken and not set(offered) - set(broken)
                         else "the executor was given no tool of the registry")
            return
        self.generator = ScenarioGenerator(self.registry, self.policy, tools=tools,
                                           flavors=available_flavors(self.policy), max_steps=s.max_steps,
                                           seed=s.seed).with_every_pool()
        # The workers draw and run the scenarios: this process files their results in order. One
        # worker sends its traces back and this process judges them while the worker runs the next
        # scenarios (judging costs about half of what running does: split between two processes,
        # neither waits); several workers judge what they run (this process alone could not keep
        # up with them), if they judge with exactly this campaign's policy and registry.
        r.workers = self.pool.workers  # (--workers auto on a cluster: the actors it offered)
        self._judge_there = r.workers > 1 and workers_judge(self.pool, self.policy, self.registry)
        self._setup = zlib.compress(pickle.dumps(self.generator, pickle.HIGHEST_PROTOCOL), 1)
        yield from ()

    def plan(self, unit: str, count: int, number: int, room: Optional[int] = None) -> ScenarioOrder:
        return ScenarioOrder(self._key, self._setup, order_seed(self.settings.seed, number), count,
                             self._judge_there, number)

    # -- filing ----------------------------------------------------------------------------------
    def file(self, order: ScenarioOrder, result: ScenarioResult, job: Any) -> int:
        """The counted scenarios at once, then each one that came back with its trace."""
        r = self.result
        # (the failing ones counted too: which scenarios a worker sends whole depends on the orders
        # that worker ran before, so counting only those would make by_class depend on the workers)
        self._tally(result.usage.summary(), result.scenarios, job, failures=result.failing)
        for verdict, n in result.by_verdict.items():
            r.scenarios_by_verdict[verdict] = r.scenarios_by_verdict.get(verdict, 0) + n
        for signature_id, n in result.seen.items():
            found = job.book.find(signature_id)
            if found is not None:
                job.book.count(found, n)
            else:
                self._seen[signature_id] = self._seen.get(signature_id, 0) + n
        traced = result.traced
        drawn = self._scenarios(order, [index for index, *_ in traced])
        for (index, summary, text, failure), scenario in zip(traced, drawn):
            trace = Trace("error", detail=failure) if failure is not None else \
                Trace("ran", load_json(text), judged=summary)
            self._count(scenario, trace, job)
        return result.scenarios + len(traced)

    def file_lost(self, order: ScenarioOrder, lost: Any, job: Any) -> int:
        """A scenario its worker hung or died on, judged by how its worker was lost."""
        (scenario,) = self._scenarios(order, [lost.index])
        self._count(scenario, lost.outcome, job)  # the spec's fault: a Trace of its hang or death
        return 1

    def _count(self, scenario: Any, trace: Any, job: Any) -> None:
        r = self.result
        violations = judge(scenario, trace, self.policy, self.registry)
        self._tally(trace.judged if trace.judged is not None else summary_of(trace.data), 1, job,
                    failures=int(bool(violations)))
        for verdict in {v.verdict for v in violations}:
            r.scenarios_by_verdict[verdict] = r.scenarios_by_verdict.get(verdict, 0) + 1
        for v in violations:
            earlier = self._seen.pop(v.signature.id, 0)
            job.offer(Failure(scenario, trace, v.verdict, v.signature, v.reason, count=1 + earlier, extra=v))

    def _tally(self, summary: dict, scenarios: int, job: Any, failures: int = 0) -> None:
        job.tally.add(SCENARIOS, scenarios, failures)
        self.result.usage.add(summary)

    def _scenarios(self, order: ScenarioOrder, indices: list) -> list:
        """The scenarios at ``indices`` (ascending) of ``order``, drawn again here from its seed:
        the worker's copy of the generator drew them the same way."""
        if not indices:
            return []
        self.generator.restart(order.seed)
        drawn = [self.generator.generate() for _ in range(indices[-1] + 1)]
        return [drawn[index] for index in indices]

    # -- findings ------------------------------------------------------------------------------
    def new_finding(self, failure: Failure, job: Any) -> ExecutorFinding:
        v = failure.extra
        return ExecutorFinding(signature=v.signature, verdict=v.verdict, reason=v.reason, scenario=failure.case,
                               trace=failure.outcome, violation=v, command=self.settings.command(),
                               **judged_by(self.settings, self.policy))

    def payload(self, scenario: Any) -> Any:
        return scenario.wire()

    def confirmable(self, finding: Any) -> bool:
        return True  # a hang too: what did not hang again is not reported as a hang

    def same(self, finding: Any, scenario: Any) -> Callable[[Any], bool]:
        wanted, hang = finding.signature.id, finding.verdict == "hang"
        # a hang is confirmed by hanging again (where it is stuck may differ between two runs)
        return lambda trace: any(v.signature.id == wanted or (hang and v.verdict == "hang")
                                 for v in judge(scenario, trace, self.policy, self.registry))

    def confirmed(self, finding: Any, status: str, earlier: tuple, job: Any) -> Optional[str]:
        return self.hang_that_did_not_hang(finding, status, self.settings.timeout) or \
            super().confirmed(finding, status, earlier, job)

    def shrink(self, finding: Any, job: Any, window: float) -> bool:
        budget = min(SHRINK_S, window)

        def run_and_judge(scenarios: list) -> list:
            traces = job.settle_run([s.wire() for s in scenarios]) if scenarios else []
            return [(None, None) if t is None else (t, judge(s, t, self.policy, self.registry))
                    for s, t in zip(scenarios, traces)]

        best, stopped = shrink_scenario(finding.scenario, finding.signature.id, run_and_judge, self.generator,
                                        budget_s=budget)
        if stopped:
            finding.shrink_stopped = True
            finding.shrink_note = shrink_stopped_note(budget)
        if best is None:
            return False
        finding.minimized, finding.minimized_trace, finding.minimized_violation = best
        return True


class ExecutorCampaign(CampaignJob):
    """``fuzz executor``: the engine's campaign over an :class:`ExecutorSubject`."""

    def __init__(self, settings: ExecutorSettings, *, registry: Any, policy: Any, pool: Any = None):
        subject = ExecutorSubject(settings, registry=registry, policy=policy, pool=pool)
        super().__init__(subject, settings.campaign(), owns_pool=pool is None)
        self.name = "executor"

    @property
    def generator(self) -> Any:
        return self.subject.generator


# ---------------------------------------------------------------------------------------------
# Replaying one scenario (the reproduce command)


@dataclass
class ScenarioRun(JobResult):
    """One scenario replayed: its trace and every violation it shows."""

    job: str = "executor-replay"
    scenario: Any = None
    trace: Any = None
    cold_trace: Any = None  # the first run, in a fresh worker
    violations: list = field(default_factory=list)
    policy: Any = None

    def summary_lines(self) -> list[str]:
        from fuzzer.harnesses.executor.render import replay_lines

        return replay_lines(self)

    def to_report(self) -> dict[str, Any]:
        return {"job": self.job, "executor": self.label, "scenario": self.scenario.to_json() if self.scenario else None,
                "trace": self.trace.data if self.trace is not None else None,
                "trace_kind": self.trace.kind if self.trace is not None else None,
                "failures": [f.to_report() for f in self.findings], "counts": self.counts(),
                "elapsed_s": round(self.elapsed_s, 3)}


#: Runs of a replayed scenario after the first, cold one (its timing is their median).
WARM_RUNS = 9


class ScenarioReplay(Job):
    """Run one stored scenario against the executor and judge it."""

    name = "executor-replay"

    def __init__(self, settings: ExecutorSettings, scenario: Any, *, registry: Any, policy: Any,
                 pool: Any = None):
        super().__init__()
        self.settings, self.scenario, self.registry, self.policy = settings, scenario, registry, policy
        self._pool = pool
        self._started = time.monotonic()
        self._result = ScenarioRun(label=settings.executor, scenario=scenario, policy=policy)

    def run(self) -> Iterator[Any]:
        yield JobStarted(job=self.name, label=self.settings.executor, settings={"policy": self.policy.source})
        own = self._pool is None
        pool = self._pool or open_pool(self.settings, self.policy, self.registry)
        try:
            yield PhaseStarted(Phase.REPLAYING, self.settings.executor)
            # Several times: the first run in a fresh worker pays its one-time costs (first
            # imports, caches); the others show what the scenario itself costs (the median is
            # reported) and that it replays the same way.
            # A scenario that hangs or kills its worker runs once more only: each run costs the
            # whole watchdog timeout and a restart, and its timing means nothing.
            (cold,) = run_scenarios(pool, [self.scenario])
            warm = run_scenarios(pool, [self.scenario] * (WARM_RUNS if cold.kind == "ran" else 1))
            warm.sort(key=lambda t: float(t.data.get("real_s", 0.0)))
            trace = warm[len(warm) // 2]
        finally:
            if own:
                pool.close()
        r = self._result
        r.trace, r.cold_trace, r.executions = trace, cold, 1
        r.violations = judge(self.scenario, trace, self.policy, self.registry)
        first = {v.signature.id for v in judge(self.scenario, cold, self.policy, self.registry)}
        if first != {v.signature.id for v in r.violations}:
            note = "the scenario did not replay the same way twice (the executor is nondeterministic)"
            r.notes.append(note)
            yield NonFatalError(note)
        for v in r.violations:
            finding = ExecutorFinding(signature=v.signature, verdict=v.verdict, reason=v.reason, scenario=self.scenario,
                                      trace=trace, violation=v, command=self.settings.command(), **judged_by(self.settings, self.policy))
            r.findings.append(finding)
            yield FindingRecorded(finding)

    def result(self) -> ScenarioRun:
        self._result.elapsed_s = time.monotonic() - self._started
        self._result.stop_reason = self.stop_reason
        return self._result

    def exit_code(self, result: ScenarioRun) -> int:
        return campaign_exit_code(findings=len(result.findings), nothing_tested=None if result.executions else "not run",
                                  interrupted=self.interrupted)


__all__ = ["ExecutorCampaign", "ExecutorResult", "ExecutorSettings", "ExecutorSubject", "ScenarioReplay",
           "ScenarioRun", "available_flavors", "open_pool", "run_scenarios", "workers_judge"]
