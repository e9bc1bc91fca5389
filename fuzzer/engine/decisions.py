"""The decisions a CI reads, as pure functions: the gate's verdict, how a replayed entry and a
changed answer are classified, and every exit status.

Nothing here runs a target or prints; the jobs call these on their results and the tests call
them on hand-made inputs (tests/unit/test_decisions.py). What a harness knows (whether two
outcomes are the same answer, whether an outcome is right) it works out itself and hands over;
the rule that turns those facts into a word or a status is here, once, so ``fuzz diff``, the
executor's diff and ``fuzz records replay`` never call the same change by different names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from corpus.signature import format_specific
from fuzzer.engine.events import ExitCode


@dataclass(frozen=True)
class GateDecision:
    """What the gate found, and whether it blocks the merge.

    * ``regressions``: corpus entries marked fixed that fail again (replayed), and campaign
      findings whose signature is a fixed entry;
    * ``new``: campaign findings whose signature the corpus does not hold, and corpus entries
      that now fail with such a signature;
    * ``known``: entries still failing as recorded (open): reported, never blocking;
    * ``moved``: open entries whose input fails the same way from another place in the target
      (a refactor moved the code; :attr:`fuzzer.engine.harness.Replayed.moved`), and campaign findings
      under the signature such an entry fails with now: known bugs, never blocking;
    * ``passed``: entries that pass; ``unjudged``: entries that could not be run (said why);
    * ``ignored``: failures whose signature is on the ignore list;
    * ``nothing_tested``: why the campaign could test nothing (a parser that accepts nothing
      has regressed: it blocks);
    * ``unreadable``: "FILE: reason" for corpus files that could not be read (a merge conflict
      left in one, a truncated copy): their regression tests would be lost silently, so they block.
    """

    regressions: tuple = ()
    new: tuple = ()
    known: tuple = ()
    moved: tuple = ()
    passed: tuple = ()
    unjudged: tuple = ()
    ignored: tuple = ()
    nothing_tested: Optional[str] = None
    unreadable: tuple = ()

    @property
    def blocked(self) -> bool:
        return bool(self.regressions or self.new or self.nothing_tested or self.unreadable)

    # Corpus entries (replayed) and campaign findings, apart: the console's one summary line.
    @property
    def corpus_regressions(self) -> tuple:
        return tuple(x for x in self.regressions if hasattr(x, "entry"))

    @property
    def corpus_new(self) -> tuple:
        return tuple(x for x in self.new if hasattr(x, "entry"))

    @property
    def campaign_new(self) -> tuple:
        return tuple(x for x in self.new if not hasattr(x, "entry"))

    @property
    def corpus_ignored(self) -> tuple:
        return tuple(x for x in self.ignored if hasattr(x, "entry"))

    @property
    def exit_code(self) -> int:
        return ExitCode.FAILURES if self.blocked else ExitCode.OK


# -- classifying: a replayed corpus entry, a changed answer -----------------------------------------

#: What a corpus entry does when replayed (:attr:`fuzzer.engine.harness.Replayed.status`).
PASS, FAIL, CHANGED, REGRESSION, UNJUDGED = "pass", "fail", "changed", "regression", "unjudged"
#: How two versions' answers to one input compare (``fuzz diff``, the executor's diff, records replay).
SAME, FIXED = "same", "fixed"


def entry_status(*, entry_status: str, entry_signature: str, now: Optional[str], unjudged: bool = False) -> str:
    """A replayed entry: ``unjudged`` (it could not be run: never a pass, never a failure), ``pass``
    (no failure now), ``regression`` (an entry marked fixed fails again, under any signature),
    ``fail`` (an open entry failing as filed) or ``changed`` (failing with another signature)."""
    if unjudged:
        return UNJUDGED
    if now is None:
        return PASS
    if entry_status == "fixed":
        return REGRESSION
    return FAIL if now == entry_signature else CHANGED


def entry_moved(*, status: str, entry_status: str, verdict: str, entry_verdict: str, rekeyed: bool,
                movable: bool, same_what: bool) -> bool:
    """An open entry failing with another signature is the same bug moved, not a new one, when it
    fails exactly as filed under a key of before (``rekeyed``), or — for a failure whose kind can
    move (:func:`corpus.signature.movable`) — the same way from another place (``same_what``). A
    fixed entry that fails is a regression either way."""
    if status != CHANGED or entry_status != "open" or verdict != entry_verdict:
        return False
    return rekeyed or (movable and same_what)


def change_kind(*, same: bool, before_ok: Optional[bool], now_ok: Optional[bool]) -> str:
    """How an answer changed from ``before`` to ``now``: ``same``; ``fixed`` (right now, and it was
    not known to be); ``regression`` (wrong now where it was not known to be wrong); else
    ``changed`` (both wrong differently, both right differently, or nobody can say which is right:
    ``now_ok`` None). ``before_ok`` / ``now_ok``: right (True), wrong (False), or unknown (None) —
    a diff's old and new verdicts, an executor's violations, a record's calls against those it
    vouches for. A fix is never a regression, and a change nobody can judge is never a fix."""
    if same:
        return SAME
    if now_ok is True:
        return CHANGED if before_ok is True else FIXED
    if now_ok is False:
        return CHANGED if before_ok is False else REGRESSION
    return CHANGED


def decide_gate(replayed: Sequence[Any], findings: Sequence[Any], known: Mapping[str, Any], *,
                ignore: Iterable[str] = (), nothing_tested: Optional[str] = None,
                unreadable: Sequence[str] = ()) -> GateDecision:
    """The gate's decision.

    ``replayed``: :class:`fuzzer.engine.harness.Replayed` of every corpus entry; ``findings``: the short
    campaign's findings (anything with ``.signature.id``); ``known``: signature -> corpus Entry.
    """
    ignored_ids = set(ignore)
    regressions: list = []
    new: list = []
    held: list = []
    moved: list = []
    passed: list = []
    unjudged: list = []
    ignored: list = []
    regressed_signatures: set[str] = set()
    for r in replayed:
        status = r.status
        if status == "unjudged":
            unjudged.append(r)
        elif status == "pass":
            passed.append(r)
        elif r.entry.signature in ignored_ids or (r.signature in ignored_ids):
            ignored.append(r)
        elif status == "regression":
            regressions.append(r)
            regressed_signatures.add(r.entry.signature)
        elif r.signature not in known:
            # an entry that now fails with a signature nobody recorded: a new bug, unless it is
            # its own failure raised from another place
            (moved if r.moved else new).append(r)
        else:
            held.append(r)
    # A campaign finding is moved only under the exact signature a moved entry's own input fails
    # with now. (Matching findings to entries by their kind of damage alone let an unrelated new
    # corruption pass as an open entry's, which had not moved at all.)
    moved_to = {r.signature for r in moved}
    for f in findings:
        sid = _known_as(f, known)
        if sid in ignored_ids:
            ignored.append(f)
        elif sid in moved_to:
            moved.append(f)
        elif sid not in known:
            new.append(f)
        elif known[sid].status == "fixed" and sid not in regressed_signatures:
            regressions.append(f)
    return GateDecision(regressions=tuple(regressions), new=tuple(new), known=tuple(held), moved=tuple(moved),
                        passed=tuple(passed),
                        unjudged=tuple(unjudged), ignored=tuple(ignored), nothing_tested=nothing_tested,
                        unreadable=tuple(unreadable))


def fixed_entry_shown(finding: Any, known: Mapping[str, Any]) -> Optional[str]:
    """The signature of the entry marked fixed that ``finding`` shows failing again, or None.

    The gate's rule (a campaign finding known as a fixed entry is a regression), shared by every
    route that writes a finding into the corpus (:mod:`fuzzer.engine.corpus_writer`): meeting a fixed
    entry's bug again is reported as a regression there too, and never re-opens the entry."""
    sid = _known_as(finding, known)
    entry = known.get(sid)
    return sid if entry is not None and entry.status == "fixed" else None


