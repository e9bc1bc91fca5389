"""The supervisor side: :class:`WorkerPool` starts the zygote, feeds workers batches, watches for
hangs and deaths, pins them on the exact payload, restarts and requeues (see :mod:`fuzzer.isolation`)."""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import signal
import sys
import time
import weakref
from collections import deque
from multiprocessing import connection as mpc
from multiprocessing import get_context, reduction
from typing import Any, Callable, Iterable, Iterator, Mapping, TypeVar

from fuzzer.engine.interrupts import BALANCED
from fuzzer.isolation.spec import (BATCH_SIZE, BLAMELESS_RETRIES, DEPTH, LOAD_TIMEOUT, PIN_BYTES, PIPELINED_MIN,
                                   PIPELINED_PARTS, POLL, PROTOCOL, STRIDE, ImportTimeout)
from fuzzer.isolation.stacks import DUMP_SIGNAL, LOAD_SLOT, lost_stack, read_trace, stuck_importing, trace_path
from fuzzer.isolation.wire import batches, collect, message, queue_limit, size_of
from fuzzer.isolation.worker import _zygote_main, read_pin
from strategies.errors import TargetError



class _Slot:
    """One worker as the supervisor sees it, with the batches it has been sent, oldest first.

    Up to two batches are in flight, so the worker runs one while the supervisor unpacks the
    previous results; a batch is only queued behind another when both are small enough to sit in
    the socket buffer, so neither side can block on a full pipe while the other does too.
    """

    __slots__ = ("index", "pos", "pid", "conn", "inflight", "seen", "since", "next_seq", "blameless")

    def __init__(self, index: int):
        self.index, self.pos = index, index * STRIDE
        self.pid, self.conn = 0, None
        self.inflight: deque = deque()  # (indices, first seq, payload size)
        self.seen = 0
        self.since = 0.0
        self.next_seq = 1
        self.blameless = 0  # deaths in a row outside any input


_LIVE_POOLS: "weakref.WeakSet[WorkerPool]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for pool in list(_LIVE_POOLS):
        pool.close()


#: Seconds beyond a served object's own warm-up limit the engine waits for its warm-up (it stops
#: Python code itself; native code it cannot stop is stopped here).
WARM_UP_MARGIN_S = 5.0

_S = TypeVar("_S", bound="Started")


def _end(process: Any, grace: float) -> None:
    """Wait up to ``grace`` seconds for ``process`` to exit, then kill it, and reap it.

    Not ``Process.join(timeout)``: the zygote closes every inherited descriptor, the
    multiprocessing sentinel's too, so ``join`` sees the sentinel ready at once and then blocks
    in ``waitpid`` for as long as the process lives — forever for one stuck importing the target."""
    deadline, pause = time.monotonic() + grace, 0.0005
    while process.exitcode is None and time.monotonic() < deadline:
        time.sleep(pause)  # a zygote told to exit is gone within a millisecond or two: look soon, then less often
        pause = min(pause * 2, POLL)
    if process.exitcode is None:
        process.kill()
        process.join()  # SIGKILLed: the blocking wait returns


class Lost:
    """An input of an order on which its worker hung or died: the input (``tag`` and ``text`` as
    the order pinned them; ``whole`` False when only its beginning fitted; ``index``, its place in
    the order, -1 when nothing was pinned) and its ``outcome`` (what the spec's ``fault`` made)."""

    __slots__ = ("outcome", "tag", "text", "whole", "index")

    def __init__(self, outcome: Any, tag: str, text: str, whole: bool, index: int):
        self.outcome, self.tag, self.text, self.whole, self.index = outcome, tag, text, whole, index


