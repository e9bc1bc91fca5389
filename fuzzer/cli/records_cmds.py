"""`fuzz records ...`: inspect, label, add and replay recorded production calls (`fuzz corpus import
--records DB` is a corpus command, :mod:`fuzzer.cli.corpus_cmds`).

The records themselves are written by :mod:`fuzzer.records.recorder` inside the user's
application; these commands read the database it writes. Every command takes the database as
its first argument; the read commands refuse a missing or foreign file with one line (exit 2).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Optional

import click

from fuzzer.cli.app import main, translate_errors
from fuzzer.cli import options
from fuzzer.cli.errors import ConfigError
from fuzzer.cli.record_filters import build_filter, classified, db_argument, filters, open_records

PREVIEW = 70


def _preview(text: Optional[str], limit: int = PREVIEW) -> str:
    if text is None:
        return "-"
    shown = json.dumps(text, ensure_ascii=False)[1:-1]
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"


def _record_line(record: Any) -> str:
    from fuzzer.records.detect import record_classes

    stages = f"parse:{record.parse_status or '-'} exec:{record.execution_status or '-'}"
    classes = ",".join(record_classes(record))
    return (f"{record.record_id}  {record.timestamp[:19]}  {record.session_id or '-':<10} "
            f"{record.parser_version or '-':<8} {stages:<26} {classes:<28} {_preview(record.raw_model_output)}")


# --------------------------------------------------------------------------------------------
# fuzz records


@main.group()
def records() -> None:
    """Recorded production tool calls: list, show, stats, pool, label, add, replay.

    Record them inside your application with fuzzer.records.recorder (TOOLFUZZ_RECORD=1).
    """


@records.command("list")
@db_argument
@filters
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many records.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines (the record shape of `fuzz records show`).")
@translate_errors
def records_list(db: str, anomalies: tuple, sessions: tuple, statuses: tuple, since: Optional[str],
                 parser_versions: tuple, limit: int, as_json: bool) -> None:
    """One line per record: id, time, session, parser version, parse and execution status, the
    anomaly classes it shows, the start of its raw output."""
    with classified(db) as store:
        flt = build_filter(store, anomalies, sessions, statuses, since, parser_versions, limit)
        total = store.count(dataclasses.replace(flt, limit=None))
        shown = 0
        for record in store.iter_records(flt):
            shown += 1
            click.echo(json.dumps(record.to_json(), ensure_ascii=False) if as_json else _record_line(record))
    if not as_json:
        click.echo(f"{shown} of {total} matching records" + (f" (--limit {limit})" if total > shown else ""))


@records.command("show")
@db_argument
@click.argument("record_id", metavar="RECORD_ID")
@translate_errors
def records_show(db: str, record_id: str) -> None:
    """Print one record (by id or a unique prefix of it) as JSON, with its tags and labels."""
    with classified(db) as store:
        record = store.get(record_id)
    click.echo(json.dumps(record.to_json(), ensure_ascii=False, indent=2))


@records.command("stats")
@db_argument
@filters
@click.option("--json", "as_json", is_flag=True, help="Print the distribution as JSON.")
@translate_errors
def records_stats(db: str, anomalies: tuple, sessions: tuple, statuses: tuple, since: Optional[str],
                  parser_versions: tuple, as_json: bool) -> None:
    """The distribution of anomaly classes per parser version and per session.

    A record counts once under each class it shows ('valid' when none, 'unknown' when it failed
    and no detector explains it; a reviewer's label wins).
    """
    from fuzzer.records.detect import class_distribution

    with classified(db) as store:
        flt = build_filter(store, anomalies, sessions, statuses, since, parser_versions)
        selected = list(store.iter_records(flt))
    by_version = class_distribution(selected, "parser_version")
    by_session = class_distribution(selected, "session_id")
    if as_json:
        click.echo(json.dumps({"records": len(selected),
                               "by_parser_version": {k: _counts(c) for k, c in by_version.items()},
                               "by_session": {k: _counts(c) for k, c in by_session.items()}}, indent=2))
        return
    click.echo(f"{db}: {len(selected):,} records, {len(by_session)} session(s), "
               f"parser version(s): {', '.join(sorted(by_version)) or '-'}")
    if not selected:
        return
    click.echo("anomaly classes by parser version (a record counts under each class it shows):")
    for version, counter in sorted(by_version.items()):
        total = counter[""]
        click.echo(f"  {version} ({total:,} records)")
        for cls, n in _ordered(counter):
            label = f"{cls} (pool)" if cls == "unknown" else cls
            click.echo(f"    {label:<24} {n:>7,}  {100.0 * n / total:5.1f}%")
    click.echo("by session:")
    for session, counter in sorted(by_session.items()):
        parts = ", ".join(f"{cls} {n}" for cls, n in _ordered(counter))
        click.echo(f"  {session} ({counter['']:,}): {parts}")


def _counts(counter: Any) -> dict:
    return {"records": counter[""], **dict(_ordered(counter))}


def _ordered(counter: Any) -> list:
    return sorted(((c, n) for c, n in counter.items() if c), key=lambda cn: (cn[0] != "valid", -cn[1], cn[0]))


@records.command("pool")
@db_argument
@filters
@click.option("--all", "include_labeled", is_flag=True, help="Also list records reviewers have labeled since.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many records.")
@translate_errors
def records_pool(db: str, anomalies: tuple, sessions: tuple, statuses: tuple, since: Optional[str],
                 parser_versions: tuple, include_labeled: bool, limit: int) -> None:
    """The unknown-anomaly pool: failed records (parse error, repair, execution error) that no
    detector explains, for review. Label one with `fuzz records label`."""
    from fuzzer.records.detect import pool

    with classified(db) as store:
        flt = build_filter(store, anomalies, sessions, statuses, since, parser_versions)
        found = pool(store, flt, include_labeled=include_labeled)
    for record in found[:limit]:
        label = f"  labeled {record.labels[-1]['label']}" if record.labels else ""
        error = record.parse_error or record.execution_error or ""
        click.echo(f"{record.record_id}  {record.session_id or '-':<10} parse:{record.parse_status or '-'} "
                   f"exec:{record.execution_status or '-'}{label}")
        click.echo(f"    output: {_preview(record.raw_model_output, 100)}")
        if error:
            click.echo(f"    error:  {_preview(error, 100)}")
    unlabeled = sum(1 for r in found if not r.labels)
    click.echo(f"{len(found)} record(s) in the pool ({unlabeled} unlabeled)"
               + (f", {limit} shown" if len(found) > limit else "")
               + (f"; label one with: fuzz records label {db} RECORD_ID CLASS" if unlabeled else ""))


@records.command("label")
@db_argument
@click.argument("record_id", metavar="RECORD_ID")
@click.argument("label", metavar="LABEL")
@click.option("--note", help="Why (kept with the label).")
@click.option("--reviewer", default=lambda: os.environ.get("USER"), show_default="$USER", help="Who labels.")
@click.option("--new-class", is_flag=True, help="Accept a label that is not an anomaly class yet (snake_case).")
@translate_errors
def records_label(db: str, record_id: str, label: str, note: Optional[str], reviewer: Optional[str],
                  new_class: bool) -> None:
    """Label a record with an anomaly class (or 'valid'). Labels are kept forever; the latest is
    the record's class from then on, and classification never overwrites it."""
    from fuzzer.records.detect import check_label

    label = check_label(label, new_class=new_class)
    with open_records(db) as store:
        record = store.get(record_id)
        store.add_label(record.record_id, label, note=note, reviewer=reviewer)
    click.echo(f"labeled {record.record_id} as {label}")


@records.command("add")
@db_argument
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--from", "kind", default="auto", show_default=True, metavar="KIND",
              help="What FILES are: auto, records (toolfuzz record JSON), openai (chat-completion JSON/JSONL "
                   "logs), otel (OpenTelemetry GenAI spans as JSON), vcr (vcrpy cassettes).")
