"""What records replay finds, record by record: how a replayed parse compares with what production
did (:func:`compare_parse`, the change classified by :mod:`fuzzer.records.changes`), how a re-run
execution compares (:func:`compare_execution`), and the result every writer reads."""


from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from fuzzer.engine.decisions import record_blocks
from fuzzer.engine.decisions import records_replay_exit_code as decide_exit
from fuzzer.records.record import Record
from fuzzer.engine.results import FAILED, PASSED, SKIPPED, JobResult, TestCase
from fuzzer.records import changes
from fuzzer.records.changes import CHANGED as CHANGED_KIND, FIXED, REGRESSED, SAME, Seen, error_type
from fuzzer.engine.relative import TargetModule
from strategies._internal.sample import json_equal


MATCH, CHANGED, UNJUDGED = "match", "changed", "unjudged"
#: How a parse changed: production failed and the target returns calls now; production returned
#: calls and the target fails (rejects, crashes, hangs) now; other calls; another exception type.
NOW_PARSES, NOW_FAILS, DIFFERENT_CALLS, DIFFERENT_ERROR = "now parses", "now fails", "different calls", \
    "different error"
NOW_NO_CALL = "now returns no call"


# --------------------------------------------------------------------------------------------
# Comparing


def describe_outcome(outcome: Any) -> str:
    """One phrase for what a target did (tables and baselines)."""
    kind = outcome.kind
    if kind == "returned":
        calls = outcome.calls or []
        if not calls:
            return "no call"
        names = ", ".join(str(c.get("name")) for c in calls[:3]) + (", ..." if len(calls) > 3 else "")
        return f"{len(calls)} call(s): {names}"
    if kind in ("rejected", "raised"):
        return f"{kind} {outcome.exception}"
    if kind == "invalid":
        return "returned something that is not a call"
    return f"{kind} ({outcome.detail})" if outcome.detail else kind


def describe_recorded(record: Record) -> str:
    status = record.parse_status
    if status is None:
        return "no parse recorded"
    if status in ("ok", "no_call", "repaired"):
        calls = record.parsed_calls or []
        if not calls:
            return "no call"
        names = ", ".join(str(c.get("name")) for c in calls[:3]) + (", ..." if len(calls) > 3 else "")
        return f"{len(calls)} call(s): {names}"
    if status == "error":
        return f"raised {error_type(record.parse_error)}"
    return "returned something that is not a call"


def compare_parse(record: Record, outcome: Any, target: Optional[TargetModule] = None) -> "RecordReplay":
    """The replayed outcome against the record: a row (parse match | changed | unjudged, how it
    changed, its class against production, what differs)."""
    target = target or TargetModule("")
    row = RecordReplay(record.record_id, record.parser_version, record.session_id, UNJUDGED, "",
                       describe_recorded(record), describe_outcome(outcome))
    before = changes.recorded(record)
    if before is None:
        row.change = "the record holds no parse result"
        return row
    now = changes.replayed(outcome, target)
    row.before, row.seen, row.truth = before, now, changes.truth(record)
    if changes.alike(before, now, target):
        row.parse, row.verdict = MATCH, SAME
        return row
    row.parse, row.change = CHANGED, _how(before, now)
    row.verdict = changes.classify(before, now, row.truth, target)
    row.difference = changes.difference(before, now)
    return row


def _how(before: Seen, now: Seen) -> str:
    if before.kind == "returned":
        if now.kind == "returned":
            return NOW_FAILS if before.calls and not now.calls else DIFFERENT_CALLS
        return NOW_FAILS
    if before.kind == changes.RECORDED_ERROR:
        if now.kind in ("rejected", "raised"):
            return DIFFERENT_ERROR
        if now.kind == "returned":
            return NOW_PARSES if now.calls else NOW_NO_CALL
        return NOW_FAILS
    return DIFFERENT_CALLS  # recorded "invalid": the parser returned a non-call


_UNRECORDED = "fuzzer.records.recorder.UnrecordedToolCall"


def compare_execution(record: Record, outcome: Any) -> tuple[str, str]:
    """(match | changed, how): the executor's replayed results against the recorded ones — the
    same status for every invocation, JSON-equal results, the same exception types."""
    recorded = record.execution_result or []
    kind, results = outcome
    if kind != "ran":
        return CHANGED, f"the executor {kind}: {results}"
    if len(results) != len(recorded):
        return CHANGED, f"{len(results)} result(s) for {len(recorded)} recorded invocation(s)"
    for i, (now, then) in enumerate(zip(results, recorded)):
        if str(now.get("error") or "").startswith(_UNRECORDED):
            return CHANGED, f"invocation {i}: called a tool with arguments no record answers"
        now_what = error_type(now.get("error")) if now.get("status") == "error" else "a result"
        then_what = error_type(then.get("error")) if then.get("status") == "error" else "a result"
        if now_what != then_what:
            return CHANGED, f"invocation {i}: {then_what} -> {now_what}"
        if now.get("status") == "ok" and not json_equal(now.get("result"), then.get("result")):
            return CHANGED, f"invocation {i}: a different result"
    return MATCH, ""


