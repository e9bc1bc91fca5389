"""Today's campaign result seen through the :mod:`fuzzer.results` interface (a stopgap).

The report writers read any job's result as a :class:`~fuzzer.results.JobResult` whose findings
are :class:`~fuzzer.results.Reportable`. The campaign engine (``fuzzer.engine``) still returns a
``CampaignResult`` of ``fuzzer.findings.Finding``; until it returns a JobResult itself, this
module wraps one, adding what the writers read and the engine does not yet provide:

* on each finding: ``verdict_name``, ``is_minimized``, ``to_report()`` with ``minimized`` and
  ``reproduce``, ``to_entry()``, ``location()`` and ``found_at_s`` (seconds into the job when
  it was first announced);
* on the result: ``test_cases()`` / ``counts()`` (the JobResult defaults), ``to_report()`` (the
  DESIGN.md report) and ``timeline``: ``(elapsed_s, executions)`` samples for the
  executions-over-time plot.

``found_at_s`` and ``timeline`` come from the campaign's events, recorded by :class:`Recorder`
(pass it as ``on_event``). The writers read both with ``getattr`` and omit their plots when absent.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from fuzzer.events import FindingRecorded, Progress, StopReason
from fuzzer.results import JobResult


class Recorder:
    """Collects, from a campaign's events, when each signature was first announced and how many
    executions had run when (from the engine's Progress events). Times are seconds since the
    recorder was made: make it just before the campaign starts."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.found_at: dict[str, float] = {}
        self.timeline: list[tuple[float, int]] = [(0.0, 0)]
        self._done = 0  # executions of the tools already finished (one engine per tool)

    def _now(self) -> float:
        return time.monotonic() - self.started

    def __call__(self, event: Any) -> None:
        if isinstance(event, Progress):
            self.timeline.append((self._now(), self._done + event.executions))
        elif isinstance(event, FindingRecorded):
            self.found_at.setdefault(event.finding.signature.id, self._now())
        elif type(event).__name__ == "CampaignFinished":  # (today's engine; JobFinished later)
            self._done += event.result.executions
            self.timeline.append((self._now(), self._done))


class ReportableFinding:
    """A ``fuzzer.findings.Finding`` with the :class:`~fuzzer.results.Reportable` interface."""

    def __init__(self, finding: Any, *, target: str, level: str = "parse", found_at_s: Optional[float] = None,
                 user_files: Optional[dict[str, str]] = None):
        self.finding = finding
        self.target, self.level = target, level
        self.found_at_s = found_at_s
        self._user_files = user_files or {}

    @property
    def signature(self) -> Any:
        return self.finding.signature

    @property
    def count(self) -> int:
        return self.finding.count

    @property
    def verdict_name(self) -> str:
        return self.finding.verdict.value

    @property
    def is_minimized(self) -> bool:
        return self.finding.minimized is not None and not self.finding.shrink_note.startswith("not shrunk")

    def to_report(self) -> dict[str, Any]:
        from fuzzer.report import reproduce_snippet

        report = self.finding.to_report()
        report["minimized"] = self.is_minimized
        report["reproduce"] = reproduce_snippet(self.target, self.finding.best.text)
        if self.finding.shrink_note:
            report["note"] = self.finding.shrink_note
        return report

    def to_entry(self, *, target: str, version: Optional[str]) -> Any:
        from fuzzer.corpus_link import entry_from_finding

        return entry_from_finding(self.finding, target=target, level=self.level, version=version)

    def location(self) -> Optional[tuple[str, str]]:
        """The innermost traceback frame in the user's code, or None.

        Frames carry base names only, so a frame is the user's when a file of that name sits next
        to the target's module *and* defines that function (``json/__init__.py:loads`` is not the
        user's ``__init__.py``). A comprehension or lambda frame is reported as the named
        function around it."""
        from fuzzer.reports.common import defined_names

        outcome = self.finding.best_outcome
        mine = []
        for file, function in getattr(outcome, "frames", ()) or ():
            path = self._user_files.get(file)
            if path is not None and (function.startswith("<") or function in defined_names(path)):
                mine.append((path, function))
        for path, function in reversed(mine):
            if not function.startswith("<"):
                return path, function
        return mine[-1] if mine else None


def user_files(target: str, cwd: Optional[str] = None) -> dict[str, str]:
    """``{basename: path}`` of the Python files next to the target's module, found without
    importing anything. Outcome frames carry only base names (signatures must survive moves),
    so a frame is the user's when its file is one of these."""
    from fuzzer.reports.common import target_source

    path = target_source(target, cwd)
    if path is None:
        return {}
    directory = os.path.dirname(os.path.abspath(path))
    return {name: os.path.join(directory, name) for name in sorted(os.listdir(directory)) if name.endswith(".py")}


@dataclass
class CampaignView(JobResult):
    """A campaign's ``CampaignResult`` as a :class:`JobResult`."""

    source: Any = None  # the engine's CampaignResult
    timeline: list = field(default_factory=list)  # (elapsed_s, executions), increasing

    def to_report(self) -> dict[str, Any]:
        from fuzzer.report import campaign_report

        report = campaign_report(self.source, target=self.label)
        report["failures"] = [f.to_report() for f in self.findings]
        return report


#: The engine's stop reasons that mean nothing could be tested.
_NOTHING_TESTED = ("no supported format", "nothing to generate")


def campaign_view(result: Any, *, target: str, recorder: Optional[Recorder] = None,
                  cwd: Optional[str] = None) -> CampaignView:
    """Wrap the engine's merged ``CampaignResult`` (see ``fuzzer.cli.campaign.run_campaigns``)."""
    files = user_files(target, cwd)
    found_at = recorder.found_at if recorder else {}
    findings = [ReportableFinding(f, target=target, level=result.level, found_at_s=found_at.get(f.signature.id),
                                  user_files=files) for f in result.findings]
    reason = result.stop_reason or "done"
    problem = reason if reason.startswith(_NOTHING_TESTED) else None
    try:
        stop = StopReason(reason)
    except ValueError:
        stop = StopReason.NOTHING_TESTED if problem else StopReason.DONE
    timeline = list(recorder.timeline) if recorder else []
    return CampaignView(job="campaign", label=target, executions=result.executions, elapsed_s=result.elapsed_s,
                        findings=findings, stop_reason=stop, problem=problem, source=result, timeline=timeline)


__all__ = ["CampaignView", "Recorder", "ReportableFinding", "campaign_view", "user_files"]
