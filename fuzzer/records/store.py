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
* **A background writer** (:class:`BackgroundWriter`): the application thread only appends a
  snapshot to a bounded queue; daemon threads redact and encode them, and write them in batches,
  one transaction per batch. A full queue drops the record (and counts it) rather than slowing the
  application; a failing disk is reported through a callback, never raised.

Raw model outputs are stored byte-exact: text that cannot be encoded as UTF-8 (lone surrogates
from ``surrogateescape``) is stored as a BLOB of its ``surrogatepass`` encoding and decoded back.

This module imports only the standard library (and orjson when installed, for speed), because the
recorder running inside users' applications uses it.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import operator
import os
import re
import sqlite3
import threading
import time
from collections import deque
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable, Iterator, Optional

from strategies.errors import ToolfuzzError

try:  # optional: ~15x faster than json for the small documents records hold
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a toolfuzz dependency
    _orjson = None

#: 'tfrc': marks a toolfuzz records database (PRAGMA application_id).
APPLICATION_ID = 0x74667263

#: The record's fields in storage order (the ``records`` table has these columns, plus ``id``).
FIELDS = ("record_id", "session_id", "trace_id", "timestamp", "raw_model_output", "parsed_calls",
          "parse_status", "parse_error", "execution_status", "execution_error", "execution_result",
          "tool_io", "final_reply", "anomaly_type", "anomaly_source", "parser_version", "tools_hash",
          "parse_latency_ms", "execution_latency_ms", "metadata", "source")
#: Fields holding JSON documents (stored as JSON text, kept valid by a CHECK constraint).
JSON_FIELDS = ("parsed_calls", "execution_result", "tool_io", "metadata")
#: Fields holding free text that may carry secrets (redacted as text).
TEXT_FIELDS = ("raw_model_output", "parse_error", "execution_error", "final_reply")

#: parse_status values: ``ok`` (returned calls), ``no_call`` (returned none), ``error`` (raised),
#: ``invalid`` (returned something that is not a call), ``repaired`` (the application says its
#: parser repaired the output); None = unknown (an import that holds no parse result).
PARSE_STATUSES = ("ok", "no_call", "error", "invalid", "repaired")
#: execution_status values; None = not executed.
EXECUTION_STATUSES = ("ok", "error")

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


class RecordsError(ToolfuzzError):
    """A records database or records file that cannot be used; the message names the file."""


# --------------------------------------------------------------------------------------------
# Values: what a JSON column can hold


def storable(value: Any, depth: int = 0) -> Any:
    """A JSON-typed copy of any value an application hands the recorder (a parse result, a tool
    result, an exception's arguments), built so the stored document is valid JSON and says what
    the value was: mappings and sequences are copied, pydantic models and dataclasses become their
    fields, a non-finite float becomes ``{"$float": "nan"}``, bytes ``{"$bytes": "<latin-1>"}``,
    anything else ``{"$repr": repr(x)}`` (cut at 200 characters). Nesting deeper than 100 levels
    (or a cycle) is cut with a ``$repr`` marker."""
    cls = value.__class__
    if cls is str or cls is bool or cls is int or value is None:
        return value
    if cls is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if depth > 100:
        return {"$repr": "<nested too deeply>"}
    if cls is dict:
        return {(k if k.__class__ is str else _key(k)): storable(v, depth + 1) for k, v in value.items()}
    if cls is list or cls is tuple:
        return [storable(v, depth + 1) for v in value]
    return _storable_other(value, depth)


