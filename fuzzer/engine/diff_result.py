"""What a diff of two versions reports, whatever it compares (the parser's samples, the stream
harness's streams): how many inputs compared as each kind (:func:`fuzzer.engine.decisions.change_kind`),
the same counts per class (and per any other table a harness keeps), the distinct differences,
and how those read on the console and in JUnit.

:class:`VersionDiffResult` is what every diff's result is built on, as
:class:`fuzzer.engine.campaign_result.CampaignResult` is for campaigns: a harness's result adds
what it counts the inputs by, its differences' own shape and its report keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fuzzer.engine.decisions import CHANGED, FIXED, REGRESSION, SAME
from fuzzer.engine.results import FAILED, JobResult, TestCase

#: The kinds an input compares as, in the order every table shows them.
KINDS = (SAME, FIXED, REGRESSION, CHANGED)


def kind_counts() -> dict:
    """Zero inputs of every kind: a new row of a diff's tables."""
    return {k: 0 for k in KINDS}


@dataclass
class VersionDiffResult(JobResult):
    """What a diff of ``old`` and ``new`` found: ``kinds``, inputs compared per kind; ``by_class``,
    the same per class (row -> kind -> count); ``differences``, one per distinct difference (the
    harness's own record of it: a ``kind``, a ``count``, the input)."""

    old: str = ""
    new: str = ""
    kinds: dict = field(default_factory=kind_counts)
    by_class: dict = field(default_factory=dict)
    differences: list = field(default_factory=list)

    def count(self, kind: str, *rows: tuple) -> None:
        """One more input compared as ``kind``: in the totals and, for each ``(table, name)`` of
        ``rows``, in the table's row ``name``."""
        self.kinds[kind] += 1
        for table, name in rows:
            table.setdefault(name, kind_counts())[kind] += 1

    def kinds_line(self) -> str:
        """The totals, for the console's first line (after what was compared)."""
        c = self.kinds
        return (f"{c['same']:,} same, {c['fixed']:,} fixed, {c['regression']:,} regression, "
                f"{c['changed']:,} changed [stopped: {self.stop_reason.value}]")

    @staticmethod
    def table_lines(title: str, table: dict) -> list[str]:
        """One of the diff's tables on the console: a row per class (``valid`` first), a column per kind."""
        lines = [f"{title:<24}{'same':>8}{'fixed':>8}{'regress':>9}{'changed':>9}"]
        for name, row in sorted(table.items(), key=lambda kv: (kv[0] != "valid", kv[0])):
            lines.append(f"{name:<24}{row['same']:>8}{row['fixed']:>8}{row['regression']:>9}{row['changed']:>9}")
        return lines

    @staticmethod
    def difference_heading(number: int, difference: Any, shown: Any) -> str:
        """The console's first line of a difference: its kind, the class, operator and format of
        the input ``shown`` (a sample or a stream case), and how often it was seen."""
        return (f"[{number}] {difference.kind.upper()} on {shown.anomaly_class or 'valid'}"
                f"{'/' + shown.operator if shown.operator else ''} in {shown.format} (seen {difference.count}x)")

    def nothing_tested_cases(self) -> list[TestCase]:
        """A diff that tested nothing is no all-clear in CI either: one failed case saying why."""
        if not self.problem:
            return []
        return [TestCase(f"toolfuzz.{self.job}", "diff", FAILED, f"nothing tested: {self.problem}")]


__all__ = ["KINDS", "VersionDiffResult", "kind_counts"]
