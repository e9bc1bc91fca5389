"""The agent campaign: generate scripts, play them against the loop, judge, confirm, shrink, record.

:class:`AgentCampaign` is a :class:`fuzzer.pipeline.Job`. Its hot loop draws scripts with a
recording :class:`~strategies._internal.source.RandomSource` (in a background thread, while the
workers play the previous batch), sends them in batches to the worker pool
(:mod:`fuzzer.agent.worker`: isolated, watched, judged there), and records the first episode of
each signature. Every new finding is then re-run once (a loop that does not fail again is
nondeterministic: reported, not shrunk; a hang that does not hang again is no hang: a note) and
shrunk to the shortest script showing the same signature by shrinking its choice sequence
(:func:`corpus.minimize.shrink_choices`), before it is announced (``FindingRecorded``).

``--budget`` is a hard wall-time limit, shrinking included (:class:`fuzzer.budget.Budget`, as in
every harness: its clock starts once the workers are up and the loop warmed up). Batches are sized
to about a quarter second of work at the rate seen so far (a hanging loop brings that down to one
episode). Confirming and shrinking share at most 30% of the budget, and one finding's shrink at
most 10 s, so a loop with many bugs is still searched; a finding that share leaves unconfirmed is
announced as found and said to be unconfirmed — counted, never dropped. A batch already running
finishes; one hanging episode costs at most ``--timeout``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from corpus.minimize import NotInteresting, shrink_choices
from fuzzer.agent.findings import AgentFinding
from fuzzer.agent.policy import AgentPolicy
from fuzzer.agent.script import Script, ScriptSetup, generate_script
from fuzzer.agent.worker import EpisodeRunner
from fuzzer.budget import SHRINK_CAP_S, Budget
from fuzzer.decisions import campaign_exit_code
from fuzzer.events import FindingRecorded, JobStarted, NonFatalError, Phase, PhaseStarted, Progress, StopReason
from fuzzer.pipeline import Job
from fuzzer.results import JobResult
from strategies._internal.source import RandomSource, ReplaySource

#: Seconds of work per batch at the measured rate, and the batch size bounds.
BATCH_SECONDS = 0.25
MIN_BATCH, MAX_BATCH, FIRST_BATCH = 1, 128, 16
#: Candidates per worker message while shrinking (a hang costs --timeout per candidate: fewer).
SHRINK_BATCH, SHRINK_BATCH_HANG = 32, 2
#: Seconds between Progress events.
PROGRESS_EVERY = 1.0
#: Episodes that could not run at all, none having run, before the campaign says so and stops.
NOT_RUN_LIMIT = 2 * FIRST_BATCH


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

    def to_json(self) -> dict:
        return {"agent": self.agent, "tools": self.tools_file, "shape": self.shape, "formats": list(self.formats),
                "policy": self.policy.to_json(), "policy_source": self.policy.source, "seed": self.seed,
                "budget_s": self.budget_s, "max_examples": self.max_examples, "timeout": self.timeout,
                "workers": self.workers, "shrink": self.shrink}


@dataclass
class AgentResult(JobResult):
    """What an agent campaign found; every count the writers print comes from here."""

    job: str = "agent"
    shape: str = "openai"
    tools: Optional[str] = None
    seed: int = 0
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
        return _by_verdict(self.findings)

    def unconfirmed(self) -> int:
        """Findings announced without being played again (counted as failures all the same)."""
        return sum(1 for f in self.findings if f.confirmed is None)

    def test_cases(self) -> list:
        run = self.run_case("episodes", "episodes")
        return super().test_cases() + ([run] if run is not None else [])

    def to_report(self) -> dict[str, Any]:
        return {"job": self.job, "agent": self.label, "shape": self.shape, "tools": self.tools, "seed": self.seed,
                "policy": self.policy, "executions": self.executions, "episodes": self.executions,
                "elapsed_s": round(self.elapsed_s, 3), "execs_per_s": round(self.execs_per_s, 1),
                "workers": self.workers, "fuzzing_s": round(self.fuzzing_s, 3),
                "episodes_per_worker_s": round(self.episodes_per_worker_s, 1), "model_requests": self.model_requests,
                "tool_executions": self.tool_executions, "shrink_executions": self.shrink_executions,
                "stop_reason": str(self.stop_reason), "problem": self.problem, "counts": self.counts(),
                "by_verdict": self.by_verdict(), "unconfirmed": self.unconfirmed(), "by_step": self.by_step,
                "failures": [f.to_report() for f in self.findings], "notes": list(self.notes)}


class AgentCampaign(Job):
    """Fuzz one agent loop (see the module docstring)."""

    name = "agent"

    def __init__(self, settings: AgentSettings, *, registry: Any = None):
        super().__init__()
        from strategies._internal.tools import load_registry

        self.settings = settings
        self.registry = registry if registry is not None else load_registry(settings.tools_file)
        self.setup = ScriptSetup(self.registry, shape=settings.shape, formats=tuple(settings.formats),
                                 max_turns=settings.policy.max_turns)
        self._result = AgentResult(label=settings.agent, shape=settings.shape, tools=settings.tools_file,
                                  seed=settings.seed, policy=settings.policy.to_json(), workers=settings.workers)
        self.findings: dict[str, AgentFinding] = {}
        self._pending: list[AgentFinding] = []
        self._started = time.monotonic()
        #: The budget, as in every harness: its clock starts when the workers are up (and the loop
        #: warmed up); confirming and shrinking share at most SHRINK_SHARE of it (fuzzer/budget.py).
        self.budget = Budget(seconds=settings.budget_s, shrink_cap_s=settings.shrink_budget_s)
        self._rate: Optional[float] = None
        self._not_run = 0  # episodes that could not run at all (not executions)

    # -- time ---------------------------------------------------------------------------------
    def _elapsed(self) -> float:
        return time.monotonic() - self._started

    def _remaining(self) -> Optional[float]:
        return self.budget.remaining()

    def _deadline(self) -> Optional[float]:
        """When ``--budget`` ends (a hard limit: episodes still running then are stopped)."""
        return self.budget.deadline

    def _out_of_budget(self) -> Optional[StopReason]:
        s = self.settings
        if s.max_failures is not None and len(self.findings) >= s.max_failures:
            return StopReason.MAX_FAILURES
        if s.max_examples is not None and self._result.executions + self._not_run >= s.max_examples:
            return StopReason.MAX_EXAMPLES  # (an episode that could not run counts here, never as one tested)
        if self._not_run >= NOT_RUN_LIMIT and not self._result.executions:
            return StopReason.NOTHING_TESTED  # the loop cannot run at all: no use trying for the whole budget
        remaining = self._remaining()
        if remaining is not None and remaining <= 0:
            return StopReason.BUDGET
        return None

    def _batch_size(self) -> int:
        size = FIRST_BATCH if self._rate is None else int(self._rate * BATCH_SECONDS)
        remaining = self._remaining()
        if remaining is not None and self._rate is not None:  # the last batch ends with the budget
            size = min(size, int(self._rate * remaining))
        size = max(MIN_BATCH, min(MAX_BATCH, size))
        if self.settings.max_examples is not None:
            size = min(size, self.settings.max_examples - self._result.executions)
        return max(1, size)

    # -- the job ------------------------------------------------------------------------------
    def run(self) -> Iterator[Any]:
        self._started = time.monotonic()
        s = self.settings
        runner = EpisodeRunner(agent=s.agent, registry=self.registry, policy=s.policy, tools_file=s.tools_file,
                               cwd=s.cwd, timeout=s.timeout, workers=s.workers, memory_limit_mb=s.memory_limit_mb,
                               shape=s.shape, formats=tuple(s.formats))
        feed = None
        try:
            runner.start()
            self.budget.start()
            yield JobStarted(job=self.name, label=s.agent, settings=s.to_json(), budget_s=s.budget_s)
            yield PhaseStarted(Phase.FUZZING, label=s.agent)
            feed = ScriptFeed(self.setup, s.seed)
            last_progress = 0.0
            while True:
                reason = self._out_of_budget()
                if reason is not None:
                    self.stop_reason = reason
                    break
                batch = feed.take(self._batch_size())
                began = time.monotonic()
                judged = runner.run([script for script, _ in batch], deadline=self._deadline())
                spent = max(time.monotonic() - began, 1e-6)
                self._result.fuzzing_s += spent
                played = sum(result is not None for result in judged)
                self._rate = played / spent if self._rate is None else 0.5 * self._rate + 0.5 * played / spent
                for (script, choices), result in zip(batch, judged):
                    if result is not None and result[1] is None:  # it could not run: not an episode
                        self._not_run += 1
                    elif result is not None:  # else the budget ended while it ran
                        self._record(script, choices, *result)
                yield from self._notes_out(runner)
                yield from self._settle(runner)
                if self._elapsed() - last_progress >= PROGRESS_EVERY:
                    last_progress = self._elapsed()
                    yield self._progress(Phase.FUZZING)
            yield self._progress(Phase.FUZZING)
        finally:
            if feed is not None:
                feed.close()
            runner.close()
            self._result.elapsed_s = self._elapsed()

    def wrap_up(self, interrupted: bool) -> Iterator[Any]:
        """Announce every finding not announced yet (interrupted while shrinking): never lose one."""
        for finding in self.findings.values():
            if not finding.announced:
                finding.shrink_note = finding.shrink_note or ("not shrunk: interrupted" if finding.confirmed
                                                              else "not confirmed or shrunk: interrupted")
                finding.announced = True
                yield FindingRecorded(finding)
        self._pending.clear()

    def result(self) -> AgentResult:
        r = self._result
        r.findings = list(self.findings.values())
        r.stop_reason = self.stop_reason
        if not r.elapsed_s:
            r.elapsed_s = self._elapsed()
        if r.executions == 0 and r.problem is None and not self.interrupted:
            r.problem = (f"no episode could run ({self._not_run} tried; see the notes)" if self._not_run
                         else "no episode ran (the budget ended first)")
        return r

    def exit_code(self, result: AgentResult) -> int:
        return int(campaign_exit_code(findings=len(result.findings), nothing_tested=result.problem,
                                      interrupted=self.interrupted))

    # -- recording ------------------------------------------------------------------------------
    def _record(self, script: Script, choices: tuple, trace: Optional[dict], violations: list, outcome: Any) -> None:
        r = self._result
        r.executions += 1
        if trace is not None:
            r.model_requests += len(trace["requests"])
            r.tool_executions += len(trace["executions"])
        for kind in {t.step for t in script.turns}:
            stats = r.by_step.setdefault(kind, {"episodes": 0, "failures": 0})
            stats["episodes"] += 1
            stats["failures"] += bool(violations)
        for v in violations:
            known = self.findings.get(v.signature.id)
            if known is not None:
                known.count += 1
                continue
            if v.signature.id in self.settings.ignore:
                continue
            if self.settings.max_failures is not None and len(self.findings) >= self.settings.max_failures:
                continue  # one batch can show several new bugs: --max-failures N reports N
            finding = AgentFinding(signature=v.signature, verdict=v.verdict, reason=v.reason, script=script,
                                   choices=choices, trace=trace, agent=self.settings.agent,
                                   policy=self.settings.policy, tools=self.settings.tools_file,
                                   detail=outcome.detail if trace is None else None)
            self.findings[v.signature.id] = finding
            self._pending.append(finding)

    def _notes_out(self, runner: EpisodeRunner) -> Iterator[Any]:
        for note in runner.notes:
            if note not in self._result.notes:
                self._result.notes.append(note)
                yield NonFatalError(note)
        runner.notes.clear()

    def _progress(self, phase: Phase) -> Progress:
        return Progress(executions=self._result.executions, elapsed_s=self._elapsed(),
                        failures=_by_verdict(self.findings.values()), phase=phase, label=self.settings.agent,
                        budget_s=self.settings.budget_s)

    # -- confirm and shrink --------------------------------------------------------------------
    def _settle(self, runner: EpisodeRunner) -> Iterator[Any]:
        """Confirm, shrink and announce the findings of the last batch, within the budget's share
        for confirming and shrinking (as in every harness). Every new finding's script is played
        again first, all in one batch (cheap, and what tells a bug from a fluke), then the
        confirmed ones are shrunk while the share lasts. Once it is spent, a finding is announced
        as found — not confirmed, not shrunk, and said so — never dropped."""
        pending, self._pending = self._pending, []
        if pending and not self.budget.time_up() and self.budget.shrink_window() > 0:
            started = time.monotonic()
            for finding, confirmed in zip(pending, self._confirmed(runner, pending)):
                finding.confirmed = confirmed
            self.budget.spent_shrinking(time.monotonic() - started)
        for finding in pending:
            if finding.confirmed is None:
                finding.shrink_note = ("not confirmed or shrunk: the budget ran out first" if self.budget.time_up()
                                       else "not confirmed or shrunk: the budget's share for confirming and "
                                            "shrinking was spent first")
            elif not finding.confirmed and finding.verdict == "hang":
                yield from self._not_a_hang(finding)
                continue
            elif not finding.confirmed:
                finding.reproducible = False
                finding.shrink_note = "not shrunk: it did not happen again on a re-run"
            elif not self.settings.shrink:
                pass
            elif self.budget.time_up() or self.budget.shrink_window() <= 0:
                finding.shrink_note = "not shrunk: the budget's share for shrinking was spent first"
            else:
                yield PhaseStarted(Phase.SHRINKING, label=finding.signature.id)
                started = time.monotonic()
                self._shrink(runner, finding)
                self.budget.spent_shrinking(time.monotonic() - started)
                yield PhaseStarted(Phase.FUZZING, label=self.settings.agent)
            finding.announced = True
            yield FindingRecorded(finding)

    def _confirmed(self, runner: EpisodeRunner, findings: list) -> list:
        """For each finding, whether its script fails the same way again (None: the budget ended
        before it was played). A hang is confirmed by hanging again (where it is stuck may differ
        between two runs); the scripts are played in one batch, hangs last (each costs --timeout)."""
        order = sorted(range(len(findings)), key=lambda i: findings[i].verdict == "hang")
        results = runner.run([findings[i].script for i in order], deadline=self._deadline())
        answers: list = [None] * len(findings)
        for i, result in zip(order, results):
            if result is None:
                continue
            self._result.shrink_executions += 1
            if findings[i].verdict == "hang":
                answers[i] = any(v.verdict == "hang" for v in result[1] or ())
            else:
                answers[i] = any(v.signature.id == findings[i].signature.id for v in result[1] or ())
        return answers

    def _not_a_hang(self, finding: AgentFinding) -> Iterator[Any]:
        """A hang that did not hang again is no hang (a cold start, a loaded machine): not a
        finding, but a note that says so; the episodes it was seen in stay counted as played."""
        self.findings.pop(finding.signature.id, None)
        note = (f"{finding.count} episode(s) went past --timeout ({self.settings.timeout:g} s) but the script "
                f"finished in time when played again: not reported as a hang ({finding.signature.title})")
        self._result.notes.append(note)
        yield NonFatalError(note)

    def _shrink(self, runner: EpisodeRunner, finding: AgentFinding) -> None:
        budget = self.budget.shrink_window()
        wanted = finding.signature.id
        found: dict[tuple, tuple] = {}

        began = time.monotonic()
        deadline = began + budget

        def test(candidates: list) -> list:
            scripts = [generate_script(ReplaySource(c), self.setup) for c in candidates]
            judged = runner.run(scripts, deadline=deadline)
            keys = []
            for choices, script, result in zip(candidates, scripts, judged):
                if result is None:  # the shrink's time ran out while it played
                    keys.append(None)
                    continue
                self._result.shrink_executions += 1
                trace, violations, _outcome = result
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
            if time.monotonic() >= deadline:  # its first re-run was cut off, not passed
                finding.shrink_note = "not shrunk: the budget ran out"
                return
            finding.reproducible = False
            finding.shrink_note = "not shrunk: it did not happen again on a re-run"
            return
        script, trace, hit = found[tuple(best)]
        finding.minimized, finding.minimized_choices = script, tuple(best)
        finding.minimized_trace, finding.minimized_reason = trace, hit.reason
        if time.monotonic() >= deadline:
            finding.shrink_stopped = True
            finding.shrink_note = "shrinking stopped by its budget"


class _ScriptStream:
    """Scripts from one seeded source, in order (what the prefetch thread draws from)."""

    def __init__(self, setup: ScriptSetup, seed: int):
        self._setup, self._source = setup, RandomSource(seed)

    def batch(self, size: int) -> list:
        out = []
        for _ in range(size):
            self._source.reset()
            out.append((generate_script(self._source, self._setup), tuple(self._source.choices)))
        return out


class ScriptFeed:
    """Scripts drawn in a background thread while the workers play the current batch — a
    :class:`fuzzer.schedule.Prefetcher` over small fixed chunks, handed out in batches of
    whatever size the measured rate asks for. Only that thread touches the source, so the scripts
    (and a seeded campaign's findings) are the same as without it."""

    CHUNK = 8

    def __init__(self, setup: ScriptSetup, seed: int):
        from fuzzer.schedule import Prefetcher

        self._prefetcher = Prefetcher(_ScriptStream(setup, seed), self.CHUNK, chunk=self.CHUNK,
                                      depth=2 * MAX_BATCH // self.CHUNK)
        self._ready: list = []

    def take(self, n: int) -> list:
        while len(self._ready) < n:
            self._ready.extend(self._prefetcher.get())
        out, self._ready = self._ready[:n], self._ready[n:]
        return out

    def close(self) -> None:
        self._prefetcher.close()


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


def _by_verdict(findings: Any) -> dict:
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.verdict] = counts.get(f.verdict, 0) + 1
    return counts

__all__ = ["AgentCampaign", "AgentResult", "AgentSettings"]