def corpus_write_exit_code(*, regressions: int, interrupted: bool = False, nothing_tested: Optional[str] = None) -> int:
    """``fuzz corpus add`` and ``fuzz corpus import``: storing failing inputs is what they are for
    (0), but an input that shows a bug marked fixed is a regression (1), as the gate says; 2 when
    there was nothing to run (no record with a raw output)."""
    if nothing_tested:
        return ExitCode.USAGE
    if regressions:
        return ExitCode.FAILURES
    return ExitCode.INTERRUPTED if interrupted else ExitCode.OK


def corpus_maintenance_exit_code(*, unsaved: Optional[str] = None, interrupted: bool = False) -> int:
    """``fuzz corpus cmin``: 2 when the corpus could not be rewritten (``unsaved``: read-only,
    full; said after what was done); 130 when interrupted; else 0 (tidying a corpus finds nothing
    to fail on: the gate and replay judge its entries)."""
    if unsaved:
        return ExitCode.USAGE
    return ExitCode.INTERRUPTED if interrupted else ExitCode.OK


def corpus_list_exit_code(*, unreadable: int) -> int:
    """``fuzz corpus list``: 1 when a corpus file could not be read (its regression test no longer
    runs: replay and the gate fail on it too), so a listing is never the all-clear over a broken
    corpus; else 0."""
    return ExitCode.FAILURES if unreadable else ExitCode.OK


