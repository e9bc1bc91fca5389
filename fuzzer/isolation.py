"""Run the target in worker processes under a watchdog, many inputs per message.

Why processes: a pure-Python hang could be interrupted in-process, but a regex backtracking inside
``re`` holds the GIL and ignores signals, and a segfault or ``os._exit`` ends the process. Only a
separate process that can be SIGKILLed from outside survives all of these (DESIGN.md, "Isolation").

Why batches: one text per message costs a pipe round trip per execution (~7,000/s); 256 texts
per message make isolation nearly free (DESIGN.md, "Performance design").

Shape of the machinery::

    engine (WorkerPool, never imports user code)
      '- zygote: imports the target once, then forks a worker per request (fork is ~1 ms;
         re-importing a heavy parser after every crash would not be)
           '- worker 0..n-1: loop { receive (base, texts); for each: publish seq; call target }

Each worker writes the sequence number of the input it is about to run into shared memory. The
supervisor polls it: an unchanged number for ``timeout`` seconds is a hang, pinned on exactly that
input; a closed pipe is a death, pinned the same way. The worker is then killed and re-forked, the
culprit gets its outcome, and the other inputs of the batch (their results died with the worker)
are queued again, so every input gets its own outcome and each is re-run at most once per death.

Workers send only plain data (normalized calls, exception type *names*, strings), so the engine
never unpickles a user class. Their fds 0-2 point at /dev/null, they ignore SIGINT (Ctrl-C is
the engine's to handle), and on Linux they die with their parent (``PR_SET_PDEATHSIG``); the
zygote exits on EOF from the engine and reaps every worker, so no zombie or orphan outlives it.
"""

from __future__ import annotations

import atexit
import faulthandler
import os
import re
import tempfile
import pickle
import signal
import socket
import sys
import time
import weakref
from collections import deque
from dataclasses import dataclass
from multiprocessing import connection as mpc
from multiprocessing import get_context, reduction
from typing import Any, Iterable

from fuzzer.target import InvalidReturn, load_reject_types, load_target, normalize_calls
from strategies.errors import TargetError

__all__ = ["BATCH_SIZE", "Outcome", "TargetSpec", "WorkerPool"]

KINDS = ("returned", "rejected", "raised", "invalid", "hung", "died")
BATCH_SIZE = 256  #: texts per message to a worker
BATCH_CHARS = 4_000_000  #: ... unless they are long: oversized inputs travel in smaller batches
LOAD_TIMEOUT = 60.0  #: seconds the zygote may take to import the target
_POLL = 0.02  #: watchdog resolution, seconds
_DEPTH = 2  #: batches in flight per worker
_BLAMELESS_RETRIES = 2
_STRIDE = 8  #: shared-memory slots are a cache line apart so workers do not contend
_MESSAGE_LIMIT = 300
_FRAME_LIMIT = 8
_PROTOCOL = pickle.HIGHEST_PROTOCOL


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


# --------------------------------------------------------------------------------------------
# Worker side (zygote and workers)