@contextlib.contextmanager
def _environ_set(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` in ``os.environ`` for the block; each variable as it was before afterwards."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class Started:
    """A context manager over ``start()`` and ``close()``: the block runs with it started and it is
    closed however the block ends. The pool and the harnesses' runners built on it share this."""

    def start(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _S) -> _S:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


#: Whether this process runs a native runtime's threads (a Ray driver's core worker and gRPC
#: pollers): see :func:`native_threads_started`.
_NATIVE_THREADS = False


def native_threads_started() -> None:
    """Say that this process now runs threads of a native runtime (the Ray back end calls it when
    it joins Ray). Zygotes are spawned from then on: forked beside those threads, a zygote's
    workers ran a thousand times slower (~100 texts/s; the runtime's locks and pollers are copied
    mid-use). Threads can not be told apart from outside (a test runner's are native too), so the
    one who starts them says so."""
    global _NATIVE_THREADS
    _NATIVE_THREADS = True


def _default_start_method() -> str:
    """``fork`` on Linux (cheap, and the engine has imported no user code), ``spawn`` elsewhere and
    once :func:`native_threads_started`."""
    return "fork" if sys.platform.startswith("linux") and not _NATIVE_THREADS else "spawn"


class WorkerPool(Started):
    """Workers that run what ``spec`` serves (:mod:`fuzzer.isolation.spec`) on payloads and report
    one result per payload: ``spec.decode`` of the worker's, or ``spec.fault(...)`` for a payload
    its worker hung or died on.

    Use as a context manager (or call :meth:`start` / :meth:`close`). ``run(payloads)`` preserves
    order. A load failure raises :class:`~strategies.errors.TargetError` from :meth:`start`;
    ``info`` is what the served object offered (its ``info`` attribute) once it loaded.
    ``start_method`` is the multiprocessing method for the zygote: ``fork`` on Linux (cheap, and
    the engine has imported no user code), ``spawn`` elsewhere and beside native threads
    (:func:`_default_start_method`); workers are always forked from it.
    A fork is as cheap as the zygote is small, so ``spawn`` pays ~0.2 s once to make restarts
    cheaper when the engine process is already large. Not thread-safe: one caller at a time.
    ``environ``: variables the zygote, hence every worker, inherits (how a harness hands its
    workers their configuration); they are set in this process only while the zygote starts.
    """

    def __init__(self, spec: Any, workers: int = 1, *, batch_size: int = BATCH_SIZE,
                 start_method: str | None = None, environ: Mapping[str, str] | None = None,
                 load_timeout: float | None = None):
        if workers < 1:
            raise ValueError(f"workers must be >= 1, not {workers}")
        self.spec, self.workers, self.batch_size = spec, int(workers), max(1, int(batch_size))
        self.start_method = start_method or _default_start_method()
        self.environ = dict(environ or {})
        if not spec.timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, not {spec.timeout!r}")
        #: Seconds the zygote may take to load what it serves: the argument, else the spec's own
        #: ``load_timeout`` if it has one, else :data:`~fuzzer.isolation.spec.LOAD_TIMEOUT`.
        self.load_timeout = load_timeout or getattr(spec, "load_timeout", None) or LOAD_TIMEOUT
        self.restarts = 0
        #: What the served object offered when it loaded (None until the pool has started).
        self.info: Any = None
        #: Every (file, line) of the code under test any payload reached, for a spec that traces
        #: (the parser's: ``spec.coverage``, read from each result's ``lines``).
        self.lines: set = set()
        self._options: Any = None
        self._queue_bytes = 0
        self._zygote: Any = None
        self._ctl: Any = None
        self._slots: list[_Slot] = []
        self._seq: Any = None
        self._pins: Any = None
        #: True while :meth:`run_orders` runs: each "text" is then an order (see :meth:`run_orders`).
        self._orders = False
        #: Results as the workers sent them (see :meth:`run`'s ``raw``).
        self._raw = False
        self._order_list: list = []

    # -- lifecycle (a context manager: Started)

    @property
    def started(self) -> bool:
        return self._zygote is not None

    @property
    def pids(self) -> list[int]:
        """The zygote's and the workers' process ids (for diagnostics and tests)."""
        if self._zygote is None:
            return []
        return [self._zygote.pid] + [s.pid for s in self._slots if s.pid]

    def start(self) -> None:
        """Fork the zygote, let it load what the spec serves, then fork the workers."""
        if self._zygote is not None:
            return
        with _environ_set(self.environ):
            self._start()

    def _start(self) -> None:
        if not hasattr(os, "fork"):
            raise TargetError("process isolation needs os.fork (POSIX); this platform has none")
        ctx = get_context(self.start_method)
        shared = ctx.RawArray("q", STRIDE * self.workers)
        pins = ctx.RawArray("B", PIN_BYTES * self.workers)
        ctl, theirs = ctx.Pipe(duplex=True)
        zygote = ctx.Process(target=_zygote_main, args=(theirs, self.spec, shared, self.start_method == "fork", pins),
                             name="toolfuzz-zygote", daemon=True)
        zygote.start()
        theirs.close()
        self._zygote, self._ctl, self._seq = zygote, ctl, memoryview(shared).cast("B").cast("q")
        self._shared, self._pins = shared, memoryview(pins).cast("B")
        _LIVE_POOLS.add(self)
        try:
            if not ctl.poll(self.load_timeout):
                stuck = stuck_importing(zygote.pid)
                zygote.kill()  # stuck importing, it would never read the EOF that tells it to exit
                raise ImportTimeout(self.spec.label, self.load_timeout, stuck)
            message = self._loading_message(ctl, zygote)
            if message[0] == "loaded":  # imported; now its warm-up run, bounded by itself
                limit = message[1] + WARM_UP_MARGIN_S
                if not ctl.poll(limit):
                    stuck = stuck_importing(zygote.pid)
                    zygote.kill()
                    where = f" (stuck at {stuck})" if stuck else ""
                    raise TargetError(f"{self.spec.label}: its warm-up run did not finish within {limit:g} s{where}")
                message = self._loading_message(ctl, zygote)
            status, *answer = message
            if status != "ok":
                raise TargetError(answer[0])
            self.info = answer[1]
            self._slots = [_Slot(i) for i in range(self.workers)]
            self._queue_bytes = queue_limit(ctl)
            for slot in self._slots:
                self._spawn(slot)
        except BaseException:
            self.close()
            raise

    def _loading_message(self, ctl: Any, zygote: Any) -> tuple:
        try:
            return ctl.recv()
        except (EOFError, OSError):
            zygote.join(5)
            raise TargetError(f"{self.spec.label}: the process loading it died "
                              f"(exit code {zygote.exitcode})") from None

    def close(self) -> None:
        """Kill and reap every worker and the zygote. Idempotent; also runs at interpreter exit."""
        zygote, self._zygote = self._zygote, None
        if zygote is None:
            return
        _LIVE_POOLS.discard(self)
        for slot in self._slots:
            if slot.pid:
                try:
                    os.kill(slot.pid, signal.SIGKILL)
                except OSError:
                    pass
            if slot.conn is not None:
                slot.conn.close()
            slot.pid, slot.conn = 0, None
        try:
            self._ctl.send(("exit", 0, 0))
        except OSError:
            pass
        self._ctl.close()  # EOF also tells the zygote to reap its workers and exit
        _end(zygote, 5.0)
        for index in [LOAD_SLOT] + [slot.index for slot in self._slots]:
            try:
                os.unlink(trace_path(zygote.pid, index))
            except OSError:
                pass
        self._slots = []

    def _spawn(self, slot: _Slot) -> str | None:
        """(Re)start ``slot``'s worker; returns how the previous one ended, if there was one."""
        mine, theirs = mpc.Pipe(duplex=True)
        try:
            self._ctl.send(("spawn", slot.index, slot.pid))
            reduction.send_handle(self._ctl, theirs.fileno(), self._zygote.pid)
            status, pid = self._ctl.recv()
        except (EOFError, OSError) as exc:
            mine.close()
            raise TargetError(f"{self.spec.label}: the worker supervisor process died "
                              f"({type(exc).__name__})") from None
        finally:
            theirs.close()
        if slot.conn is not None:
            slot.conn.close()
        slot.pid, slot.conn = pid, mine
        return status

    # -- running

    def run_one(self, payload: Any) -> Any:
        return self.run([payload])[0]

    def run(self, texts: Iterable[Any], *, deadline: float | None = None, fresh: bool = False,
            options: Any = None, on_result: Callable[[list], None] | None = None,
            timeout: float | None = None, raw: bool = False) -> list[Any]:
        """One result per payload, in order. Interrupting it (Ctrl-C) closes the pool.

        ``deadline`` (a ``time.monotonic()`` value): payloads not finished by then get ``None``
        (not run) — the workers running them are restarted, so ``--budget`` stays a limit even
        when every payload hangs. ``fresh``: run the payloads in order in one newly forked worker
        that has run nothing before (a finding is confirmed alone, or after exactly the inputs
        given). ``options``: passed with every payload to ``served.run`` (the parser harness: whether
        to trace). ``on_result(results)``: called whenever results arrive, with the list being
        filled (None where none has arrived yet). The payloads then go in smaller messages, so the
        caller judges the first results while the workers run the next ones instead of both
        waiting in turn; it must not call the pool. ``timeout``: seconds without a result before a
        payload counts as hung, for this run only (default: the spec's; a hang is checked with
        margin at twice it).

        ``raw``: each result is the worker's as it came (not decoded by the spec), or the spec's
        fault of a hang or a death: a pool that relays the results to another process (a Ray
        actor's) passes them on without building objects to pickle again.
        """
        texts = list(texts)
        count = len(texts)
        if not count:
            return []
        self.start()
        results: list[Any] = [None] * count
        slots = self._slots
        if fresh:
            slots = slots[:1]
            self._spawn(slots[0])
            size = self.batch_size
        else:
            size = max(1, min(self.batch_size, -(-count // self.workers)))
            if on_result is not None:  # see run(): a few messages per worker, not one
                size = min(size, max(-(-count // (self.workers * PIPELINED_PARTS)), PIPELINED_MIN),
                           self._queueable(texts))
        pending = batches(texts, size)
        try:
            self._options, self._raw = options, raw
            self._drive(texts, pending, results, slots, deadline, on_result, timeout=timeout)
        except BaseException:
            self.close()
            raise
        finally:
            self._raw = False
        if getattr(self.spec, "coverage", False) and not raw:
            for outcome in results:
                lines = getattr(outcome, "lines", None)
                if lines:
                    self.lines.update(lines)
        return results

    def _queueable(self, texts: list[str]) -> int:
        """Texts per message small enough that a second message can wait behind a running one
        (see :meth:`_send`): with bigger ones (an executor's scenarios are kilobytes each) a
        worker waits for every message while the caller judges what came back."""
        average = sum(size_of(texts, i) for i in range(len(texts))) / len(texts)
        return max(1, int(self._queue_bytes // max(1.0, 2 * average)))  # half: texts differ in size

    def run_orders(self, orders: list, *, deadline: float | None = None, stop_sending: float | None = None,
                   on_result: Callable[[list], None] | None = None,
                   on_sent: Callable[[], None] | None = None,
                   stop_when: Callable[[], bool] | None = None, raw: bool = False) -> list[Any]:
        """One result per order, in order: each order is sent whole to one worker, which generates
        and runs its inputs itself (:class:`~fuzzer.isolation.worker.OrderRunner`) and sends back
        whatever ``order.run(runner)`` returns — the engine never handles those inputs one by one.

        When a worker hangs or dies on an input of an order, the input is read from the pin buffer
        into a :class:`Lost`, and ``order.resume(lost)`` says whether the order is sent again
        without it (the other results died with the worker; an order that can skip an input keeps
        the Lost itself and reports it with its result). An order that cannot resume gets the Lost
        as its result. Past ``deadline``: None. Past ``stop_sending`` (a tool's share of the
        budget), orders not sent yet are None, and those running finish: killing a worker for
        the deadline of a share would throw away its order and everything it has warmed up.
        ``on_result`` as in :meth:`run`; ``on_sent()`` once, when the first orders have been sent;
        once ``stop_when()`` is true, orders not sent yet are None too (as past ``stop_sending``).
        ``raw``: a result the worker sent is its pickled bytes, as they came (see :meth:`run`).
        """
        orders = list(orders)
        if not orders:
            return []
        self.start()
        results: list[Any] = [None] * len(orders)
        pending = deque([i] for i in range(len(orders)))
        try:
            self._options, self._orders, self._order_list, self._raw = None, True, orders, raw
            self._drive(orders, pending, results, self._slots, deadline, on_result, stop_sending, on_sent, stop_when)
        except BaseException as exc:
            if on_result is not None and isinstance(exc, KeyboardInterrupt):
                # results that arrived since on_result last ran are counted (the Ctrl-C is raised on)
                with BALANCED, contextlib.suppress(Exception):
                    on_result(results)
            self.close()
            raise
        finally:
            self._orders, self._order_list, self._raw = False, [], False
        return results

    def sample_stack(self, text: Any, after_s: float, deadline: float | None = None,
                     options: Any = None) -> tuple[Any, tuple]:
        """Run one payload alone in a fresh worker and, if it is still running after ``after_s``,
        take its Python stack without stopping it (where a slow input spends its time). Returns
        (result or None past ``deadline``, frames innermost last, () when it finished first)."""
        self.start()
        slot = self._slots[0]
        self._spawn(slot)
        texts, results = [text], [None]
        pending = batches(texts, 1)
        self._options = options
        try:
            self._send(slot, pending, texts, results)
            sampled = False
            if slot.inflight and not slot.conn.poll(after_s) and DUMP_SIGNAL is not None and slot.pid:
                try:
                    os.kill(slot.pid, DUMP_SIGNAL)
                    sampled = True
                except OSError:
                    pass
            self._drive(texts, pending, results, [slot], deadline)
        except BaseException:
            self.close()
            raise
        frames = read_trace(trace_path(self._zygote.pid, slot.index), target_only=True) if sampled else ()
        return results[0], frames

    def _abandon(self, slots: list) -> None:
        """The deadline passed: restart every worker still busy, dropping what it was running."""
        for slot in slots:
            if slot.inflight:
                self._spawn(slot)
                self.restarts += 1
                slot.inflight = deque()

    def _drive(self, texts: list[str], pending: deque, results: list[Any], slots: list,
               deadline: float | None, on_result: Callable[[list], None] | None = None,
               stop_sending: float | None = None, on_sent: Callable[[], None] | None = None,
               stop_when: Callable[[], bool] | None = None, timeout: float | None = None) -> None:
        timeout, seq, monotonic = timeout or self.spec.timeout, self._seq, time.monotonic
        restarts, notify = self.restarts, False
        while True:
            if deadline is not None and monotonic() >= deadline:
                self._abandon(slots)
                return
            if pending and ((stop_sending is not None and monotonic() >= stop_sending)
                            or (stop_when is not None and stop_when())):
                pending.clear()
            for depth in range(1, DEPTH + 1):  # one batch per worker first, then a second each
                for slot in slots:
                    while pending and len(slot.inflight) < depth:
                        if not self._send(slot, pending, texts, results):
                            break
            if on_sent is not None:
                on_sent, sent = None, on_sent
                sent()
            if notify:  # the workers have their next messages: judge what arrived meanwhile
                notify = False
                on_result(results)
            busy = {slot.conn: slot for slot in slots if slot.inflight}
            if not busy:
                if pending:  # a send found its worker dead; the batches are queued again
                    continue
                return
            arrived = False
            for conn in mpc.wait(list(busy), timeout=POLL):
                slot = busy[conn]
                try:
                    data = conn.recv_bytes()
                except (EOFError, OSError):
                    self._lost(slot, "died", pending, results, None)
                else:
                    batch = slot.inflight.popleft()[0]
                    if self._orders:
                        results[batch[0]] = data if self._raw else pickle.loads(data)
                    elif self._raw:
                        for index, row in zip(batch, pickle.loads(data)):
                            results[index] = row
                    else:
                        collect(batch, pickle.loads(data), results, self.spec.decode)
                    slot.blameless = 0
                    arrived = True
            if on_result is not None and (arrived or self.restarts != restarts):
                restarts, notify = self.restarts, True  # (a hang or death pinned an outcome too)
            now = monotonic()
            for conn, slot in busy.items():
                if not slot.inflight or slot.conn is not conn:
                    continue
                current = seq[slot.pos]
                if current != slot.seen:
                    slot.seen, slot.since = current, now
                elif now - slot.since > timeout and not conn.poll(0):
                    self._lost(slot, "hung", pending, results, f"no result within {timeout:g} s")

    def _send(self, slot: _Slot, pending: deque, texts: list[str], results: list[Any]) -> bool:
        """Send the next pending batch to ``slot``; False when it must wait for the worker first."""
        batch = pending[0]
        limit = self._queue_bytes
        orders = self._orders
        if slot.inflight and (slot.inflight[-1][2] > limit or
                              (not orders and sum(size_of(texts, i) for i in batch) > limit)):
            return False
        payload = pickle.dumps((slot.next_seq, texts[batch[0]] if orders else message(texts, batch), self._options),
                               PROTOCOL)
        if slot.inflight and len(payload) > limit:
            return False
        pending.popleft()
        if not slot.inflight:
            slot.seen, slot.since = self._seq[slot.pos], time.monotonic()
        slot.inflight.append((batch, slot.next_seq, len(payload)))
        slot.next_seq += texts[batch[0]].size if orders else len(batch)
        try:
            slot.conn.send_bytes(payload)
        except OSError:  # it died meanwhile: _lost pins the input it was running and requeues
            self._lost(slot, "died", pending, results, None)
        return True

    def _stack_of(self, slot: _Slot, kind: str) -> tuple:
        """The lost worker's Python stack (:func:`~fuzzer.isolation.stacks.lost_stack`)."""
        return lost_stack(slot.pid, trace_path(self._zygote.pid, slot.index), hung=kind == "hung")

    def _lost(self, slot: _Slot, kind: str, pending: deque, results: list[Any], detail: str | None) -> None:
        """The worker hung or died: pin the input it was running, restart, requeue the rest."""
        current = self._seq[slot.pos]
        elapsed = time.monotonic() - slot.since
        frames = self._stack_of(slot, kind)
        status = self._spawn(slot)  # kills and reaps the old worker first
        self.restarts += 1
        inflight, slot.inflight = list(slot.inflight), deque()
        # The running input is in the oldest batch whose results have not arrived (results come
        # in order, and EOF only after every complete message).
        batch, base, _ = inflight[0]
        k = current - base
        if self._orders:
            pinned = read_pin(self._pins[slot.index * PIN_BYTES:(slot.index + 1) * PIN_BYTES], current) \
                if k >= 0 else None
            if pinned is not None or slot.blameless >= BLAMELESS_RETRIES:
                slot.blameless = 0
                outcome = self.spec.fault(kind, elapsed, detail or status or "worker exited", frames)
                lost = Lost(outcome, *(pinned or ("", "", False, -1)))
                order = self._order_list[batch[0]]
                resume = getattr(order, "resume", None)
                again = [batch] if resume is not None and lost.index >= 0 and resume(lost) else []
                if not again:
                    results[batch[0]] = lost
                pending.extendleft(reversed(again + [later for later, _, _ in inflight[1:]]))
                return
            k = -1  # between inputs: nobody to blame, send the orders again
        if not 0 <= k < len(batch):
            # It died between inputs (killed from outside, or a delayed crash): nobody to blame.
            # Retry the batches, but after a few such deaths in a row blame the first input, so
            # a worker that can never start still lets the run finish.
            slot.blameless += 1
            if slot.blameless <= BLAMELESS_RETRIES:
                pending.extendleft(reversed([b for b, _, _ in inflight]))
                return
            k = 0
        slot.blameless = 0
        results[batch[k]] = self.spec.fault(kind, elapsed, detail or status or "worker exited", frames)
        # Results of batch[:k] died with the worker: run them again, apart from batch[k+1:], so
        # each input is re-run at most once per death however the deaths are spread.
        requeue = [part for part in (batch[:k], batch[k + 1:]) if part]
        requeue += [later for later, _, _ in inflight[1:]]
        pending.extendleft(reversed(requeue))


