"""What the worker observes while an executor runs a scenario: the tools it is given, every
invocation of them, what each call returned, raised or logged.

:class:`ToolProxy` is the callable toolfuzz supplies for each tool (``tools[name]`` in
``make_executor(tools)``). It accepts the calling conventions executors use — ``tool(**arguments)``,
``tool(arguments)``, ``tool.invoke(arguments)``, and their awaitable forms for async executors —
and carries what a generic executor reads from a tool: ``name``, ``description``, ``schema`` (the
JSON Schema of its arguments) and ``idempotent`` (from the policy, like MCP's ``idempotentHint``).
Each call is one *invocation*: the proxy asks the :class:`Recorder` which fault this attempt meets,
lets its latency pass on the virtual clock, then returns the healthy or garbage result, or raises
the fault's exception. In HTTP mode it calls the user's real implementation instead, with the
attempt published for the replaced transports (:mod:`fuzzer.harnesses.executor.http`).

The recorder writes plain data only (the trace a worker sends back): invocations with virtual
start/end times, the fault served and its ``Retry-After``, whether the side effect happened, the
arguments received when they differ from the call's; per call its outcome; and where a canary
secret served by a ``secret_error`` fault reappeared (returned, raised, logged or printed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any, Iterator, Optional

from fuzzer.harnesses.executor.faults import OK, Fault, bad_result, ok_result, retry_after_header
from fuzzer.harnesses.executor.http import failure_for
from fuzzer.harnesses.executor.http import CURRENT
from fuzzer.engine.frames import named, without_library_tail
from fuzzer.engine.references import exception_name as qualified

_MESSAGE_LIMIT = 300
_FRAME_LIMIT = 8
_TEXT_LIMIT = 20_000
#: Frames in these directories are toolfuzz's own (the proxy raising a fault), not the executor's.
_OWN_DIRS = (os.path.dirname(os.path.abspath(__file__)),)


class RunawayExecution(BaseException):
    """Raised into the executor once one call has invoked tools more often than any policy could
    allow (an unbounded retry loop); a BaseException so ``except Exception`` does not swallow it."""


class Invocation:
    """One call of a tool proxy: one attempt."""

    __slots__ = ("tool", "attempt", "fault", "t0", "t1", "retry_after", "committed", "args", "requests", "raised",
                 "via")

    def __init__(self, tool: str, attempt: int, fault: Fault, t0: float, args: Any):
        self.tool, self.attempt, self.fault, self.t0, self.args = tool, attempt, fault, t0, args
        #: the library whose exception a failure is raised as (HTTP mode: whose transport served it)
        self.via = fault.get("via", "builtin")
        self.t1 = t0
        self.retry_after: Optional[float] = None
        self.committed = False
        self.requests = 0
        self.raised = False

    def to_json(self) -> dict:
        data = {"tool": self.tool, "attempt": self.attempt, "fault": self.fault.kind, "t0": self.t0, "t1": self.t1}
        if self.retry_after is not None:
            data["retry_after"] = self.retry_after
        if self.committed:
            data["committed"] = True
        if self.raised:
            data["raised"] = True
            if self.via != "builtin":
                data["via"] = self.via
        if self.args is not None:
            data["args"] = self.args
        if self.requests:
            data["requests"] = self.requests
        return data


class Recorder:
    """The observations of the scenario running in this worker."""

    def __init__(self, clock: Any, *, invocation_cap: int, ok_bodies: Optional[dict] = None):
        from fuzzer.engine.exception_names import Declared

        self.clock = clock
        #: the policy's ``raises``, resolved in this process (set by the worker once it has loaded)
        self.declared = Declared()
        self.invocation_cap = invocation_cap
        self.ok_bodies = ok_bodies or {}
        self.async_tools = False
        self.steps: list = []  # (name, arguments, schedule) of the scenario
        self.served_canaries: set[str] = set()
        self.capturing = False
        self._begin(-1)

    # -- scenario / step -------------------------------------------------------------------------
    def begin_scenario(self, steps: list, capture: bool) -> None:
        self.steps = steps
        self.served_canaries = set()
        self.capturing = capture

    def _begin(self, index: int) -> None:
        self.index = index
        self.invocations: list[Invocation] = []
        self.attempts: dict[str, int] = {}
        self.tool_errors: dict[int, tuple] = {}  # id(exception) -> (exception, fault) raised by a tool
        self.logs: list[str] = []
        self.output = io.StringIO() if self.capturing else None
        self.abort: Optional[str] = None
        self.sleeps_before = len(self.clock.sleeps)

    def begin_step(self, index: int) -> None:
        self._begin(index)

    def end_step(self, t0: float, outcome: dict) -> dict:
        outcome.update(t0=t0, t1=self.clock.elapsed, invocations=[i.to_json() for i in self.invocations])
        sleeps = self.clock.sleeps[self.sleeps_before:]
        if sleeps:
            outcome["sleeps"] = sleeps[:200]
        if self.abort:
            outcome["abort"] = self.abort
        if self.served_canaries:
            leaks = self._leaks(outcome)
            if leaks:
                outcome["leaks"] = leaks
        return outcome

    # -- invocations -----------------------------------------------------------------------------
    def invoke(self, tool: str, received: Any) -> Invocation:
        if len(self.invocations) >= self.invocation_cap:
            self.abort = "runaway"
            raise RunawayExecution(f"more than {self.invocation_cap} tool invocations for one call")
        attempt = self.attempts.get(tool, 0) + 1
        self.attempts[tool] = attempt
        fault = OK
        if 0 <= self.index < len(self.steps):
            name, arguments, schedule = self.steps[self.index]
            if tool == name:
                fault = schedule.fault_for(attempt)
            args = None if same_json(received, arguments) else plain(received)
        else:
            args = plain(received)
        invocation = Invocation(tool, attempt, fault, self.clock.elapsed, args)
        self.invocations.append(invocation)
        if fault.kind == "secret_error":
            self.served_canaries.add(fault.get("canary"))
        return invocation

    def finish(self, invocation: Invocation, error: Optional[BaseException] = None) -> None:
        invocation.t1 = self.clock.elapsed
        invocation.committed = invocation.fault.spec.commits
        if error is not None:
            invocation.raised = True
            self.tool_errors[id(error)] = (error, invocation.fault)

    def served(self, invocation: Invocation, *, waited: bool = False) -> Any:
        """Direct mode: let the attempt's fault happen (its latency, unless the caller already
        awaited it); return the result or raise the fault's exception."""
        fault = invocation.fault
        if not waited:
            try:
                self.clock.advance(fault.latency)
            except BaseException as exc:
                self.finish(invocation, exc)
                raise
        if fault.spec.returns:
            good = ok_result(invocation.tool, invocation.attempt)
            self.finish(invocation)
            return good if fault.kind in ("ok", "slow") else bad_result(fault, good)
        raise self._failure(invocation)

    def _failure(self, invocation: Invocation) -> BaseException:
        """The exception a failing attempt raises, noted as the tool's.

        Built here rather than in :meth:`served`: an exception held by a local of the frame that
        raises it is a reference cycle (exception, traceback, frame, exception) that only the
        cyclic garbage collector frees, and a worker has thousands of failing attempts a second."""
        fault = invocation.fault
        wall = self.clock.wall()
        invocation.retry_after = retry_after_header(fault, wall)[1]
        error = failure_for(fault, invocation.tool, wall)
        self.finish(invocation, error)
        return error

    # -- outcomes --------------------------------------------------------------------------------
    def describe_exception(self, exc: BaseException) -> dict:
        """The escaping exception as plain data: qualified type, MRO, message, the executor's own
        innermost frames, and the fault it came from when it *is* an exception a tool raised."""
        cls = type(exc)
        data = {"type": qualified(cls), "mro": [qualified(c) for c in cls.__mro__ if c not in (object, BaseException)],
                "message": _limit(_safe_str(exc)), "frames": user_frames(exc)}
        if self.declared.names:  # the policy's raises it is an instance of (resolved in this process)
            data["declared_by"] = self.declared.matching(cls)
        origin = self.tool_errors.get(id(exc))
        if origin is not None and origin[0] is exc:
            data["injected"] = origin[1].kind
        return data

    def _leaks(self, outcome: dict) -> list:
        channels = []
        if "value" in outcome:
            channels.append(("return", json.dumps(outcome["value"], ensure_ascii=False, default=str)))
        if "exception" in outcome:
            channels.append(("raise", self._raised_text))
        if self.logs:
            channels.append(("log", "\n".join(self.logs)))
        if self.output is not None and self.output.tell():
            channels.append(("output", self.output.getvalue()))
        found = []
        for channel, text in channels:
            for canary in sorted(self.served_canaries):
                at = text.find(canary)
                if at >= 0:
                    found.append({"channel": channel, "excerpt": text[max(0, at - 60):at + len(canary) + 20]})
                    break
        return found

    _raised_text = ""

    def note_raised(self, exc: BaseException) -> None:
        """What a caller of the executor sees of a raised exception: its text and its arguments."""
        self._raised_text = f"{_safe_str(exc)}\n{_safe_repr(getattr(exc, 'args', ()))}"

    def log(self, text: str) -> None:
        if len(self.logs) < 500:
            self.logs.append(text[:_TEXT_LIMIT])


