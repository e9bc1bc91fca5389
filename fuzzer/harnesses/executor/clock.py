"""Virtual time inside the executor worker: 30 s of backoff runs in microseconds.

The wall clock — ``time.time``, ``time.time_ns``, ``datetime.now``, ``datetime.utcnow``,
``date.today``, ``time.gmtime``/``localtime``/``strftime`` — comes from **time-machine**
(``time_machine.travel(..., tick=False)``, moved with ``shift``): it patches those functions at the C
level, so even ``from datetime import datetime`` taken before it started follows the virtual clock
(pybreaker's reset window uses ``datetime.now(UTC)``), and a shift costs under a microsecond.

time-machine deliberately does not mock the monotonic clock (3.0 removed that: a monotonic clock
that can be moved breaks asyncio loops and profilers in *tests*), and no library makes
``time.sleep`` advance a clock instead of blocking. Inside the worker those are exactly what is
needed, so this module patches them by hand, and says so here:

* ``time.sleep`` advances the virtual clock and records the wait (tenacity calls it through the
  module, so its backoff is seen; so is a hand-written ``time.sleep(2 ** attempt)``);
* ``time.monotonic`` / ``time.perf_counter`` (and ``_ns``) return the virtual monotonic time; the
  worker's own real-time measurements use :data:`real_perf_counter`, saved before patching;
* ``asyncio``: an event loop whose ``time()`` is virtual and whose selector, when nothing is ready,
  jumps the clock to the next timer instead of blocking, so ``asyncio.sleep``, ``wait_for`` and
  ``asyncio.timeout`` work unchanged; an event loop policy makes ``asyncio.run`` and
  ``new_event_loop`` use it.

The patches are installed once per worker process, before the user's code is imported (so a
``from time import sleep`` in it binds the virtual one). Code waiting on real primitives
(``threading.Event.wait(5)``, a thread pool's ``result(timeout=...)``) still waits in real time;
the worker's watchdog turns a long one into a ``hang``.
"""

from __future__ import annotations

import asyncio
import selectors
import time
from typing import Any, Callable, Optional

#: The virtual wall clock starts here every scenario: 2026-01-01T00:00:00Z (whole seconds, so an
#: HTTP-date Retry-After computed from it is exact).
EPOCH = 1767225600.0
#: The virtual monotonic clock starts here (an arbitrary non-zero value, as real ones have).
MONOTONIC_BASE = 10_000.0

real_perf_counter = time.perf_counter
real_monotonic = time.monotonic
real_sleep = time.sleep


class VirtualTimeExceeded(BaseException):
    """Raised into the executor when one call has run longer than the virtual-time limit (it is
    waiting forever); a BaseException so ``except Exception`` in the executor does not swallow it."""


