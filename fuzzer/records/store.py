"""The records store: one SQLite file that many processes of a production application write.

Why SQLite, and how it is used:

* **WAL mode** (``journal_mode=WAL``, ``synchronous=NORMAL``): readers never block the writers,
  writers of several processes (e.g. 4 web workers) take turns through the file lock with a busy
  timeout, and a committed transaction survives the process being SIGKILLed at any moment.
* **A versioned schema**: ``PRAGMA user_version`` is the schema version and :data:`MIGRATIONS`
  the ordered steps from 0; opening a file runs the missing steps inside one ``BEGIN IMMEDIATE``
  transaction (so two processes opening a new file at once cannot both create it), and a file
  written by a newer toolfuzz is refused instead of being misread. ``PRAGMA application_id`` marks
  the file as a toolfuzz records database, so a foreign SQLite file is refused too.
* **JSON columns** (``parsed_calls``, ``execution_result``, ``tool_io``, ``metadata``) hold JSON
  text that a ``CHECK (json_valid(...))`` constraint keeps valid, so they are queryable with
  ``json_extract`` (``SELECT json_extract(parsed_calls, '$[0].name') FROM records``).
* **Indexes** on ``anomaly_type``, ``session_id``, ``timestamp``, ``parse_status`` and
  ``parser_version``: the filters of ``fuzz records list/stats``.
* **A background writer** (:class:`fuzzer.records.writer.BackgroundWriter`) feeds it from the
  application: records in batches, one transaction per batch, never slowing the application.

Raw model outputs are stored byte-exact: text that cannot be encoded as UTF-8 (lone surrogates
from ``surrogateescape``) is stored as a BLOB of its ``surrogatepass`` encoding and decoded back.

A record itself is :mod:`fuzzer.records.record`; what its JSON columns hold, :mod:`fuzzer.records.values`.
This module imports only the standard library, because the recorder running inside users'
applications uses it.
"""

from __future__ import annotations

import functools
import itertools
import operator
import os
import sqlite3
import time
from typing import Any, Iterable, Iterator, Optional

from fuzzer.records.record import FIELDS, JSON_FIELDS, TEXT_FIELDS, Record, RecordFilter, RecordsError
from fuzzer.records.values import (EncodedJSON, _text_in, _text_out, dumps_json, iso_time, loads_json, storable,
                                   utc_now_iso)

#: 'tfrc': marks a toolfuzz records database (PRAGMA application_id).
APPLICATION_ID = 0x74667263

_JSON_CHECK = " CHECK ({0} IS NULL OR json_valid({0}))"

#: The schema, as ordered migrations from an empty file. Never edit a released step: append one.
MIGRATIONS: list[tuple[int, tuple[str, ...]]] = [
    (1, (
        "CREATE TABLE records (id INTEGER PRIMARY KEY, record_id TEXT NOT NULL UNIQUE, session_id TEXT, "
        "trace_id TEXT, timestamp TEXT NOT NULL, raw_model_output TEXT, "
        "parsed_calls TEXT" + _JSON_CHECK.format("parsed_calls") + ", parse_status TEXT, parse_error TEXT, "
        "execution_status TEXT, execution_error TEXT, "
        "execution_result TEXT" + _JSON_CHECK.format("execution_result") + ", "
        "tool_io TEXT" + _JSON_CHECK.format("tool_io") + ", final_reply TEXT, anomaly_type TEXT, "
        "anomaly_source TEXT, parser_version TEXT, tools_hash TEXT, parse_latency_ms REAL, "
        "execution_latency_ms REAL, metadata TEXT" + _JSON_CHECK.format("metadata") + ", "
        "source TEXT NOT NULL DEFAULT 'recorder', classified INTEGER)",
        "CREATE INDEX records_anomaly_type ON records(anomaly_type)",
        "CREATE INDEX records_session_id ON records(session_id)",
        "CREATE INDEX records_timestamp ON records(timestamp)",
        "CREATE INDEX records_parse_status ON records(parse_status)",
        "CREATE INDEX records_parser_version ON records(parser_version)",
        "CREATE TABLE tool_sets (tools_hash TEXT PRIMARY KEY, tools TEXT NOT NULL CHECK (json_valid(tools)), "
        "first_seen TEXT NOT NULL)",
        "CREATE TABLE record_tags (record_id TEXT NOT NULL, detector TEXT NOT NULL, anomaly_class TEXT NOT NULL, "
        "evidence TEXT, PRIMARY KEY (record_id, detector))",
        "CREATE INDEX record_tags_class ON record_tags(anomaly_class)",
        "CREATE TABLE labels (id INTEGER PRIMARY KEY, record_id TEXT NOT NULL, label TEXT NOT NULL, note TEXT, "
        "reviewer TEXT, created TEXT NOT NULL)",
        "CREATE INDEX labels_record_id ON labels(record_id)",
        f"PRAGMA application_id = {APPLICATION_ID}",
    )),
]


