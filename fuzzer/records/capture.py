"""A record under construction, inside the application: what the recorder snapshots of a parse, an
execution and a tool call (normalized copies, so the application's objects are never kept or
changed), the error texts and versions records name. Standard library only (and toolfuzz's own
light modules): it runs inside users' applications."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from typing import Any, Callable, Optional, Union

from fuzzer.engine.calls import normalize_calls
from fuzzer.engine.references import exception_message, exception_name
from fuzzer.records.record import new_record_id
from fuzzer.records.values import EncodedJSON, _orjson, storable

_ERROR_LIMIT = 500
_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE (0x100 is CO_ITERABLE_COROUTINE)


def error_text(exc: BaseException) -> str:
    """``qualified.TypeName: message`` (message cut at 500 characters); never raises."""
    name, message = exception_name(type(exc)), exception_message(exc, _ERROR_LIMIT)
    return f"{name}: {message}" if message else name


def source_version(fn: Callable) -> Optional[str]:
    """``sha256:<12 hex>`` of the file defining ``fn`` — the same form as the version
    ``fuzz replay`` computes for ``--target M:A``, so records and replays name versions alike."""
    fn = getattr(fn, "__wrapped__", fn)
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__call__", None), "__code__", None)
    path = getattr(code, "co_filename", None)
    if not path or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as fh:
            return "sha256:" + hashlib.sha256(fh.read()).hexdigest()[:12]
    except OSError:
        return None


def tools_hash(tools: Any) -> str:
    """``sha256:<12 hex>`` of the tool schemas as canonical JSON."""
    text = json.dumps(storable(tools), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()[:12]


def _is_coroutine_function(fn: Any) -> bool:
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    return bool(code is not None and code.co_flags & _CO_COROUTINE)


# --------------------------------------------------------------------------------------------
# A record under construction


class _Pending:
    """The record being built for one model output (the turn's, or an implicit one)."""

    __slots__ = ("record_id", "session_id", "trace_id", "started", "raw", "parsed", "parse_status", "parse_error",
                 "exec_status", "exec_error", "executions", "tool_io", "final_reply", "anomaly_type",
                 "parser_version", "tools_hash", "parse_ms", "exec_ms", "metadata", "has_parse", "in_executor",
                 "explicit")

    def __init__(self, session_id: Optional[str], trace_id: Optional[str], tools_hash: Optional[str],
                 explicit: bool, metadata: Optional[dict] = None):
        self.record_id = new_record_id()
        self.session_id, self.trace_id = session_id, trace_id
        self.started = time.time()
        self.raw = self.parsed = self.parse_status = self.parse_error = None
        self.exec_status = self.exec_error = None
        self.executions: list = []
        self.tool_io: list = []
        self.final_reply = self.anomaly_type = self.parser_version = None
        self.tools_hash = tools_hash
        self.parse_ms = self.exec_ms = None
        self.metadata = dict(metadata) if metadata else None
        self.has_parse = False
        self.in_executor = 0
        self.explicit = explicit

    def empty(self) -> bool:
        return not self.has_parse and not self.executions and not self.tool_io and self.final_reply is None

    def snapshot(self) -> tuple:
        """The record as it is now, in FIELDS order (lists copied: they keep growing)."""
        return (self.record_id, self.session_id, self.trace_id, self.started, self.raw, self.parsed,
                self.parse_status, self.parse_error, self.exec_status, self.exec_error,
                list(self.executions) if self.executions else None, list(self.tool_io) if self.tool_io else None,
                self.final_reply, self.anomaly_type, "recorder" if self.anomaly_type else None, self.parser_version,
                self.tools_hash, self.parse_ms, self.exec_ms, dict(self.metadata) if self.metadata else None,
                "recorder")


class _Capture:
    """One wrapped call being recorded, as a context manager around it: on entry it joins an
    executor's record (``enter``, when given) and starts the clock; on exit it leaves that record
    and hands the call's value or exception, and the time it took, to ``record``. It never
    suppresses the exception. The record is built here, once, for sync and async wrappers alike."""

    __slots__ = ("record", "enter", "args", "kwargs", "pending", "start", "value")

    def __init__(self, record: Callable, enter: Optional[Callable[[], Optional[_Pending]]], args: tuple,
                 kwargs: dict):
        self.record, self.enter, self.args, self.kwargs = record, enter, args, kwargs
        self.pending: Optional[_Pending] = None
        self.value: Any = None

    def __enter__(self) -> "_Capture":
        self.pending = self.enter() if self.enter is not None else None
        self.start = time.perf_counter()
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> bool:
        if self.pending is not None:
            self.pending.in_executor -= 1
        self.record(self.args, self.kwargs, None if exc is not None else self.value, exc,
                    time.perf_counter() - self.start)
        return False


def _raw_text(args: tuple, kwargs: dict, text_arg: Union[int, str, None]) -> Any:
    """The model output a parser was given: ``text_arg`` (an index or a keyword) when set, else
    the first string argument (so methods work: ``self`` is skipped), else the first argument
    as JSON text (a parser of message objects)."""
    if text_arg is not None:
        value = kwargs.get(text_arg) if isinstance(text_arg, str) else (
            args[text_arg] if -len(args) <= text_arg < len(args) else None)
    else:
        value = None
        for a in args:
            if a.__class__ is str:
                return a
        for v in kwargs.values():
            if v.__class__ is str:
                return v
        value = args[0] if args else next(iter(kwargs.values()), None)
    if value is None or value.__class__ is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "surrogateescape")
    return json.dumps(storable(value), ensure_ascii=False, sort_keys=True)


