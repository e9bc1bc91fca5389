"""The executor campaign: generate scenarios, run them under injected faults, judge, confirm,
shrink, report — a :class:`fuzzer.pipeline.Job` like every other command.

::

    job = ExecutorCampaign(settings, registry=registry, policy=policy)
    final = run_job(job, [console, JsonReportHandler(path), ...])

Scenarios run in batches through an :class:`~fuzzer.executor.worker.ExecutorPool` (one message
per batch, DESIGN.md "Isolation is affordable when batched"); each trace is judged by
:mod:`fuzzer.executor.checks`. A violation with a new signature is confirmed by running its
scenario again (a violation that does not come back is reported as a note, not a finding),
shrunk within the budget, and announced with :class:`~fuzzer.events.FindingRecorded`; later
scenarios with the same signature only count. ``--budget`` bounds the wall time of everything,
shrinking included: shrinking gets what is left, and fuzzing stops early enough to leave it some.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import pickle
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from fuzzer.decisions import campaign_exit_code
from fuzzer.events import FindingRecorded, JobStarted, NonFatalError, Phase, PhaseStarted, Progress, StopReason
from fuzzer.interrupts import BALANCED
from fuzzer.executor.checks import CHECKS, judge
from fuzzer.executor.findings import ExecutorFinding, replay_command
from fuzzer.executor.orders import OrderLine, ScenarioOrder, ScenarioResult, order_seed
from fuzzer.executor.policy import PolicyError
from fuzzer.executor.scenario import ScenarioGenerator
from fuzzer.executor.shrink import shrink_scenario
from fuzzer.executor.worker import ExecutorPool, Trace, WorkerConfig, encode_policy, load_json, summary_of
from fuzzer.pipeline import Job
from fuzzer.warmup import WarmUp, warmup_limit
from fuzzer.results import FAILED, PASSED, SKIPPED, JobResult, TestCase

#: Seconds of shrinking a finding may take at most (and when no budget is given).
SHRINK_S = 8.0
PROGRESS_EVERY_S = 0.5
#: Scenarios per order (a few to tens of milliseconds of a worker's time), and orders per round
#: (between rounds the job confirms and shrinks what it found); more workers get two orders each.
ORDER_SCENARIOS = 32
ROUND_ORDERS = 16
#: Seconds before the budget's end at which no more orders are sent (nor rounds planned).
STOP_MARGIN_S = 0.3
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


def _absolute(path: Optional[str], cwd: str) -> Optional[str]:
    if path and os.path.exists(os.path.join(cwd, path)):
        return os.path.abspath(os.path.join(cwd, path))
    return path


def judged_by(settings: ExecutorSettings, policy: Any) -> dict:
    """A finding's tools file (absolute) and policy, which its corpus entry keeps for replay."""
    return {"tools_file": _absolute(settings.tools_file, settings.cwd), "policy": policy}


def open_pool(settings: ExecutorSettings, policy: Any, registry: Any) -> ExecutorPool:
    """Start the workers (a load failure raises a one-line TargetError)."""
    pool = ExecutorPool(settings.worker_config(policy, registry), timeout=settings.timeout,
                        memory_limit_mb=settings.memory_limit_mb, workers=settings.workers)
    pool.start()
    unresolved = pool.info.get("unresolved_raises") or []
    if unresolved:
        pool.close()
        name, why = unresolved[0]
        raise PolicyError(f"{policy.source}: raises: {name!r}: {why}")
    warmup = pool.info.get("warmup")
    note = WarmUp(**warmup).note(f"executor {settings.executor!r}", warmup_limit(settings.timeout)) if warmup else None
    if note:
        pool.notes.append(note)
    return pool


#: Net container allocations between two collections of the youngest generation, during a
#: campaign (the interpreter's default is 700; see young_collections_every).
YOUNG_OBJECTS = 10_000


