"""What the parser harness's workers report: one :class:`Outcome` per model output, and the
:class:`TargetSpec` they are started from.

A worker sends a compact *row* per input (a tuple: a parser runs in microseconds, and a dataclass
per execution would cost more than the parse); :func:`outcome_of` turns a row into an
:class:`Outcome` on the engine's side (``TargetSpec.decode``), and :func:`declined_quietly` lets an
order count a clean decline without building one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from fuzzer.isolation.instrument import NO_EXTRA
from fuzzer.isolation.spec import LOAD_TIMEOUT

KINDS = ("returned", "rejected", "raised", "invalid", "hung", "died")


@dataclass(frozen=True)
class Outcome:
    """What the target did with one input.

    ``kind``: returned | rejected | raised | hung | died | invalid (returned a non-call).
    ``calls``: the normalized calls when returned. ``exception``: qualified type name
    (``KeyError``, ``json.decoder.JSONDecodeError``). ``frames``: innermost-last
    ``(file basename, function)`` pairs of the traceback, at most 8, without line numbers so a
    signature survives unrelated edits. ``detail``: how a worker ended or why it was killed.
    """

    kind: str
    calls: list | None = None
    exception: str | None = None
    message: str | None = None
    frames: tuple[tuple[str, str], ...] = ()
    elapsed: float = 0.0
    detail: str | None = None
    #: With coverage: the (file, line) pairs of the target's code this input reached first (new to
    #: its worker), and the target functions it ran ("file:function"), when it was traced.
    lines: tuple = ()
    functions: tuple = ()
    #: (audit event, what it means, frames) of everything unsafe the target did on this input.
    unsafe: tuple = ()
    #: A crash's formatted traceback: sent with the first input that crashed at that place in its
    #: worker (formatting one per crash would slow a crashing target down), else None.
    traceback: str | None = None
    #: With a traced run that looked for it: "file:function" of the target function whose return
    #: value first held the damaged string (fuzzer.isolation.instrument), "" when none did.
    maker: str | None = None


@dataclass(frozen=True)
class TargetSpec:
    """Everything a parser worker needs to load and run a target (picklable, so spawn works too):
    the :mod:`fuzzer.isolation.spec` contract, served by :func:`fuzzer.harnesses.parser.worker.serve`.

    ``cwd`` goes first on ``sys.path`` in the worker and becomes its working directory.
    ``memory_limit_mb`` sets RLIMIT_AS so a runaway allocation raises MemoryError in the worker
    instead of eating the machine (None: no limit).
    """

    target: str
    reject_on: tuple[str, ...] = ()
    cwd: str | None = None
    timeout: float = 2.0
    memory_limit_mb: int | None = 4096
    #: Trace the lines of the target's own files (coverage-guided exploration).
    coverage: bool = False
    #: Share of inputs traced: None adapts it to the measured cost (fast, but timing-dependent);
    #: a number makes the choice of traced inputs deterministic (``--seed`` + ``--max-examples``).
    trace_share: float | None = None
    #: Watch (and block) what the target must not do while parsing (the unsafe verdict).
    audit: bool = True
    #: Seconds the zygote may take to import the target (:func:`fuzzer.isolation.spec.load_timeout`).
    load_timeout: float = LOAD_TIMEOUT

    serve = "fuzzer.harnesses.parser.worker:serve"

    @property
    def label(self) -> str:
        return f"target {self.target!r}"

    def decode(self, row: tuple) -> "Outcome":
        return outcome_of(row)

    def fault(self, kind: str, elapsed: float, detail: Optional[str], frames: tuple) -> "Outcome":
        return Outcome(kind, elapsed=elapsed, detail=detail, frames=frames)


def outcome_of(row: tuple, _new: Any = object.__new__, _kinds: tuple = KINDS, _plain: tuple = NO_EXTRA) -> Outcome:
    """The :class:`Outcome` a worker's row stands for.

    A row is (kind, elapsed, calls) or (kind, elapsed, exception, message, frames), followed by
    the instruments' (lines, functions, unsafe) when they are on — and by a formatted traceback
    for a crash at a place new to the worker (the instruments' part NO_EXTRA when they are off).
    Filling ``__dict__`` directly is ~3x cheaper than the frozen dataclass ``__init__``, and this
    runs once per execution; the fields and their order are Outcome's own."""
    outcome = _new(Outcome)
    if row[0] == 0:
        extra = row[3] if len(row) > 3 else _plain
        outcome.__dict__.update(kind="returned", calls=row[2], exception=None, message=None,
                                frames=(), elapsed=row[1], detail=None, lines=extra[0],
                                functions=extra[1], unsafe=extra[2])
        if len(extra) > 3:  # a run that looked for the maker of a damage
            outcome.__dict__["maker"] = extra[3]
    else:
        extra = row[5] if len(row) > 5 else _plain
        outcome.__dict__.update(kind=_kinds[row[0]], calls=None, exception=row[2], message=row[3],
                                frames=row[4], elapsed=row[1], detail=None, lines=extra[0],
                                functions=extra[1], unsafe=extra[2],
                                traceback=row[6] if len(row) > 6 else None)
    return outcome


def declined_quietly(row: tuple, _plain: tuple = NO_EXTRA) -> bool:
    """Whether a worker's row is a clean decline (a rejection, or no call returned) during which
    the target reached no new line and did nothing unsafe: all a cut-off input may do, so the
    order counts it without making its :class:`Outcome`."""
    kind, size = row[0], len(row)
    if kind == 1:
        return size == 5 or row[5] is _plain or row[5] == _plain
    return kind == 0 and not row[2] and (size == 3 or row[3] is _plain or row[3] == _plain)


def describe_outcome(outcome: "Outcome | None") -> str | None:
    """``Type: first line of the message`` of a raised / rejected outcome, the detail of a death or
    hang; None for a return. The one rendering of an outcome's failure (oracle, console, reports,
    corpus)."""
    if outcome is None:
        return None
    if outcome.kind in ("raised", "rejected") and outcome.exception:
        msg = (outcome.message or "").strip().splitlines()
        return f"{outcome.exception}: {msg[0]}" if msg else outcome.exception
    if outcome.kind in ("died", "hung"):
        return outcome.detail
    return None


__all__ = ["KINDS", "Outcome", "TargetSpec", "declined_quietly", "describe_outcome", "outcome_of"]
