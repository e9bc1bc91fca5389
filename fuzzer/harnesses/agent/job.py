"""The agent campaign: scripts drawn, played against the loop and judged in the workers; the
engine's one campaign loop (:class:`fuzzer.engine.campaign.CampaignJob`) over an :class:`AgentSubject`.

What is the agent's own: the orders (:class:`~fuzzer.harnesses.agent.orders.ScriptOrder`: a seed
and a count, the scripts drawn, played and judged in the worker), filing their results, showing a
finding again (its script in a fresh worker; a hang too: a loop's first episode, importing its
framework and building its tool schemas, can pass the timeout once on a loaded machine, and what
does not hang again is not reported as a hang), and shrinking it to the shortest script that
shows the same signature: whole body steps deleted first, then its choice sequence shrunk
(:func:`corpus.minimize.shrink_choices`). Budget, confirmation, the shrink window, announcing
and Ctrl-C are the engine's, the same as every harness's.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from corpus.minimize import NotInteresting, shrink_choices
from fuzzer.engine.budget import SHRINK_CAP_S, shrink_stopped_note
from fuzzer.engine.campaign import CampaignJob, CampaignSettings
from fuzzer.engine.campaign_result import CampaignResult
from fuzzer.engine.events import NonFatalError
from fuzzer.engine.orders import order_seed
from fuzzer.engine.subject import Failure, Subject
from fuzzer.harnesses.agent.findings import AgentFinding
from fuzzer.harnesses.agent.orders import ScriptOrder, ScriptResult
from fuzzer.harnesses.agent.policy import AgentPolicy
from fuzzer.harnesses.agent.generation import ScriptSetup, generate_script
from fuzzer.harnesses.agent.script import Script
from fuzzer.harnesses.agent.worker import EpisodeRunner, judged, violation_of
from strategies._internal.source import RandomSource, ReplaySource

#: Scripts per order: an episode takes about a millisecond for a plain loop, tens for one built on
#: a framework; an order of 16 keeps a worker busy a few milliseconds to a second.
ORDER_SCRIPTS = 16
#: Candidates per worker message while shrinking (a hang costs --timeout per candidate: fewer).
SHRINK_BATCH, SHRINK_BATCH_HANG = 32, 2
#: Episodes that could not run at all, none having run, before the campaign says so and stops.
NOT_RUN_LIMIT = 32
#: The class every episode is counted under (the report's by_class).
EPISODES = "episodes"


@dataclass
class AgentSettings:
    agent: str
    tools_file: Optional[str] = None
    shape: str = "openai"
    formats: tuple = ("json",)
    policy: AgentPolicy = field(default_factory=AgentPolicy)
    seed: int = 0
    budget_s: Optional[float] = 60.0
    max_examples: Optional[int] = None
    timeout: float = 2.0
    workers: int = 1
    memory_limit_mb: Optional[int] = 4096
    cwd: Optional[str] = None
    shrink: bool = True
    shrink_budget_s: float = SHRINK_CAP_S  # at most, per finding (and SHRINK_SHARE of the budget in all)
    max_failures: Optional[int] = None  # stop after this many distinct failures (-x: 1)
    ignore: frozenset = frozenset()  # signatures never reported
    backend: str = "local"  # where the orders run (fuzzer.backends): local workers, or Ray actors
    ray_address: Optional[str] = None  # the cluster a ray back end joins (None: a Ray instance of its own)

    def to_json(self) -> dict:
        return {"agent": self.agent, "tools": self.tools_file, "shape": self.shape, "formats": list(self.formats),
                "policy": self.policy.to_json(), "policy_source": self.policy.source, "seed": self.seed,
                "budget_s": self.budget_s, "max_examples": self.max_examples, "timeout": self.timeout,
                "workers": self.workers, "shrink": self.shrink}

    def campaign(self) -> CampaignSettings:
        return CampaignSettings(seed=self.seed, budget_s=self.budget_s, max_examples=self.max_examples,
                                shrink=self.shrink, shrink_cap_s=self.shrink_budget_s,
                                max_failures=self.max_failures, ignore=self.ignore)


@dataclass
class AgentResult(CampaignResult):
    """What an agent campaign found; every count the writers print comes from here."""

    job: str = "agent"
    units_word: str = "episodes"
    shape: str = "openai"
    tools: Optional[str] = None
    policy: dict = field(default_factory=dict)
    workers: int = 1
    model_requests: int = 0
    tool_executions: int = 0
    shrink_executions: int = 0
    fuzzing_s: float = 0.0  # wall time spent playing fresh episodes (not confirming or shrinking)
    by_step: dict = field(default_factory=dict)  # step kind -> {"episodes", "failures"}

    @property
    def episodes_per_worker_s(self) -> float:
        """Fresh episodes per second per worker while fuzzing (confirming and shrinking excluded)."""
        return self.executions / self.fuzzing_s / max(1, self.workers) if self.fuzzing_s > 0 else 0.0

    def by_verdict(self) -> dict:
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.verdict] = counts.get(f.verdict, 0) + 1
        return counts

    def summary_lines(self) -> list[str]:
        """The console's lines: each finding's listing, then what was played and found."""
        lines: list[str] = []
        for finding in self.findings:
            lines += [finding.text(), ""]
        lines.append(f"{self.executions:,} episodes in {self.elapsed_s:.1f} s "
                     f"({self.episodes_per_worker_s:,.0f}/s per worker while fuzzing), "
                     f"{self.model_requests:,} model requests, {self.tool_executions:,} tool executions, "
                     f"{self.shrink_executions:,} more episodes played confirming and shrinking; "
                     f"stopped: {self.stop_reason}")
        backend = getattr(self, "backend", None) or {}
        if backend.get("name", "local") != "local":
            from fuzzer.backends import backend_line

            lines.append(backend_line(backend))
        counts = self.by_verdict()
        if counts:
            shown = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
            unconfirmed = self.unconfirmed
            why = "the run was interrupted" if str(self.stop_reason) == "interrupted" else "the budget ended"
            lines.append(f"{len(self.findings)} distinct failure(s): {shown}"
                         + (f" ({unconfirmed} not confirmed: {why} before their scripts were played again)"
                            if unconfirmed else ""))
        elif self.problem:
            lines.append(f"nothing tested: {self.problem}")
        elif str(self.stop_reason) == "interrupted":
            lines.append(f"no failure in the {self.executions:,} episodes played before the interrupt")
        else:
            lines.append("no failure: the loop kept every promise of its policy")
        return lines

    def to_report(self) -> dict[str, Any]:
        return {**self.base_report(), "job": self.job, "agent": self.label, "shape": self.shape, "tools": self.tools,
                "policy": self.policy, "episodes": self.executions, "workers": self.workers,
                "fuzzing_s": round(self.fuzzing_s, 3), "episodes_per_worker_s": round(self.episodes_per_worker_s, 1),
                "model_requests": self.model_requests, "tool_executions": self.tool_executions,
                "shrink_executions": self.shrink_executions, "by_verdict": self.by_verdict(), "by_step": self.by_step}


class AgentSubject(Subject):
    """The agent harness's half of a campaign (see the module docstring)."""

    kind = "agent"
    order_size = ORDER_SCRIPTS

    def __init__(self, settings: AgentSettings, *, registry: Any = None):
        from strategies._internal.tools import load_registry

        self.settings = settings
        self.label = settings.agent
        self.registry = registry if registry is not None else load_registry(settings.tools_file)
        self.setup = ScriptSetup(self.registry, shape=settings.shape, formats=tuple(settings.formats),
                                 max_turns=settings.policy.max_turns)
        self.runner = EpisodeRunner(agent=settings.agent, registry=self.registry, policy=settings.policy,
                                    tools_file=settings.tools_file, cwd=settings.cwd, timeout=settings.timeout,
                                    workers=settings.workers, memory_limit_mb=settings.memory_limit_mb,
                                    shape=settings.shape, formats=tuple(settings.formats),
                                    backend=settings.backend, ray_address=settings.ray_address)
        self.pool = self.runner.pool
        self.result = AgentResult(label=settings.agent, shape=settings.shape, tools=settings.tools_file,
                                  seed=settings.seed, policy=settings.policy.to_json(), workers=settings.workers)
        self.not_run = 0  # episodes that could not run at all (not executions)
        self._round_started = 0.0

    def settings_json(self) -> dict:
        return self.settings.to_json()

    def size(self, script: Script) -> tuple:
        return script.size()

    # -- the campaign's shape ----------------------------------------------------------------------
    def started(self, job: Any) -> Iterator[Any]:
        self.result.workers = self.pool.workers  # (--workers auto on a cluster: the actors it offered)
        self.runner._probe()  # a bad --agent, or a factory that fails, is a usage error (TargetError)
        for note in self.runner.notes:  # a warm-up that did not warm
            self.result.notes.append(note)
            yield NonFatalError(note)
        self.runner.notes.clear()
        self._round_started = time.monotonic()

    def plan(self, unit: str, count: int, number: int, room: Optional[int] = None) -> ScriptOrder:
        return ScriptOrder(order_seed(self.settings.seed, number), count, number)

    def file(self, order: ScriptOrder, result: ScriptResult, job: Any) -> int:
        r = self.result
        self.not_run += result.not_run
        for note in result.notes:
            note = f"an episode could not run: {note}"
            if note not in r.notes:
                r.notes.append(note)
        job.tally.add(EPISODES, result.episodes, result.failing)
        r.model_requests += result.model_requests
        r.tool_executions += result.tool_executions
        for kind, (episodes, failing) in result.by_step.items():
            stats = r.by_step.setdefault(kind, {"episodes": 0, "failures": 0})
            stats["episodes"] += episodes
            stats["failures"] += failing
        for index, choices, trace, v in result.failures:
            script = generate_script(ReplaySource(choices), self.setup)
            violation = violation_of(v)
            job.offer(Failure(script, trace, violation.verdict, violation.signature, violation.reason,
                              extra=(choices, violation, None)))
        for signature_id, n in result.seen.items():
            found = job.book.find(signature_id)
            if found is not None:
                job.book.count(found, n)
        return result.episodes

    def file_lost(self, order: ScriptOrder, lost: Any, job: Any) -> int:
        """A script its worker hung or died on: drawn again here from its order's seed, judged by
        how its worker was lost."""
        source = RandomSource(order.seed)
        for _ in range(lost.index + 1):
            source.reset()
            script = generate_script(source, self.setup)
        choices = tuple(source.choices)
        _trace, violations, outcome = judged(script, lost.outcome, self.settings.policy, self.registry,
                                             self.settings.timeout)
        job.tally.add(EPISODES, 1, int(bool(violations)))
        for v in violations or ():
            job.offer(Failure(script, None, v.verdict, v.signature, v.reason,
                              extra=(choices, v, getattr(outcome, "detail", None))))
        return 1

    def round_done(self, unit: str, orders: list, results: list, job: Any) -> None:
        now = time.monotonic()
        self.result.fuzzing_s += now - self._round_started
        self._round_started = now

    def after_round(self, unit: str, job: Any, ran: int) -> Optional[str]:
        if self.not_run >= NOT_RUN_LIMIT and not job.tally.executions:
            # the loop cannot run at all: no use trying for the whole budget
            return f"no episode could run ({self.not_run} tried; see the notes)"
        return None

    def started_settling(self) -> None:
        self._round_started = time.monotonic()

    # -- findings ------------------------------------------------------------------------------
    def new_finding(self, failure: Failure, job: Any) -> AgentFinding:
        choices, v, detail = failure.extra
        s = self.settings
        return AgentFinding(signature=v.signature, verdict=v.verdict, reason=v.reason, script=failure.case,
                            choices=choices, trace=failure.outcome, agent=s.agent, policy=s.policy,
                            tools=_absolute(s.tools_file, s.cwd), detail=detail)

    def confirmable(self, finding: Any) -> bool:
        return True  # a hang too: what did not hang again is not reported as a hang

    def same(self, finding: Any, script: Script) -> Callable[[Any], bool]:
        wanted, hang = finding.signature.id, finding.verdict == "hang"

        def same(outcome: Any) -> bool:
            self.result.shrink_executions += 1
            _trace, violations, _outcome = judged(script, outcome, self.settings.policy, self.registry,
                                                  self.settings.timeout)
            # a hang is confirmed by hanging again (where it is stuck may differ between two runs)
            return any(v.signature.id == wanted or (hang and v.verdict == "hang") for v in violations or ())
        return same

    def confirmed(self, finding: Any, status: str, earlier: tuple, job: Any) -> Optional[str]:
        return self.hang_that_did_not_hang(finding, status, self.settings.timeout, verb="played") or \
            super().confirmed(finding, status, earlier, job)

    def shrink(self, finding: Any, job: Any, window: float) -> bool:
        budget = min(self.settings.shrink_budget_s, window)
        wanted = finding.signature.id
        found: dict[tuple, tuple] = {}
        began = time.monotonic()
        deadline = began + budget

        def test(candidates: list) -> list:
            scripts = [generate_script(ReplaySource(c), self.setup) for c in candidates]
            outcomes = job.settle_run(scripts, deadline=min(deadline, job.budget.deadline or deadline))
            keys = []
            for choices, script, outcome in zip(candidates, scripts, outcomes):
                if outcome is None:  # the shrink's time ran out while it played
                    keys.append(None)
                    continue
                self.result.shrink_executions += 1
                trace, violations, _outcome = judged(script, outcome, self.settings.policy, self.registry,
                                                     self.settings.timeout)
                hit = next((v for v in violations or () if v.signature.id == wanted), None)
                if hit is None:
                    keys.append(None)
                    continue
                found[tuple(choices)] = (script, trace, hit)
                keys.append(script.size())
            return keys

        batch = SHRINK_BATCH_HANG if finding.verdict == "hang" else SHRINK_BATCH
        start = _delete_steps(finding.script, tuple(finding.choices), test, found, deadline, batch)
        try:
            best = shrink_choices(start, test, budget_s=max(0.0, began + budget - time.monotonic()),
                                  batch_size=batch)
        except NotInteresting:
            finding.shrink_note = "not shrunk: the budget ran out" if time.monotonic() >= deadline else \
                "not shrunk: it did not happen again on a re-run"
            return False
        script, trace, hit = found[tuple(best)]
        finding.minimized, finding.minimized_choices = script, tuple(best)
        finding.minimized_trace, finding.minimized_reason = trace, hit.reason
        if time.monotonic() >= deadline:
            finding.shrink_stopped = True
            finding.shrink_note = shrink_stopped_note(budget)
        return True


