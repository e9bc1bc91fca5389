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

Exit status (:func:`fuzzer.engine.decisions.records_replay_exit_code`): with a baseline, 1 iff a record
regressed against it; without one, 1 iff a record regressed or changed against production (a fix
does not block); 130 when interrupted with nothing to report; a run that could replay nothing is
refused before it starts (exit 2).
"""


from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from fuzzer.engine.events import JobStarted, Phase, PhaseStarted, Progress
from fuzzer.engine.pipeline import Job
from fuzzer.records.recorder import REPLAYING_ENV
from fuzzer.records.record import Record, RecordFilter, RecordsError
from fuzzer.records.store import RecordStore
from fuzzer.engine.relative import TargetModule
from fuzzer.records.baseline import baseline_document, compare_with_baseline, read_baseline
from fuzzer.records.replay_results import (UNJUDGED, RecordReplay, RecordsReplayResult, compare_execution,
                                           compare_parse, describe_recorded, records_replay_exit_code)
from fuzzer.records.replay_worker import RecordedExecutionSpec

#: Distinct outputs per pool.run call (a Progress event between chunks; Ctrl-C keeps the rest).
CHUNK = 128


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
                result.parsed_outputs += len(chunk)
                self._publish(rows)
                yield Progress(executions=result.executions, elapsed_s=self._elapsed(),
                               failures={"changed": len(result.changed())}, phase=Phase.REPLAYING, label="parse")

    def _executor_pool(self) -> Any:
        """Workers running the recorded executions, started: an executor that cannot be loaded
        is a usage error (TargetError from the pool's start), not a failure per record."""
        from fuzzer.isolation import WorkerPool

        s = self.settings
        spec = RecordedExecutionSpec(executor=s.executor, cwd=s.cwd or os.getcwd(), timeout=s.timeout,
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


__all__ = ["RecordsReplayJob", "ReplaySettings"]