def _quiet_process(memory_limit_mb: int | None) -> None:
    """Detach from the terminal's SIGINT and output; cap the address space."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    # Python-level streams too: under pytest they may not be fds 1 and 2 at all.
    sys.stdin = sys.__stdin__ = open(os.devnull)  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.__stdout__ = open(os.devnull, "w")  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(os.devnull, "w")  # noqa: SIM115
    if memory_limit_mb:
        try:
            import resource

            limit = int(memory_limit_mb) * 1024 * 1024
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        except (ImportError, ValueError, OSError):
            pass


def _pdeathsig_setter() -> Any:
    """Linux: a function that makes the calling process get SIGKILL when its parent dies, even
    while stuck in C code. Looked up once in the zygote so each fork costs nothing extra."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _zygote_main(ctl: Any, spec: TargetSpec, seqs: Any, forked: bool) -> None:
    """Import the target once, report, then fork a worker per "spawn" request until EOF/"exit"."""
    if forked:
        # A forked zygote holds copies of every fd the engine had, including the engine's end of
        # ``ctl``; it must drop them, or the engine's death would never show up here as EOF.
        keep = ctl.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, _max_fd())
    _quiet_process(spec.memory_limit_mb)
    try:
        if spec.cwd:
            os.chdir(spec.cwd)
        target = load_target(spec.target, cwd=spec.cwd)
        reject = load_reject_types(list(spec.reject_on), cwd=spec.cwd)
    except TargetError as exc:
        ctl.send(("error", str(exc)))
        return
    except BaseException as exc:  # noqa: BLE001 - anything at all must become one line
        text = " ".join(str(exc).split())[:_MESSAGE_LIMIT]
        ctl.send(("error", f"target {spec.target!r}: loading raised {type(exc).__name__}: {text}"))
        return
    ctl.send(("ok", os.getpid()))
    die_with_parent, zygote_pid = _pdeathsig_setter(), os.getpid()
    children: set[int] = set()
    try:
        while True:
            try:
                op, slot, old_pid = ctl.recv()
            except (EOFError, OSError, ValueError):
                break
            if op != "spawn":
                break
            status = _kill_and_reap(old_pid) if old_pid else None
            children.discard(old_pid)
            fd = reduction.recv_handle(ctl)
            os.set_inheritable(fd, False)  # a target's own subprocesses must not hold the pipe
            pid = os.fork()
            if pid == 0:  # the worker
                code = 0
                try:
                    ctl.close()
                    if die_with_parent is not None:
                        die_with_parent()
                    if os.getppid() != zygote_pid:  # the zygote died before prctl took effect
                        os._exit(code)
                    _arm_traceback_dump(trace_path(zygote_pid, slot))
                    _serve(mpc.Connection(fd), seqs, slot * _STRIDE, target, reject)
                except BaseException:  # noqa: BLE001
                    code = 70
                finally:
                    os._exit(code)
            os.close(fd)
            children.add(pid)
            ctl.send((status, pid))
    finally:
        for pid in children:
            _kill_and_reap(pid)


#: Signal the supervisor sends a hung worker so it writes its Python stack before being killed.
DUMP_SIGNAL = getattr(signal, "SIGUSR1", None)
_TRACE_LINE = re.compile(r'^\s*File "(.*)", line \d+ in (.*)$')


def trace_path(zygote_pid: int, slot: int) -> str:
    """Where worker ``slot`` of a pool writes its stack on a fatal signal or a hang."""
    return os.path.join(tempfile.gettempdir(), f"toolfuzz-{zygote_pid}-{slot}.trace")


def _arm_traceback_dump(path: str) -> None:
    """Make the worker write its Python stack to ``path`` when it crashes on a fatal signal
    (segfault, abort) or when the supervisor signals a hang. faulthandler writes from the signal
    handler itself, so this works even while the target holds the GIL inside C code (a
    backtracking regex). The stack gives deaths and hangs the same kind of signature as crashes."""
    try:
        fh = open(path, "w")  # noqa: SIM115 - must stay open for the life of the worker
        faulthandler.enable(file=fh, all_threads=False)
        if DUMP_SIGNAL is not None:
            faulthandler.register(DUMP_SIGNAL, file=fh, all_threads=False, chain=False)
    except (OSError, RuntimeError, ValueError):
        pass


