"""What crosses the process boundary, whatever a harness runs there: the spec a worker is started
from, the faults the watchdog reports, and the limits both sides share.

Isolation knows nothing of any harness. A harness describes its workers with a *spec*: any
picklable object with the attributes of :class:`WorkerSpec` (a harness may use WorkerSpec itself
or a dataclass of its own with the same attributes and methods):

* ``serve`` — ``"module:function"``. The zygote calls ``function(spec)`` once, before it forks any
  worker; what it returns is the *served object*, whose ``run(payload, options)`` each worker
  calls on every payload of a batch (its result must be plain, picklable data), and which the
  harness's orders reach as ``runner.served``. Loading the user's code happens there, so every
  worker inherits it. A ``TargetError`` raised while loading reaches the caller of
  :meth:`~fuzzer.isolation.WorkerPool.start` with its words unchanged.
* ``label`` — how messages name what is loaded (``target 'm:parse'``, ``--executor 'm:make'``).
* ``timeout``, ``cwd``, ``memory_limit_mb`` — the watchdog's limit per payload, the workers'
  directory, their address-space cap; optionally ``load_timeout``, how long loading may take
  (:func:`load_timeout`: bounded by the run's budget).
* ``decode(result)`` — engine side: what the caller receives for a worker's result (the parser
  harness turns its compact rows into outcomes here); ``fault(kind, elapsed, detail, frames)`` —
  what the caller receives for a payload its worker hung on or died on.
"""

from __future__ import annotations

import pickle
import struct
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, ClassVar, Optional

from strategies.errors import TargetError

BATCH_SIZE = 256  #: payloads per message to a worker
BATCH_CHARS = 4_000_000  #: ... unless they are long: oversized payloads travel in smaller batches
LOAD_TIMEOUT = 60.0  #: seconds the zygote may take to load what it serves, at most
MIN_LOAD_TIMEOUT = 5.0  #: ... and at least, whatever the budget (a heavy framework takes seconds)
POLL = 0.02  #: watchdog resolution, seconds
DEPTH = 2  #: batches in flight per worker
PIPELINED_PARTS = 4  #: messages per worker of a run whose results are judged as they arrive
PIPELINED_MIN = 16  #: payloads per message at least, then
BLAMELESS_RETRIES = 2
STRIDE = 8  #: shared-memory slots are a cache line apart so workers do not contend
PROTOCOL = pickle.HIGHEST_PROTOCOL
#: Bytes of shared memory per worker where an order pins the input it runs (sequence number, the
#: input's index in its order, size kept, full size; then tag and text): enough for a megabyte
#: string in any script.
PIN_BYTES = 4 << 20
PIN_STRUCT = struct.Struct("qqqq")
PIN_HEADER = PIN_STRUCT.size


@dataclass(frozen=True)
class Fault:
    """A payload whose worker hung (no result within the timeout) or died (its process ended):
    ``kind`` "hung" | "died", how long it had run, how the worker ended or why it was killed, and
    the Python stack it was in (innermost last, (file base name, function) pairs)."""

    kind: str
    elapsed: float = 0.0
    detail: Optional[str] = None
    frames: tuple = ()


@dataclass(frozen=True)
class Limits:
    """What every spec says of where and how its workers run: their directory, the watchdog's
    limit per payload, their address-space cap; how messages name what they load (:attr:`label`);
    and, unless a harness decodes its results, that what a worker sends is what the caller
    receives. A harness's spec subclasses it with its own fields keyword-only
    (``@dataclass(frozen=True, kw_only=True)``), declares what its workers serve and how the user
    named what they load in the class line, and adds ``fault``::

        class ExecutorSpec(Limits, serve="pkg.worker:Runner", option="--executor",
                           reference="config.executor"):

    ``option`` is the option's words, or a function of the spec where one spec serves several
    (``--parser`` or ``--consumer``); ``reference`` is the dotted path of the field holding what
    the user gave it (``m:make``). A spec that leaves one out fails when its class is made, not
    at the first message that names it."""

    cwd: Optional[str] = None
    timeout: float = 2.0
    memory_limit_mb: Optional[int] = 4096

    serve: ClassVar[str]
    option: ClassVar[str]
    reference: ClassVar[str]

    def __init_subclass__(cls, *, serve: Optional[str] = None, option: Any = None,
                          reference: Optional[str] = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if serve is not None:
            cls.serve = serve
        if option is not None:
            cls.option = property(option) if callable(option) else option
        if reference is not None:
            cls.reference = property(attrgetter(reference))
        missing = [name for name in ("serve", "option", "reference") if not hasattr(cls, name)]
        if missing:
            raise TypeError(f"worker spec {cls.__name__} does not declare {', '.join(missing)} "
                            f"(class {cls.__name__}(Limits, serve=..., option=..., reference=...))")

    @property
    def label(self) -> str:
        """How every message names what the workers load: the option, then the reference as the
        user wrote it (``--executor 'm:make'``), so a load failure, a contract error and a
        summary name it alike."""
        return f"{self.option} {self.reference!r}"

    def decode(self, result: Any) -> Any:
        return result


@dataclass(frozen=True)
class WorkerSpec:
    """A spec with nothing harness-specific: see the module docstring."""

    serve: str
    label: str = "the code under test"
    cwd: Optional[str] = None
    timeout: float = 2.0
    memory_limit_mb: Optional[int] = 4096

    def decode(self, result: Any) -> Any:
        return result

    def fault(self, kind: str, elapsed: float, detail: Optional[str], frames: tuple) -> Any:
        return Fault(kind, elapsed, detail, frames)


def load_timeout(budget_s: Optional[float]) -> float:
    """How long loading the code under test may take in a run bounded by ``budget_s``: the budget
    itself, between :data:`MIN_LOAD_TIMEOUT` and :data:`LOAD_TIMEOUT`. Start-up is not counted in
    the budget (a slow import must not eat the fuzzing time), but an import that never finishes
    must not make ``--budget 10`` a run that never ends either."""
    if budget_s is None:
        return LOAD_TIMEOUT
    return min(LOAD_TIMEOUT, max(MIN_LOAD_TIMEOUT, float(budget_s)))


class ImportTimeout(TargetError):
    """Loading the code under test did not finish within the pool's load timeout: a usage error
    (exit 2), since nothing can be tested. ``stuck``: where the import was when it was stopped
    ("file.py line N in function"), when its stack could be read."""

    def __init__(self, label: str, seconds: float, stuck: Optional[str] = None):
        self.label, self.seconds, self.stuck = label, seconds, stuck
        where = f"stuck at {stuck}: " if stuck else ""
        super().__init__(f"{label}: importing it did not finish within {seconds:g} s "
                         f"({where}does the module wait for something at import time?)")


__all__ = ["BATCH_SIZE", "Fault", "ImportTimeout", "LOAD_TIMEOUT", "Limits", "WorkerSpec", "load_timeout"]
