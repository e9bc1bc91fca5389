"""What every job's result offers the report writers, so every count comes from one place.

Console, JSON, JUnit, SARIF, HTML and Markdown all read a result through this interface and never
count anything themselves: a JUnit file cannot call an entry passing that the console called a
regression, because both read :meth:`JobResult.test_cases`.

A *finding* (one distinct failure, one per signature) in any harness — parser, executor, agent —
offers :class:`Reportable`: its signature, verdict, count, whether it was minimized, its report
dictionary (DESIGN.md "Report" keys), the corpus entry it becomes, and where in the user's code it
happened (for SARIF).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Optional, Protocol, runtime_checkable

from fuzzer.engine.events import StopReason

#: JUnit / pytest statuses of a test case.
PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


@dataclass(frozen=True)
class TestCase:
    """One line of a test report: a corpus entry replayed, or a finding of a campaign.

    ``status``: passed | failed | skipped (a known open failure: reported, does not block).
    ``message``: one line; ``detail``: the input, the reproduce command, the traceback."""

    __test__ = False  # not a pytest test class

    classname: str
    name: str
    status: str
    message: str = ""
    detail: str = ""


@runtime_checkable
class Reportable(Protocol):
    """A finding of any harness."""

    signature: Any  # corpus.signature.Signature: .id, .title, .key
    count: int

    @property
    def verdict_name(self) -> str: ...

    @property
    def is_minimized(self) -> bool: ...

    def to_report(self) -> dict[str, Any]: ...

    def to_entry(self, *, target: str, version: Optional[str]) -> Any: ...

    def location(self) -> Optional[tuple[str, str]]:
        """(file path, function) of the innermost frame in the user's code, or None."""
        ...


class shown:
    """A finding's attribute for the input it shows: ``minimized_<name>`` once the finding was
    shrunk (``minimized`` is set), else ``<name>`` of the first input. ``best_trace =
    shown("trace")``: each harness's finding keeps both and reports the one it shows."""

    def __init__(self, name: str):
        self.first, self.shrunk = name, f"minimized_{name}"

    def __get__(self, finding: Any, owner: Optional[type] = None) -> Any:
        if finding is None:
            return self
        return getattr(finding, self.shrunk if finding.minimized is not None else self.first)


@dataclass
class ShrunkFinding:
    """What every harness's finding has and says alike: the signature, verdict and reason of one
    distinct failure, how many inputs showed it, and the input it shows — the first one that
    showed the failure (the attribute ``first_input`` names), or its shrunk form when there is one.
    Each harness's finding (a dataclass too) adds its first input and what running it gave; the
    fields here with defaults are keyword-only, so a subclass's own fields may follow them."""

    #: The harness whose finding it is (the corpus entry kind; names its verdicts' words).
    kind: ClassVar[str] = ""
    first_input: ClassVar[str]
    signature: Any  # corpus.signature.Signature
    verdict: Any  # a fuzzer.harnesses.parser.oracle.Verdict (parser harness) or the verdict's word (executor, agent)
    reason: str
    _: KW_ONLY
    minimized: Any = None  # the shrunk input (same signature), or None
    count: int = 1  # inputs that showed this signature
    shrink_note: str = ""  # e.g. "not minimized: the budget ran out"
    #: Shrinking was cut off by its budget: what it found is smaller, but not a minimum.
    shrink_stopped: bool = False
    #: What confirming it in a fresh worker said (fuzzer.engine.confirm: alone, history, flaky), or
    #: None when it was not run again (a hang, --no-confirm, the budget ended first).
    confirmed: Optional[str] = None
    #: False when it did not happen again when its input ran again (reported, never dropped).
    reproducible: bool = True
    #: Inputs that must run before this one, in a fresh worker, for it to fail (history-dependent).
    history: tuple = ()
    notes: list = field(default_factory=list)
    found_at_s: float = 0.0  # seconds into the job when it was first seen
    #: (case, outcome): a smaller input with the same signature, to shrink when there is time.
    candidate: Any = None
    #: Set when it turned out to be the same bug as an earlier finding (counted there).
    merged_into: Any = None

    @property
    def verdict_name(self) -> str:
        """The verdict's word, whether the harness keeps it as a :class:`~fuzzer.engine.events.Word` or a string."""
        return getattr(self.verdict, "value", self.verdict)

    @property
    def is_minimized(self) -> bool:
        """Shrunk to a local minimum (a search its budget cut off is not one)."""
        return self.minimized is not None and not self.shrink_stopped

    @property
    def title(self) -> str:
        return self.signature.title

    @property
    def confirmed_again(self) -> Optional[bool]:
        """What reports say of confirming it: True, it failed the same way when its input ran again
        (alone, or after the inputs it needs); False, it did not; None, it was not run again."""
        return None if self.confirmed is None else self.confirmed != "flaky"

    @property
    def case(self) -> Any:
        """The first input that showed it (a harness names it: ``sample``, ``scenario``, ``script``)."""
        return getattr(self, self.first_input)

    @property
    def best(self) -> Any:
        return self.minimized if self.minimized is not None else getattr(self, self.first_input)