def _known_as(finding: Any, known: Mapping[str, Any]) -> str:
    """The signature the corpus holds ``finding`` under: its own; or, for a corruption, the one the
    oracle gave it before it was filed by the path its minimized input runs (an entry stored
    unshrunk, when Ctrl-C or the budget came first, is keyed by that) — or an entry filed by path
    from the oracle signature this unshrunk finding still has; or — a hang caught one helper
    deeper or shallower than when it was stored (:func:`corpus.signature.same_hang`) — the entry's."""
    sid = finding.signature.id
    if sid in known:
        return sid
    match = getattr(finding, "match_id", None)
    if match is not None and match in known and not format_specific(finding.signature):
        # (a rejection split off as one format's own is no finding of the format-less signature
        # it came from: that is another cause, raised at the same place with the same words)
        return match
    if getattr(finding, "verdict_name", None) == "corruption":
        by_path = next((signature for signature, entry in known.items()
                        if (entry.scenario or {}).get("match") == sid), None)
        if by_path is not None:
            return by_path
    if getattr(finding, "verdict_name", None) != "hang":
        return sid
    frames = getattr(getattr(finding, "best_outcome", None), "frames", None)
    return next((signature for signature, entry in known.items() if entry.holds_hang(frames)), sid)


def gate_exit_code(decision: GateDecision, *, interrupted: bool = False) -> int:
    """``fuzz gate``: 1 when the decision blocks; 130 when interrupted before anything blocked
    (never the all-clear 0: the gate did not finish looking); else 0."""
    if decision.blocked:
        return ExitCode.FAILURES
    return ExitCode.INTERRUPTED if interrupted else ExitCode.OK


def minimize_exit_code(*, fails: bool, interrupted: bool = False) -> int:
    """``fuzz minimize``: 1 when the input does not fail at all (nothing was minimized); 130 when
    interrupted; else 0."""
    if not fails:
        return ExitCode.FAILURES
    return ExitCode.INTERRUPTED if interrupted else ExitCode.OK


def record_blocks(*, kind: Optional[str], baseline: Optional[str], baseline_compared: bool) -> bool:
    """Whether a replayed record fails ``fuzz records replay``: against a baseline, a regression
    (``regressed``) against it; against production, a regression or a change nobody can vouch for.
    A fix never blocks."""
    if baseline_compared:
        return baseline == "regressed"
    return kind in ("regressed", CHANGED)


