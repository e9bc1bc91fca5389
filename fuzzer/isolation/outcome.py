"""What crosses the process boundary: the target spec going in, outcomes coming back, and the
limits shared by both sides."""

from __future__ import annotations

import pickle
import struct
from dataclasses import dataclass

KINDS = ("returned", "rejected", "raised", "invalid", "hung", "died")
BATCH_SIZE = 256  #: texts per message to a worker
BATCH_CHARS = 4_000_000  #: ... unless they are long: oversized inputs travel in smaller batches
LOAD_TIMEOUT = 60.0  #: seconds the zygote may take to import the target
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
    #: With a traced run that looked for it: "file:function" of the target function whose return
    #: value first held the damaged string (fuzzer.isolation.instrument), "" when none did.
    maker: str | None = None


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
