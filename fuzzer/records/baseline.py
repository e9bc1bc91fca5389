"""Records replay baselines: one replay's per-record outcomes saved to a file, and a later replay
classified record by record against it (``same``, ``fixed``, ``regressed``, ``changed`` or ``new``)."""


from __future__ import annotations

from typing import Any, Optional

from fuzzer.datafiles import read_json
from fuzzer.engine.decisions import change_kind
from fuzzer.records.record import RecordsError
from fuzzer.records.values import utc_now_iso
from fuzzer.records import changes
from fuzzer.records.changes import REGRESSED, SAME, Seen
from fuzzer.engine.relative import TargetModule
from fuzzer.records.replay_results import CHANGED, MATCH, RecordReplay, RecordsReplayResult, _worst

BASELINE_FORMAT = "toolfuzz-records-baseline"
BASELINE_VERSION = 2  #: 1 kept the calls' names only, so a change of arguments compared as "same"


def read_baseline(path: str) -> dict[str, Any]:
    """The per-record results of a saved baseline; RecordsError (one line) when it is not one."""
    data = read_json(path, lambda reason: RecordsError(f"{path}: not a baseline file: {reason}"))
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise RecordsError(f"{path}: not a toolfuzz records baseline (no \"format\": \"{BASELINE_FORMAT}\")")
    if data.get("version") == 1:
        raise RecordsError(f"{path}: a baseline saved by an earlier toolfuzz (version 1 kept the names of the calls, "
                           f"not their arguments): save it again with --update-baseline")
    if data.get("version") != BASELINE_VERSION:
        raise RecordsError(f"{path}: baseline version {data.get('version')!r} is not {BASELINE_VERSION}")
    records = data.get("records")
    if not isinstance(records, dict):
        raise RecordsError(f"{path}: baseline field 'records' must be an object")
    return records


def baseline_document(result: RecordsReplayResult) -> dict[str, Any]:
    """Per record: whether it matched production, and what the target did — its calls or its
    exception type (relative to the target, so a baseline of ``myparser_v1`` compares with
    ``myparser_v2``) — so a later replay is classified against it as against production."""
    return {"format": BASELINE_FORMAT, "version": BASELINE_VERSION, "created": utc_now_iso(), "db": result.db,
            "target": result.target, "target_version": result.target_version, "executor": result.executor,
            "records": {r.record_id: {"matched": r.matched, "judged": r.judged, "parse": r.parse,
                                      "outcome": r.seen.to_json() if r.seen is not None else None,
                                      "replayed": r.replayed, "execution": r.execution,
                                      "execution_detail": r.execution_detail}
                        for r in result.rows}}


def compare_with_baseline(rows: list[RecordReplay], baseline: dict[str, Any],
                          target: Optional[TargetModule] = None) -> list[str]:
    """Set each row's ``baseline`` class (:mod:`fuzzer.records.changes`, with the baseline's
    outcome in production's place); returns the baseline's record ids not replayed now."""
    target = target or TargetModule("")
    seen = set()
    for row in rows:
        seen.add(row.record_id)
        then = baseline.get(row.record_id)
        if not isinstance(then, dict):
            row.baseline = "new"
            continue
        before = Seen.from_json(then.get("outcome"))
        parse = None
        if before is not None and row.seen is not None:
            parse = changes.classify(before, row.seen, row.truth, target)
            if parse != SAME and row.before is not None and not changes.alike(row.before, before, target):
                row.at_baseline = str(then.get("replayed") or "")
                row.difference = changes.difference(before, row.seen) or row.difference
        execution = _execution_change(then.get("execution"), then.get("execution_detail"), row.execution,
                                      row.execution_detail)
        row.baseline = _worst(parse, execution) or SAME
    return [rid for rid in baseline if rid not in seen]


def _execution_change(then: Any, then_detail: Any, now: Optional[str], now_detail: str) -> Optional[str]:
    """The execution's class against the baseline's (None when either was not judged)."""
    if then not in (MATCH, CHANGED) or now not in (MATCH, CHANGED):
        return None
    same = then == now and (then == MATCH or (then_detail or "") == now_detail)
    kind = change_kind(same=same, before_ok=then == MATCH, now_ok=now == MATCH)
    return REGRESSED if kind == "regression" else kind


__all__ = ["BASELINE_FORMAT", "BASELINE_VERSION", "baseline_document", "compare_with_baseline", "read_baseline"]