@click.option("--text", "text", help="A hand-made record: the raw model output.")
@click.option("--text-file", type=click.Path(dir_okay=False), help="A hand-made record: the raw output read from a file.")
@click.option("--calls", "calls_json", metavar="JSON", help="The record's parsed calls (a JSON list of {name, arguments}).")
@click.option("--parse-status", type=click.Choice(["ok", "no_call", "error", "invalid", "repaired"]),
              help="The record's parse status (default: ok with --calls, else none).")
@click.option("--parse-error", help="The record's parse error, 'Type: message'.")
@click.option("--anomaly-type", help="The record's anomaly class, as the application classified it.")
@click.option("--parser-version", "parser_version", help="Parser version for records that carry none.")
@click.option("--session", "session_id", help="Session id for records that carry none.")
@translate_errors
def records_add(db: str, files: tuple, kind: str, text: Optional[str], text_file: Optional[str],
                calls_json: Optional[str], parse_status: Optional[str], parse_error: Optional[str],
                anomaly_type: Optional[str], parser_version: Optional[str], session_id: Optional[str]) -> None:
    """Add records: hand-made (--text / --text-file) or imported from FILES.

    Imported records are redacted like recorded ones (TOOLFUZZ_REDACT_* apply). The database is
    created when missing.
    """
    from fuzzer.records.importers import IMPORTERS, import_file
    from fuzzer.records.redact import Redactor
    from fuzzer.records.record import Record, new_record_id
    from fuzzer.records.store import RecordStore
    from fuzzer.records.values import utc_now_iso

    if kind != "auto":
        IMPORTERS[kind]
    if text is not None and text_file is not None:
        raise ConfigError("--text and --text-file: give one of them")
    if (calls_json or parse_status or parse_error or anomaly_type) and text is None and text_file is None:
        raise ConfigError("--calls/--parse-status/--parse-error/--anomaly-type describe a hand-made record: "
                          "give --text or --text-file too")
    if not files and text is None and text_file is None:
        raise ConfigError("nothing to add: give FILES to import, or --text / --text-file for a hand-made record")
    imported = []
    for path in files:
        result = import_file(path, kind=kind, parser_version=parser_version, session_id=session_id)
        for warning in result.warnings:
            click.echo(f"warning: {warning}", err=True)
        imported.append((path, result))
    manual: list = []
    if text is not None or text_file is not None:
        from fuzzer.inputs import read_text_exactly

        raw = text if text is not None else read_text_exactly(text_file)
        calls = None
        if calls_json is not None:
            try:
                calls = json.loads(calls_json)
            except ValueError as exc:
                raise ConfigError(f"--calls: not JSON ({exc})") from None
            from fuzzer.engine.calls import InvalidReturn, normalize_calls

            try:
                calls = normalize_calls(calls)
            except InvalidReturn as exc:
                raise ConfigError(f"--calls: {exc}") from None
        status = parse_status or (("ok" if calls else "no_call") if calls is not None else None)
        manual.append(Record(record_id=new_record_id(), timestamp=utc_now_iso(), raw_model_output=raw,
                             parsed_calls=calls, parse_status=status, parse_error=parse_error,
                             anomaly_type=anomaly_type, anomaly_source="recorder" if anomaly_type else None,
                             parser_version=parser_version or "manual", session_id=session_id, source="manual"))
    if os.path.isdir(db):
        raise ConfigError(f"{db}: is a directory")
    redactor = Redactor.from_env()
    with RecordStore(db) as store:
        for path, result in imported:
            for digest, tools in result.tool_sets.items():
                store.put_tool_set(digest, tools, redactor=redactor)
            added = store.add(result.records, redactor=redactor)
            click.echo(f"added {added} record(s) from {path} ({result.records[0].source if result.records else kind})")
        if manual:
            store.add(manual, redactor=redactor)
            click.echo(f"added record {manual[0].record_id}")


