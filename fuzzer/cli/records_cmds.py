"""`fuzz records ...` (inspect, label, add and replay recorded production calls) and
`fuzz corpus import --records DB`.

The records themselves are written by :mod:`fuzzer.records.recorder` inside the user's
application; these commands read the database it writes. Every command takes the database as
its first argument; the read commands refuse a missing or foreign file with one line (exit 2).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Callable, Optional

import click

from fuzzer.cli import load_registry, main, options, translate_errors
from fuzzer.cli.corpus_cmds import corpus as corpus_group
from fuzzer.cli.errors import ConfigError, check_corpus_dir, check_writable_file
from fuzzer.engine.events import Event, Interrupted, JobFinished, Progress
from fuzzer.engine.pipeline import EventHandler

PREVIEW = 70
SHOWN_CHANGES = 20


# --------------------------------------------------------------------------------------------
# Shared options


def _filters(command: Callable) -> Callable:
    """--anomaly, --session, --status, --since, --parser-version."""
    decorators = [
        click.option("--anomaly", "anomalies", multiple=True, metavar="CLASS",
                     help="Records showing this anomaly class, detector or label (repeatable); 'unknown' "
                          "selects the unknown-anomaly pool."),
        click.option("--session", "sessions", multiple=True, metavar="ID", help="Records of this session (repeatable)."),
        click.option("--status", "statuses", multiple=True, metavar="STATUS",
                     help="A parse or execution status: ok, no_call, error, invalid, repaired; 'parse:' or "
                          "'execution:' in front selects one stage (repeatable)."),
        click.option("--since", metavar="WHEN", help="Records made since a time (2026-12-01, 2026-12-01T10:00) or "
                                                     "a duration back from now (30m, 2h, 7d)."),
        click.option("--parser-version", "parser_versions", multiple=True, metavar="VERSION",
                     help="Records made with this parser version (repeatable)."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def _build_filter(store: Any, anomalies: tuple, sessions: tuple, statuses: tuple, since: Optional[str],
                  parser_versions: tuple, limit: Optional[int] = None) -> Any:
    from fuzzer.records.store import RecordFilter, check_status, parse_since

    for value in statuses:
        check_status(value)
    if anomalies:
        _check_anomalies(store, anomalies)
    return RecordFilter(anomaly=tuple(anomalies), session=tuple(sessions), status=tuple(statuses),
                        since=parse_since(since) if since else None, parser_version=tuple(parser_versions),
                        limit=limit)


def _check_anomalies(store: Any, names: tuple) -> None:
    """Unknown anomaly names fail with close matches (a typo must not list nothing)."""
    from fuzzer.records.detect import DETECTORS, EXTRA_LABELS
    from strategies._internal.sample import ANOMALY_CLASSES
    from strategies.registry import Registry

    vocabulary = Registry("anomaly class, detector or label")
    known = list(ANOMALY_CLASSES) + list(DETECTORS) + list(EXTRA_LABELS) + ["unknown"]
    known += [row[0] for row in store.conn.execute("SELECT DISTINCT label FROM labels")]
    known += [row[0] for row in store.conn.execute("SELECT DISTINCT anomaly_type FROM records "
                                                   "WHERE anomaly_type IS NOT NULL")]
    for name in dict.fromkeys(known):
        vocabulary.register(name, name, module=__name__)
    for name in names:
        vocabulary[name]


db_argument = click.argument("db", metavar="DB", type=click.Path(dir_okay=True))


def _open(db: str) -> Any:
    from fuzzer.records.store import RecordStore

    return RecordStore(db, must_exist=True)


def _classified(db: str) -> Any:
    """Open the store and bring its classification up to date (detectors run once per record)."""
    from fuzzer.records.detect import Classifier

    store = _open(db)
    classifier = Classifier(store)
    classifier.run()
    for problem in classifier.problems:
        click.echo(f"warning: {problem}", err=True)
    return store


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
@_filters
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many records.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines (the record shape of `fuzz records show`).")
@translate_errors
def records_list(db: str, anomalies: tuple, sessions: tuple, statuses: tuple, since: Optional[str],
                 parser_versions: tuple, limit: int, as_json: bool) -> None:
    """One line per record: id, time, session, parser version, parse and execution status, the
    anomaly classes it shows, the start of its raw output."""
    with _classified(db) as store:
        flt = _build_filter(store, anomalies, sessions, statuses, since, parser_versions, limit)
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
    with _classified(db) as store:
        record = store.get(record_id)
    click.echo(json.dumps(record.to_json(), ensure_ascii=False, indent=2))


@records.command("stats")
@db_argument
@_filters
@click.option("--json", "as_json", is_flag=True, help="Print the distribution as JSON.")
@translate_errors
def records_stats(db: str, anomalies: tuple, sessions: tuple, statuses: tuple, since: Optional[str],
                  parser_versions: tuple, as_json: bool) -> None:
    """The distribution of anomaly classes per parser version and per session.

    A record counts once under each class it shows ('valid' when none, 'unknown' when it failed
    and no detector explains it; a reviewer's label wins).
    """
    from fuzzer.records.detect import class_distribution

    with _classified(db) as store:
        flt = _build_filter(store, anomalies, sessions, statuses, since, parser_versions)
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
@_filters
@click.option("--all", "include_labeled", is_flag=True, help="Also list records reviewers have labeled since.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many records.")
@translate_errors
def records_pool(db: str, anomalies: tuple, sessions: tuple, statuses: tuple, since: Optional[str],
                 parser_versions: tuple, include_labeled: bool, limit: int) -> None:
    """The unknown-anomaly pool: failed records (parse error, repair, execution error) that no
    detector explains, for review. Label one with `fuzz records label`."""
    from fuzzer.records.detect import pool

    with _classified(db) as store:
        flt = _build_filter(store, anomalies, sessions, statuses, since, parser_versions)
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
    with _open(db) as store:
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
    from fuzzer.records.store import Record, RecordStore, new_record_id, utc_now_iso

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


def _rate(passed: int, judged: int) -> str:
    return f"{100.0 * passed / judged:5.1f}% ({passed}/{judged})" if judged else "-"


def replay_summary_lines(result: Any) -> list[str]:
    """The replay table: pass rates by recorded parser version, the records that changed, and the
    baseline comparison — every number read from the result."""
    lines = [f"replayed {len(result.rows):,} of {result.selected:,} records ({result.distinct_outputs:,} distinct "
             f"outputs parsed once) with {result.target}" + (f" ({result.target_version})" if result.target_version else "")
             + (f" and executor {result.executor}" if result.executor else "") + f" in {result.elapsed_s:.1f} s"]
    lines.append(f"{'recorded with':<16} {'records':>8}  {'parse pass':<20} {'execution pass':<20} changed")
    for s in result.by_version():
        lines.append(f"{s.recorded_version:<16} {s.records:>8,}  {_rate(s.parse_passed, s.parse_judged):<20} "
                     f"{_rate(s.execution_passed, s.execution_judged):<20} {len(s.changed)}")
    for s in result.by_version():
        kinds = ", ".join(f"{s.kinds[k]} {k}" for k in ("regressed", "changed", "fixed") if s.kinds.get(k))
        lines.append(f"recorded with {s.recorded_version}, replayed with {result.replayed_label}: "
                     f"{len(s.changed)} changed" + (f" ({kinds})" if kinds else ""))
    lines += _changed_lines(result)
    if result.baseline_compared:
        counts = result.baseline_counts()
        lines.append(f"baseline {result.baseline_path}: "
                     + ", ".join(f"{n} {what}" for what, n in sorted(counts.items())))
    if result.baseline_saved:
        lines.append(f"baseline saved: {result.baseline_path}")
    return lines


#: The order records are listed in: what blocks first.
_SHOWN_FIRST = {"regressed": 0, "changed": 1, "fixed": 2, "new": 3, "same": 4}


def _changed_lines(result: Any) -> list[str]:
    """Each record that differs, once: against the baseline when one was compared (a record whose
    baseline class is "same" differs from production only as it did then), else production;
    regressions first, with the call or argument that differs."""
    rows = [r for r in result.rows if r.baseline not in ("same", None)] if result.baseline_compared \
        else result.changed()
    if not rows:
        return []
    rows = sorted(rows, key=lambda r: _SHOWN_FIRST.get(r.kind or "", 5))
    lines = ["changed records:" if not result.baseline_compared else "changed since the baseline:"]
    for row in rows[:SHOWN_CHANGES]:
        if row.parse == "changed" or row.at_baseline:
            what = f"parse {row.change}: {row.recorded} -> {row.replayed}" if row.parse == "changed" else \
                f"parse: {row.recorded} -> {row.replayed}"
            if row.at_baseline:
                what += f" (at baseline: {row.at_baseline})"
            if row.difference:
                what += f" — {row.difference}"
        else:
            what = f"execution: {row.execution_detail}"
        lines.append(f"  {row.record_id}  {row.parser_version or '-'}  {what} [{row.kind}]")
    if len(rows) > SHOWN_CHANGES:
        rest = rows[SHOWN_CHANGES:]
        blocking = sum(1 for r in rest if r.kind == "regressed")
        lines.append(f"  ... and {len(rest)} more" + (f", {blocking} of them regressed" if blocking else "")
                     + " (--report FILE.json lists every record)")
    return lines


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
      ``update_baseline``); ``filters``: a :class:`fuzzer.records.store.RecordFilter` (None: all);
    * ``reports``: report writers by name (``{"report": "r.json", "junit": ...}``); ``as_version``: a label
      for the replayed parser version (default: a hash of its source file); ``quiet``: no progress.

    Usage errors raise :class:`strategies.errors.ToolfuzzError` (call it under
    ``translate_errors``). Exit: 1 when a record regressed against the baseline when one is
    compared, else when one regressed or changed against production (a fix never fails the
    replay; :func:`fuzzer.records.replay.blocks`), 130 when interrupted with nothing changed, 0
    otherwise.
    """
    from fuzzer.cli.console import Summary, check_output_paths, progress
    from fuzzer.engine.pipeline import run_job
    from fuzzer.records.replay import RecordsReplayJob, ReplaySettings
    from fuzzer.records.store import RecordFilter

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
    final = run_job(job, [*writer_handlers(reports), progress(quiet=quiet), Summary(replay_summary_lines)])
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
@_filters
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
    with _classified(db) as store:
        flt = _build_filter(store, anomalies, sessions, statuses, since, parser_versions)
    code = run_records_replay(db=db, target=target, executor=executor, reject_on=reject_on, timeout=timeout,
                              memory_limit_mb=memory_limit_mb, workers=workers, baseline=baseline,
                              update_baseline=update_baseline, filters=flt,
                              reports=options.report_paths(report_paths), as_version=as_version, quiet=quiet)
    click.get_current_context().exit(code)


# --------------------------------------------------------------------------------------------
# fuzz corpus import --records DB


def _recorded_registry(store: Any) -> Any:
    """The tools recorded with the records, when they all share one tool set (else None)."""
    from fuzzer.records.detect import Classifier

    hashes = [row[0] for row in store.conn.execute("SELECT tools_hash FROM tool_sets")]
    return Classifier(store).registry_for(hashes[0]) if len(hashes) == 1 else None


@corpus_group.command("import")
@click.option("--records", "db", required=True, metavar="DB", help="The records database to import from.")
@options.corpus_dir
@options.target
@options.reject_on
@options.tools_file
@options.entry_level
@_filters
@options.shrink("Shrink crashes and hangs as text (other failures keep the recorded output).")
@options.timeout
@options.memory
@translate_errors
def corpus_import(db: str, corpus_dir: str, target: str, reject_on: tuple, tools_file: Optional[str], level: str,
                  anomalies: tuple, sessions: tuple, statuses: tuple, since: Optional[str], parser_versions: tuple,
                  shrink: bool, timeout: float, memory_limit_mb: int) -> None:
    """Run recorded outputs on the target and store those that fail as corpus entries.

    One entry per signature (the smallest input), each keeping the id of the record it came from
    (in its scenario, with the other records showing the same failure). Where a record says its
    parse was right, the recorded calls are the truth (false_reject and corruption are judged);
    other records are judged for robustness only (crash, hang, non-call returns). Without
    --tools, the tools recorded with the records are used when they all share one tool set.
    Exit 1 when a record shows the bug of an entry marked fixed: a regression (the entry stays
    fixed); else 0.
    """
    from corpus.store import CorpusStore
    from fuzzer.cli.campaign import target_spec
    from fuzzer.cli.render import regression_line
    from fuzzer.engine.jobs.corpus import REGRESSION
    from fuzzer.engine.corpus_writer import store_finding
    from fuzzer.engine.decisions import corpus_write_exit_code
    from fuzzer.isolation import WorkerPool
    from fuzzer.harnesses.parser.harness import target_version
    from fuzzer.harnesses.parser.oracle import Oracle
    from fuzzer.records.inject import fuzz_seeds, seed_samples

    registry = load_registry(tools_file)
    check_corpus_dir(corpus_dir)
    with _classified(db) as store:
        if tools_file is None:
            registry = _recorded_registry(store) or registry
        flt = _build_filter(store, anomalies, sessions, statuses, since, parser_versions)
        pairs = seed_samples(store, registry, filters=flt, with_ids=True)
    if not pairs:
        raise ConfigError(f"{db}: no records with a raw output to import"
                          + (" match the filters" if flt.where()[0] else ""))
    ids_of = {sample.text: ids for sample, ids in pairs}
    samples = [sample for sample, _ in pairs]
    oracle = Oracle(registry, level)
    corpus = CorpusStore(corpus_dir)
    version = target_version(target)
    counts: dict[str, int] = {}
    with WorkerPool(target_spec(target, reject_on, timeout, memory_limit_mb)) as pool:
        members: dict = {}
        findings = fuzz_seeds(samples, pool.run, oracle, registry=registry, shrink_budget_s=5.0 if shrink else 0.0,
                              members=members)
        for finding in findings:
            all_ids = [rid for s in members.get(finding.signature.id, [finding.sample]) for rid in ids_of.get(s.text, [])]
            first = ids_of.get(finding.sample.text, all_ids)[:1] or all_ids[:1]
            finding.target, finding.level = target, level
            entry = finding.to_entry(target=target, version=version)
            entry.scenario = {"record_id": first[0] if first else None, "records": all_ids[:100], "db": db}
            stored = store_finding(corpus, finding, target=target, entry=entry)
            what = REGRESSION if stored.regression else stored.what
            counts[what] = counts.get(what, 0) + 1
            more = f" (+{len(all_ids) - 1} more record(s))" if len(all_ids) > 1 else ""
            where = f" from record {entry.scenario['record_id']}{more}"
            click.echo(regression_line(finding.signature.id, finding.signature.title, where) if stored.regression
                       else f"{what:<9} {finding.signature.id} ({finding.signature.title}){where}")
    for problem in corpus.problems:
        click.echo(f"skipped {problem}", err=True)
    judged = sum(1 for sample in samples if sample.truth_known)
    click.echo(f"{len(samples)} distinct recorded outputs ({judged} with a known truth): {len(findings)} failing "
               f"signature(s)" + (": " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) if counts else ""))
    click.get_current_context().exit(corpus_write_exit_code(regressions=counts.get(REGRESSION, 0)))