class VirtualClock:
    """The simulated clock of one worker. ``elapsed`` seconds since the scenario started."""

    def __init__(self) -> None:
        self.elapsed = 0.0
        self.sleeps: list[float] = []  # every wait, in order (time.sleep and asyncio timers)
        self.limit: Optional[float] = None  # absolute elapsed value past which waiting aborts
        self.aborted = False
        self._traveller: Any = None
        self.installed = False

    # -- reading ---------------------------------------------------------------------------------
    def monotonic(self) -> float:
        return MONOTONIC_BASE + self.elapsed

    def wall(self) -> float:
        return EPOCH + self.elapsed

    # -- moving ----------------------------------------------------------------------------------
    def advance(self, seconds: float) -> None:
        """Let ``seconds`` of virtual time pass (a tool's latency, a scenario's gap)."""
        if seconds > 0:
            self.elapsed += seconds
            if self._traveller is not None:
                self._traveller.shift(seconds)
        if self.limit is not None and self.elapsed > self.limit:
            # keep raising on every later wait: an executor that swallows it still cannot go on
            self.aborted = True
            raise VirtualTimeExceeded(f"still running after {self.elapsed:g} s of virtual time")

    def sleep(self, seconds: float) -> None:
        """``time.sleep``: a wait of the executor's own."""
        if seconds != seconds or seconds < 0:
            raise ValueError("sleep length must be non-negative")
        self.sleeps.append(float(seconds))
        self.advance(float(seconds))

    def arm(self, seconds: float) -> None:
        """Abort (raise :class:`VirtualTimeExceeded`) once ``seconds`` more have passed."""
        self.limit = self.elapsed + seconds
        self.aborted = False

    def disarm(self) -> None:
        self.limit = None

    def reset(self) -> None:
        """Back to the epoch (a new scenario)."""
        self.elapsed = 0.0
        self.sleeps = []
        self.limit = None
        self.aborted = False
        if self._traveller is not None:
            self._traveller.move_to(EPOCH)

    # -- installing --------------------------------------------------------------------------------
    def install(self) -> "VirtualClock":
        """Patch the process's clocks (once; see the module docstring)."""
        if self.installed:
            return self
        import time_machine

        self._traveller = time_machine.travel(EPOCH, tick=False).start()
        clock = self

        def sleep(seconds: float) -> None:
            clock.sleep(seconds)

        def monotonic() -> float:
            return MONOTONIC_BASE + clock.elapsed

        def monotonic_ns() -> int:
            return int((MONOTONIC_BASE + clock.elapsed) * 1e9)

        time.sleep = sleep
        time.monotonic = time.perf_counter = monotonic
        time.monotonic_ns = time.perf_counter_ns = monotonic_ns
        asyncio.set_event_loop_policy(_VirtualPolicy(self))
        self.installed = True
        return self

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        return VirtualEventLoop(self)


class _VirtualSelector(selectors.BaseSelector):
    """A real selector for real file descriptors (the loop's self-pipe, a thread's wake-up) that,
    when the loop would block until a timer, moves the virtual clock to that timer instead."""

    def __init__(self, clock: VirtualClock):
        self._clock = clock
        self._real = selectors.DefaultSelector()

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def select(self, timeout: Optional[float] = None) -> list:
        ready = self._real.select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:  # no timer at all: only real I/O (a thread finishing) can wake the loop
            return self._real.select(None)
        self._clock.sleeps.append(float(timeout))
        self._clock.advance(float(timeout))
        return []

    def close(self) -> None:
        self._real.close()

    def get_key(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.get_key(fileobj)

    def get_map(self) -> Any:
        return self._real.get_map()


class VirtualEventLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on virtual time (see :class:`_VirtualSelector`)."""

    def __init__(self, clock: VirtualClock):
        super().__init__(_VirtualSelector(clock))
        self._virtual_clock = clock

    def time(self) -> float:
        return self._virtual_clock.monotonic()


class _VirtualPolicy(asyncio.DefaultEventLoopPolicy):
    def __init__(self, clock: VirtualClock):
        super().__init__()
        self._clock = clock

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        return VirtualEventLoop(self._clock)


#: The worker's clock (one per process).
CLOCK = VirtualClock()


class ScenarioLoop:
    """One virtual-time event loop for the length of a scenario (an async executor's locks and
    queues stay bound to one loop), created on first use and closed with what it left running."""

    def __init__(self, clock: VirtualClock):
        self.clock = clock
        self.loop: Optional[VirtualEventLoop] = None

    def __enter__(self) -> "ScenarioLoop":
        return self

    def run(self, awaitable: Any) -> Any:
        if self.loop is None:
            self.loop = VirtualEventLoop(self.clock)
        return self.loop.run_until_complete(awaitable)

    def __exit__(self, *exc_info: object) -> None:
        loop, self.loop = self.loop, None
        if loop is None:
            return
        limit, self.clock.limit = self.clock.limit, None
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        except BaseException:  # noqa: BLE001 - a task that refuses to die must not kill the worker
            pass
        finally:
            loop.close()
            self.clock.limit = limit


def timed(function: Callable[[], Any]) -> tuple[Any, float]:
    """(result, real seconds) of ``function()``, measured with the real clock."""
    start = real_perf_counter()
    value = function()
    return value, real_perf_counter() - start


__all__ = ["CLOCK", "EPOCH", "VirtualClock", "VirtualEventLoop", "VirtualTimeExceeded", "real_perf_counter",
           "ScenarioLoop", "timed"]