# --------------------------------------------------------------------------------------------
# Replay


def run_records_replay(*, db: str, target: str, executor: Optional[str] = None, reject_on: tuple = (),
                       timeout: float = 2.0, memory_limit_mb: Optional[int] = 4096, workers: int = 1,
                       baseline: Optional[str] = None, update_baseline: bool = False, filters: Any = None,
                       reports: Optional[dict] = None, as_version: Optional[str] = None, quiet: bool = False) -> int:
    """Replay the records of ``db`` on ``target`` and print the table; returns the exit status.

    The one implementation behind ``fuzz records replay DB`` and ``fuzz replay --records DB``:

    * ``db``: the records database; ``target``: the parser ``M:A``; ``executor``: optionally an
      executor ``M:A``, re-run on the recorded calls with tools answered from the records;
    * ``reject_on``, ``timeout``, ``memory_limit_mb``, ``workers``: as for every target run;
    * ``baseline``: a file — compared with when it exists, written when it does not (or when
      ``update_baseline``); ``filters``: a :class:`fuzzer.records.record.RecordFilter` (None: all);
    * ``reports``: report writers by name (``{"report": "r.json", "junit": ...}``); ``as_version``: a label
      for the replayed parser version (default: a hash of its source file); ``quiet``: no progress.

    Usage errors raise :class:`strategies.errors.ToolfuzzError` (call it under
    ``translate_errors``). Exit: 1 when a record regressed against the baseline when one is
    compared, else when one regressed or changed against production (a fix never fails the
    replay; :func:`fuzzer.engine.decisions.record_blocks`), 130 when interrupted with nothing changed, 0
    otherwise.
    """
    from fuzzer.cli.console import Summary, check_output_paths, progress
    from fuzzer.engine.pipeline import run_job
    from fuzzer.records.replay import RecordsReplayJob, ReplaySettings
    from fuzzer.records.record import RecordFilter

    if ":" not in target:
        raise ConfigError(f"--target: {target!r} is not of the form module:callable")
    if executor is not None and ":" not in executor:
        raise ConfigError(f"--executor: {executor!r} is not of the form module:callable")
    reports = dict(reports or {})
    check_output_paths({**reports, "baseline": baseline})
    settings = ReplaySettings(db=db, target=target, executor=executor, reject_on=tuple(reject_on), timeout=timeout,
                              memory_limit_mb=memory_limit_mb, workers=workers, cwd=os.getcwd(),
                              filters=filters or RecordFilter(), baseline=baseline, update_baseline=update_baseline,
                              target_version=as_version)
    from fuzzer.cli.console import writer_handlers

    job = RecordsReplayJob(settings)
    final = run_job(job, [*writer_handlers(reports), progress(quiet=quiet), Summary()])
    for name, path in reports.items():
        if path:
            click.echo(f"{name}: {path}")
    return final.exit_code


