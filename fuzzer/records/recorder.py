"""The recorder: capture every production tool call without changing what the application does.

::

    from fuzzer.records.recorder import Recorder

    recorder = Recorder(parser_version="v3", tools=TOOLS)      # off unless TOOLFUZZ_RECORD=1

    @recorder.parser                # the function turning model output into calls
    def parse(text): ...

    @recorder.executor              # optional: the function running one call
    def execute(call): ...

    @recorder.tool                  # optional: each tool the executor calls (replay answers these)
    def get_weather(city, unit="celsius"): ...

    with recorder.turn(session_id=user_id) as turn:   # optional middleware: one record per turn
        for call in parse(model_text):
            execute(call)
        turn.final_reply = reply

Without an explicit turn, each parse starts a record and the executor and tool calls that follow
in the same thread (or asyncio task) are added to it. A record holds what DESIGN.md calls a
**record**: ids, timestamp, raw output, parsed calls, parse and execution status and errors,
results, reply, anomaly type, parser version, a hash of the tool schemas, latencies.

Promises, each tested:

* **Off by default.** On with ``TOOLFUZZ_RECORD=1`` (file: ``TOOLFUZZ_RECORD_DB``, default
  ``toolfuzz-records.db``) or ``Recorder(enabled=True, db=...)``; always off inside a replay
  worker (``TOOLFUZZ_REPLAYING=1``), so replaying never records itself. Off, a wrapped call costs one
  attribute check; :meth:`Recorder.enable` / :meth:`Recorder.disable` switch at run time.
* **Never changes behaviour.** Return values and exceptions pass through as the same objects; the
  recorder snapshots what it needs (normalized copies) and everything else happens in a
  background writer thread (:class:`fuzzer.records.writer.BackgroundWriter`).
* **Never fails the application.** A failure of the recorder itself — disk full, read-only
  directory, a locked database, an unencodable value — is logged once on the
  ``toolfuzz.records`` logger and the records are dropped; the application never sees it.
* **Redaction before anything is written** (:class:`fuzzer.records.redact.Redactor`; user keys,
  paths and patterns from the constructor or ``TOOLFUZZ_REDACT_*``).
* **Light.** Importing this module pulls in neither Hypothesis nor click (tested).

**Playback** (:func:`playback`): while replaying records, every ``@recorder.tool`` answers from
the recorded ``tool_io`` instead of running — no external call — and a call that was never
recorded raises :class:`UnrecordedToolCall` (replay fails loudly, as vcrpy does).
"""

from __future__ import annotations

import atexit
import contextvars
import functools
import logging
import os
import threading
from typing import Any, Callable, Optional, Union

from fuzzer.records.capture import (_Capture, _executor_input, _is_coroutine_function, _Pending, _raw_text,
                                    error_text, snapshot_calls, source_version, tools_hash)
from fuzzer.records.playback import _PLAYBACK, Playback, UnrecordedToolCall, playback, rebuild_exception, tool_arguments
from fuzzer.records.redact import Redactor
from fuzzer.records.values import storable
from fuzzer.records.writer import BackgroundWriter
from fuzzer.engine.calls import InvalidReturn, normalize_calls

__all__ = ["Playback", "Recorder", "Turn", "UnrecordedToolCall", "default_recorder", "error_text", "executor",
           "handler", "parser", "playback", "rebuild_exception", "tool", "turn"]

log = logging.getLogger("toolfuzz.records")

DEFAULT_DB = "toolfuzz-records.db"
#: Set by the replay job for its workers (fuzzer.records.replay): recorders there stay off.
REPLAYING_ENV = "TOOLFUZZ_REPLAYING"
_ON_WORDS = ("1", "true", "yes", "on")


# --------------------------------------------------------------------------------------------
# The recorder