# --------------------------------------------------------------------------------------------
# Results


@dataclass
class RecordReplay:
    """One record replayed."""

    record_id: str
    parser_version: Optional[str]
    session_id: Optional[str]
    parse: str  # match | changed | unjudged
    change: str  # how the parse changed: now parses | now fails | different calls | different error | ""
    recorded: str  # what production did, in words
    replayed: str  # what the target does now
    execution: Optional[str] = None  # match | changed | unjudged | None (not replayed)
    execution_detail: str = ""
    baseline: Optional[str] = None  # same | regressed | fixed | changed | new (with a baseline)
    #: The parse against production: same | fixed | regressed | changed (None: unjudged).
    verdict: Optional[str] = None
    difference: str = ""  # which call or argument differs ("" when not two lists of calls)
    seen: Optional[Seen] = None  # the replayed outcome as compared (exception relative to the target)
    before: Optional[Seen] = None  # what production did, as compared
    truth: Optional[list] = None  # the calls the record vouches for, if any
    at_baseline: str = ""  # what the baseline did, in words, when it differs from production

    @property
    def matched(self) -> bool:
        """Nothing that was judged changed (an all-unjudged record is not a match)."""
        judged = [s for s in (self.parse, self.execution) if s in (MATCH, CHANGED)]
        return bool(judged) and all(s == MATCH for s in judged)

    @property
    def judged(self) -> bool:
        return self.parse != UNJUDGED or self.execution in (MATCH, CHANGED)

    @property
    def kind(self) -> Optional[str]:
        """The class shown and decided on: against the baseline when one was compared, else
        against production (the parse's and the execution's, the worse of the two)."""
        if self.baseline is not None:
            return self.baseline
        execution = CHANGED_KIND if self.execution == CHANGED else SAME if self.execution == MATCH else None
        return _worst(self.verdict, execution)

    def to_json(self) -> dict[str, Any]:
        return {"record_id": self.record_id, "parser_version": self.parser_version, "session_id": self.session_id,
                "parse_match": _tri(self.parse), "change": self.change or None, "recorded": self.recorded,
                "replayed": self.replayed, "execution_match": _tri(self.execution),
                "execution_detail": self.execution_detail or None, "baseline": self.baseline,
                "verdict": self.verdict, "difference": self.difference or None,
                "truth_known": self.truth is not None}


#: Worst first: what a record's class is when its parse and its execution say different things.
_ORDER = (REGRESSED, CHANGED_KIND, FIXED, SAME)


def _worst(*kinds: Optional[str]) -> Optional[str]:
    present = [k for k in kinds if k is not None]
    return min(present, key=_ORDER.index) if present else None


def blocks(row: RecordReplay, baseline_compared: bool) -> bool:
    """Whether ``row`` fails the replay (:func:`fuzzer.engine.decisions.record_blocks`)."""
    return record_blocks(kind=row.kind, baseline=row.baseline, baseline_compared=baseline_compared)


def _tri(status: Optional[str]) -> Optional[bool]:
    return None if status in (None, UNJUDGED) else status == MATCH


@dataclass
class VersionSummary:
    """The pass rates of the records made with one parser version."""

    recorded_version: str
    records: int = 0
    parse_judged: int = 0
    parse_passed: int = 0
    execution_judged: int = 0
    execution_passed: int = 0
    changed: list = field(default_factory=list)  # record ids
    kinds: dict = field(default_factory=dict)  # fixed / regressed / changed -> records (against production)

    @staticmethod
    def rate(passed: int, judged: int) -> Optional[float]:
        return passed / judged if judged else None


