"""The finding book: one finding per signature, for every harness.

DESIGN.md "Signature": two failures with the same signature are the same bug. The book keeps the
first failure of each signature as a finding, counts the later ones into it, and hands the
campaign what it still has to do: the findings to confirm, shrink and announce (:attr:`pending`),
and those a smaller input of the same bug may improve (:attr:`improve`). It applies the ignore
list (counted in :attr:`ignored`, never reported) and ``--max-failures`` (a batch can show several
new bugs: N reports N). Re-keying (a finding filed under another signature once confirming showed
where it happens) and merging (the same bug found twice) happen here, whole, so a Ctrl-C never
leaves a failure counted twice or not at all (:data:`fuzzer.engine.interrupts.BALANCED`).

A finding is any :class:`~fuzzer.engine.results.ShrunkFinding`: the book reads its ``signature``,
``count``, ``merged_into``, ``candidate``, ``history`` and ``notes``, and the size of what it shows
(``size``, the harness's order of inputs: shortlex of the text for model outputs; None for a
harness that does not improve a finding from a smaller input of the same bug).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from fuzzer.engine.events import FindingRecorded
from fuzzer.engine.interrupts import BALANCED


class FindingBook:
    def __init__(self, *, ignore: Iterable[str] = (), max_failures: Optional[int] = None,
                 size: Callable[[Any], Any] = lambda case: None,
                 rank: Optional[Callable[[Any, Any], Any]] = None):
        self.findings: dict[str, Any] = {}
        #: Findings opened and not announced yet, oldest first: to confirm, shrink and announce.
        self.pending: list = []
        #: Announced findings a smaller input of the same bug was offered for: to shrink again.
        self.improve: list = []
        self.announced: set[str] = set()
        #: Signature id -> the id of the finding it was filed under (re-keyed, merged, one hang).
        self.aliases: dict[str, str] = {}
        self.ignore = frozenset(ignore)
        self.max_failures = max_failures
        #: Failing executions whose signature is on the ignore list (counted, never reported).
        self.ignored = 0
        self.size = size
        #: The order of the inputs a finding may show, best first (the harness's: by default its size).
        self.rank = rank or (lambda finding, case: size(case))

    # -- looking up ------------------------------------------------------------------------------
    def find(self, signature_id: str) -> Optional[Any]:
        """The finding a failure of ``signature_id`` belongs to (through re-keying and merges)."""
        finding = self.findings.get(self.aliases.get(signature_id, signature_id))
        while finding is not None and finding.merged_into is not None:
            finding = finding.merged_into
        return finding

    def __len__(self) -> int:
        return len(self.findings)

    def values(self) -> list:
        return list(self.findings.values())

    def full(self) -> bool:
        """``--max-failures`` distinct findings are in the book."""
        return self.max_failures is not None and len(self.findings) >= self.max_failures

    def by_verdict(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for finding in self.findings.values():
            counts[finding.verdict_name] = counts.get(finding.verdict_name, 0) + 1
        return counts

    # -- filing ----------------------------------------------------------------------------------
    def ignored_signature(self, signature_id: str, also: Iterable[str] = ()) -> bool:
        return signature_id in self.ignore or signature_id in also

    def open(self, finding: Any, *, ignore: Iterable[str] = ()) -> bool:
        """File a new finding, to confirm, shrink and announce. False (and nothing filed) when its
        signature is ignored (its failures are counted in :attr:`ignored`) or the book is full."""
        sid = finding.signature.id
        if self.ignored_signature(sid, ignore):
            self.ignored += finding.count
            return False
        if self.full():
            return False
        self.findings[sid] = finding
        self.pending.append(finding)
        return True

    def count(self, finding: Any, n: int = 1) -> None:
        finding.count += n

    def offer(self, finding: Any, case: Any, outcome: Any) -> None:
        """The same bug shown by a smaller input (another operator, simpler calls): shrink that one
        too, later, and keep whichever result is smaller. Not for a finding that needs earlier
        inputs (its input is not the whole story)."""
        if self.size(case) is None or finding.history:
            return
        rank = self.rank(finding, case)
        if rank >= self.rank(finding, finding.best):
            return
        if finding.candidate is not None and rank >= self.rank(finding, finding.candidate[0]):
            return
        if not any(f is finding for f in self.improve):
            self.improve.append(finding)
        finding.candidate = (case, outcome)

    def alias(self, signature_id: str, finding: Any) -> None:
        """File later failures of ``signature_id`` under ``finding`` (one stuck loop caught in
        two helpers, one bug keyed two ways)."""
        self.aliases[signature_id] = finding.signature.id

    def rekey(self, finding: Any, signature: Any) -> None:
        """File ``finding`` under ``signature`` from now on; if the book holds a finding there
        already, the two are one bug: merged into that one."""
        old = finding.signature.id
        if signature.id == old:
            return
        with BALANCED:  # out of the book under one signature, back in under another or merged: whole
            self.aliases[old] = signature.id
            self.findings.pop(old, None)
            known = self.findings.get(signature.id)
            if known is not None and known is not finding:
                self._merge(finding, known)
                return
            finding.signature = signature
            self.findings[signature.id] = finding

    def merge(self, finding: Any, into: Any, note: Optional[str] = None) -> None:
        """``finding`` is ``into``'s bug: its count moves there, and it is no longer reported."""
        with BALANCED:
            self.findings.pop(finding.signature.id, None)
            self.aliases[finding.signature.id] = into.signature.id
            self._merge(finding, into)
            if note:
                into.notes.append(note)

    def withdraw(self, finding: Any) -> None:
        """``finding`` is no finding after all (a hang that finished in time when run again: a cold
        start, a loaded machine): out of the book, with nothing counted anywhere else."""
        with BALANCED:
            self.findings.pop(finding.signature.id, None)
            if finding in self.pending:
                self.pending.remove(finding)
            if finding in self.improve:
                self.improve.remove(finding)

    def _merge(self, finding: Any, into: Any) -> None:
        into.count += finding.count
        finding.merged_into = into
        if finding in self.pending:
            self.pending.remove(finding)

    # -- announcing ------------------------------------------------------------------------------
    def announce(self, finding: Any, improved: bool = False) -> FindingRecorded:
        self.announced.add(finding.signature.id)
        return FindingRecorded(finding, improved=improved)

    def unannounced(self) -> list:
        return [f for f in self.findings.values() if f.signature.id not in self.announced]


__all__ = ["FindingBook"]