class Recorder:
    """Records parse, execution and tool calls of one application into one database.

    ``db``: the file (default ``TOOLFUZZ_RECORD_DB`` or ``toolfuzz-records.db``); ``enabled``:
    True / False, or None to follow ``TOOLFUZZ_RECORD``; ``parser_version``: stored with every
    record (default: a hash of the parse function's source file); ``tools``: the tool schemas
    (any shape ``fuzz --tools`` reads), stored once and referenced by hash, so the detectors and
    replay can validate against them; ``session_id``: the default session; ``redactor``: what to
    scrub (default: the built-in rules plus ``TOOLFUZZ_REDACT_*``). The remaining arguments tune
    the background writer (see :class:`~fuzzer.records.writer.BackgroundWriter`).
    """

    def __init__(self, db: Optional[Union[str, os.PathLike]] = None, *, enabled: Optional[bool] = None,
                 parser_version: Optional[str] = None, tools: Any = None, session_id: Optional[str] = None,
                 redactor: Optional[Redactor] = None, max_queue: int = 100_000, batch_size: int = 512,
                 flush_interval: float = 0.05, busy_timeout_s: float = 10.0,
                 on_commit: Optional[Callable[[list], None]] = None):
        env = os.environ
        if enabled is None:
            enabled = env.get("TOOLFUZZ_RECORD", "").strip().lower() in _ON_WORDS
        if env.get(REPLAYING_ENV) == "1":
            enabled = False  # inside a replay worker: replaying must not record itself
        self.path = os.fspath(db) if db is not None else (env.get("TOOLFUZZ_RECORD_DB") or DEFAULT_DB)
        self.parser_version = parser_version
        self.session_id = session_id
        self._on = bool(enabled)
        if redactor is None:
            try:
                redactor = Redactor.from_env()
            except Exception as exc:  # noqa: BLE001 - a bad environment must not break the app
                log.warning("toolfuzz recorder: %s; using the default redaction rules", exc)
                redactor = Redactor()
        self.redactor = redactor
        self.tools = tools
        self.tools_hash = tools_hash(tools) if tools is not None else None
        self._tools_sent_pid: Optional[int] = None
        self._writer_options = dict(max_queue=max_queue, batch_size=batch_size, flush_interval=flush_interval,
                                    busy_timeout_s=busy_timeout_s, on_commit=on_commit)
        self._writer: Optional[BackgroundWriter] = None
        self._writer_lock = threading.Lock()
        self._var: contextvars.ContextVar[Optional[_Pending]] = contextvars.ContextVar(
            f"toolfuzz_record_{id(self)}", default=None)
        self._logged: set = set()
        self.capture_failures = 0
        atexit.register(self._at_exit)

    def __repr__(self) -> str:
        return f"Recorder({self.path!r}, enabled={self._on})"

    # -- switching ------------------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        return self._on

    def enable(self, db: Optional[Union[str, os.PathLike]] = None) -> None:
        """Start recording (into ``db`` from now on, when given)."""
        if db is not None and os.fspath(db) != self.path:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            self.path = os.fspath(db)
            self._tools_sent_pid = None
        self._on = True

    def disable(self) -> None:
        self._on = False

    @property
    def dropped(self) -> int:
        """Records lost to a full queue or a failing write."""
        return self._writer.dropped if self._writer is not None else 0

    @property
    def written(self) -> int:
        return self._writer.written if self._writer is not None else 0

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every record made so far is written (or dropped); False on timeout."""
        return self._writer.flush(timeout) if self._writer is not None else True

    def close(self, timeout: float = 10.0) -> None:
        """Flush and stop the writer thread (also runs at interpreter exit)."""
        if self._writer is not None:
            self._writer.close(timeout)

    def _at_exit(self) -> None:
        try:
            self.close(timeout=5.0)
        except Exception:  # noqa: BLE001
            pass

    # -- failures: logged once, never raised ----------------------------------------------------
    def _failed(self, kind: str, exc: BaseException) -> None:
        if kind == "capture":
            self.capture_failures += 1
        if kind in self._logged:
            return
        self._logged.add(kind)
        what = {"write": f"cannot write records to {self.path}",
                "capture": "could not capture a call"}.get(kind, kind)
        log.warning("toolfuzz recorder: %s (%s); the application is not affected, records are dropped "
                    "while this lasts and it is not logged again", what, error_text(exc))

    def _recovered(self) -> None:
        if "write" in self._logged:
            self._logged.discard("write")
            log.info("toolfuzz recorder: writing records to %s again", self.path)

    def _writer_for(self) -> BackgroundWriter:
        writer = self._writer
        if writer is None:
            with self._writer_lock:
                writer = self._writer
                if writer is None:
                    writer = self._writer = BackgroundWriter(
                        self.path, redactor=self.redactor, on_failure=lambda exc: self._failed("write", exc),
                        on_recovery=self._recovered, **self._writer_options)
        if self.tools_hash is not None and self._tools_sent_pid != os.getpid():
            self._tools_sent_pid = os.getpid()
            writer.submit_tool_set(self.tools_hash, self.tools)
        return writer

    def _submit(self, pending: _Pending) -> None:
        self._writer_for().submit(pending.snapshot())

    def _pending(self) -> _Pending:
        """The record calls now belong to: the open turn's, or a new implicit one."""
        pending = self._var.get()
        if pending is None:
            pending = _Pending(self.session_id, None, self.tools_hash, explicit=False)
            self._var.set(pending)
        return pending

    # -- capturing (guarded: never raises) ------------------------------------------------------
    def _parsed(self, version: Optional[str], text_arg: Any, args: tuple, kwargs: dict, value: Any,
                exc: Optional[BaseException], elapsed: float) -> None:
        try:
            raw = _raw_text(args, kwargs, text_arg)
            if exc is None:
                try:
                    calls, any_call = snapshot_calls(value)
                    status, error = ("ok" if any_call else "no_call"), None
                except InvalidReturn as bad:
                    calls, status, error = None, "invalid", f"InvalidReturn: {bad}"
            else:
                calls, status, error = None, "error", error_text(exc)  # type: ignore[assignment]
            pending = self._var.get()
            if pending is None or not pending.explicit or pending.has_parse:
                if pending is not None and pending.explicit:
                    # A second model output inside one turn: the first is complete; the turn goes on
                    # with a new record of the same session and trace.
                    self._submit(pending)
                    pending = _Pending(pending.session_id, pending.trace_id, self.tools_hash, True, pending.metadata)
                else:
                    pending = _Pending(self.session_id, None, self.tools_hash, False)
                self._var.set(pending)
            pending.has_parse = True
            pending.raw, pending.parsed, pending.parse_status, pending.parse_error = raw, calls, status, error
            pending.parse_ms = elapsed * 1000.0
            pending.parser_version = version
            if not pending.explicit:
                self._submit(pending)
        except Exception as failure:  # noqa: BLE001
            self._failed("capture", failure)

    def _executed(self, args: tuple, kwargs: dict, value: Any, exc: Optional[BaseException],
                  elapsed: float) -> None:
        try:
            pending = self._pending()
            call, extra = _executor_input(args, kwargs)
            entry: dict = {"call": call}
            if extra:
                entry["kwargs"] = extra
            if exc is None:
                entry["status"], entry["result"] = "ok", storable(value)
            else:
                entry["status"], entry["error"] = "error", error_text(exc)
                if pending.exec_error is None:
                    pending.exec_error = entry["error"]
            entry["latency_ms"] = elapsed * 1000.0
            pending.executions.append(entry)
            pending.exec_status = "error" if pending.exec_error is not None else "ok"
            pending.exec_ms = (pending.exec_ms or 0.0) + elapsed * 1000.0
            if not pending.explicit:
                self._submit(pending)
        except Exception as failure:  # noqa: BLE001
            self._failed("capture", failure)

    def _tool_called(self, name: str, args: tuple, kwargs: dict, value: Any, exc: Optional[BaseException],
                     elapsed: float) -> None:
        try:
            pending = self._var.get()
            if pending is None:
                return  # a tool used outside any recorded turn: nothing to attach it to
            entry: dict = {"tool": name, "arguments": tool_arguments(args, kwargs)}
            if exc is None:
                entry["status"], entry["result"] = "ok", storable(value)
            else:
                entry["status"], entry["error"] = "error", error_text(exc)
            entry["latency_ms"] = elapsed * 1000.0
            pending.tool_io.append(entry)
            if not pending.explicit and not pending.in_executor:
                self._submit(pending)
        except Exception as failure:  # noqa: BLE001
            self._failed("capture", failure)

    # -- decorators -----------------------------------------------------------------------------
    def _wrap(self, fn: Callable, record: Callable, *, executor: bool = False,
              tool_name: Optional[str] = None) -> Callable:
        """The one wrapper of every decorator, sync or async: off, a single attribute check; on,
        the call runs inside a :class:`_Capture`, which times it, lets its value or exception
        through unchanged and hands both to ``record(args, kwargs, value, exc, elapsed)`` (which
        never raises). A tool answers from the record instead while a :func:`playback` is
        active; an executor's tool calls join its record. The two wrappers differ only by
        ``await``."""
        answering = _PLAYBACK.get if tool_name is not None else None
        enter = self._enter_executor if executor else None

        if _is_coroutine_function(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                if answering is not None and (player := answering()) is not None:
                    return player.answer(tool_name, args, kwargs)
                if not self._on:
                    return await fn(*args, **kwargs)
                with _Capture(record, enter, args, kwargs) as call:
                    call.value = await fn(*args, **kwargs)
                return call.value

            return async_wrapper

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if answering is not None and (player := answering()) is not None:
                return player.answer(tool_name, args, kwargs)
            if not self._on:
                return fn(*args, **kwargs)
            with _Capture(record, enter, args, kwargs) as call:
                call.value = fn(*args, **kwargs)
            return call.value

        return wrapper

    def parser(self, fn: Optional[Callable] = None, *, version: Optional[str] = None,
               text_arg: Union[int, str, None] = None) -> Any:
        """Wrap the parse function (``@recorder.parser`` or ``@recorder.parser(version="v4")``).
        ``text_arg``: which argument is the model output (default: the first string)."""
        if fn is None:
            return lambda f: self.parser(f, version=version, text_arg=text_arg)
        parser_version = version or self.parser_version or source_version(fn)
        # version and text_arg bound positionally: a partial with keywords builds a dict per call
        return self._wrap(fn, functools.partial(self._parsed, parser_version, text_arg))

    def executor(self, fn: Optional[Callable] = None) -> Any:
        """Wrap the function that executes a parsed call (its first call-like argument)."""
        if fn is None:
            return lambda f: self.executor(f)
        return self._wrap(fn, self._executed, executor=True)

    def _enter_executor(self) -> Optional[_Pending]:
        try:
            pending = self._pending()
            pending.in_executor += 1
            return pending
        except Exception as failure:  # noqa: BLE001
            self._failed("capture", failure)
            return None

    def tool(self, fn: Optional[Callable] = None, *, name: Optional[str] = None) -> Any:
        """Wrap one tool: its calls and results are recorded, and replay answers it from them."""
        if fn is None:
            return lambda f: self.tool(f, name=name)
        tool_name = name or getattr(fn, "__name__", "tool")
        return self._wrap(fn, functools.partial(self._tool_called, tool_name), tool_name=tool_name)

    # -- turns ----------------------------------------------------------------------------------
    def turn(self, *, session_id: Optional[str] = None, trace_id: Optional[str] = None,
             metadata: Optional[dict] = None) -> "Turn":
        """A context manager making everything inside it one record (see :class:`Turn`)."""
        return Turn(self, session_id=session_id, trace_id=trace_id, metadata=metadata)

    def handler(self, fn: Optional[Callable] = None, *, session: Optional[Callable[..., Any]] = None) -> Any:
        """Middleware for a request handler: each call runs in a :meth:`turn`; a string it
        returns is the final reply. ``session(*args, **kwargs)`` picks the session id."""
        if fn is None:
            return lambda f: self.handler(f, session=session)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not self._on:
                return fn(*args, **kwargs)
            sid = None
            if session is not None:
                try:
                    sid = session(*args, **kwargs)
                except Exception as failure:  # noqa: BLE001
                    self._failed("capture", failure)
            with self.turn(session_id=None if sid is None else str(sid)) as current:
                value = fn(*args, **kwargs)
                if isinstance(value, str):
                    current.final_reply = value
                return value

        return wrapper

    def record(self, *, raw_model_output: Optional[str] = None, parsed_calls: Optional[list] = None,
               parse_status: Optional[str] = None, **fields: Any) -> Optional[str]:
        """Record one turn directly (an application that gets calls from an API rather than a
        parser of its own). ``fields``: any other record field. Returns the record id, or None
        when recording is off. Never raises."""
        if not self._on:
            return None
        try:
            pending = _Pending(fields.pop("session_id", self.session_id), fields.pop("trace_id", None),
                               fields.pop("tools_hash", self.tools_hash), True, fields.pop("metadata", None))
            pending.has_parse = raw_model_output is not None or parsed_calls is not None
            pending.raw = raw_model_output
            pending.parsed = normalize_calls(parsed_calls) if parsed_calls is not None else None
            pending.parse_status = parse_status or (
                None if parsed_calls is None else "ok" if pending.parsed else "no_call")
            names = {"parse_error": "parse_error", "execution_status": "exec_status",
                     "execution_error": "exec_error", "final_reply": "final_reply", "anomaly_type": "anomaly_type",
                     "parser_version": "parser_version", "parse_latency_ms": "parse_ms",
                     "execution_latency_ms": "exec_ms"}
            for key, value in fields.items():
                if key in ("execution_result", "tool_io"):
                    setattr(pending, "executions" if key == "execution_result" else key, storable(list(value or [])))
                elif key in names:
                    setattr(pending, names[key], value)
                else:
                    raise TypeError(f"record() got an unknown field {key!r}")
            if pending.parser_version is None:
                pending.parser_version = self.parser_version
            self._submit(pending)
            return pending.record_id
        except Exception as failure:  # noqa: BLE001
            self._failed("capture", failure)
            return None


class _TurnField:
    """A :class:`Turn` attribute that reads and writes one field of the record the turn is
    building now (after a second parse, the new record), or reads None and ignores writes when
    the turn records nothing. ``convert`` turns a value set into the stored one."""

    def __init__(self, convert: Callable[[Any], Any] = lambda value: value):
        self.convert = convert
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, turn: Optional["Turn"], owner: Optional[type] = None) -> Any:
        if turn is None:
            return self
        pending = turn._current()
        return getattr(pending, self.name) if pending is not None else None

    def __set__(self, turn: "Turn", value: Any) -> None:
        pending = turn._current()
        if pending is not None:
            setattr(pending, self.name, self.convert(value))