def schema_version() -> int:
    """The schema version this toolfuzz writes (the last migration)."""
    return MIGRATIONS[-1][0]



# --------------------------------------------------------------------------------------------
# The store


_COLUMNS = ", ".join(FIELDS)
_UPDATE_ALL = ", ".join(f"{name} = excluded.{name}" for name in FIELDS if name != "record_id")
_NO_VALUES = (None,) * len(FIELDS)


#: SQLite before 3.32 allows at most 999 bound parameters per statement.
_MAX_PARAMETERS = 999
#: Rows per multi-row statement, at most (see :func:`_upsert_statements`).
ROWS_PER_STATEMENT = 64


@functools.lru_cache(maxsize=128)
def _upsert_sql(present: tuple, rows: int = 1) -> str:
    """The upsert of ``rows`` rows whose non-NULL columns are ``present`` (one bool per field):
    NULL is written as a literal, so only the other columns are bound. None is not one of the
    types the sqlite3 module binds directly (int, float, str): each None parameter goes through
    its adapter protocol (a registry lookup, then attribute lookups that fail), measured at ~1 µs
    per parameter against ~0.1 µs for a str; a record has a dozen NULL columns, which made
    binding cost more than SQLite's own work. Rows of one application share few NULL patterns,
    so this makes few statements."""
    values = "(" + ", ".join("?" if bound else "NULL" for bound in present) + ")"
    return (f"INSERT INTO records ({_COLUMNS}) VALUES {', '.join([values] * rows)} "
            f"ON CONFLICT(record_id) DO UPDATE SET {_UPDATE_ALL}")


