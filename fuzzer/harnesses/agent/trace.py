"""What the loop did in one episode: every model request, every tool execution, the reply.

The scripted model (:mod:`fuzzer.harnesses.agent.models`) and the tool doubles (:mod:`fuzzer.harnesses.agent.tools`)
share one :class:`Recorder`. It counts requests and executions, stops a loop that runs past its
caps (:class:`EpisodeAborted`), and attributes each execution to the call of the current turn it
runs (so the double answers with that call's scripted result, and the oracle knows which call id
the result must be fed back under). :meth:`Recorder.trace` is plain JSON: it crosses the process
boundary from the worker to the engine, where :mod:`fuzzer.harnesses.agent.checks` judges it.

A **window** is the time between two model requests: window ``w`` starts when the model answered
request ``w`` (0-based) and ends with the next request; an execution in window ``w`` runs a call
of turn ``w`` (or something the model did not ask for in that turn).
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from typing import Any, Optional

from fuzzer.harnesses.agent.script import Script
from fuzzer.engine.frames import named, without_library_tail
from strategies._internal.sample import copy_json, json_equal

#: Longest reply / message / traceback kept in a trace.
TEXT_LIMIT = 4000
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_FRAME_LIMIT = 8


class EpisodeAborted(BaseException):
    """The loop went past its caps (``max_turns`` requests or ``max_tool_calls`` executions): the
    scripted model or tool refuses to go on. A ``BaseException``, like ``KeyboardInterrupt``, so
    an ``except Exception`` in the loop does not swallow it; the trace already proves the
    nontermination, and the worker stops the episode here."""


@dataclass(frozen=True)
class Caps:
    """How far a loop may go before the episode is stopped (one step past the policy)."""

    max_turns: int = 10
    max_tool_calls: int = 30


class Recorder:
    """The record of one episode (see the module docstring)."""

    def __init__(self, script: Script, caps: Caps):
        self.script = script
        self.caps = caps
        self.requests: list[dict] = []
        self.executions: list[dict] = []
        self.aborted: Optional[str] = None
        self._used: dict[int, set] = {}
        self._unscripted = 0
        #: The response being streamed: [window, chunks taken, chunks each call needs, chunks in all]
        self._stream: Optional[list] = None

    @property
    def window(self) -> int:
        return len(self.requests) - 1

    # -- the model ---------------------------------------------------------------------------
    def request(self, feedback: dict) -> Any:
        """A model request (``feedback``: what its messages fed back, see models); returns the
        turn that answers it, or raises :class:`EpisodeAborted` past ``max_turns``."""
        self.requests.append(feedback)
        if len(self.requests) > self.caps.max_turns:
            self.aborted = "model"
            raise EpisodeAborted(f"more than {self.caps.max_turns} model requests")
        return self.script.turn(len(self.requests) - 1)

    def streaming(self, window: int, complete_at: list, total: int) -> None:
        """Request ``window`` is answered as a stream of ``total`` chunks; call ``j`` of it is whole
        once ``complete_at[j]`` of them have been taken."""
        self._stream = [window, 0, list(complete_at), total]

    def consumed(self, window: int) -> None:
        """The loop took the next chunk of request ``window``'s stream."""
        if self._stream is not None and self._stream[0] == window:
            self._stream[1] += 1

    # -- the tools ---------------------------------------------------------------------------
    def execute(self, name: str, arguments: Any) -> Any:
        """A tool execution: record it, then return the scripted result (a copy) — or raise
        :class:`EpisodeAborted` past ``max_tool_calls``."""
        arguments = json_value(arguments)
        w = self.window
        index, match, result = self._attribute(w, name, arguments)
        self.executions.append({"window": w, "name": name, "arguments": arguments, "call": index,
                                "match": match, "result": result, "error": None})
        if self._stream is not None and self._stream[0] == w:
            _w, taken, complete_at, total = self._stream
            needed = complete_at[index] if index is not None and index < len(complete_at) else total
            self.executions[-1]["streamed"] = [taken, needed]  # chunks taken when it ran, chunks its call needs
        if len(self.executions) > self.caps.max_tool_calls:
            self.aborted = "tools"
            raise EpisodeAborted(f"more than {self.caps.max_tool_calls} tool executions")
        return copy_json(result)

    def failed(self, error: BaseException) -> None:
        """The last execution's tool raised (a fault-injecting behaviour): keep why."""
        if self.executions:
            self.executions[-1]["error"] = f"{type(error).__name__}: {error}"[:300]
            self.executions[-1]["result"] = None

    def _attribute(self, w: int, name: str, arguments: Any) -> tuple:
        """(call index in turn ``w`` or None, "exact" | "name" | None, the result to answer)."""
        if w >= 0:
            calls = self.script.turn(w).calls
            used = self._used.setdefault(w, set())
            exact = [j for j, c in enumerate(calls) if c.name == name and c.arguments is not None
                     and json_equal(c.arguments, arguments)]
            loose = [j for j, c in enumerate(calls) if c.name == name]
            for candidates, how in ((exact, "exact"), (loose, "name")):
                fresh = [j for j in candidates if j not in used] or candidates
                if fresh:
                    used.add(fresh[0])
                    return fresh[0], how, calls[fresh[0]].result
            for earlier in range(min(w, len(self.script.turns)) - 1, -1, -1):  # a call made before
                for c in self.script.turns[earlier].calls:
                    if c.name == name and c.arguments is not None and json_equal(c.arguments, arguments):
                        return None, None, c.result
        self._unscripted += 1
        return None, None, {"ok": True, "ref": f"tf-u{self._unscripted}", "data": []}

    # -- the end -----------------------------------------------------------------------------
    def trace(self, *, reply: Any = None, returned: bool = False, error: Optional[BaseException] = None,
              declared: Any = None) -> dict:
        """``declared``: the policy's ``errors`` resolved in this process (:class:`fuzzer.engine.exception_names.
        Declared`), so the error is described with the names it is an instance of."""
        return {"requests": self.requests, "executions": self.executions, "aborted": self.aborted,
                "returned": returned, "reply": reply_text(reply) if returned else None,
                "error": describe_error(error, declared) if error is not None else None}