@contextlib.contextmanager
def young_collections_every(objects: int) -> Iterator[None]:
    """Run the cyclic garbage collector's youngest generation less often while a campaign runs.

    A batch of scenarios and their traces is tens of thousands of small containers that all live
    as long as the batch; at the default threshold the collector walks everything in flight over
    and over (and promotes it, so older generations are walked too): a quarter of the engine's CPU
    time. Almost none of it is cyclic garbage (reference counting frees it), so collecting less
    often only lets the rare cycle wait a little longer. The previous thresholds come back after."""
    saved = gc.get_threshold()
    gc.set_threshold(max(saved[0], objects), *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def available_flavors(policy: Any) -> tuple:
    """The ``error_types`` whose library is installed (``builtin`` always is)."""
    import importlib.util

    return tuple(f for f in policy.error_types if f == "builtin" or importlib.util.find_spec(f) is not None) or ("builtin",)


@dataclass
class ExecutorResult(JobResult):
    job: str = "executor"
    policy: Any = None
    seed: int = 0
    http: bool = False
    workers: int = 1
    tools: list = field(default_factory=list)
    calls: int = 0
    virtual_s: float = 0.0
    worker_s: float = 0.0  # real seconds the workers spent inside scenarios
    worker_cpu_s: float = 0.0  # ... of which CPU seconds (what a worker with a core of its own needs)
    faults: dict = field(default_factory=dict)  # fault kind -> attempts that met it
    scenarios_by_verdict: dict = field(default_factory=dict)  # verdict -> scenarios that violated it (not findings)

    def test_cases(self) -> list[TestCase]:
        from fuzzer.results import finding_detail

        cases = [TestCase(classname="toolfuzz.executor", name=f.signature.id, status=FAILED,
                          message=f.signature.title, detail=finding_detail(f)) for f in self.findings]
        if self.executions:
            failed = {f.verdict for f in self.findings}
            cut = self.stop_reason == StopReason.INTERRUPTED  # not a pass a CI reader could take for one
            cases += [TestCase(classname="toolfuzz.executor", name=verdict, status=SKIPPED if cut else PASSED,
                               message=f"interrupted after {self.executions} scenarios" if cut
                               else f"{self.executions} scenarios")
                      for verdict in CHECKS if verdict not in failed]
        return cases

    def to_report(self) -> dict[str, Any]:
        return {
            "job": "executor",
            "executor": self.label,
            "tools": self.tools,
            "http": self.http,
            "seed": self.seed,
            "workers": self.workers,
            "policy": self.policy.to_json() if self.policy is not None else None,
            "policy_source": self.policy.source if self.policy is not None else None,
            "executions": self.executions,
            "scenarios": self.executions,
            "calls": self.calls,
            "elapsed_s": round(self.elapsed_s, 3),
            "execs_per_s": round(self.execs_per_s, 1),
            "virtual_s": round(self.virtual_s, 3),
            "worker_s": round(self.worker_s, 3),
            "worker_cpu_s": round(self.worker_cpu_s, 3),
            "stop_reason": str(self.stop_reason),
            "problem": self.problem,
            "failures": [f.to_report() for f in self.findings],
            "scenarios_by_verdict": dict(sorted(self.scenarios_by_verdict.items())),
            "faults": dict(sorted(self.faults.items())),
            "counts": self.counts(),
            "notes": list(self.notes),
        }


class ExecutorCampaign(Job):
    name = "executor"

    def __init__(self, settings: ExecutorSettings, *, registry: Any, policy: Any, pool: Optional[ExecutorPool] = None):
        super().__init__()
        self.settings = settings
        self.registry = registry
        self.policy = policy
        self._pool = pool
        self._own_pool = pool is None
        self._started = time.monotonic()
        self._deadline = None if settings.budget_s is None else self._started + settings.budget_s
        self._result = ExecutorResult(label=settings.executor, policy=policy, seed=settings.seed, http=settings.http,
                                      workers=settings.workers)
        self._by_signature: dict[str, ExecutorFinding] = {}
        self._pending: list[ExecutorFinding] = []  # confirmed, not announced yet (interrupted mid-shrink)
        self._unconfirmed: list = []  # (scenario, trace, violation) of this batch, not confirmed yet
        self._confirmed: dict = {}  # signature id -> (trace, violation) of its confirming run
        self._seen: dict = {}  # signature id -> scenarios that showed it
        self.generator: Optional[ScenarioGenerator] = None

    # -- helpers ---------------------------------------------------------------------------------
    def _left(self) -> Optional[float]:
        return None if self._deadline is None else self._deadline - time.monotonic()

    def run_and_judge(self, scenarios: list) -> list:
        """(trace, violations) per scenario; (None, None) for one the budget left no time to run."""
        traces = self._pool.run(scenarios, deadline=self._deadline)
        return [(None, None) if t is None else (t, judge(s, t, self.policy, self.registry))
                for s, t in zip(scenarios, traces)]

    def result(self) -> ExecutorResult:
        r = self._result
        r.elapsed_s = time.monotonic() - self._started
        r.stop_reason = self.stop_reason
        r.findings = [f for f in self._by_signature.values()]
        if r.executions == 0 and r.problem is None and self.stop_reason != StopReason.INTERRUPTED:
            r.problem = "no scenario ran (the budget ended before the executor could be tested)"
        return r

    def exit_code(self, result: ExecutorResult) -> int:
        return campaign_exit_code(findings=len(result.findings), nothing_tested=result.problem,
                                  interrupted=self.interrupted)

    # -- the job -----------------------------------------------------------------------------------
    def run(self) -> Iterator[Any]:
        s = self.settings
        yield JobStarted(job="executor", label=s.executor, budget_s=s.budget_s,
                         settings={"executor": s.executor, "tools": s.tools_file, "policy": self.policy.source,
                                   "seed": s.seed, "max_examples": s.max_examples, "http": s.http})
        yield PhaseStarted(Phase.LOADING, s.executor)
        if self._pool is None:
            self._pool = open_pool(s, self.policy, self.registry)
        for note in getattr(self._pool, "notes", ()):
            self._result.notes.append(note)
            yield NonFatalError(note)
        try:
            with young_collections_every(YOUNG_OBJECTS):
                yield from self._fuzz()
        finally:
            if self._own_pool and self._pool is not None:
                self._pool.close()

    def _fuzz(self) -> Iterator[Any]:
        s, r = self.settings, self._result
        tools = [t for t in self._pool.tools if t in self.registry]
        r.tools = tools
        if not tools:
            r.problem = "the executor was given no tool of the registry"
            self.stop_reason = StopReason.NOTHING_TESTED
            return
        self.generator = ScenarioGenerator(self.registry, self.policy, tools=tools, flavors=available_flavors(self.policy),
                                           max_steps=s.max_steps, seed=s.seed).with_every_pool()
        yield PhaseStarted(Phase.FUZZING, s.executor)
        # The workers draw and run the scenarios (fuzzer/executor/orders.py): this process plans
        # rounds of orders and files their results in order. One worker sends its traces back
        # and this process judges them while the worker runs the next scenarios (judging costs
        # about half of what running does: split between two processes, neither waits); several
        # workers judge what they run (this process alone could not keep up with them), if they
        # judge with exactly this campaign's policy and registry.
        judge_there = s.workers > 1 and self._pool.judges(self.policy, self.registry)
        setup = zlib.compress(pickle.dumps(self.generator, pickle.HIGHEST_PROTOCOL), 1)
        key = f"{os.getpid()}#{next(_CAMPAIGNS)}"
        planned = planned_scenarios = 0
        last_progress = 0.0
        line = OrderLine()
        try:
            while True:
                stop = self._stop(planned_scenarios, in_line=len(line))
                if stop is not None:
                    self._file(line.drain(), line)  # what came back behind an order cut off: settled too
                    yield from self._settle()
                    self.stop_reason = stop
                    break
                for count in self._sizes(planned_scenarios, max(ROUND_ORDERS, 2 * s.workers) - len(line.waiting())):
                    line.add(ScenarioOrder(key, setup, order_seed(s.seed, planned), count, judge_there, planned))
                    planned, planned_scenarios = planned + 1, planned_scenarios + count
                orders = line.waiting()
                taken: set = set()

                def take_arrived(results: list) -> None:
                    """File what can be filed of what arrived (see OrderLine)."""
                    for i, result in enumerate(results):
                        if result is not None and i not in taken:
                            taken.add(i)
                            line.arrived(orders[i], result)
                    self._file(line.ready(), line)

                def settle_first() -> bool:
                    """Send no more of this round once a finding waits to be confirmed (a scenario
                    a worker was lost on, among them): settling it comes first."""
                    return bool(self._unconfirmed)

                results = self._pool.run_orders(orders, deadline=self._deadline, on_result=take_arrived,
                                                stop_sending=None if self._deadline is None
                                                else self._deadline - STOP_MARGIN_S, stop_when=settle_first)
                take_arrived(results)
                if self._unconfirmed:  # confirming and shrinking need the pool to themselves
                    yield from self._settle()
                now = time.monotonic()
                if now - last_progress >= PROGRESS_EVERY_S:
                    last_progress = now
                    yield self._progress(Phase.FUZZING)
        finally:  # the budget ended or a Ctrl-C came: what came back counts, in order still
            self._file(line.drain(), line)

    def _file(self, ready: list, line: OrderLine) -> None:
        """File what :meth:`OrderLine.ready` took out of the line, whole: a Ctrl-C waits until it
        is (a few orders' judging), or what came back would be in no count."""
        with BALANCED:
            for order, lost, result in ready:
                for one in lost:
                    self._take_lost(order, one)
                if result is not None:
                    self._take(order, result)
            for order, lost in line.given_up:
                note = (f"a worker died between scenarios of order {order.number} every time it ran "
                        f"({lost.outcome.detail or lost.outcome.kind}); its {order.count - len(order.lost)} "
                        f"scenario(s) were not run or counted")
                self._result.notes.append(note)
            line.given_up.clear()

    def _sizes(self, submitted: int, orders: int) -> list:
        """The sizes of the next ``orders`` orders: fixed, so that the orders and their scenarios are
        the same whatever the machine's speed and the number of workers (fewer and smaller when
        only ``--max-examples`` minus ``submitted`` remain)."""
        left = None if self.settings.max_examples is None else self.settings.max_examples - submitted
        sizes: list = []
        for _ in range(orders):
            size = ORDER_SCENARIOS if left is None else min(ORDER_SCENARIOS, left - sum(sizes))
            if size <= 0:
                break
            sizes.append(size)
        return sizes

    def _stop(self, planned: int, in_line: int) -> Optional[StopReason]:
        """Why the campaign stops now (``planned`` scenarios so far, ``in_line`` orders not filed yet), or None."""
        if self.settings.max_failures is not None and len(self._by_signature) >= self.settings.max_failures:
            return StopReason.MAX_FAILURES
        if self.settings.max_examples is not None and planned >= self.settings.max_examples and not in_line:
            return StopReason.MAX_EXAMPLES
        left = self._left()
        if left is not None and left <= STOP_MARGIN_S:
            return StopReason.BUDGET
        return None

    def _take(self, order: ScenarioOrder, result: ScenarioResult) -> None:
        """File one order's result: the counted scenarios at once, then each one that came back
        with its trace."""
        r = self._result
        with BALANCED:  # its scenarios in the executions, their verdicts and their findings' counts, or in none
            self._tally(result.summary(), result.scenarios)
            for verdict, n in result.by_verdict.items():
                r.scenarios_by_verdict[verdict] = r.scenarios_by_verdict.get(verdict, 0) + n
            for signature_id, n in result.seen.items():
                self._saw(signature_id, n)
        traced = result.traced
        drawn = self._scenarios(order, [index for index, *_ in traced])
        for (index, summary, text, failure), scenario in zip(traced, drawn):
            trace = Trace("error", detail=failure) if failure is not None else \
                Trace("ran", load_json(text), judged=summary)
            self._count(scenario, trace, judge(scenario, trace, self.policy, self.registry))

    def _take_lost(self, order: ScenarioOrder, lost: Any) -> None:
        """A scenario its worker hung or died on, judged by how its worker was lost."""
        from fuzzer.executor.worker import _trace

        (scenario,) = self._scenarios(order, [lost.index])
        trace = _trace(lost.outcome)
        self._count(scenario, trace, judge(scenario, trace, self.policy, self.registry))

    def _scenarios(self, order: ScenarioOrder, indices: list) -> list:
        """The scenarios at ``indices`` (ascending) of ``order``, drawn again here from its seed:
        the worker's copy of the generator drew them the same way."""
        if not indices:
            return []
        self.generator.restart(order.seed)
        drawn = [self.generator.generate() for _ in range(indices[-1] + 1)]
        return [drawn[index] for index in indices]

    def _progress(self, phase: Phase) -> Progress:
        failures: dict[str, int] = {}
        for f in self._by_signature.values():
            failures[f.verdict] = failures.get(f.verdict, 0) + 1
        return Progress(executions=self._result.executions, elapsed_s=time.monotonic() - self._started,
                        failures=failures, phase=phase, label=self.settings.executor, budget_s=self.settings.budget_s)

    def _tally(self, summary: dict, scenarios: int = 1) -> None:
        r = self._result
        r.executions += scenarios
        r.calls += summary["calls"]
        r.virtual_s += float(summary["virtual_s"])
        r.worker_s += float(summary["real_s"])
        r.worker_cpu_s += float(summary["cpu_s"])
        faults = r.faults
        for kind, n in summary["faults"].items():
            faults[kind] = faults.get(kind, 0) + n

    def _count(self, scenario: Any, trace: Any, violations: list) -> None:
        r = self._result
        limit = self.settings.max_failures
        with BALANCED:  # in the executions, its verdicts and its findings' counts, or in none
            self._tally(trace.judged if trace.judged is not None else summary_of(trace.data))
            for verdict in {v.verdict for v in violations}:
                r.scenarios_by_verdict[verdict] = r.scenarios_by_verdict.get(verdict, 0) + 1
            for v in violations:
                if self._saw(v.signature.id) or v.signature.id in self.settings.ignore:
                    continue
                if limit is not None and len(self._by_signature) + len(self._unconfirmed) >= limit:
                    continue  # one batch can show several new bugs: --max-failures N reports N
                if not any(u[2].signature.id == v.signature.id for u in self._unconfirmed):
                    self._unconfirmed.append((scenario, trace, v))

    def _saw(self, signature_id: str, scenarios: int = 1) -> bool:
        """Count ``scenarios`` that showed ``signature_id`` (``seen in`` and ``scenarios_by_verdict`` count the
        same scenarios, those seen before the finding was confirmed too); True if it is a finding."""
        self._seen[signature_id] = self._seen.get(signature_id, 0) + scenarios
        known = self._by_signature.get(signature_id)
        if known is not None:
            known.count = self._seen[signature_id]
        return known is not None

    def _found(self, scenario: Any, trace: Any, violation: Any, shrink_note: str = "") -> ExecutorFinding:
        """The finding of a violation seen in ``scenario``, filed under its signature."""
        finding = ExecutorFinding(signature=violation.signature, verdict=violation.verdict, reason=violation.reason,
                                  scenario=scenario, trace=trace, violation=violation, command=self.settings.command(),
                                  shrink_note=shrink_note, count=max(1, self._seen.get(violation.signature.id, 0)),
                                  **judged_by(self.settings, self.policy))
        self._by_signature[violation.signature.id] = finding
        return finding

    def _settle(self) -> Iterator[Any]:
        """Confirm this batch's new signatures, shrink them, announce them."""
        if not self._unconfirmed:
            return
        todo, self._unconfirmed = self._unconfirmed, []
        yield PhaseStarted(Phase.CONFIRMING, self.settings.executor)
        again = self.run_and_judge([scenario for scenario, _t, _v in todo])
        for (scenario, trace, violation), (trace2, violations2) in zip(todo, again):
            if trace2 is None:  # the budget ended first: reported as seen, never dropped
                finding = self._found(scenario, trace, violation, "not confirmed or shrunk: the budget ran out")
                yield FindingRecorded(finding)
                continue
            again_seen = next((v for v in violations2 if v.signature.id == violation.signature.id), None)
            if violation.verdict == "hang" and again_seen is None and trace.kind == "hung" \
                    and not any(v.verdict == "hang" for v in violations2):
                # the watchdog's real time ran out once, and the scenario finished in time when run
                # again: a slow moment of a loaded machine, not a hang — a note, never a finding
                note = (f"a scenario went past --timeout ({self.settings.timeout:g} s) but finished in time when run "
                        f"again: not reported as a hang ({violation.signature.title})")
                self._result.notes.append(note)
                yield NonFatalError(note)
                continue
            if again_seen is None:  # still a broken promise: seen once, it is reported (not shrunk), never a note
                finding = self._found(scenario, trace, violation,
                                      "not shrunk: it did not happen again when its scenario ran again (the executor "
                                      "keeps state between calls, or is nondeterministic)")
                yield FindingRecorded(finding)
                continue
            finding = self._found(scenario, trace, violation)
            # the shrinker starts from this run instead of running the scenario a third time
            self._confirmed[violation.signature.id] = (trace2, again_seen)
            self._pending.append(finding)
        while self._pending:
            finding = self._pending[0]
            if self.settings.shrink:
                yield PhaseStarted(Phase.SHRINKING, finding.signature.id)
                self._shrink(finding)
            self._pending.pop(0)
            yield FindingRecorded(finding)

    def _shrink(self, finding: ExecutorFinding) -> None:
        left = self._left()
        share = SHRINK_S if self.settings.budget_s is None else max(1.0, 0.15 * self.settings.budget_s)
        budget = min(SHRINK_S, share) if left is None else max(0.0, min(SHRINK_S, share, left - 0.1))
        if budget <= 0:
            finding.shrink_note = "not shrunk: the budget ran out"
            return
        best, stopped = shrink_scenario(finding.scenario, finding.signature.id, self.run_and_judge, self.generator,
                                        budget_s=budget, known=self._confirmed.pop(finding.signature.id, None))
        if best is not None:
            finding.minimized, finding.minimized_trace, finding.minimized_violation = best
        if stopped:
            finding.shrink_stopped = True
            finding.shrink_note = "shrinking stopped by its budget"

    def wrap_up(self, interrupted: bool) -> Iterator[Any]:
        """Announce what was found but not announced yet (never dropped; not shrunk if interrupted)."""
        for finding in self._pending:
            finding.shrink_note = finding.shrink_note or "not shrunk: interrupted"
            yield FindingRecorded(finding)
        self._pending = []
        for scenario, trace, violation in self._unconfirmed:
            if violation.signature.id in self._by_signature:
                continue
            finding = self._found(scenario, trace, violation, "not confirmed or shrunk: interrupted")
            yield FindingRecorded(finding)
        self._unconfirmed = []


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
                 pool: Optional[ExecutorPool] = None):
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
            (cold,) = pool.run([self.scenario])
            warm = pool.run([self.scenario] * (WARM_RUNS if cold.kind == "ran" else 1))
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


__all__ = ["ExecutorCampaign", "ExecutorResult", "ExecutorSettings", "ScenarioReplay", "ScenarioRun",
           "available_flavors", "open_pool"]