def _upsert_statements(rows: Iterable[tuple]) -> list[tuple[str, Any, bool]]:
    """``rows`` as (statement, parameters, many) to run in order — ``many``: ``parameters`` is a
    list of rows for executemany — giving the table the same content as upserting every row in
    turn: a record id met twice keeps the place of its first row and the values of its last (the
    upsert replaces every column), and consecutive rows with the same NULL columns share a
    statement (see :func:`_upsert_sql`).

    Runs of such rows are written up to :data:`ROWS_PER_STATEMENT` per statement (one VALUES
    list per row), the rest of a run by executemany: each statement stepped costs the sqlite3
    module a reset, a GIL release and a GIL acquisition, and 64 rows a step took the writer's
    CPU time per record from ~16 to ~11.5 µs (the 999-parameter limit of older SQLite bounds
    the rows of a wide pattern)."""
    latest: dict = {}
    for row in rows:
        latest[row[0]] = row
    runs: list[tuple[tuple, list]] = []
    shape: Optional[tuple] = None
    params: list = []
    for row in latest.values():
        present = tuple(map(operator.is_not, row, _NO_VALUES))
        if present != shape:
            shape, params = present, []
            runs.append((present, params))
        params.append(tuple(itertools.compress(row, present)))
    statements: list[tuple[str, Any, bool]] = []
    for present, params in runs:
        per_statement = max(1, min(ROWS_PER_STATEMENT, _MAX_PARAMETERS // max(1, sum(present))))
        whole = len(params) - len(params) % per_statement if per_statement > 1 else 0
        if whole:
            sql = _upsert_sql(present, per_statement)
            for start in range(0, whole, per_statement):
                statements.append((sql, tuple(itertools.chain.from_iterable(params[start:start + per_statement])),
                                   False))
        if whole < len(params):
            statements.append((_upsert_sql(present), params[whole:], True))
    return statements


class RecordStore:
    """One records database file. Not thread-safe: one connection, one thread (the background
    writer opens its own).

    ``must_exist``: fail when the file is missing instead of creating it (the read commands);
    ``busy_timeout_s``: how long a write waits for another process's transaction.
    Raises :class:`RecordsError` naming the file when it is not a usable records database.
    """

    def __init__(self, path: str | os.PathLike, *, must_exist: bool = False, busy_timeout_s: float = 10.0):
        self.path = os.fspath(path)
        if must_exist and not os.path.isfile(self.path):
            what = "is a directory" if os.path.isdir(self.path) else "no such records database"
            raise RecordsError(f"{self.path}: {what}")
        if must_exist and os.path.getsize(self.path) == 0:
            # (opening it would make it a records database: a read command never writes)
            raise RecordsError(f"{self.path}: an empty file, not a records database")
        self._must_exist = must_exist
        try:
            self.conn = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None,
                                        check_same_thread=False)
        except sqlite3.Error as exc:
            raise RecordsError(f"{self.path}: cannot open ({exc})") from None
        try:
            self._prepare(busy_timeout_s)
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            message = str(exc)
            if "not a database" in message or "malformed" in message:
                raise RecordsError(f"{self.path}: not an SQLite database") from None
            raise RecordsError(f"{self.path}: {message}") from None
        except BaseException:
            self.conn.close()
            raise

    def __repr__(self) -> str:
        return f"RecordStore({self.path!r})"

    def __enter__(self) -> "RecordStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    # -- opening and migrating ------------------------------------------------------------------
    def _prepare(self, busy_timeout_s: float) -> None:
        conn = self.conn
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        if version or app:
            self._check_identity(version, app)
        elif self._must_exist:
            raise RecordsError(f"{self.path}: an SQLite database, but not a records database")
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise sqlite3.DatabaseError(f"cannot switch to WAL mode (got {mode})")
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < schema_version():
            self._migrate()

    def _check_identity(self, version: int, app: int) -> None:
        if app != APPLICATION_ID:
            raise RecordsError(f"{self.path}: an SQLite database, but not a toolfuzz records database")
        if version > schema_version():
            raise RecordsError(f"{self.path}: written by a newer toolfuzz (schema version {version}; "
                               f"this one reads up to {schema_version()})")

    def _migrate(self) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise RecordsError(f"{self.path}: an SQLite database, but not a toolfuzz records database")
            for number, statements in MIGRATIONS:
                if number <= version:
                    continue
                for statement in statements:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise

    @property
    def version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    # -- writing --------------------------------------------------------------------------------
    def write_rows(self, rows: list[tuple]) -> None:
        """Insert (or replace, by record_id) rows already in storage form, in one transaction."""
        conn = self.conn
        statements = _upsert_statements(rows)
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement, params, many in statements:
                if many:
                    conn.executemany(statement, params)
                else:
                    conn.execute(statement, params)
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise

    def add(self, records: Iterable[Record], *, redactor: Any = None) -> int:
        """Store hand-made or imported records (redacted like recorded ones); returns how many."""
        rows = [storage_row(r.as_tuple(), redactor) for r in records]
        if rows:
            self.write_rows(rows)
        return len(rows)

    def put_tool_set(self, tools_hash: str, tools: Any, *, redactor: Any = None) -> None:
        """Store the tool schemas a record's ``tools_hash`` names (redacted too: descriptions and
        examples can hold secrets). Storing a hash already there does nothing."""
        value = storable(tools)
        if redactor is not None:
            value = redactor.redact_json(value)
        self.conn.execute("INSERT OR IGNORE INTO tool_sets (tools_hash, tools, first_seen) VALUES (?, ?, ?)",
                          (tools_hash, dumps_json(value), utc_now_iso()))

    def tool_set(self, tools_hash: Optional[str]) -> Any:
        if not tools_hash:
            return None
        row = self.conn.execute("SELECT tools FROM tool_sets WHERE tools_hash = ?", (tools_hash,)).fetchone()
        return loads_json(row[0]) if row else None

    # -- reading --------------------------------------------------------------------------------
    def count(self, flt: Optional[RecordFilter] = None) -> int:
        where, params = (flt or RecordFilter()).where()
        return self.conn.execute(f"SELECT count(*) FROM records{where}", params).fetchone()[0]

    def iter_records(self, flt: Optional[RecordFilter] = None, *, with_notes: bool = True) -> Iterator[Record]:
        """Records matching ``flt``, oldest first (with their tags and labels)."""
        flt = flt or RecordFilter()
        where, params = flt.where()
        limit = f" LIMIT {int(flt.limit)}" if flt.limit else ""
        cursor = self.conn.execute(f"SELECT {_COLUMNS} FROM records{where} ORDER BY timestamp, id{limit}", params)
        while True:
            rows = cursor.fetchmany(500)
            if not rows:
                return
            records = [record_from_row(row) for row in rows]
            if with_notes:
                self._attach_notes(records)
            yield from records

    def records(self, flt: Optional[RecordFilter] = None) -> list[Record]:
        return list(self.iter_records(flt))

    def get(self, ref: str) -> Record:
        """The record whose id is ``ref`` or starts with it; RecordsError when none or several."""
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM records WHERE record_id >= ? AND record_id < ? LIMIT 3",
                                 (ref, ref + "\U0010ffff")).fetchall()
        exact = [r for r in rows if r[0] == ref]
        if exact:
            rows = exact
        if len(rows) != 1:
            what = "no record" if not rows else "several records"
            raise RecordsError(f"{self.path}: {what} with id {ref!r}")
        record = record_from_row(rows[0])
        self._attach_notes([record])
        return record

    def _attach_notes(self, records: list[Record]) -> None:
        if not records:
            return
        by_id = {r.record_id: r for r in records}
        ids = list(by_id)
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for rid, detector, cls, evidence in self.conn.execute(
                    f"SELECT record_id, detector, anomaly_class, evidence FROM record_tags WHERE record_id IN ({marks}) "
                    f"ORDER BY rowid", chunk):
                by_id[rid].tags.append((detector, cls, evidence))
            for rid, label, note, reviewer, created in self.conn.execute(
                    f"SELECT record_id, label, note, reviewer, created FROM labels WHERE record_id IN ({marks}) "
                    f"ORDER BY id", chunk):
                by_id[rid].labels.append({"label": label, "note": note, "reviewer": reviewer, "created": created})

    # -- classification and review --------------------------------------------------------------
    def unclassified(self, version: int) -> list[Record]:
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM records WHERE classified IS NULL OR classified < ? "
                                 f"ORDER BY id", (version,)).fetchall()
        return [record_from_row(row) for row in rows]

    def save_classification(self, results: list[tuple[str, list, Optional[str]]], version: int) -> None:
        """``results``: (record_id, [(detector, class, evidence)], primary class or None). The
        primary class goes to ``anomaly_type`` unless the recorder or a reviewer set it."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            for record_id, tags, primary in results:
                conn.execute("DELETE FROM record_tags WHERE record_id = ?", (record_id,))
                conn.executemany("INSERT INTO record_tags (record_id, detector, anomaly_class, evidence) "
                                 "VALUES (?, ?, ?, ?)", [(record_id, d, c, e) for d, c, e in tags])
                conn.execute("UPDATE records SET anomaly_type = CASE WHEN anomaly_source IN ('recorder', 'label') "
                             "THEN anomaly_type ELSE ? END, anomaly_source = CASE WHEN anomaly_source IN "
                             "('recorder', 'label') THEN anomaly_source WHEN ? IS NULL THEN NULL ELSE 'detector' END, "
                             "classified = ? WHERE record_id = ?", (primary, primary, version, record_id))
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise

    def add_label(self, record_id: str, label: str, *, note: Optional[str] = None,
                  reviewer: Optional[str] = None) -> None:
        """A reviewer's label: kept forever (labels are appended, never replaced), and the
        record's primary class from now on."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT INTO labels (record_id, label, note, reviewer, created) VALUES (?, ?, ?, ?, ?)",
                         (record_id, label, note, reviewer, utc_now_iso()))
            conn.execute("UPDATE records SET anomaly_type = ?, anomaly_source = 'label' WHERE record_id = ?",
                         (label, record_id))
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise

    def integrity_check(self) -> str:
        return self.conn.execute("PRAGMA integrity_check").fetchone()[0]