def snapshot_calls(value: Any) -> tuple[Any, bool]:
    """(the parse result as stored, whether it holds a call). A list of plain ``{"name": str,
    "arguments": dict}`` — what most parsers return — is snapshot by serializing it (orjson:
    a fraction of a microsecond, and the writer stores the text as it is); anything else goes
    through the target contract's :func:`~fuzzer.engine.calls.normalize_calls` (which may raise
    InvalidReturn)."""
    if value.__class__ is list and _orjson is not None:
        for item in value:
            if (item.__class__ is not dict or len(item) != 2 or item.get("name").__class__ is not str
                    or item.get("arguments").__class__ is not dict):
                break
        else:
            try:
                out = _orjson.dumps(value)
            except (TypeError, _orjson.JSONEncodeError):
                pass
            else:
                if b"null" not in out:  # orjson writes NaN as null: those take the careful path
                    return EncodedJSON(out, "utf-8"), bool(value)  # decoded straight into the marker type
    calls = normalize_calls(value)
    return calls, bool(calls)


def _executor_input(args: tuple, kwargs: dict) -> tuple[Any, Optional[dict]]:
    """(the call an executor was given, its other keyword arguments): the first argument that is
    a mapping, a list or has a ``name`` (``self`` is skipped), stored as a JSON value."""
    chosen = None
    for a in args:
        if isinstance(a, (Mapping, list, tuple)) or hasattr(a, "name") or hasattr(a, "function"):
            chosen = a
            break
    else:
        chosen = args[0] if args else None
    rest = {k: v for k, v in kwargs.items()} or None
    if chosen is None and kwargs:
        key = next(iter(kwargs))
        chosen, rest = kwargs[key], {k: v for k, v in kwargs.items() if k != key} or None
    try:
        value = normalize_calls(chosen)
        call: Any = value[0] if not isinstance(chosen, (list, tuple)) and len(value) == 1 else value
    except Exception:  # noqa: BLE001 - not a call (InvalidReturn or worse): keep it as it is
        call = storable(chosen)
    return call, (storable(rest) if rest else None)


__all__ = ["error_text", "snapshot_calls", "source_version", "tools_hash"]
