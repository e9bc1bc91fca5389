"""Replay recorded production traffic against a new parser (and executor), without the model.

:class:`RecordsReplayJob` is a :class:`fuzzer.engine.pipeline.Job`. For every record selected:

* **parse_match** — the recorded raw output is fed to ``--target`` (isolated in a
  :class:`fuzzer.isolation.WorkerPool`; identical raw outputs are parsed once) and the outcome is
  compared with what the record says the production parser did: the same calls (JSON equality,
  :func:`strategies._internal.sample.json_equal`), or a failure of the same exception type (named
  relative to its target, :mod:`fuzzer.engine.relative`). A record without a recorded parse result is
  *unjudged*, never a pass.
* **execution_match** — with ``--executor``, every recorded executor invocation is run again on
  the *recorded* call (so a parser change and an executor change are told apart), inside a worker
  where every ``@recorder.tool`` answers from the record's ``tool_io`` — no external call; a tool
  call no record answers raises :class:`~fuzzer.records.recorder.UnrecordedToolCall`. The results
  (or exception types) must equal the recorded ones.

A parse that differs is classified (:mod:`fuzzer.records.changes`) as ``fixed`` (now the calls the
record vouches for), ``regressed`` (now wrong where production was not) or ``changed`` (nobody can
say which side is right), with the call or argument that differs. The result groups pass rates by
the parser version each record was made with ("recorded with v3, replayed with v4: 12 changed").
A **baseline** file keeps one replay's per-record outcomes; replaying later against it classifies
each record the same way against the baseline (``same``, ``fixed``, ``regressed``, ``changed``), or
``new``.

Exit status (:func:`records_replay_exit_code`, :func:`blocks`): with a baseline, 1 iff a record
regressed against it; without one, 1 iff a record regressed or changed against production (a fix
does not block); 130 when interrupted with nothing to report; a run that could replay nothing is
refused before it starts (exit 2).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from fuzzer.datafiles import read_json
from fuzzer.engine.decisions import change_kind, record_blocks
from fuzzer.engine.decisions import records_replay_exit_code as decide_exit
from fuzzer.engine.events import JobStarted, Phase, PhaseStarted, Progress
from fuzzer.engine.pipeline import Job
from fuzzer.records.recorder import REPLAYING_ENV
from fuzzer.records.record import Record, RecordFilter, RecordsError
from fuzzer.records.store import RecordStore
from fuzzer.records.values import storable, utc_now_iso
from fuzzer.engine.results import FAILED, PASSED, SKIPPED, JobResult, TestCase
from fuzzer.records import changes
from fuzzer.records.changes import CHANGED as CHANGED_KIND, FIXED, REGRESSED, SAME, Seen, error_type
from fuzzer.engine.relative import TargetModule
from strategies._internal.sample import json_equal
from strategies.errors import TargetError

#: The worker-side function that runs a user's executor on recorded invocations.
BASELINE_FORMAT = "toolfuzz-records-baseline"
BASELINE_VERSION = 2  #: 1 kept the calls' names only, so a change of arguments compared as "same"
#: Distinct outputs per pool.run call (a Progress event between chunks; Ctrl-C keeps the rest).
CHUNK = 128

MATCH, CHANGED, UNJUDGED = "match", "changed", "unjudged"
#: How a parse changed: production failed and the target returns calls now; production returned
#: calls and the target fails (rejects, crashes, hangs) now; other calls; another exception type.
NOW_PARSES, NOW_FAILS, DIFFERENT_CALLS, DIFFERENT_ERROR = "now parses", "now fails", "different calls", \
    "different error"
NOW_NO_CALL = "now returns no call"


# --------------------------------------------------------------------------------------------
# Worker side: the recorded executions, run again


@dataclass(frozen=True)
class RecordedExecutionSpec:
    """The :mod:`fuzzer.isolation.spec` of the workers that run recorded invocations again: they
    serve a :class:`RecordedExecutor` (the ``--executor`` loaded once in the zygote)."""

    executor: str
    cwd: Optional[str] = None
    timeout: float = 2.0
    memory_limit_mb: Optional[int] = 4096

    serve = "fuzzer.records.replay:RecordedExecutor"

    @property
    def label(self) -> str:
        return f"--executor {self.executor!r}"

    def decode(self, result: Any) -> Any:
        return result

    def fault(self, kind: str, elapsed: float, detail: Optional[str], frames: tuple) -> tuple:
        return (kind, detail or kind)


class RecordedExecutor:
    """The served object: :meth:`run` takes one record's ``{"invocations": [{"call", "kwargs"}],
    "tool_io": [...]}``, runs every invocation under :func:`~fuzzer.records.recorder.playback` of
    the recorded tool_io, and returns ``("ran", results)`` — each ``{"status": "ok", "result"}`` or
    ``{"status": "error", "error"}``."""

    def __init__(self, spec: RecordedExecutionSpec):
        from fuzzer.engine.references import load_target

        self.fn = load_target(spec.executor, cwd=spec.cwd, what="--executor")

    def run(self, job: dict, options: Any = None) -> tuple:
        from fuzzer.records.recorder import error_text, playback

        fn, results = self.fn, []
        with playback(job.get("tool_io") or []):
            for invocation in job.get("invocations") or []:
                try:
                    value = fn(invocation.get("call"), **(invocation.get("kwargs") or {}))
                    if hasattr(value, "__await__"):
                        import asyncio

                        value = asyncio.run(_awaited(value))
                    results.append({"status": "ok", "result": storable(value)})
                except Exception as exc:  # noqa: BLE001 - the executor's failure is its result
                    results.append({"status": "error", "error": error_text(exc)})
        return ("ran", results)


async def _awaited(value: Any) -> Any:
    return await value


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
    distinct_outputs: int = 0
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
            "distinct_outputs": self.distinct_outputs, "elapsed_s": round(self.elapsed_s, 3),
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


# --------------------------------------------------------------------------------------------
# Baselines


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


# --------------------------------------------------------------------------------------------
# The job


@dataclass
class ReplaySettings:
    """What ``fuzz replay --records`` / ``fuzz records replay`` configure."""

    db: str
    target: str
    executor: Optional[str] = None
    reject_on: tuple = ()
    timeout: float = 2.0
    memory_limit_mb: Optional[int] = 4096
    workers: int = 1
    cwd: Optional[str] = None
    filters: RecordFilter = field(default_factory=RecordFilter)
    baseline: Optional[str] = None
    update_baseline: bool = False
    target_version: Optional[str] = None  # a label for the replayed version (default: its file hash)


#: What the replay's worker processes inherit: a recorder imported by the target stays off.
_REPLAYING = {REPLAYING_ENV: "1"}


class RecordsReplayJob(Job):
    """Replay records (see the module docstring). Records are read when the job is built, so an
    unusable database or an empty selection is refused before anything runs."""

    name = "records-replay"

    def __init__(self, settings: ReplaySettings):
        super().__init__()
        self.settings = settings
        with RecordStore(settings.db, must_exist=True) as store:
            self.records: list[Record] = list(store.iter_records(settings.filters, with_notes=False))
        if not self.records:
            raise RecordsError(f"{settings.db}: no records to replay"
                               + (" match the filters" if settings.filters != RecordFilter() else ""))
        self.baseline: Optional[dict] = None
        if settings.baseline and os.path.exists(settings.baseline) and not settings.update_baseline:
            self.baseline = read_baseline(settings.baseline)
        if settings.baseline:
            parent = os.path.dirname(os.path.abspath(settings.baseline))
            if not os.path.isdir(parent):
                raise RecordsError(f"--baseline: directory {parent} does not exist")
        from fuzzer.harnesses.parser.harness import target_version

        self._result = RecordsReplayResult(
            label=settings.target, db=settings.db, target=settings.target, executor=settings.executor,
            target_version=settings.target_version or target_version(settings.target, settings.cwd),
            selected=len(self.records), baseline_path=settings.baseline)
        self._started = 0.0
        self.target = TargetModule.of(settings.target)

    def _spec(self, target: str) -> Any:
        from fuzzer.harnesses.parser.outcome import TargetSpec

        s = self.settings
        return TargetSpec(target=target, reject_on=tuple(s.reject_on), cwd=s.cwd or os.getcwd(), timeout=s.timeout,
                          memory_limit_mb=s.memory_limit_mb)

    def run(self) -> Iterator[Any]:
        from fuzzer.isolation import WorkerPool

        s, result = self.settings, self._result
        self._started = time.monotonic()
        yield JobStarted(job=self.name, label=s.target, settings={
            "db": s.db, "target": s.target, "executor": s.executor, "records": len(self.records),
            "baseline": s.baseline})
        yield PhaseStarted(Phase.REPLAYING, label="parse")
        by_text: dict[str, list[Record]] = {}
        unjudged: list[Record] = []
        for record in self.records:
            if record.raw_model_output is None:
                unjudged.append(record)
            else:
                by_text.setdefault(record.raw_model_output, []).append(record)
        result.distinct_outputs = len(by_text)
        rows: dict[str, RecordReplay] = {}
        for record in unjudged:
            rows[record.record_id] = RecordReplay(record.record_id, record.parser_version, record.session_id,
                                                  UNJUDGED, "", describe_recorded(record), "not replayed")
        texts = list(by_text)
        bridge = self._executor_pool() if s.executor else None  # a bad --executor fails before anything runs
        try:
            yield from self._replay_parses(texts, by_text, rows)
            if bridge is not None:
                yield from self._replay_executions(rows, bridge)
        finally:
            if bridge is not None:
                bridge.close()
        self._publish(rows)
        if self.baseline is not None:
            yield PhaseStarted(Phase.COMPARING, label=s.baseline or "")
            result.missing_from_run = compare_with_baseline(result.rows, self.baseline, self.target)
            result.baseline_compared = True

    def _replay_parses(self, texts: list, by_text: dict, rows: dict) -> Iterator[Any]:
        from fuzzer.isolation import WorkerPool

        s, result = self.settings, self._result
        with WorkerPool(self._spec(s.target), workers=s.workers, environ=_REPLAYING) as pool:
            for start in range(0, len(texts), CHUNK):
                chunk = texts[start:start + CHUNK]
                for text, outcome in zip(chunk, pool.run(chunk)):
                    for record in by_text[text]:
                        rows[record.record_id] = compare_parse(record, outcome, self.target)
                result.executions += len(chunk)
                self._publish(rows)
                yield Progress(executions=result.executions, elapsed_s=self._elapsed(),
                               failures={"changed": len(result.changed())}, phase=Phase.REPLAYING, label="parse")

    def _executor_pool(self) -> Any:
        """Workers running the recorded executions, started: an executor that cannot be loaded
        is a usage error (TargetError from the pool's start), not a failure per record."""
        from fuzzer.isolation import WorkerPool

        s = self.settings
        spec = RecordedExecutionSpec(s.executor, cwd=s.cwd or os.getcwd(), timeout=s.timeout,
                                     memory_limit_mb=s.memory_limit_mb)
        pool = WorkerPool(spec, workers=s.workers, environ=_REPLAYING)
        pool.start()
        return pool

    def _replay_executions(self, rows: dict[str, RecordReplay], pool: Any) -> Iterator[Any]:
        s, result = self.settings, self._result
        yield PhaseStarted(Phase.REPLAYING, label="execution")
        executed = [r for r in self.records if r.execution_result]
        for record in self.records:
            if not record.execution_result and record.record_id in rows:
                rows[record.record_id].execution = None
        jobs = [{"invocations": [{"call": e.get("call"), "kwargs": e.get("kwargs")} for e in record.execution_result],
                 "tool_io": record.tool_io or []}
                for record in executed]
        for start in range(0, len(jobs), CHUNK):
            chunk = jobs[start:start + CHUNK]
            for record, outcome in zip(executed[start:start + CHUNK], pool.run(chunk)):
                status, detail = compare_execution(record, outcome)
                row = rows[record.record_id]
                row.execution, row.execution_detail = status, detail
            result.executions += len(chunk)
            self._publish(rows)
            yield Progress(executions=result.executions, elapsed_s=self._elapsed(),
                           failures={"changed": len(result.changed())}, phase=Phase.REPLAYING,
                           label="execution")

    def _publish(self, rows: dict[str, RecordReplay]) -> None:
        order = {r.record_id: i for i, r in enumerate(self.records)}
        self._result.rows = sorted(rows.values(), key=lambda r: order[r.record_id])

    def _elapsed(self) -> float:
        return time.monotonic() - self._started if self._started else 0.0

    def wrap_up(self, interrupted: bool) -> Iterator[Any]:
        s, result = self.settings, self._result
        if s.baseline and not interrupted and (self.baseline is None or s.update_baseline):
            from fuzzer.engine.text import write_json_atomic

            write_json_atomic(s.baseline, baseline_document(result))
            result.baseline_saved = True
        return iter(())

    def result(self) -> RecordsReplayResult:
        self._result.elapsed_s = self._elapsed()
        self._result.stop_reason = self.stop_reason
        return self._result

    def exit_code(self, result: RecordsReplayResult) -> int:
        return records_replay_exit_code(result, interrupted=self.interrupted)


__all__ = ["RecordReplay", "RecordedExecutionSpec", "RecordedExecutor", "RecordsReplayJob", "RecordsReplayResult",
           "ReplaySettings", "VersionSummary", "blocks", "compare_parse", "compare_execution", "compare_with_baseline",
           "read_baseline", "records_replay_exit_code"]
