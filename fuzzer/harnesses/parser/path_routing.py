"""Corruptions filed by the path that made them: a failure the oracle files under a path-keyed
corruption is traced before it counts there (the same damage on another path is another bug), a
path key whose trace found no maker joins the finding of the maker its input ran, and shrinking
keeps a path finding on its path.

Why its own module: which finding a corruption belongs to is decided by tracing it, apart from
the rest of the campaign's filing (:mod:`fuzzer.harnesses.parser.subject` hands failures here).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional

from fuzzer.engine.interrupts import BALANCED
from fuzzer.engine.subject import Failure
from fuzzer.harnesses.parser.findings import Finding

#: Failures of each path-keyed corruption traced before they count towards it (each smaller one
#: is too): enough to tell apart the paths one kind of damage takes, cheap (one traced run each).
PATH_CHECKS = 8
MAX_SUSPECTS = 64


class PathRouting:
    """The suspects waiting to be traced, and what the traces so far said."""

    def __init__(self, oracles: dict):
        self.oracles = oracles
        #: failures counted towards a path-keyed corruption by their oracle signature, to trace
        self.suspects: list[tuple] = []
        self._checks: dict[str, int] = {}
        self._kinds: set = set()  # (finding, format, anomaly class) traced once already
        #: Path signatures keyed by the maker their trace found (the others: by the functions run).
        self._by_maker: set[str] = set()

    def suspect(self, found: Finding, failure: Failure) -> bool:
        """A failure whose damage the oracle files under a corruption keyed by path: the path is
        the bug, so it is traced (before the next settling: the pool is busy now) before it counts
        there or becomes its shown input. The first few of each finding are, every smaller one,
        and the first of each format and anomaly class (where another path is likeliest: one
        path's failures may crowd the first few, a spelling of one format family losing every
        argument while a helper drops empty strings in any format)."""
        checks = self._checks.get(found.signature.id, 0)
        smaller = len(failure.case.text) < len(found.best.text) and not found.history
        kind = (found.signature.id, failure.case.format, failure.case.anomaly_class)
        new_kind = kind not in self._kinds
        if not (smaller or new_kind or checks < PATH_CHECKS) or len(self.suspects) >= MAX_SUSPECTS:
            return False
        self._kinds.add(kind)
        self._checks[found.signature.id] = checks + 1
        found.count += failure.count  # counted there until its path says otherwise (and if it is never traced)
        self.suspects.append((found, failure))
        return True

    def trace_suspects(self, job: Any) -> None:
        """File each suspect where its path says: the finding it was counted towards, another
        one, or a new finding (then confirmed and shrunk like any other)."""
        from fuzzer.harnesses.parser.harness import keyed_by_maker

        book = job.book
        while self.suspects and not job.budget.time_up():
            found, failure = self.suspects.pop(0)
            sample, outcome = failure.case, failure.outcome
            judgment, level, _ = failure.extra
            keyed, by_maker = keyed_by_maker(self.oracles[level], sample, judgment, outcome, job.settle_run,
                                             deadline=job.budget.deadline)
            other = book.find(keyed.id) if "|path|" in keyed.key else None
            if other is None and "|path|" in keyed.key:
                other = self.same_maker(keyed, by_maker, book)
                if other is not None:
                    book.alias(keyed.id, other)  # later failures keyed so are filed there too
            if "|path|" not in keyed.key or keyed.id == found.signature.id or other is found:
                book.offer(found, sample, outcome)  # it is this finding's (and counted there already)
                continue
            with BALANCED:  # it moves whole: out of one finding's count, into another's
                found.count -= failure.count  # it belongs elsewhere
                job.offer(replace(failure, signature=keyed, extra=(judgment, level, failure.signature.id)))

    def same_maker(self, keyed: Any, by_maker: bool, book: Any, besides: Optional[Finding] = None) -> Optional[Finding]:
        """The path finding a new path key is the same damage of, made by the same function
        (:func:`corpus.signature.same_maker`: one of the two keyed by the maker its trace found,
        the other by the functions its input ran, the maker among them), if the book holds one."""
        from corpus.signature import same_maker

        if by_maker:
            self._by_maker.add(keyed.id)
        for f in book.values():
            if f is besides or "|path|" not in f.signature.key or (f.signature.id in self._by_maker) == by_maker:
                continue
            made, ran = (keyed.key, f.signature.key) if by_maker else (f.signature.key, keyed.key)
            if same_maker(made, ran):
                return f
        return None


def keeps_path_of(finding: Finding, oracle: Any, job: Any) -> Optional[Callable[[Any, Any], bool]]:
    """For a corruption filed by its path: whether a smaller input takes that path too (traced
    once per text). Shrinking towards the oracle's signature alone crossed from a helper that
    drops empty values into an envelope spelling that loses every argument — another bug, which
    the finding then became."""
    if "|path|" not in finding.signature.key:
        return None
    from fuzzer.harnesses.parser.harness import keyed_signature

    wanted, traced = finding.signature.id, {}

    def keeps(sample: Any, outcome: Any) -> bool:
        if sample.text not in traced:
            keyed = keyed_signature(oracle, sample, oracle.judge(sample, outcome), outcome, job.settle_run,
                                    deadline=job.budget.deadline)
            traced[sample.text] = keyed.id == wanted
        return traced[sample.text]
    return keeps


__all__ = ["MAX_SUSPECTS", "PATH_CHECKS", "PathRouting", "keeps_path_of"]