class Turn:
    """One model output's whole chain as one record: the parse, the executor's invocations, the
    tools they called, and the final reply (set ``turn.final_reply``). Also settable:
    ``anomaly_type`` (the application's own classification) and ``metadata`` (a dict). A second
    parse inside the same turn (an agent loop) completes the first record and starts another of
    the same session and trace. An exception leaving the block is recorded in the metadata and
    propagates unchanged."""

    def __init__(self, recorder: Recorder, *, session_id: Optional[str], trace_id: Optional[str],
                 metadata: Optional[dict]):
        self.recorder = recorder
        self._session_id = session_id if session_id is not None else recorder.session_id
        self._trace_id, self._metadata = trace_id, metadata
        self._token: Any = None
        self._pending: Optional[_Pending] = None

    def __enter__(self) -> "Turn":
        recorder = self.recorder
        if recorder.enabled:
            try:
                self._pending = _Pending(self._session_id, self._trace_id, recorder.tools_hash, True, self._metadata)
                self._token = recorder._var.set(self._pending)
            except Exception as failure:  # noqa: BLE001
                recorder._failed("capture", failure)
                self._pending = None
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        recorder = self.recorder
        if self._token is None:
            return False
        try:
            pending = recorder._var.get() or self._pending
            recorder._var.reset(self._token)
            self._token = None
            if pending is not None and exc is not None:
                pending.metadata = dict(pending.metadata or {}, turn_error=error_text(exc))
            if pending is not None and not pending.empty():
                recorder._submit(pending)
        except Exception as failure:  # noqa: BLE001
            recorder._failed("capture", failure)
        return False

    def _current(self) -> Optional[_Pending]:
        if self._token is None:
            return self._pending
        return self.recorder._var.get() or self._pending

    @property
    def record_id(self) -> Optional[str]:
        pending = self._current()
        return pending.record_id if pending is not None else None

    final_reply = _TurnField(lambda value: None if value is None else str(value))
    anomaly_type = _TurnField()

    def annotate(self, **metadata: Any) -> None:
        """Add JSON-able metadata to the record (e.g. the model name, the finish reason)."""
        pending = self._current()
        if pending is not None:
            try:
                pending.metadata = dict(pending.metadata or {}, **storable(metadata))
            except Exception as failure:  # noqa: BLE001
                self.recorder._failed("capture", failure)


