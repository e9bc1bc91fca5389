"""``fuzz gate`` as a job: replay the corpus, run a short campaign per harness, decide.

The decision is :func:`fuzzer.engine.decisions.decide_gate` over what the replay and the campaigns found;
every count the console, JSON and JUnit show comes from that one :class:`GateDecision`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping, Optional

from fuzzer.engine.decisions import GateDecision, decide_gate, gate_exit_code
from fuzzer.engine.events import JobStarted, StopReason
from fuzzer.engine.harness import ReplayContext, load_harnesses
from fuzzer.engine.pipeline import Job
from fuzzer.engine.jobs.replay import ReplayJob
from fuzzer.engine.results import FAILED, PASSED, SKIPPED, JobResult, TestCase, finding_detail, shown_input
from fuzzer.engine.text import preview


@dataclass
class GateResult(JobResult):
    job: str = "gate"
    corpus: str = ""
    decision: GateDecision = field(default_factory=GateDecision)
    replay: Any = None  # ReplayResult
    campaigns: list = field(default_factory=list)  # results of the short campaigns

    def test_cases(self) -> list[TestCase]:
        d = self.decision
        cases: list[TestCase] = []
        for r in d.regressions + d.new:
            if hasattr(r, "entry"):
                kind = "regression" if r in d.regressions else "new"
                why = ("a fixed entry fails again" if kind == "regression"
                       else f"the entry now fails as {r.signature}, which the corpus does not hold")
                cases.append(TestCase("toolfuzz.gate.corpus", f"{r.entry.signature} ({r.entry.status})", FAILED,
                                      f"{kind}: {why}: {r.entry.title}", r.entry.text))
            else:
                kind = "regression" if r in d.regressions else "new"
                cases.append(TestCase("toolfuzz.gate.campaign", r.signature.id, FAILED,
                                      f"{kind}: {r.signature.title}", finding_detail(r)))
        for r in d.known:
            cases.append(TestCase("toolfuzz.gate.corpus", f"{r.entry.signature} ({r.entry.status})", SKIPPED,
                                  f"known open failure {r.signature}: {r.entry.title}"))
        for r in d.moved:
            if hasattr(r, "entry"):
                cases.append(TestCase("toolfuzz.gate.corpus", f"{r.entry.signature} ({r.entry.status})", SKIPPED,
                                      f"known open failure, moved: it fails the same way as {r.signature}, "
                                      f"from another place in the target: {r.entry.title}"))
        for r in d.ignored:
            name = r.entry.signature if hasattr(r, "entry") else r.signature.id
            cases.append(TestCase("toolfuzz.gate.ignored", name, SKIPPED, "on the ignore list"))
        for r in d.unjudged:
            cases.append(TestCase("toolfuzz.gate.corpus", f"{r.entry.signature} ({r.entry.status})", SKIPPED,
                                  f"not judged: {r.unjudged}"))
        for r in d.passed:
            cases.append(TestCase("toolfuzz.gate.corpus", f"{r.entry.signature} ({r.entry.status})", PASSED))
        if d.nothing_tested:
            cases.append(TestCase("toolfuzz.gate.campaign", "campaign", FAILED, f"nothing tested: {d.nothing_tested}"))
        else:
            # a campaign that ran and found nothing the corpus lacks is one passing test, not an empty
            # suite (CI readers show tests="0" as "no tests were run")
            blocking = {id(x) for x in d.regressions + d.new if not hasattr(x, "entry")}
            for c in self.campaigns:
                if c.executions and not any(id(f) in blocking for f in c.findings):
                    if self.interrupted or c.stop_reason == StopReason.INTERRUPTED:
                        # cut short: no pass a CI reader could take for a finished clean run (as a campaign's)
                        cases.append(TestCase("toolfuzz.gate.campaign", c.label or "campaign", SKIPPED,
                                              f"interrupted after {c.executions:,} executions, nothing new so far"))
                    else:
                        cases.append(TestCase("toolfuzz.gate.campaign", c.label or "campaign", PASSED,
                                              f"{c.executions:,} executions, nothing new"))
            if self.interrupted and not any(c.classname == "toolfuzz.gate.campaign" for c in cases):
                # stopped while replaying, or before its campaign ran anything: an empty suite (tests="0"
                # failures="0") reads as a clean run in CI, so the cut-short campaign is one skipped case
                cases.append(TestCase("toolfuzz.gate.campaign", "campaign", SKIPPED,
                                      "interrupted before the campaign ran: nothing was fuzzed"))
        for problem in d.unreadable:
            cases.append(TestCase("toolfuzz.gate.corpus", problem.split(": ", 1)[0], FAILED, f"unreadable: {problem}"))
        return cases

    def summary_lines(self) -> list[str]:
        result = self
        d = result.decision
        regressions = len(d.corpus_regressions)
        moved_entries = [x for x in d.moved if hasattr(x, "entry")]
        lines = [f"replayed {len(result.replay.replayed)} corpus entries: {len(d.passed)} pass, {len(d.known)} known "
                 f"open failures, {regressions} regression{'' if regressions == 1 else 's'}, "
                 f"{len(d.corpus_new)} now failing differently, "
                 + (f"{len(moved_entries)} moved, " if moved_entries else "")
                 + f"{len(d.unjudged)} unjudged, {len(d.corpus_ignored)} ignored"]
        moved_findings = len(d.moved) - len(moved_entries)
        lines.append(f"campaign: {result.executions:,} executions, {len(result.findings)} signatures, "
                     f"{len(d.campaign_new)} new" + (f", {moved_findings} moved" if moved_findings else ""))
        for x in moved_entries:
            if x.rekeyed:
                lines.append(f"MOVED {x.entry.signature} -> {x.signature} (corpus entry {os.path.basename(x.path)} fails "
                             f"exactly as it was filed; only the signature's key changed: a known bug, not new)")
                continue
            lines.append(f"MOVED {x.entry.signature} -> {x.signature} (corpus entry {os.path.basename(x.path)} fails the "
                         f"same way from another place in the target: a known bug, not new)")
        # Campaign findings are any harness's (parser, executor, agent): read through their report.
        for x in d.regressions:
            if hasattr(x, "entry"):
                lines.append(f"REGRESSION {x.entry.signature} ({x.entry.title}): {preview(x.entry.text)}")
            else:
                # the input alone may pass (a stream's split is part of it): shown as a NEW finding is
                report = x.to_report()
                lines.append(f"REGRESSION {x.signature.id} ({report['title']})")
                lines += finding_lines(x, report)
        for x in d.new:
            if hasattr(x, "entry"):
                lines.append(f"NEW {x.signature} (corpus entry {os.path.basename(x.path)} now fails differently): "
                             f"{preview(x.entry.text)}")
            else:
                report = x.to_report()
                lines.append(f"NEW {x.signature.id} ({report['title']})")
                lines += finding_lines(x, report)
        for x in d.corpus_ignored:
            if x.status == "regression":  # the user's choice not to block, never a silent one
                lines.append(f"IGNORED REGRESSION {x.entry.signature} ({x.entry.title}): an entry marked fixed fails "
                             f"again; --ignore keeps it from blocking")
        for x in d.unjudged:
            lines.append(f"UNJUDGED {x.entry.signature}: {x.unjudged}")
        if d.nothing_tested:
            lines.append(f"NOTHING TESTED: {d.nothing_tested}")
        for problem in d.unreadable:
            lines.append(f"UNREADABLE corpus file {problem} (its regression test would be lost; fix or remove it)")
        counts = result.counts()
        lines.append(f"{sum(counts.values())} test cases: {counts[PASSED]} passed, {counts[FAILED]} failed, "
                     f"{counts[SKIPPED]} skipped")
        lines.append("gate: BLOCKED" if d.blocked else
                     "gate: interrupted (not passed: stopped before it finished)" if self.interrupted else "gate: passed")
        return lines

    @property
    def interrupted(self) -> bool:
        """Stopped with Ctrl-C (exit 130 when nothing blocks): its last line and its campaign's test
        case must not read as a gate that ran to its end and passed."""
        return self.stop_reason == StopReason.INTERRUPTED

    def to_report(self) -> dict[str, Any]:
        """The campaign report's keys (failures, executions, seed...) plus ``gate`` and the rest."""
        d = self.decision
        base = self.campaigns[0].to_report() if len(self.campaigns) == 1 else {
            "failures": [f.to_report() for f in self.findings]}
        ids = lambda xs: [x.entry.signature if hasattr(x, "entry") else x.signature.id for x in xs]  # noqa: E731
        return {
            **base,
            "gate": {"blocked": d.blocked, "new": ids(d.new), "regressions": ids(d.regressions)},
            "corpus": self.corpus, "target": self.label, "blocked": d.blocked, "counts": self.counts(),
            "regressions": [_ident(x) for x in d.regressions], "new": [_ident(x) for x in d.new],
            "known": [_ident(x) for x in d.known], "moved": [_ident(x) for x in d.moved], "passed": len(d.passed),
            "unjudged": [{"signature": r.entry.signature, "why": r.unjudged} for r in d.unjudged],
            "ignored": [_ident(x) for x in d.ignored], "nothing_tested": d.nothing_tested,
            "unreadable": list(d.unreadable),
            "executions": self.executions, "elapsed_s": round(self.elapsed_s, 3),
            "stop_reason": self.stop_reason.value,
            "replay": self.replay.to_report() if self.replay is not None else None,
            "campaigns": [c.to_report() for c in self.campaigns],
        }


