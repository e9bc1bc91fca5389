"""The parser harness in its workers: load the target once (in the zygote), run it on model outputs.

:func:`serve` is what a :class:`~fuzzer.harnesses.parser.outcome.TargetSpec` names: the isolation
layer calls it once in the zygote, and every worker forked from there runs :meth:`Served.run` on
each text of a batch, or the parser's orders call :meth:`Served.lean` on the inputs they build
(:mod:`fuzzer.harnesses.parser.orders`). A run's result is a compact row
(:func:`~fuzzer.harnesses.parser.outcome.outcome_of` reads it), built only from plain data:
normalized calls, exception type *names*, strings.
"""

from __future__ import annotations

import inspect
import time
from typing import Any

from fuzzer.engine.calls import InvalidReturn, normalize_calls
from fuzzer.engine.references import (MESSAGE_LIMIT, describe_exception, exception_message, exception_name,
                                      format_traceback, load_reject_types, load_target)
from fuzzer.isolation.instrument import NO_EXTRA, Instruments
from strategies.errors import TargetError

#: Crash sites (exception type, frames) per worker whose first traceback is formatted and sent.
CRASH_SITES = 256


def takes_one_text(target: Any, ref: str) -> Any:
    """``target``, when it can be called with one argument (the model output); else a one-line
    TargetError. A ``parse()`` with no parameter (or with two required ones) otherwise "crashes"
    on every input: a whole budget spent on one TypeError in the harness's call, not a bug found."""
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # a builtin or extension callable without one: cannot tell
        return target
    try:
        signature.bind("model output")
    except TypeError as exc:
        text = " ".join(str(exc).split())
        raise TargetError(f"target {ref!r}: cannot be called with one argument, the model output "
                          f"({type(exc).__name__}: {text}); its signature is {signature}") from None
    return target


def serve(spec: Any) -> "Served":
    """Load ``spec.target`` and its rejection types (in the zygote; every worker inherits them)."""
    target = takes_one_text(load_target(spec.target, cwd=spec.cwd), spec.target)
    return Served(target, load_reject_types(list(spec.reject_on), cwd=spec.cwd), spec)


class Served:
    """The target, ready to run: ``run(text, trace)`` for a text the engine sent, ``lean(text,
    trace)`` for an input an order built. Kept lean: one of them runs once per execution.

    ``lean`` leaves a clean rejection's frames out (None) and keeps the exception in
    :attr:`rejection`: describing a traceback costs more than most parsers take to reject an
    input (each frame raises an audit event), and an order needs the frames only of the few
    rejections that fail (:meth:`frames` adds them)."""

    def __init__(self, target: Any, reject: tuple, spec: Any):
        watch = (Instruments(target, coverage=spec.coverage, audit=spec.audit, share=spec.trace_share)
                 if (spec.coverage or spec.audit) else None)
        self.rejection: Any = None
        self._crash_sites: set = set()
        self.run = self._executor(target, reject, watch, frames=True)
        self.lean = self._executor(target, reject, watch, frames=False)

    def frames(self, outcome: Any) -> Any:
        """``outcome`` (the last input's) with its frames, when it is a rejection that left them out."""
        if outcome.frames is None:
            exc, self.rejection = self.rejection, None
            outcome.__dict__["frames"] = describe_exception(exc)[2] if exc is not None else ()
        return outcome

    def _executor(self, target: Any, reject: tuple, watch: Any, frames: bool) -> Any:
        """``execute(text, trace) -> row``: run the target once, as plain data (see
        :func:`~fuzzer.harnesses.parser.outcome.outcome_of`)."""
        begin = watch.begin if watch is not None else None
        end = watch.end if watch is not None else None
        clock, normalize, describe = time.perf_counter, normalize_calls, describe_exception
        crash_sites = self._crash_sites
        served = self

        def execute(text: str, trace: Any) -> tuple:
            if begin is not None:
                begin(text, trace)
            start = clock()
            try:
                value = target(text)
            except reject as exc:
                elapsed = clock() - start
                # The instruments stop before the exception is described: walking its traceback
                # raises an audit event per frame, which must not count as the target's.
                extra = end(elapsed) if end is not None else None
                if frames:
                    row: tuple = (1, elapsed, *describe(exc))
                else:
                    served.rejection = exc
                    row = (1, elapsed, exception_name(type(exc)), exception_message(exc, MESSAGE_LIMIT), None)
            except BaseException as exc:  # noqa: BLE001 - RecursionError, SystemExit, ... all count
                elapsed = clock() - start
                extra = end(elapsed) if end is not None else None
                row = (2, elapsed, *describe(exc))
                site = (row[2], row[4])
                if site not in crash_sites and len(crash_sites) < CRASH_SITES:
                    # The report's traceback: formatted once per place the target crashes (a
                    # crash per input would cost a formatting each), so the first input that
                    # crashed there carries it.
                    crash_sites.add(site)
                    return row + (NO_EXTRA if extra is None else extra, format_traceback(exc))
            else:
                elapsed = clock() - start
                extra = end(elapsed) if end is not None else None
                try:
                    row = (0, elapsed, normalize(value))
                except InvalidReturn as exc:
                    row = (3, elapsed, None, str(exc)[:MESSAGE_LIMIT], ())
                except BaseException as exc:  # noqa: BLE001 - the returned object's own code failed
                    name, message, frames_ = describe(exc)
                    row = (3, elapsed, name, f"reading the return value raised {name}: {message}"[:MESSAGE_LIMIT],
                           frames_)
            return row if extra is None else row + (extra,)

        return execute


__all__ = ["Served", "serve", "takes_one_text"]