def _storable_other(value: Any, depth: int) -> Any:
    from collections.abc import Mapping
    import dataclasses

    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return storable(float(value), depth)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, Mapping):
        return {(k if isinstance(k, str) else _key(k)): storable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [storable(v, depth + 1) for v in value]
        try:
            return sorted(items, key=lambda x: json.dumps(x, sort_keys=True))
        except (TypeError, ValueError):
            return items
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": bytes(value[:4096]).decode("latin-1")}
    try:
        dump = getattr(value, "model_dump", None)
        if callable(dump):
            return storable(dump(), depth + 1)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return storable(dataclasses.asdict(value), depth + 1)
    except Exception:  # noqa: BLE001 - a broken model: fall back to its repr
        pass
    return {"$repr": short_repr(value)}


def _key(key: Any) -> str:
    return str.__str__(key) if isinstance(key, str) else f"$repr:{short_repr(key)}"


def short_repr(value: Any, limit: int = 200) -> str:
    """``repr(value)``, cut at ``limit`` characters; never raises."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        text = f"<{type(value).__name__} with a failing __repr__>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def dumps_json(value: Any) -> Optional[str]:
    """JSON text for a storable value (None stays None): compact, valid, NaN-free. orjson's fast
    path is used when its result is exact (it writes NaN as null, so a ``null`` in its output is
    re-checked with json)."""
    if value is None:
        return None
    if _orjson is not None:
        try:
            out = _orjson.dumps(value)
        except (TypeError, _orjson.JSONEncodeError):  # lone surrogates, huge ints
            pass
        else:
            if b"null" not in out:
                return out.decode("utf-8")
    try:
        return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (ValueError, TypeError):
        return json.dumps(storable(value), ensure_ascii=True, allow_nan=False, separators=(",", ":"))


class EncodedJSON(str):
    """JSON text a snapshot already holds (the recorder serialized it instead of copying it):
    stored as it is."""

    __slots__ = ()


def loads_json(text: Any) -> Any:
    return None if text is None else json.loads(text)


def _text_in(text: Optional[str]) -> Any:
    """A text column value: the string, or (when it holds lone surrogates) a BLOB of its
    surrogatepass encoding, so the exact text comes back."""
    if text is None or text.__class__ is not str:
        return text if text is None else str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def _text_out(value: Any) -> Optional[str]:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return value


_SECOND: list = [None, ""]


def iso_time(epoch: float) -> str:
    """``2026-12-01T10:00:00.123456Z``: sortable as text, readable in the sqlite3 shell."""
    whole = int(epoch)
    micro = int(round((epoch - whole) * 1_000_000))
    if micro >= 1_000_000:
        whole, micro = whole + 1, micro - 1_000_000
    cached = _SECOND  # records come many per second: format the second once
    if cached[0] != whole:
        cached[1] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        cached[0] = whole
        return f"{cached[1]}.{micro:06d}Z"
    return f"{cached[1]}.{micro:06d}Z"


def utc_now_iso() -> str:
    return iso_time(time.time())


_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_since(value: str, *, now: Optional[float] = None) -> str:
    """``--since``: a duration back from now (``30m``, ``2h``, ``7d``, ``1w``) or an ISO date /
    time (``2026-12-01``, ``2026-12-01T10:00``, UTC unless an offset is given); returns the ISO
    timestamp records are compared with. Raises :class:`RecordsError` naming the value."""
    match = _RELATIVE.match(value)
    if match:
        seconds = float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[match.group(2)]
        return iso_time((time.time() if now is None else now) - seconds)
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise RecordsError(f"--since {value!r}: not a duration (30m, 2h, 7d) or an ISO date/time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return iso_time(moment.timestamp())


# --------------------------------------------------------------------------------------------
# Records


@dataclass
class Record:
    """One captured tool-call turn: the raw model output, what the parser made of it, what the
    executor did with the calls, and the reply. Parse and execution have separate status and
    error fields: an anomaly may show in either stage.

    ``execution_result``: one entry per executor invocation, ``{"call", "status", "result" |
    "error", "latency_ms"}``; ``tool_io``: one entry per tool the executor called, ``{"tool",
    "arguments", "status", "result" | "error"}`` — the answers replay plays back. Errors are
    ``"qualified.TypeName: message"``. ``anomaly_type`` is the primary anomaly class
    (``anomaly_source`` says who set it: ``recorder``, ``detector``, ``label``)."""

    record_id: str
    session_id: Optional[str] = None
    trace_id: Optional[str] = None
    timestamp: str = ""
    raw_model_output: Optional[str] = None
    parsed_calls: Optional[list] = None
    parse_status: Optional[str] = None
    parse_error: Optional[str] = None
    execution_status: Optional[str] = None
    execution_error: Optional[str] = None
    execution_result: Optional[list] = None
    tool_io: Optional[list] = None
    final_reply: Optional[str] = None
    anomaly_type: Optional[str] = None
    anomaly_source: Optional[str] = None
    parser_version: Optional[str] = None
    tools_hash: Optional[str] = None
    parse_latency_ms: Optional[float] = None
    execution_latency_ms: Optional[float] = None
    metadata: Optional[dict] = None
    source: str = "recorder"
    #: Filled when read: detector tags [(detector, class, evidence)] and labels [{label, note, ...}].
    tags: list = field(default_factory=list, compare=False)
    labels: list = field(default_factory=list, compare=False)

    def as_tuple(self) -> tuple:
        return tuple(getattr(self, name) for name in FIELDS)

    def to_json(self) -> dict[str, Any]:
        """The public JSON shape (``fuzz records show``; ``fuzz records add`` reads it back)."""
        data = {name: getattr(self, name) for name in FIELDS}
        data["tags"] = [{"detector": d, "anomaly_class": c, "evidence": e} for d, c, e in self.tags]
        data["labels"] = list(self.labels)
        return data

    @classmethod
    def from_json(cls, data: Any, *, where: str) -> "Record":
        """A record from its JSON shape; unknown keys are refused (a typo would silently drop a
        field). ``where`` names the file and line for the one-line error."""
        if not isinstance(data, dict):
            raise RecordsError(f"{where}: a record must be a JSON object, not {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RecordsError(f"{where}: unknown record field {unknown[0]!r}")
        values = {k: v for k, v in data.items() if k not in ("tags", "labels")}
        if "record_id" not in values or not values["record_id"]:
            values["record_id"] = new_record_id()
        for name in ("parsed_calls", "execution_result", "tool_io"):
            if values.get(name) is not None and not isinstance(values[name], list):
                raise RecordsError(f"{where}: field {name!r} must be a list or null")
        if values.get("metadata") is not None and not isinstance(values["metadata"], dict):
            raise RecordsError(f"{where}: field 'metadata' must be an object or null")
        for name in ("raw_model_output", "parse_status", "session_id", "trace_id", "parser_version"):
            if values.get(name) is not None and not isinstance(values[name], str):
                raise RecordsError(f"{where}: field {name!r} must be a string or null")
        status = values.get("parse_status")
        if status is not None and status not in PARSE_STATUSES:
            raise RecordsError(f"{where}: field 'parse_status': {status!r} is not one of {list(PARSE_STATUSES)}")
        return cls(**values)


def _new_id_source() -> tuple:
    """(12 random hex digits, a counter): what this process's record ids are made of."""
    return os.urandom(6).hex(), itertools.count()


_ID_SOURCE = _new_id_source()


def _renew_id_source() -> None:
    global _ID_SOURCE
    _ID_SOURCE = _new_id_source()


if hasattr(os, "register_at_fork"):
    # A forked child gets its own prefix, so two workers of a pre-forking server never make the
    # same id (an upsert would overwrite the other's record). Renewing at fork rather than
    # comparing os.getpid() per record keeps a system call off the application's path; the
    # background writer relies on the same hook to start afresh in the child.
    os.register_at_fork(after_in_child=_renew_id_source)


def new_record_id() -> str:
    """A unique id, cheap enough for the hot path: 12 random hex digits per process (renewed
    after a fork) and a counter (``next`` on it is atomic under the GIL)."""
    prefix, counter = _ID_SOURCE
    return f"{prefix}{next(counter):08x}"


# --------------------------------------------------------------------------------------------
# Filters


@dataclass(frozen=True)
class RecordFilter:
    """The filters of ``fuzz records list/stats/replay`` (all optional, combined with AND).

    ``anomaly``: a class (or detector name, or label) the record shows — its primary
    ``anomaly_type``, a detector tag or a reviewer label; ``unknown`` selects the pool.
    ``status``: a parse or execution status (``error`` matches either stage; ``parse:error`` or
    ``execution:error`` one stage). ``since``: an ISO timestamp (see :func:`parse_since`)."""

    anomaly: tuple = ()
    session: tuple = ()
    status: tuple = ()
    since: Optional[str] = None
    parser_version: tuple = ()
    record_ids: tuple = ()
    limit: Optional[int] = None

    def where(self) -> tuple[str, list]:
        clauses: list[str] = []
        params: list = []
        if self.anomaly:
            marks = ",".join("?" * len(self.anomaly))
            clauses.append(f"(anomaly_type IN ({marks}) OR record_id IN (SELECT record_id FROM record_tags "
                           f"WHERE anomaly_class IN ({marks}) OR detector IN ({marks})) OR record_id IN "
                           f"(SELECT record_id FROM labels WHERE label IN ({marks})))")
            params += list(self.anomaly) * 4
        if self.session:
            clauses.append(f"session_id IN ({','.join('?' * len(self.session))})")
            params += list(self.session)
        if self.status:
            parts = []
            for value in self.status:
                stage, _, status = value.rpartition(":")
                if stage in ("", "parse"):
                    parts.append("parse_status = ?")
                    params.append(status)
                if stage in ("", "execution"):
                    parts.append("execution_status = ?")
                    params.append(status)
            clauses.append("(" + " OR ".join(parts) + ")")
        if self.since:
            clauses.append("timestamp >= ?")
            params.append(self.since)
        if self.parser_version:
            clauses.append(f"parser_version IN ({','.join('?' * len(self.parser_version))})")
            params += list(self.parser_version)
        if self.record_ids:
            clauses.append(f"record_id IN ({','.join('?' * len(self.record_ids))})")
            params += list(self.record_ids)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def check_status(value: str) -> str:
    """Validate a ``--status`` value (``error``, ``parse:no_call``, ``execution:ok`` ...)."""
    stage, _, status = value.rpartition(":")
    allowed = {"": PARSE_STATUSES + EXECUTION_STATUSES, "parse": PARSE_STATUSES, "execution": EXECUTION_STATUSES}
    if stage not in allowed or status not in allowed[stage]:
        raise RecordsError(f"--status {value!r}: expected a parse status ({', '.join(PARSE_STATUSES)}) or an "
                           f"execution status ({', '.join(EXECUTION_STATUSES)}), optionally prefixed "
                           f"'parse:' or 'execution:'")
    return value


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


# --------------------------------------------------------------------------------------------
# The background writer


class _ToolSet:
    __slots__ = ("tools_hash", "tools")

    def __init__(self, tools_hash: str, tools: Any):
        self.tools_hash, self.tools = tools_hash, tools


class BackgroundWriter:
    """A bounded queue and two daemon threads that write what is queued, in batches.

    The application thread calls :meth:`submit` (an append and a length check); everything that
    costs happens in the background, as a pipeline: the *encoder* thread redacts and encodes a
    batch (Python, holding the GIL) while the *sink* thread writes the previous one to SQLite
    (which releases the GIL while it works), one transaction per batch of up to ``batch_size``. A
    full queue (``max_queue``) drops the snapshot and counts it in :attr:`dropped`. A write that
    fails (disk full, read-only directory, a lock held longer than ``busy_timeout_s``) drops its
    batch, is counted, and is reported to ``on_failure(exc)``; the next batch tries again with a
    fresh connection. ``on_commit(record_ids)`` is called after each committed batch
    (monitoring, and the crash tests). After ``os.fork()`` the child starts with an empty queue
    and its own threads and connection.
    """

    #: Encoded batches waiting for the sink (back-pressure on the encoder beyond that).
    PIPELINE_DEPTH = 4

    def __init__(self, path: str, *, redactor: Any = None, max_queue: int = 100_000, batch_size: int = 512,
                 flush_interval: float = 0.05, busy_timeout_s: float = 10.0,
                 on_failure: Optional[Callable[[BaseException], None]] = None,
                 on_commit: Optional[Callable[[list], None]] = None, on_recovery: Optional[Callable[[], None]] = None):
        self.path = os.fspath(path)
        self.redactor = redactor
        self.max_queue, self.batch_size = int(max_queue), max(1, int(batch_size))
        self.flush_interval, self.busy_timeout_s = flush_interval, busy_timeout_s
        self.on_failure, self.on_commit, self.on_recovery = on_failure, on_commit, on_recovery
        self.written = 0
        self.dropped = 0
        self.failed_batches = 0
        self._lock = threading.Lock()
        self._reset()
        if hasattr(os, "register_at_fork"):
            import weakref

            ref = weakref.ref(self)
            os.register_at_fork(after_in_child=lambda: (ref() is not None and ref()._reset()))

    def _reset(self) -> None:
        import queue

        self._queue: deque = deque()
        self._encoded: "queue.Queue" = queue.Queue(maxsize=self.PIPELINE_DEPTH)
        self._wake = threading.Event()
        self._stop = False
        self._thread: Optional[threading.Thread] = None
        self._sink_thread: Optional[threading.Thread] = None
        self._store: Optional[RecordStore] = None
        self._failing = False

    # -- application side -----------------------------------------------------------------------
    def submit(self, snapshot: tuple) -> bool:
        """Queue one record snapshot (FIELDS order). False (and counted) when the queue is full."""
        queue = self._queue
        if len(queue) >= self.max_queue:
            self.dropped += 1
            return False
        queue.append(snapshot)
        if self._thread is None:
            self._start()
        elif len(queue) == self.batch_size:
            self._wake.set()
        return True

    def submit_tool_set(self, tools_hash: str, tools: Any) -> None:
        self._queue.append(_ToolSet(tools_hash, tools))
        if self._thread is None:
            self._start()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued before this call is written (or dropped)."""
        if self._thread is None and not self._queue:
            return True
        marker = threading.Event()
        self._queue.append(marker)
        if self._thread is None:
            self._start()
        self._wake.set()
        return marker.wait(timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, stop the threads, close the connection."""
        thread, sink = self._thread, self._sink_thread
        if thread is None:
            return
        self.flush(timeout)
        self._stop = True
        self._wake.set()
        thread.join(timeout)
        if sink is not None:
            sink.join(timeout)

    @property
    def pending(self) -> int:
        return len(self._queue)

    # -- the encoder thread ---------------------------------------------------------------------
    def _start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            sink = threading.Thread(target=self._sink, name="toolfuzz-recorder-sqlite", daemon=True)
            thread = threading.Thread(target=self._loop, name="toolfuzz-recorder", daemon=True)
            self._sink_thread, self._thread = sink, thread
            sink.start()
            thread.start()

    def _loop(self) -> None:
        queue, wake = self._queue, self._wake
        while True:
            if not queue:
                if self._stop:
                    break
                wake.wait(self.flush_interval)
                wake.clear()
                continue
            if len(queue) < self.batch_size and not self._stop:
                wake.wait(self.flush_interval)  # let a batch build up
                wake.clear()
            self._encode_some(queue)
        self._encoded.put(None)  # the sink stops after what is already encoded

    def _encode_some(self, queue: deque) -> None:
        batch: list = []
        markers: list = []
        tool_sets: list = []
        popleft = queue.popleft
        while queue and len(batch) < self.batch_size:
            item = popleft()
            cls = item.__class__
            if cls is tuple:
                batch.append(item)
            elif cls is _ToolSet:
                tool_sets.append(item)
            else:  # a flush marker: everything before it is in this batch
                markers.append(item)
                break
        rows: list = []
        for snapshot in batch:
            try:
                rows.append(storage_row(snapshot, self.redactor))
            except Exception as exc:  # noqa: BLE001 - one unencodable record must not lose the batch
                self.dropped += 1
                self._report(exc)
        self._encoded.put((rows, tool_sets, markers))

    # -- the sink thread ------------------------------------------------------------------------
    def _sink(self) -> None:
        while True:
            item = self._encoded.get()
            if item is None:
                break
            rows, tool_sets, markers = item
            try:
                if rows or tool_sets:
                    self._write(rows, tool_sets)
            finally:
                for marker in markers:  # set once everything before it is committed (or dropped)
                    marker.set()
        self._drop_store()

    def _drop_store(self) -> None:
        if self._store is not None:
            try:
                self._store.close()
            except sqlite3.Error:
                pass
            self._store = None

    def _write(self, rows: list, tool_sets: list) -> None:
        try:
            store = self._store
            if store is None:
                store = self._store = RecordStore(self.path, busy_timeout_s=self.busy_timeout_s)
            for item in tool_sets:
                store.put_tool_set(item.tools_hash, item.tools, redactor=self.redactor)
            if rows:
                store.write_rows(rows)
        except Exception as exc:  # noqa: BLE001 - sqlite3.Error, OSError, RecordsError: never raised
            self.dropped += len(rows)
            self.failed_batches += 1
            self._drop_store()
            self._report(exc)
            return
        self.written += len(rows)
        if self._failing:
            self._failing = False
            if self.on_recovery is not None:
                self.on_recovery()
        if self.on_commit is not None and rows:
            try:
                self.on_commit([row[0] for row in rows])
            except Exception as exc:  # noqa: BLE001
                self._report(exc)

    def _report(self, exc: BaseException) -> None:
        self._failing = True
        if self.on_failure is not None:
            try:
                self.on_failure(exc)
            except Exception:  # noqa: BLE001 - a failing logger must not kill the writer
                pass


def _rollback(conn: sqlite3.Connection) -> None:
    """Undo the transaction an exception (a Ctrl-C too) left open — none is open when it landed
    just after COMMIT returned, and ROLLBACK would then replace the interrupt with an error."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass


__all__ = ["APPLICATION_ID", "BackgroundWriter", "EncodedJSON", "FIELDS", "JSON_FIELDS", "MIGRATIONS", "PARSE_STATUSES",
           "Record", "RecordFilter", "RecordStore", "RecordsError", "TEXT_FIELDS", "check_status", "dumps_json", "iso_time",
           "new_record_id", "parse_since", "schema_version", "storable", "storage_row"]