def finding_lines(finding: Any, report: dict) -> list[str]:
    """The lines under a campaign finding's NEW or REGRESSION line: the input shown, the split it
    was streamed under (a stream finding's input alone may pass: the cuts are part of what
    fails), and the command that reproduces it — as the campaign prints them."""
    from fuzzer.engine.text import compact

    lines = [f"    {'minimized:' if finding.is_minimized else 'input:    '} {preview(shown_input(report))}"]
    if report.get("cuts"):
        lines.append(f"    cuts:      {report['cuts']}" + (f" deltas: {compact(report['deltas'])}"
                                                           if report.get("deltas") and len(report["deltas"]) > 1 else ""))
    if report.get("reproduce"):
        lines.append(f"    reproduce: {report['reproduce']}")
    return lines


def _ident(x: Any) -> dict:
    if hasattr(x, "entry"):
        return {"signature": x.entry.signature, "now": x.signature, "title": x.entry.title, "file": x.path}
    report = x.to_report()  # any harness's finding
    return {"signature": x.signature.id, "title": report["title"], "reproduce": report.get("reproduce")}


class GateJob(Job):
    """``fuzz gate``: replay ``store`` with each harness's reference (``references``: entry kind ->
    ``M:A``), then run each harness's short campaign; the result's :class:`GateDecision` blocks on a
    regression, a new signature, a target that tests nothing or an unreadable corpus file."""

    name = "gate"

    def __init__(self, store: Any, references: Mapping[str, Optional[str]], context: ReplayContext, *,
                 ignore: frozenset = frozenset()):
        super().__init__()
        self.store, self.references, self.context, self.ignore = store, dict(references), context, ignore
        self.replay_job = ReplayJob(store, references, context)
        self.campaign_jobs: list = []
        self._finished: dict = {}  # id(campaign job) -> its result as it finished
        self._t0 = time.monotonic()
        self.result_ = GateResult(corpus=str(getattr(store, "path", "")),
                                  label=", ".join(r for r in self.references.values() if r))

    def run(self) -> Iterator[Any]:
        yield JobStarted(job=self.name, label=self.result_.label, budget_s=self.context.budget_s,
                         settings={"corpus": self.result_.corpus, "seed": self.context.seed,
                                   "budget_s": self.context.budget_s})
        yield from self.delegate(self.replay_job)
        harnesses = load_harnesses()
        todo = [(harnesses[kind], reference) for kind, reference in self.references.items()
                if reference and kind in harnesses and harnesses[kind].campaign_job is not None]
        # the corpus's entries: a campaign files what it finds as the corpus did (the formats of one
        # rejection), so that an unchanged target meets no new signature by meeting things in another order
        context = replace(self.context, extra={**self.context.extra, "known": [e for _, e in self.store.entries()]})
        if context.budget_s is not None and len(todo) > 1:
            # --budget is the short campaigns' together (start-up excluded, as in a campaign): each an equal share
            context = replace(context, budget_s=max(0.1, context.budget_s / len(todo)))
        for harness, reference in todo:
            job = harness.campaign_job(reference, context)
            self.campaign_jobs.append(job)
            self._finished[id(job)] = yield from self.delegate(job)  # (its elapsed_s, not the gate's)

    def result(self) -> GateResult:
        r = self.result_
        r.replay = self.replay_job.result()
        r.campaigns = [self._finished.get(id(job)) or job.result() for job in self.campaign_jobs]
        findings = [f for c in r.campaigns for f in c.findings]
        known = {e.signature: e for _, e in self.store.entries()}
        # An empty corpus is fine for a gate (the campaign still runs); a dead target is not.
        replay_problem = r.replay.problem if r.replay.replayed else None
        if r.replay.replayed and all(x.status == "unjudged" for x in r.replay.replayed):
            # regression tests that could not run are no pass (`fuzz replay` exits 2 on them: nothing tested)
            replay_problem = replay_problem or (f"no corpus entry could be replayed "
                                                f"({len(r.replay.replayed)} unjudged: {r.replay.replayed[0].unjudged})")
        nothing = next((c.problem for c in r.campaigns if c.problem), None) or replay_problem
        r.decision = decide_gate(r.replay.replayed, findings, known, ignore=self.ignore, nothing_tested=nothing,
                                 unreadable=tuple(getattr(self.store, "problems", ())))
        r.findings = findings
        r.executions = sum(c.executions for c in r.campaigns)
        r.elapsed_s = time.monotonic() - self._t0
        r.stop_reason = self.stop_reason
        return r

    def exit_code(self, result: GateResult) -> int:
        return gate_exit_code(result.decision, interrupted=self.interrupted)


__all__ = ["GateJob", "GateResult"]