@records.command("replay")
@db_argument
@options.target
@click.option("--executor", metavar="M:A", help="Also re-run this executor on the recorded calls; tools decorated "
                                                "with @recorder.tool answer from the records (no external call).")
@options.reject_on
@filters
@click.option("--baseline", metavar="FILE", type=click.Path(dir_okay=False),
              help="Compare with this saved replay result, or save one here when the file does not exist. With a "
                   "baseline, exit 1 only for records that regressed against it.")
@click.option("--update-baseline", is_flag=True, help="Overwrite --baseline with this run's result.")
@click.option("--as-version", metavar="LABEL", help="Name of the replayed parser version in the table "
                                                    "(default: a hash of its source file).")
@options.worker_limits
@options.reports
@options.quiet
@translate_errors
def records_replay(db: str, target: str, executor: Optional[str], reject_on: tuple, anomalies: tuple,
                   sessions: tuple, statuses: tuple, since: Optional[str], parser_versions: tuple,
                   baseline: Optional[str], update_baseline: bool, as_version: Optional[str], workers: int,
                   timeout: float, memory_limit_mb: int, quiet: bool, **report_paths: Any) -> None:
    """Re-feed every recorded raw output to the parser and compare with the recorded parsed calls
    (parse_match); with --executor, re-execute the recorded calls (execution_match). Prints pass
    rates by the parser version each record was made with and the records whose result changed.

    Each record that differs is fixed (now the calls the record vouches for), regressed (now
    wrong where it was not) or changed (nobody can say). Exit 1 when a record regressed or changed
    (with --baseline: when one regressed against the baseline), 0 otherwise.
    """
    if update_baseline and not baseline:
        raise ConfigError("--update-baseline: give --baseline FILE too")
    with classified(db) as store:
        flt = build_filter(store, anomalies, sessions, statuses, since, parser_versions)
    code = run_records_replay(db=db, target=target, executor=executor, reject_on=reject_on, timeout=timeout,
                              memory_limit_mb=memory_limit_mb, workers=workers, baseline=baseline,
                              update_baseline=update_baseline, filters=flt,
                              reports=options.report_paths(report_paths), as_version=as_version, quiet=quiet)
    click.get_current_context().exit(code)