@dataclass
class RecordsReplayResult(JobResult):
    job: str = "records-replay"
    db: str = ""
    target: str = ""
    target_version: Optional[str] = None
    executor: Optional[str] = None
    rows: list = field(default_factory=list)  # RecordReplay, in record order
    selected: int = 0  # records selected (rows may be fewer when interrupted)
    distinct_outputs: int = 0  # distinct raw outputs among the selected records
    parsed_outputs: int = 0  # of those, parsed by the target (fewer when interrupted)
    baseline_path: Optional[str] = None
    baseline_compared: bool = False
    baseline_saved: bool = False
    missing_from_run: list = field(default_factory=list)  # baseline record ids not replayed now

    @property
    def replayed_label(self) -> str:
        return self.target_version or self.target

    def summary_lines(self) -> list[str]:
        from fuzzer.records.replay_summary import replay_summary_lines

        return replay_summary_lines(self)

    def by_version(self) -> list[VersionSummary]:
        groups: dict[str, VersionSummary] = {}
        for row in self.rows:
            key = row.parser_version or "-"
            s = groups.setdefault(key, VersionSummary(key))
            s.records += 1
            if row.parse != UNJUDGED:
                s.parse_judged += 1
                s.parse_passed += row.parse == MATCH
            if row.execution in (MATCH, CHANGED):
                s.execution_judged += 1
                s.execution_passed += row.execution == MATCH
            if CHANGED in (row.parse, row.execution):
                s.changed.append(row.record_id)
                kind = _worst(row.verdict, CHANGED_KIND if row.execution == CHANGED else None)
                s.kinds[kind] = s.kinds.get(kind, 0) + 1
        return list(groups.values())

    def changed(self) -> list[RecordReplay]:
        return [r for r in self.rows if CHANGED in (r.parse, r.execution)]

    def regressions(self) -> list[RecordReplay]:
        """Records that regressed: against the baseline when one was compared, else production."""
        return [r for r in self.rows if r.kind == REGRESSED]

    def blocking(self) -> list[RecordReplay]:
        return [r for r in self.rows if blocks(r, self.baseline_compared)]

    def baseline_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for row in self.rows:
            if row.baseline:
                counts[row.baseline] = counts.get(row.baseline, 0) + 1
        if self.missing_from_run:
            counts["missing"] = len(self.missing_from_run)
        return counts

    def test_cases(self) -> list[TestCase]:
        """One case per record: failed when it blocks (:func:`blocks`), skipped when it was not
        judged or differs without blocking (with a baseline: known at baseline), else passed."""
        cases = []
        for row in self.rows:
            if not row.judged:
                status = SKIPPED
            elif blocks(row, self.baseline_compared):
                status = FAILED
            elif row.matched or row.kind in (SAME, FIXED):
                status = PASSED
            else:
                status = SKIPPED
            message = "" if row.matched else (
                f"{row.kind or 'not judged'}: parse: {row.recorded} -> {row.replayed}"
                + (f" ({row.difference})" if row.difference else "") if row.parse == CHANGED else
                f"{row.kind}: execution: {row.execution_detail}" if row.execution == CHANGED else
                f"{row.kind}" if row.kind else "not judged")
            cases.append(TestCase(classname=f"toolfuzz.records.{row.parser_version or 'unversioned'}",
                                  name=row.record_id, status=status, message=message,
                                  detail=json.dumps(row.to_json(), ensure_ascii=False)))
        return cases

    def to_report(self) -> dict[str, Any]:
        return {
            "job": self.job, "db": self.db, "target": self.target, "target_version": self.target_version,
            "executor": self.executor, "records": len(self.rows), "selected": self.selected,
            "distinct_outputs": self.distinct_outputs,
            "parsed_outputs": self.parsed_outputs, "elapsed_s": round(self.elapsed_s, 3),
            "stop_reason": str(self.stop_reason),
            "by_version": [{"recorded_version": s.recorded_version, "replayed_version": self.replayed_label,
                            "records": s.records, "parse_judged": s.parse_judged, "parse_passed": s.parse_passed,
                            "parse_pass_rate": s.rate(s.parse_passed, s.parse_judged),
                            "execution_judged": s.execution_judged, "execution_passed": s.execution_passed,
                            "execution_pass_rate": s.rate(s.execution_passed, s.execution_judged),
                            "changed": s.changed, "kinds": s.kinds} for s in self.by_version()],
            "changed": [r.to_json() for r in self.changed()],
            "baseline": ({"path": self.baseline_path, "compared": self.baseline_compared,
                          "saved": self.baseline_saved, "counts": self.baseline_counts(),
                          "regressed": [r.record_id for r in self.regressions()],
                          "missing": self.missing_from_run} if self.baseline_path else None),
        }


def records_replay_exit_code(result: RecordsReplayResult, *, interrupted: bool) -> int:
    """The exit decision (:func:`fuzzer.engine.decisions.records_replay_exit_code`)."""
    return decide_exit(blocking=len(result.blocking()), judged=sum(1 for r in result.rows if r.judged),
                       interrupted=interrupted)


__all__ = ["CHANGED", "MATCH", "UNJUDGED", "RecordReplay", "RecordsReplayResult", "VersionSummary", "blocks",
           "compare_execution", "compare_parse", "describe_outcome", "describe_recorded", "records_replay_exit_code"]