def read_trace(path: str) -> tuple[tuple[str, str], ...]:
    """The (file name, function) frames of a faulthandler dump, innermost last, without the
    worker's own frames; () when there is none."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(200_000)
    except OSError:
        return ()
    frames: list[tuple[str, str]] = []
    for line in text.splitlines():  # most recent call first, one block per dump: keep the last
        if line.startswith(("Fatal Python error", "Current thread", "Thread ")):
            frames = []
            continue
        match = _TRACE_LINE.match(line)
        if match:
            frames.append((os.path.basename(match.group(1)), match.group(2).strip()))
    inner: list[tuple[str, str]] = []
    for frame in frames:  # innermost first; stop at the worker loop
        if frame[0] == os.path.basename(__file__):
            break
        inner.append(frame)
    return tuple(reversed(inner[:_FRAME_LIMIT]))


def _max_fd() -> int:
    try:
        return max(int(os.sysconf("SC_OPEN_MAX")), 256)
    except (AttributeError, ValueError, OSError):
        return 65536


def _kill_and_reap(pid: int) -> str | None:
    """SIGKILL (harmless on an already dead child) and reap; how the child ended, in words."""
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return None
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            return f"killed by signal {number}"
    if os.WIFEXITED(status):
        return f"exit status {os.WEXITSTATUS(status)}"
    return f"wait status {status}"


def _serve(conn: Any, seqs: Any, pos: int, target: Any, reject: tuple) -> None:
    """The worker loop: kept lean, since it runs once per execution."""
    # The target runs this many frames below a script's top level; give that depth back (and a
    # margin), so a RecursionError found here also happens when the printed reproduce command runs
    # the target from a fresh interpreter.
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    sys.setrecursionlimit(sys.getrecursionlimit() + depth + 20)
    seq = memoryview(seqs).cast("B").cast("q")
    recv, send = conn.recv_bytes, conn.send_bytes
    loads, dumps = pickle.loads, pickle.dumps
    clock, normalize, describe = time.perf_counter, normalize_calls, _describe_exception
    while True:
        try:
            base, texts = loads(recv())
        except (EOFError, OSError):
            return
        out: list = []
        add = out.append
        i = base
        for text in texts:
            if text.__class__ is tuple:  # a prefix of an earlier text of this message
                text = texts[text[0]][:text[1]]
            seq[pos] = i
            i += 1
            start = clock()
            try:
                value = target(text)
            except reject as exc:
                add((1, clock() - start, *describe(exc)))
                continue
            except BaseException as exc:  # noqa: BLE001 - RecursionError, SystemExit, ... all count
                add((2, clock() - start, *describe(exc)))
                continue
            elapsed = clock() - start
            try:
                add((0, elapsed, normalize(value)))
            except InvalidReturn as exc:
                add((3, elapsed, None, str(exc)[:_MESSAGE_LIMIT], ()))
            except BaseException as exc:  # noqa: BLE001 - the returned object's own code failed
                name, message, frames = describe(exc)
                add((3, elapsed, name, f"reading the return value raised {name}: {message}"[:_MESSAGE_LIMIT],
                     frames))
        send(dumps(out, _PROTOCOL))


def _describe_exception(exc: BaseException) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """(qualified type name, truncated message, innermost frames) — plain data for the engine."""
    cls = type(exc)
    module = getattr(cls, "__module__", None)
    name = cls.__qualname__ if module in (None, "builtins", "__main__") else f"{module}.{cls.__qualname__}"
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001
        message = "<str() of the exception failed>"
    if len(message) > _MESSAGE_LIMIT:
        message = message[:_MESSAGE_LIMIT - 3] + "..."
    frames: deque = deque(maxlen=_FRAME_LIMIT)
    tb = exc.__traceback__
    tb = tb.tb_next if tb is not None else None  # skip the worker loop's own frame
    while tb is not None:
        code = tb.tb_frame.f_code
        frames.append((os.path.basename(code.co_filename), code.co_name))
        tb = tb.tb_next
    return name, message, tuple(frames)


# --------------------------------------------------------------------------------------------
# Engine side


class _Slot:
    """One worker as the supervisor sees it, with the batches it has been sent, oldest first.

    Up to two batches are in flight, so the worker runs one while the supervisor unpacks the
    previous results; a batch is only queued behind another when both are small enough to sit in
    the socket buffer, so neither side can block on a full pipe while the other does too.
    """

    __slots__ = ("index", "pos", "pid", "conn", "inflight", "seen", "since", "next_seq", "blameless")

    def __init__(self, index: int):
        self.index, self.pos = index, index * _STRIDE
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


class WorkerPool:
    """Workers that run ``spec.target`` on texts and report one :class:`Outcome` per text.

    Use as a context manager (or call :meth:`start` / :meth:`close`). ``run(texts)`` preserves
    order. A load failure raises :class:`~strategies.errors.TargetError` from :meth:`start`.
    ``start_method`` is the multiprocessing method for the zygote: ``fork`` on Linux (cheap, and
    the engine has imported no user code), ``spawn`` elsewhere; workers are always forked from it.
    A fork is as cheap as the zygote is small, so ``spawn`` pays ~0.2 s once to make restarts
    cheaper when the engine process is already large. Not thread-safe: one caller at a time.
    """

    def __init__(self, spec: TargetSpec, workers: int = 1, *, batch_size: int = BATCH_SIZE,
                 start_method: str | None = None):
        if workers < 1:
            raise ValueError(f"workers must be >= 1, not {workers}")
        self.spec, self.workers, self.batch_size = spec, int(workers), max(1, int(batch_size))
        self.start_method = start_method or ("fork" if sys.platform.startswith("linux") else "spawn")
        if not spec.timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, not {spec.timeout!r}")
        self.restarts = 0
        self._queue_bytes = 0
        self._zygote: Any = None
        self._ctl: Any = None
        self._slots: list[_Slot] = []
        self._seq: Any = None

    # -- lifecycle

    def __enter__(self) -> "WorkerPool":
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

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
        """Fork the zygote, let it import the target, then fork the workers."""
        if self._zygote is not None:
            return
        if not hasattr(os, "fork"):
            raise TargetError("process isolation needs os.fork (POSIX); this platform has none")
        ctx = get_context(self.start_method)
        shared = ctx.RawArray("q", _STRIDE * self.workers)
        ctl, theirs = ctx.Pipe(duplex=True)
        zygote = ctx.Process(target=_zygote_main, args=(theirs, self.spec, shared, self.start_method == "fork"),
                             name="toolfuzz-zygote", daemon=True)
        zygote.start()
        theirs.close()
        self._zygote, self._ctl, self._seq = zygote, ctl, memoryview(shared).cast("B").cast("q")
        self._shared = shared
        _LIVE_POOLS.add(self)
        try:
            if not ctl.poll(LOAD_TIMEOUT):
                raise TargetError(f"target {self.spec.target!r}: loading did not finish within "
                                  f"{LOAD_TIMEOUT:g} s")
            try:
                status, message = ctl.recv()
            except (EOFError, OSError):
                zygote.join(5)
                raise TargetError(f"target {self.spec.target!r}: the process importing it died "
                                  f"(exit code {zygote.exitcode})") from None
            if status != "ok":
                raise TargetError(message)
            self._slots = [_Slot(i) for i in range(self.workers)]
            self._queue_bytes = _queue_limit(ctl)
            for slot in self._slots:
                self._spawn(slot)
        except BaseException:
            self.close()
            raise

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
        zygote.join(5)
        if zygote.exitcode is None:
            zygote.kill()
            zygote.join(5)
        for slot in self._slots:
            try:
                os.unlink(trace_path(zygote.pid, slot.index))
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
            raise TargetError(f"target {self.spec.target!r}: the worker supervisor process died "
                              f"({type(exc).__name__})") from None
        finally:
            theirs.close()
        if slot.conn is not None:
            slot.conn.close()
        slot.pid, slot.conn = pid, mine
        return status

    # -- running

    def run_one(self, text: str) -> Outcome:
        return self.run([text])[0]

    def run(self, texts: Iterable[str]) -> list[Outcome]:
        """One outcome per text, in order. Interrupting it (Ctrl-C) closes the pool."""
        texts = list(texts)
        count = len(texts)
        if not count:
            return []
        self.start()
        results: list[Any] = [None] * count
        pending = _batches(texts, max(1, min(self.batch_size, -(-count // self.workers))))
        try:
            self._drive(texts, pending, results)
        except BaseException:
            self.close()
            raise
        return results

    def _drive(self, texts: list[str], pending: deque, results: list[Any]) -> None:
        slots = self._slots
        timeout, seq, monotonic = self.spec.timeout, self._seq, time.monotonic
        while True:
            for depth in range(1, _DEPTH + 1):  # one batch per worker first, then a second each
                for slot in slots:
                    while pending and len(slot.inflight) < depth:
                        if not self._send(slot, pending, texts, results):
                            break
            busy = {slot.conn: slot for slot in slots if slot.inflight}
            if not busy:
                if pending:  # a send found its worker dead; the batches are queued again
                    continue
                return
            for conn in mpc.wait(list(busy), timeout=_POLL):
                slot = busy[conn]
                try:
                    rows = pickle.loads(conn.recv_bytes())
                except (EOFError, OSError):
                    self._lost(slot, "died", pending, results, None)
                else:
                    _collect(slot.inflight.popleft()[0], rows, results)
                    slot.blameless = 0
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
        if slot.inflight and (slot.inflight[-1][2] > limit or sum(_size(texts, i) for i in batch) > limit):
            return False
        payload = pickle.dumps((slot.next_seq, _message(texts, batch)), _PROTOCOL)
        if slot.inflight and len(payload) > limit:
            return False
        pending.popleft()
        if not slot.inflight:
            slot.seen, slot.since = self._seq[slot.pos], time.monotonic()
        slot.inflight.append((batch, slot.next_seq, len(payload)))
        slot.next_seq += len(batch)
        try:
            slot.conn.send_bytes(payload)
        except OSError:  # it died meanwhile: _lost pins the input it was running and requeues
            self._lost(slot, "died", pending, results, None)
        return True

    def _stack_of(self, slot: _Slot, kind: str) -> tuple:
        """The lost worker's Python stack: ask a hung one to dump it; a dead one already did."""
        path = trace_path(self._zygote.pid, slot.index)
        if kind == "hung" and DUMP_SIGNAL is not None and slot.pid:
            try:
                os.kill(slot.pid, DUMP_SIGNAL)
            except OSError:
                return ()
            deadline, size = time.monotonic() + 0.5, -1
            while time.monotonic() < deadline:  # until the dump stops growing
                time.sleep(0.02)
                try:
                    now = os.path.getsize(path)
                except OSError:
                    now = 0
                if now and now == size:
                    break
                size = now
        return read_trace(path)

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
        if not 0 <= k < len(batch):
            # It died between inputs (killed from outside, or a delayed crash): nobody to blame.
            # Retry the batches, but after a few such deaths in a row blame the first input, so
            # a worker that can never start still lets the run finish.
            slot.blameless += 1
            if slot.blameless <= _BLAMELESS_RETRIES:
                pending.extendleft(reversed([b for b, _, _ in inflight]))
                return
            k = 0
        slot.blameless = 0
        results[batch[k]] = Outcome(kind, elapsed=elapsed, detail=detail or status or "worker exited",
                                    frames=frames)
        # Results of batch[:k] died with the worker: run them again, apart from batch[k+1:], so
        # each input is re-run at most once per death however the deaths are spread.
        requeue = [part for part in (batch[:k], batch[k + 1:]) if part]
        requeue += [later for later, _, _ in inflight[1:]]
        pending.extendleft(reversed(requeue))


