"""What crosses the process boundary: the target spec going in, outcomes coming back, and the
limits shared by both sides."""

from __future__ import annotations

import pickle
import struct
from dataclasses import dataclass

from strategies.errors import TargetError

KINDS = ("returned", "rejected", "raised", "invalid", "hung", "died")
BATCH_SIZE = 256  #: texts per message to a worker
BATCH_CHARS = 4_000_000  #: ... unless they are long: oversized inputs travel in smaller batches
LOAD_TIMEOUT = 60.0  #: seconds the zygote may take to import the target, at most
MIN_LOAD_TIMEOUT = 5.0  #: ... and at least, whatever the budget (a heavy framework takes seconds)
POLL = 0.02  #: watchdog resolution, seconds
DEPTH = 2  #: batches in flight per worker
PIPELINED_PARTS = 4  #: messages per worker of a run whose outcomes are judged as they arrive
PIPELINED_MIN = 16  #: texts per message at least, then
BLAMELESS_RETRIES = 2
STRIDE = 8  #: shared-memory slots are a cache line apart so workers do not contend
MESSAGE_LIMIT = 300
FRAME_LIMIT = 8
NO_EXTRA = ((), (), ())  #: a row's instruments' part (lines, functions, unsafe) when they are off
PROTOCOL = pickle.HIGHEST_PROTOCOL
#: Bytes of shared memory per worker where an order pins the input it runs (sequence number, the
#: input's index in its order, size kept, full size; then tag and text): enough for a megabyte
#: string in any script.
PIN_BYTES = 4 << 20
PIN_STRUCT = struct.Struct("qqqq")
PIN_HEADER = PIN_STRUCT.size


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


@dataclass(frozen=True)
class TargetSpec:
    """Everything a worker needs to load and run a target (picklable, so spawn works too).

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
    #: Seconds the zygote may take to import the target (see :func:`load_timeout`).
    load_timeout: float = LOAD_TIMEOUT


def load_timeout(budget_s: float | None) -> float:
    """How long importing the target may take in a run bounded by ``budget_s``: the budget itself,
    between :data:`MIN_LOAD_TIMEOUT` and :data:`LOAD_TIMEOUT`. Start-up is not counted in the
    budget (a slow import must not eat the fuzzing time), but an import that never finishes must
    not make ``--budget 10`` a run that never ends either."""
    if budget_s is None:
        return LOAD_TIMEOUT
    return min(LOAD_TIMEOUT, max(MIN_LOAD_TIMEOUT, float(budget_s)))


class ImportTimeout(TargetError):
    """Importing the target did not finish within its ``load_timeout``: a usage error (exit 2),
    since nothing can be tested. ``stuck``: where the import was when it was stopped ("file.py
    line N in function"), when its stack could be read. :meth:`naming` says it of the option the
    user gave (an executor's zygote imports a toolfuzz runner, which imports the user's code)."""

    def __init__(self, reference: str, seconds: float, stuck: str | None = None, *, option: str = "target"):
        self.reference, self.seconds, self.stuck, self.option = reference, seconds, stuck, option
        where = f"stuck at {stuck}: " if stuck else ""
        super().__init__(f"{option} {reference!r}: importing it did not finish within {seconds:g} s "
                         f"({where}does the module wait for something at import time?)")

    def naming(self, option: str, reference: str) -> "ImportTimeout":
        return ImportTimeout(reference, self.seconds, self.stuck, option=option)


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