@dataclass
class JobResult:
    """Fields every result has; jobs subclass it and add their own."""

    job: str = "job"
    label: str = ""  # the target / executor / agent under test
    executions: int = 0
    elapsed_s: float = 0.0
    findings: list = field(default_factory=list)  # Reportable, in discovery order
    stop_reason: StopReason = StopReason.DONE
    #: Why nothing could be tested (e.g. "no supported format: ..."), or None.
    problem: Optional[str] = None
    notes: list = field(default_factory=list)  # non-fatal problems (skipped entries, ...)

    @property
    def execs_per_s(self) -> float:
        return self.executions / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def tested_nothing(self) -> bool:
        return self.problem is not None

    def test_cases(self) -> list[TestCase]:
        """Default: one failed case per finding."""
        return [TestCase(classname=f"toolfuzz.{self.job}", name=f.signature.id, status=FAILED,
                         message=f.signature.title, detail=finding_detail(f)) for f in self.findings]

    def run_case(self, name: str, units: str) -> Optional[TestCase]:
        """The case that says how the run itself went, beside its findings' cases: failed when it
        tested nothing; without findings, skipped when interrupted (no pass a CI reader could take
        for a finished clean run), else passed — a clean run is one passing test, not an empty
        suite (CI readers show tests="0" as "no tests"). ``units``: what ``executions`` counts."""
        where = f"toolfuzz.{self.job}"
        if self.problem:
            return TestCase(where, "campaign", FAILED, f"nothing tested: {self.problem}")
        if self.findings:
            return None
        if self.stop_reason == StopReason.INTERRUPTED:
            return TestCase(where, name, SKIPPED, f"interrupted after {self.executions:,} {units}, no failures so far")
        if self.executions:
            return TestCase(where, name, PASSED, f"{self.executions:,} {units}, no failures")
        return None

    def summary_lines(self) -> list[str]:
        """What the console prints when the job ends, read from this result alone (so the console
        says what the JSON and JUnit files say). A job's or a harness's result overrides it with its
        own lines; this default says what any job ran and found, so a new harness's campaign prints
        a summary without writing one."""
        from fuzzer.engine.text import preview

        lines = [f"{self.executions:,} executions in {self.elapsed_s:.1f} s, {len(self.findings)} distinct "
                 f"failure(s) [stopped: {self.stop_reason}]"]
        for number, finding in enumerate(self.findings, 1):
            report = finding.to_report()
            lines += ["", f"[{number}] {finding.verdict_name}  {finding.signature.id}  ({finding.title}, "
                          f"seen {finding.count}x)"]
            if report.get("reason"):
                lines.append(f"    why:       {report['reason']}")
            lines.append(f"    {'minimized:' if finding.is_minimized else 'input:    '} {preview(shown_input(report))}")
            if report.get("reproduce"):
                lines.append(f"    reproduce: {report['reproduce']}")
        lines += [f"note: {note}" for note in self.notes]
        return lines

    def counts(self) -> dict[str, int]:
        """{passed, failed, skipped} over :meth:`test_cases`: the numbers every writer prints."""
        totals = {PASSED: 0, FAILED: 0, SKIPPED: 0}
        for case in self.test_cases():
            totals[case.status] += 1
        return totals

    def to_report(self) -> dict[str, Any]:
        raise NotImplementedError


def shown_input(report: dict) -> str:
    """The input a finding's report shows: its minimized one, else the one found."""
    return report.get("minimized_input") or report.get("input") or ""


def finding_detail(finding: Any) -> str:
    """The text of a finding's failed JUnit case (every job's): the verdict and why, the input
    shown, what was expected and returned when the verdict is about the calls, the exception, and
    the command that reproduces it."""
    report = finding.to_report()
    lines = [f"{report.get('verdict')}: {report.get('reason') or ''}".rstrip()]
    shown = shown_input(report)
    if shown:
        lines.append(f"input: {shown}")
    if report.get("verdict") in ("corruption", "missed_anomaly", "false_reject") and "truth" in report:
        from fuzzer.engine.text import compact

        # what a CI reader needs to see the damage without running anything
        lines.append(f"expected: {compact(report['truth']) if report['truth'] is not None else 'no call'}")
        if report.get("returned") is not None:
            lines.append(f"returned: {compact(report['returned'])}")
    for key in ("exception", "reproduce"):
        if report.get(key):
            lines.append(f"{key}: {report[key]}")
    return "\n".join(lines)


__all__ = ["FAILED", "JobResult", "PASSED", "Reportable", "SKIPPED", "ShrunkFinding", "TestCase", "finding_detail",
           "shown", "shown_input"]