def _queue_limit(conn: Any) -> int:
    """How big two queued batches may be without filling the socket buffer (a quarter of it).

    A second batch is only queued behind a running one when both fit, so the supervisor never
    blocks sending while the worker blocks sending its results back (a deadlock).
    """
    try:
        with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            return max(0, sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) // 4)
    except OSError:
        return 0  # unknown: never queue


def _size(texts: list, i: int) -> int:
    item = texts[i]
    return len(item) if item.__class__ is str else item[1]


def _message(texts: list, batch: list[int]) -> list:
    """The batch's inputs as sent: texts, and prefixes of a text sent earlier in the same message
    as ``(position in the message, end)`` — a prefix whose text is not in this message (a split or
    requeued batch) is sent as the text itself."""
    where = {}
    out = []
    for position, i in enumerate(batch):
        item = texts[i]
        if item.__class__ is str:
            where[i] = position
            out.append(item)
        else:
            base, end = item
            local = where.get(base)
            out.append((local, end) if local is not None else texts[base][:end])
    return out


def _batches(texts: list, size: int) -> deque:
    """Consecutive index lists of at most ``size`` texts and about BATCH_CHARS characters."""
    batches: deque = deque()
    batch: list[int] = []
    chars = 0
    for i, text in enumerate(texts):
        size_of = len(text) if text.__class__ is str else text[1]
        if batch and (len(batch) >= size or chars + size_of > BATCH_CHARS):
            batches.append(batch)
            batch, chars = [], 0
        batch.append(i)
        chars += size_of
    if batch:
        batches.append(batch)
    return batches


def _collect(batch: list[int], rows: list[tuple], results: list[Any]) -> None:
    # Filling __dict__ directly is ~3x cheaper than the frozen dataclass __init__, and this runs
    # once per execution on the engine side; the fields and their order are Outcome's own.
    kinds, new = KINDS, object.__new__
    for index, row in zip(batch, rows):
        outcome = results[index] = new(Outcome)
        if row[0] == 0:
            outcome.__dict__.update(kind="returned", calls=row[2], exception=None, message=None,
                                    frames=(), elapsed=row[1], detail=None)
        else:
            outcome.__dict__.update(kind=kinds[row[0]], calls=None, exception=row[2], message=row[3],
                                    frames=row[4], elapsed=row[1], detail=None)