def record_from_row(row: tuple) -> Record:
    values = dict(zip(FIELDS, row))
    for name in JSON_FIELDS:
        values[name] = loads_json(values[name])
    for name in TEXT_FIELDS:
        values[name] = _text_out(values[name])
    return Record(**values)


_JSON_INDEX = tuple(FIELDS.index(name) for name in JSON_FIELDS)
_TEXT_INDEX = tuple(FIELDS.index(name) for name in TEXT_FIELDS)
_TIME_INDEX = FIELDS.index("timestamp")


def storage_row(snapshot: tuple, redactor: Any) -> tuple:
    """A recorder snapshot (FIELDS order; timestamp as epoch seconds or ISO text; JSON fields as
    storable values) -> the row written: JSON encoded, redacted, text made storable. This runs
    once per record in the writer thread, so it works on positions, not names."""
    values = list(snapshot)
    for i in _JSON_INDEX:
        value = values[i]
        if value is not None:
            values[i] = str.__str__(value) if value.__class__ is EncodedJSON else dumps_json(value)
    if redactor is not None:
        redactor.redact_row(values)
    stamp = values[_TIME_INDEX]
    if stamp.__class__ is not str:
        values[_TIME_INDEX] = iso_time(stamp if stamp is not None else time.time())
    for i in _TEXT_INDEX:
        text = values[i]
        if text is not None and (text.__class__ is not str or not text.isascii()):
            values[i] = _text_in(text)
    return tuple(values)



def _rollback(conn: sqlite3.Connection) -> None:
    """Undo the transaction an exception (a Ctrl-C too) left open — none is open when it landed
    just after COMMIT returned, and ROLLBACK would then replace the interrupt with an error."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

__all__ = ["APPLICATION_ID", "MIGRATIONS", "RecordStore", "record_from_row", "schema_version", "storage_row"]
