"""A record: one captured tool-call turn, its fields and statuses, its id, and the filters that
select records (``fuzz records list/stats/replay``). Standard library only: the recorder running
inside users' applications builds records."""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field, fields
from typing import Any, Optional

from strategies.errors import ToolfuzzError

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


class RecordsError(ToolfuzzError):
    """A records database or records file that cannot be used; the message names the file."""


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


__all__ = ["EXECUTION_STATUSES", "FIELDS", "JSON_FIELDS", "PARSE_STATUSES", "Record", "RecordFilter", "RecordsError",
           "TEXT_FIELDS", "check_status", "new_record_id"]