# --------------------------------------------------------------------------------------------
# The default recorder (configured from the environment)

_DEFAULT: list = []
_DEFAULT_LOCK = threading.Lock()


def default_recorder() -> Recorder:
    """The process-wide recorder the module-level decorators use, created from the environment
    on first use (``TOOLFUZZ_RECORD``, ``TOOLFUZZ_RECORD_DB``, ``TOOLFUZZ_PARSER_VERSION``)."""
    if not _DEFAULT:
        with _DEFAULT_LOCK:
            if not _DEFAULT:
                _DEFAULT.append(Recorder(parser_version=os.environ.get("TOOLFUZZ_PARSER_VERSION") or None))
    return _DEFAULT[0]


def parser(fn: Optional[Callable] = None, **options: Any) -> Any:
    """``@parser``: :meth:`Recorder.parser` of the default recorder."""
    return default_recorder().parser(fn, **options)


def executor(fn: Optional[Callable] = None) -> Any:
    """``@executor``: :meth:`Recorder.executor` of the default recorder."""
    return default_recorder().executor(fn)


def tool(fn: Optional[Callable] = None, **options: Any) -> Any:
    """``@tool``: :meth:`Recorder.tool` of the default recorder."""
    return default_recorder().tool(fn, **options)


def turn(**options: Any) -> Turn:
    """``with turn(session_id=...)``: :meth:`Recorder.turn` of the default recorder."""
    return default_recorder().turn(**options)


def handler(fn: Optional[Callable] = None, **options: Any) -> Any:
    """``@handler``: :meth:`Recorder.handler` of the default recorder."""
    return default_recorder().handler(fn, **options)

