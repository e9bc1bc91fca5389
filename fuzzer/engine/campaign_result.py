"""What a campaign reports, whatever the harness: the counts by class and the campaign's result.

:class:`Tally` is the one place every count a report prints comes from (console, JSON, JUnit,
SARIF); :class:`CampaignResult` is what every harness's result is built on — a harness's result
subclass adds its own fields and report keys (:meth:`CampaignResult.base_report` holds the keys
every campaign's JSON report has).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from fuzzer.engine.results import FAILED, PASSED, SKIPPED, JobResult, TestCase, finding_detail


@dataclass
class ClassStats:
    executions: int = 0
    failures: int = 0


@dataclass
class Tally:
    """Executions by class (the parser's anomaly classes, the executor's scenario kinds, ...): the
    one source of every count a report prints. ``executions`` is always the sum over classes."""

    by_class: dict = field(default_factory=dict)

    @property
    def executions(self) -> int:
        return sum(s.executions for s in self.by_class.values())

    def count(self, cls: Optional[str], failed: bool) -> None:
        self.add(cls, 1, int(failed))

    def add(self, cls: Optional[str], executions: int, failures: int) -> None:
        stats = self.by_class.get(cls or "valid")
        if stats is None:
            stats = self.by_class[cls or "valid"] = ClassStats()
        stats.executions += executions
        stats.failures += failures


@dataclass
class CampaignResult(JobResult):
    """What every campaign reports; a harness's result adds its own fields and report keys."""

    job: str = "campaign"
    seed: int = 0
    tally: Tally = field(default_factory=Tally)
    replayed: list = field(default_factory=list)  # fuzzer.engine.harness.Replayed of the corpus entries
    known: dict = field(default_factory=dict)  # signature -> corpus Entry (what the corpus held)
    ignored: int = 0  # failing executions whose signature is on the ignore list
    setup_s: float = 0.0  # worker start-up (loading the code under test): in elapsed_s, not charged to the budget
    timeline: list = field(default_factory=list)  # (elapsed_s, executions), for plots
    #: Findings the budget or Ctrl-C left unconfirmed (announced, marked so; not one of them dropped).
    unconfirmed: int = 0
    #: What ``executions`` counts, in the words reports use ("executions", "scenarios", "episodes").
    units_word: str = "executions"
    #: Where the work ran (:func:`fuzzer.backends.describe`): the back end, its workers or actors,
    #: and on a cluster the actors lost and the orders run again because of it.
    backend: dict = field(default_factory=dict)

    @property
    def by_class(self) -> dict:
        return self.tally.by_class

    @property
    def corpus_failing(self) -> list:
        return [r for r in self.replayed if r.status not in ("pass", "unjudged")]

    @property
    def case_label(self) -> str:
        """The name of the test case JUnit reports the run as (what was fuzzed)."""
        return self.label or self.job

    def test_cases(self) -> list[TestCase]:
        cases = []
        found = {f.signature.id for f in self.findings}
        for r in self.replayed:
            status = {"pass": PASSED, "unjudged": SKIPPED}.get(r.status, FAILED)
            if status == FAILED and (r.signature or r.entry.signature) in found:
                continue  # failing again and re-found by this campaign: one bug, one test case (the finding's)
            cases.append(TestCase("toolfuzz.corpus", f"{r.entry.signature} ({r.entry.status})", status,
                                  r.unjudged or (f"{r.status}: {r.entry.title}" if status == FAILED else ""),
                                  r.entry.text if status == FAILED else ""))
        for f in self.findings:
            cases.append(TestCase(f"toolfuzz.{self.job}", f.signature.id, FAILED, f.title, finding_detail(f)))
        run = self.run_case(self.case_label, self.units_word)
        return cases + ([run] if run is not None else [])

    def base_report(self) -> dict[str, Any]:
        """The keys every campaign's JSON report has (DESIGN.md "Report")."""
        return {
            "seed": self.seed,
            "executions": self.executions,
            "elapsed_s": round(self.elapsed_s, 3),
            "setup_s": round(self.setup_s, 3),
            "execs_per_s": round(self.execs_per_s, 1),
            "failures": [f.to_report() for f in self.findings],
            "by_class": {name: {"executions": s.executions, "failures": s.failures}
                         for name, s in sorted(self.by_class.items())},
            "ignored": self.ignored,
            "unconfirmed": self.unconfirmed,
            "stop_reason": str(self.stop_reason),
            "problem": self.problem,
            "counts": self.counts(),
            "notes": list(self.notes),
            "corpus": [{"signature": r.entry.signature, "status": r.status, "entry_status": r.entry.status,
                        "now": r.signature, "file": r.path, "unjudged": r.unjudged} for r in self.replayed],
            "timeline": [[round(t, 3), n] for t, n in self.timeline],
            "backend": self.backend,
        }

    def to_report(self) -> dict[str, Any]:
        return {"job": self.job, "target": self.label, **self.base_report()}


__all__ = ["CampaignResult", "ClassStats", "Tally"]