class AgentCampaign(CampaignJob):
    """``fuzz agent``: the engine's campaign over an :class:`AgentSubject`."""

    def __init__(self, settings: AgentSettings, *, registry: Any = None):
        subject = AgentSubject(settings, registry=registry)
        super().__init__(subject, settings.campaign())
        self.name = "agent"


def _absolute(path: Optional[str], cwd: Optional[str]) -> Optional[str]:
    """A tools file named relative to the run's directory, by its absolute path: a finding's
    reproduce command and corpus entry must find it from anywhere (``M:A`` models pass as given)."""
    cwd = cwd or os.getcwd()
    if path and os.path.exists(os.path.join(cwd, path)):
        return os.path.abspath(os.path.join(cwd, path))
    return path


def _delete_steps(script: Script, choices: tuple, test: Any, found: dict, deadline: float, batch: int) -> tuple:
    """Shrinking's first pass, which knows where steps are: delete whole body steps (each step's
    choices, and one from the step count) while the signature holds; the generic choice shrinker
    then works on what is left. Returns the choices of the smallest script found."""
    best, best_key = choices, script.size()
    while script.spans and time.monotonic() < deadline:
        candidates = [script.without_step(best, k) for k in range(len(script.spans))][:batch]
        keys = test(candidates)
        better = [(k, c) for c, k in zip(candidates, keys) if k is not None and k < best_key]
        if not better:
            break
        best_key, best = min(better)
        script = found[best][0]
    return best



__all__ = ["AgentCampaign", "AgentResult", "AgentSettings", "AgentSubject"]
