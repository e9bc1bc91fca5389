"""What the commands that read a records database share: the DB argument, the record filters
(``--anomaly``, ``--session``, ``--status``, ``--since``, ``--parser-version``) and opening the
database classified (``fuzz records ...``, ``fuzz corpus import --records``)."""

from __future__ import annotations

from typing import Any, Callable, Optional

import click


def filters(command: Callable) -> Callable:
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


def build_filter(store: Any, anomalies: tuple, sessions: tuple, statuses: tuple, since: Optional[str],
                  parser_versions: tuple, limit: Optional[int] = None) -> Any:
    from fuzzer.records.record import RecordFilter, check_status
    from fuzzer.records.values import parse_since

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


def open_records(db: str) -> Any:
    from fuzzer.records.store import RecordStore

    return RecordStore(db, must_exist=True)


def classified(db: str) -> Any:
    """Open the store and bring its classification up to date (detectors run once per record)."""
    from fuzzer.records.detect import Classifier

    store = open_records(db)
    classifier = Classifier(store)
    classifier.run()
    for problem in classifier.problems:
        click.echo(f"warning: {problem}", err=True)
    return store


__all__ = ["build_filter", "classified", "db_argument", "filters", "open_records"]