class _CaptureHandler(logging.Handler):
    """Root-logger handler: every record's message (and its exception's text) for leak checks."""

    def __init__(self, recorder: Recorder):
        super().__init__(logging.DEBUG)
        self.recorder = recorder

    def emit(self, record: logging.LogRecord) -> None:
        if not self.recorder.capturing:
            return
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is the executor's problem, not ours
            text = f"{record.msg!r} {record.args!r}"
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            while error is not None:
                text += f"\n{type(error).__name__}: {_safe_str(error)}"
                error = error.__cause__ or error.__context__
        self.recorder.log(text)


def capture_logs(recorder: Recorder) -> None:
    """Install the capture handler (once per worker)."""
    logging.getLogger().addHandler(_CaptureHandler(recorder))


class CapturedOutput:
    """While a scenario with canaries runs: the executor's prints and warnings go to the step."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.saved: Optional[tuple] = None
        self.level: Optional[int] = None

    def __enter__(self) -> "CapturedOutput":
        if self.recorder.capturing:
            self.saved = (sys.stdout, sys.stderr)
            sys.stdout = sys.stderr = _StepStream(self.recorder)  # type: ignore[assignment]
            root = logging.getLogger()
            self.level = root.level
            root.setLevel(logging.DEBUG)  # an INFO log of a secret is a leak wherever INFO is on
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.saved is not None:
            sys.stdout, sys.stderr = self.saved
            logging.getLogger().setLevel(self.level if self.level is not None else logging.WARNING)
            self.saved = None


class _StepStream(io.TextIOBase):
    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def write(self, text: str) -> int:
        out = self.recorder.output
        if out is not None and out.tell() < _TEXT_LIMIT:
            out.write(text)
        return len(text)

    def writable(self) -> bool:
        return True


# ---------------------------------------------------------------------------------------------
# Tool proxies


def received_arguments(args: tuple, kwargs: dict) -> Any:
    """What a tool was called with, as one arguments object."""
    if not args:
        return dict(kwargs)
    if len(args) == 1 and not kwargs and isinstance(args[0], Mapping):
        return dict(args[0])
    return {"$positional": list(args), **kwargs}


class ToolProxy:
    """``tools[name]``: the tool an executor is given (see the module docstring)."""

    def __init__(self, tool: Any, recorder: Recorder, *, idempotent: bool, implementation: Any = None):
        self.name = tool.name
        self.description = tool.description
        self.schema = json.loads(json.dumps(tool.schema))
        self.idempotent = idempotent
        self._recorder = recorder
        self._implementation = implementation
        self.__name__ = tool.name
        self.__doc__ = tool.description

    def __repr__(self) -> str:
        return f"<toolfuzz tool {self.name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._recorder.async_tools:
            return self._call_async(args, kwargs)
        return self._call(args, kwargs)

    def invoke(self, arguments: Any = None, **kwargs: Any) -> Any:
        """LangChain-style ``tool.invoke(arguments)`` (always synchronous)."""
        return self._call((arguments,) if arguments is not None else (), kwargs)

    async def ainvoke(self, arguments: Any = None, **kwargs: Any) -> Any:
        return await self._call_async((arguments,) if arguments is not None else (), kwargs)

    @contextlib.contextmanager
    def _running(self, invocation: Invocation) -> Iterator[None]:
        """HTTP mode: the real implementation runs with its attempt published for the transports."""
        token = CURRENT.set(invocation)
        try:
            yield
        except BaseException as exc:
            self._recorder.finish(invocation, exc)
            raise
        finally:
            CURRENT.reset(token)

    def _call(self, args: tuple, kwargs: dict) -> Any:
        recorder = self._recorder
        # ``tool(**arguments)``, the usual call: kwargs is a dict of this call's own, no copy needed
        invocation = recorder.invoke(self.name, received_arguments(args, kwargs) if args else kwargs)
        if self._implementation is None:
            return recorder.served(invocation)
        with self._running(invocation):
            value = self._implementation(*args, **kwargs)
        recorder.finish(invocation)
        return value

    async def _call_async(self, args: tuple, kwargs: dict) -> Any:
        import asyncio
        import inspect

        recorder = self._recorder
        invocation = recorder.invoke(self.name, received_arguments(args, kwargs))
        if self._implementation is None:
            latency = invocation.fault.latency
            if latency:
                try:
                    await asyncio.sleep(latency)
                except BaseException as exc:
                    recorder.finish(invocation, exc)
                    raise
            return recorder.served(invocation, waited=True)
        with self._running(invocation):
            value = self._implementation(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
        recorder.finish(invocation)
        return value


# ---------------------------------------------------------------------------------------------
# Plain data


def plain(value: Any, depth: int = 0) -> Any:
    """A JSON value for whatever an executor returned: pydantic models and dataclasses as their
    fields, anything else that is not JSON as ``{"$repr": ...}`` (never equal to real JSON)."""
    t = type(value)
    if t is str or t is bool or t is int or value is None:
        return value
    if t is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else {"$repr": repr(value)}
    if depth > 40:
        return {"$repr": "<nested too deeply>"}
    if t is dict:
        return {(k if type(k) is str else str(k)): plain(v, depth + 1) for k, v in value.items()}
    if t is list:
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, Mapping):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, (str, int, float)):
        return plain(str(value) if isinstance(value, str) else (int(value) if isinstance(value, int) else float(value)))
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return plain(dump(mode="json"), depth + 1)
        except Exception:  # noqa: BLE001
            pass
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value), depth + 1)
    return {"$repr": _limit(_safe_repr(value))}


def same_json(a: Any, b: Any) -> bool:
    """Equal with exactly the same types (``True`` is not ``1``, ``1`` is not ``1.0``): the test of
    "the tool received the call's arguments unchanged", cheap enough to run on every attempt
    (``tool(**arguments)`` passes the very same values: checked by identity first)."""
    if a is b:
        return True
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is dict:
        # same length and every key of ``a`` in ``b``: the same keys (one pass, no key views)
        if len(a) != len(b):
            return False
        get = b.get
        for key, value in a.items():
            other = get(key, _ABSENT)
            if value is not other and not same_json(value, other):
                return False
        return True
    if ta is list:
        if len(a) != len(b):
            return False
        for value, other in zip(a, b):
            if value is not other and not same_json(value, other):
                return False
        return True
    return a == b


_ABSENT = object()  # a dict value no JSON value is (never the same type as one)


def user_frames(exc: BaseException) -> list:
    """(file name, function) of the traceback, innermost last, without toolfuzz's own frames."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        path = os.path.abspath(code.co_filename)
        if not path.startswith(_OWN_DIRS):
            frames.append((path, code.co_name))
        tb = tb.tb_next
    return [list(f) for f in named(without_library_tail(frames), _FRAME_LIMIT)]


def _safe_str(exc: Any) -> str:
    try:
        return str(exc)
    except BaseException:  # noqa: BLE001
        return "<str() failed>"


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except BaseException:  # noqa: BLE001
        return f"<{type(value).__name__} with a failing __repr__>"


def _limit(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


__all__ = ["CapturedOutput", "Invocation", "Recorder", "RunawayExecution", "ToolProxy", "capture_logs", "plain",
           "qualified", "received_arguments", "user_frames"]