def records_replay_exit_code(*, blocking: int, judged: int, interrupted: bool = False) -> int:
    """``fuzz records replay``: 1 when a record blocks (:func:`record_blocks`), and when records
    were selected but none could be judged (not an all-clear); 130 when interrupted with nothing
    blocking; else 0."""
    if blocking or (not judged and not interrupted):
        return ExitCode.FAILURES
    return ExitCode.INTERRUPTED if interrupted else ExitCode.OK


def replay_exit_code(replayed: Sequence[Any], *, nothing_tested: Optional[str] = None,
                     interrupted: bool = False, unreadable: int = 0, empty: bool = False,
                     unsaved: Optional[str] = None) -> int:
    """``fuzz replay``: 2 when the corpus holds no entry it can read (a wrong ``--corpus``, or
    only files that are no entries: nothing was tested, as a campaign that could test nothing
    exits 2; the unreadable files are named); 1 when any entry fails, a corpus file cannot be
    read (its regression test is lost, as the gate says) or the target tests nothing; 2 as well
    when no entry could be judged at all (a missing ``--executor``/``--agent``, or a tools file
    without the entries' tools: nothing was tested, as for an empty corpus), and when ``--update``
    could not save its changes (``unsaved``: the corpus cannot be written); else 0."""
    if unsaved:
        return ExitCode.USAGE
    if empty:
        return ExitCode.USAGE
    judged = [r for r in replayed if r.status != "unjudged"]
    if nothing_tested or unreadable or any(r.status != "pass" for r in judged):
        return ExitCode.FAILURES
    if replayed and not judged:
        return ExitCode.USAGE  # nothing could be judged: not an all-clear, and a matter of options
    return ExitCode.INTERRUPTED if interrupted else ExitCode.OK


def campaign_exit_code(*, findings: int, corpus_failing: bool = False, nothing_tested: Optional[str] = None,
                       interrupted: bool = False) -> int:
    """``fuzz campaign`` (and the executor and agent campaigns): 2 when nothing could be tested
    (a configuration problem: no supported format, every operator refused), 1 on failures,
    130 when interrupted before finding anything, 0 otherwise."""
    if findings or corpus_failing:
        return ExitCode.FAILURES
    if nothing_tested:
        return ExitCode.USAGE
    return ExitCode.INTERRUPTED if interrupted else ExitCode.OK


def reproduce_exit_code(*, failing: bool, problem: Optional[str] = None, interrupted: bool = False) -> int:
    """``fuzz reproduce``: 2 when the input could not be run at all (no finding in the file, no
    target, no harness for its kind: nothing was tested); 1 while it still fails; 130 when
    interrupted; else 0 (it passes now)."""
    if problem:
        return ExitCode.USAGE
    if failing:
        return ExitCode.FAILURES
    return ExitCode.INTERRUPTED if interrupted else ExitCode.OK


@dataclass(frozen=True)
class DiffDecision:
    """``fuzz diff``: 1 on a regression; else 2 when nothing was tested (no sample compared, or a
    version that never returned a call for a valid sample: ``nothing_tested`` says why), as a
    campaign that could test nothing; 130 when interrupted; else 0."""

    regressions: int = 0
    interrupted: bool = False
    details: dict = field(default_factory=dict)
    nothing_tested: Optional[str] = None

    @property
    def exit_code(self) -> int:
        if self.regressions:
            return ExitCode.FAILURES
        if self.nothing_tested:
            return ExitCode.USAGE
        return ExitCode.INTERRUPTED if self.interrupted else ExitCode.OK


__all__ = ["CHANGED", "FAIL", "FIXED", "PASS", "REGRESSION", "SAME", "UNJUDGED", "DiffDecision", "GateDecision",
           "campaign_exit_code", "change_kind", "corpus_list_exit_code", "corpus_maintenance_exit_code",
           "corpus_write_exit_code", "decide_gate", "entry_moved", "entry_status", "fixed_entry_shown", "gate_exit_code",
           "minimize_exit_code", "record_blocks", "records_replay_exit_code", "replay_exit_code",
           "reproduce_exit_code"]
