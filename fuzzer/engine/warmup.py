"""Warm the code under test up once, before anything is timed.

A target's first run in a process pays one-time costs: lazy imports, tool schemas built, clients
and caches made. For an agent loop written with a framework that is 1.7 s on a loaded machine
where every later episode takes 20-60 ms — past a 2 s watchdog it was reported as a hang that
never happened again. So a harness runs the target once, untimed by the watchdog, in the process
its workers are forked from (the zygote, like AFL's deferred fork server): every worker, a
restarted one and a fresh confirming one too, starts warm.

The run is bounded all the same (:func:`warmup_limit`: a few timeouts), by a ``SIGALRM`` timer
that interrupts Python code; a warm-up that does not finish, or raises, only means the workers
start cold, and the campaign judges what the target does then. It is never a finding. Threads it
leaves running are counted: a forked worker does not have them (``os.fork`` copies one thread),
which the harness says in a note.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

#: A warm-up may take this many watchdog timeouts ...
WARMUP_TIMEOUTS = 5
#: ... but at least this many seconds, and at most this many (the zygote's load limit is 60 s).
WARMUP_MIN_S, WARMUP_MAX_S = 10.0, 30.0


def warmup_limit(timeout: float) -> float:
    """Seconds a warm-up run may take with a watchdog ``timeout`` per run."""
    return min(WARMUP_MAX_S, max(WARMUP_MIN_S, WARMUP_TIMEOUTS * timeout))


class WarmUpTimeout(BaseException):
    """Raised into the warm-up run when its time is up (a BaseException: ``except Exception`` in
    the target does not swallow it)."""


@dataclass(frozen=True)
class WarmUp:
    """How the warm-up went: its seconds, whether it finished, what it raised, threads it left."""

    seconds: float = 0.0
    finished: bool = False
    error: Optional[str] = None
    threads_left: int = 0

    def to_json(self) -> dict:
        return {"seconds": round(self.seconds, 3), "finished": self.finished, "error": self.error,
                "threads_left": self.threads_left}

    def note(self, what: str, limit_s: float) -> Optional[str]:
        """A line for the user when the warm-up did not do its job, else None."""
        if not self.finished:
            return (f"warming {what} up did not finish within {limit_s:g} s: the workers start cold, so a first "
                    f"episode's one-time costs count against --timeout")
        if self.error:
            return f"warming {what} up raised {self.error}; the workers start cold"
        if self.threads_left:
            return (f"warming {what} up left {self.threads_left} thread(s) running; the forked workers do not have "
                    f"them (a pool or client made on first use may wait for a thread that is not there)")
        return None


def warm_up(run: Callable[[], Any], limit_s: float) -> WarmUp:
    """Call ``run()`` once, stopping it after ``limit_s`` seconds when it is Python code that can
    be interrupted (in the main thread, where signals are delivered; elsewhere it runs unbounded).
    Never raises for what ``run`` does."""
    threads = threading.active_count()
    timed = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    previous: Any = None
    installed = False
    expired: list = []
    started = time.perf_counter()

    def expire(_signum: int, _frame: Any) -> None:
        expired.append(True)  # the target may catch what is raised (a harness's own runner does)
        raise WarmUpTimeout(f"the warm-up took more than {limit_s:g} s")

    try:
        if timed:
            previous, installed = signal.signal(signal.SIGALRM, expire), True
            signal.setitimer(signal.ITIMER_REAL, limit_s)
        try:
            run()
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except WarmUpTimeout:
        return WarmUp(seconds=time.perf_counter() - started, finished=False)
    except BaseException as exc:  # noqa: BLE001 - the warm-up only warms; the campaign judges
        text = " ".join(str(exc).split())[:200]
        return WarmUp(seconds=time.perf_counter() - started, finished=not expired,
                      error=f"{type(exc).__name__}: {text}" if text else type(exc).__name__,
                      threads_left=max(0, threading.active_count() - threads))
    finally:
        if installed:
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
    return WarmUp(seconds=time.perf_counter() - started, finished=not expired,
                  threads_left=max(0, threading.active_count() - threads))


__all__ = ["WARMUP_MAX_S", "WARMUP_MIN_S", "WARMUP_TIMEOUTS", "WarmUp", "WarmUpTimeout", "warm_up", "warmup_limit"]