def reply_text(reply: Any) -> Optional[str]:
    """The loop's reply as text (None stays None), bounded."""
    if reply is None:
        return None
    try:
        text = reply if isinstance(reply, str) else str(reply)
    except Exception:  # noqa: BLE001 - a reply whose __str__ fails is still a reply
        text = object.__repr__(reply)
    return text[:TEXT_LIMIT]


def json_value(value: Any) -> Any:
    """A JSON-typed copy of what the loop passed (the target contract's normalization)."""
    from fuzzer.engine.calls import InvalidReturn, _json

    try:
        return _json(value, 1)
    except (InvalidReturn, RecursionError):
        return {"$repr": object.__repr__(value)}


def describe_error(exc: BaseException, declared: Any = None) -> dict:
    """The exception's qualified type, its MRO's qualified names, message, the loop's own frames
    (file base name, function; innermost last; toolfuzz's fakes and worker left out, so a
    signature names the user's code), the innermost of them as (full path, function) for reports
    that link to code, and the formatted traceback; with ``declared`` (the policy's ``errors``
    resolved here), ``declared_by``: the names it is an instance of."""
    from fuzzer.engine.references import describe_exception  # the type's name and message, as for parsers
    from fuzzer.engine.references import exception_name

    name, message, _frames = describe_exception(exc)
    own = []
    for frame, _line in traceback.walk_tb(exc.__traceback__):
        path = os.path.abspath(frame.f_code.co_filename)
        if os.path.dirname(path) != _PACKAGE_DIR:
            own.append((path, frame.f_code.co_name))
    own = without_library_tail(own)  # json.loads's raise sites are one bug in the loop that called it
    where = list(own[-1]) if own else None
    frames = [list(f) for f in named(own, _FRAME_LIMIT)]
    try:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:  # noqa: BLE001
        text = f"{name}: {message}"
    described = {"exception": name, "message": message, "frames": frames, "where": where,
                 "traceback": text[-TEXT_LIMIT:],
                 "mro": [exception_name(c) for c in type(exc).__mro__ if c not in (object, BaseException)]}
    if declared is not None and declared.names:
        described["declared_by"] = declared.matching(type(exc))
    return described


__all__ = ["Caps", "EpisodeAborted", "Recorder", "describe_error", "json_value", "reply_text"]
