"""The worker side: the zygote that imports the target once and forks workers, and the worker
loop that runs texts and sends plain-data results back (see :mod:`fuzzer.isolation`)."""

from __future__ import annotations

import faulthandler
import functools
import os
import pickle
import re
import signal
import sys
import tempfile
import time
import traceback
from multiprocessing import connection as mpc
from multiprocessing import reduction
from typing import Any

from fuzzer.engine.frames import in_stdlib, named, without_library_tail
from fuzzer.isolation.outcome import (FRAME_LIMIT, MESSAGE_LIMIT, NO_EXTRA, PIN_BYTES, PIN_HEADER, PIN_STRUCT,
                                      PROTOCOL, STRIDE, TargetSpec)
from fuzzer.isolation.wire import outcome_of
from fuzzer.harnesses.parser.target import (InvalidReturn, exception_message, exception_name, load_reject_types, load_target,
                           normalize_calls, takes_one_text)
from strategies.errors import TargetError



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


def _zygote_main(ctl: Any, spec: TargetSpec, seqs: Any, forked: bool, pins: Any = None) -> None:
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
        target = takes_one_text(load_target(spec.target, cwd=spec.cwd), spec.target)
        reject = load_reject_types(list(spec.reject_on), cwd=spec.cwd)
    except TargetError as exc:
        ctl.send(("error", str(exc)))
        return
    except BaseException as exc:  # noqa: BLE001 - anything at all must become one line
        text = " ".join(str(exc).split())[:MESSAGE_LIMIT]
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
                    pin = memoryview(pins).cast("B")[slot * PIN_BYTES:(slot + 1) * PIN_BYTES] if pins is not None \
                        else None
                    _serve(mpc.Connection(fd), seqs, slot * STRIDE, target, reject, spec, pin, slot)
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


#: Frames kept from a dumped stack: the whole stack of a parser, so two dumps of one hang can be
#: compared from the outermost frame.
TRACE_FRAMES = 64


def read_trace(path: str, *, target_only: bool = False) -> tuple[tuple[str, str], ...]:
    """The (file name, function) frames of a faulthandler dump, innermost last, without the
    worker's own frames; () when there is none — or, with ``target_only``, when every frame is
    the standard library's (a sample that caught the worker importing, not the target running)."""
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
            frames.append((match.group(1), match.group(2).strip()))
    inner: list[tuple[str, str]] = []
    for path, func in frames:  # innermost first; stop at the worker loop
        if os.path.basename(path) == os.path.basename(__file__):
            break
        inner.append((path, func))
    while inner and os.path.basename(inner[0][0]) == os.path.basename(_INSTRUMENT):
        inner.pop(0)  # the coverage tracer's own frame, caught mid-call: toolfuzz's, not the target's
    if target_only and all(in_stdlib(path) for path, _ in inner):
        return ()  # only the standard library's frames: the worker was importing, not running the target
    return tuple(named(without_library_tail(inner[::-1]), TRACE_FRAMES))  # see fuzzer/engine/frames.py


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


def _serve(conn: Any, seqs: Any, pos: int, target: Any, reject: tuple, spec: TargetSpec, pin: Any = None,
           slot: int = 0) -> None:
    """The worker loop: a message holds texts (run each, send a row each) or an order (an object
    that generates its own inputs here and runs them with :class:`OrderRunner`; its result goes back)."""
    # The target runs below everything already on this stack; give that back (and a margin), so a
    # RecursionError found here also happens when the printed reproduce command runs the target from
    # a fresh interpreter — and starts at the same nesting whether this worker's zygote was forked
    # from a deep process or spawned bare (see _headroom).
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + (limit + 20 - _headroom()))
    seq = memoryview(seqs).cast("B").cast("q")
    execute = _executor(target, reject, spec)
    runner = OrderRunner(execute, seq, pos, pin, slot)
    recv, send = conn.recv_bytes, conn.send_bytes
    loads, dumps = pickle.loads, pickle.dumps
    while True:
        try:
            base, texts, trace = loads(recv())
        except (EOFError, OSError):
            return
        if texts.__class__ is not list:  # an order
            runner.base, runner.trace, runner.i = base, trace, 0
            send(dumps(texts.run(runner), PROTOCOL))
            continue
        out: list = []
        add = out.append
        i = base
        for text in texts:
            if text.__class__ is tuple:  # a prefix of an earlier text of this message
                text = texts[text[0]][:text[1]]
            seq[pos] = i
            i += 1
            add(execute(text, trace))
        send(dumps(out, PROTOCOL))


def _headroom() -> int:
    """How many more Python calls fit below the caller before RecursionError. Counting the frames
    above is not the same: a forked worker inherits its parent's stack, whose calls made from C
    (a generator resumed, a callback) use up the limit too without a Python frame of their own;
    this counts what is really left (~1,000 calls, tens of microseconds, once per worker)."""
    def down(depth: int) -> int:
        try:
            return down(depth + 1)
        except RecursionError:
            return depth

    return down(0)


def _executor(target: Any, reject: tuple, spec: TargetSpec) -> Any:
    """``execute(text, trace, frames=True) -> row``: run the target once, as plain data (see
    :func:`fuzzer.isolation.wire.outcome_of`). Kept lean: it runs once per execution.

    ``frames=False`` leaves a clean rejection's frames out (None) and keeps the exception in
    ``execute.rejection``: describing a traceback costs more than most parsers take to reject an
    input (each frame raises an audit event), and an order needs the frames only of the few
    rejections that fail (see :meth:`OrderRunner.frames`)."""
    from fuzzer.isolation.instrument import Instruments

    watch = (Instruments(target, coverage=spec.coverage, audit=spec.audit, share=spec.trace_share)
             if (spec.coverage or spec.audit) else None)
    begin = watch.begin if watch is not None else None
    end = watch.end if watch is not None else None
    clock, normalize, describe = time.perf_counter, normalize_calls, _describe_exception
    crash_sites: set = set()

    def execute(text: str, trace: Any, frames: bool = True) -> tuple:
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
                execute.rejection = exc
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
                return row + (NO_EXTRA if extra is None else extra, _format_traceback(exc))
        else:
            elapsed = clock() - start
            extra = end(elapsed) if end is not None else None
            try:
                row = (0, elapsed, normalize(value))
            except InvalidReturn as exc:
                row = (3, elapsed, None, str(exc)[:MESSAGE_LIMIT], ())
            except BaseException as exc:  # noqa: BLE001 - the returned object's own code failed
                name, message, frames = describe(exc)
                row = (3, elapsed, name, f"reading the return value raised {name}: {message}"[:MESSAGE_LIMIT],
                       frames)
        return row if extra is None else row + (extra,)

    execute.rejection = None
    return execute


class OrderRunner:
    """What an order runs its inputs with, in the worker: ``runner(text, tag)`` executes the
    target on ``text`` exactly as a text sent by the engine is executed, and returns its
    :class:`~fuzzer.isolation.outcome.Outcome` — a clean rejection without its frames, which
    :meth:`frames` adds when the order needs them (before it judges a failure's signature).

    Before each input it *pins* it: ``tag`` and the text go into this worker's part of the pin
    buffer (shared memory), then its sequence number is published. A hang or a death is thereby
    pinned on the exact input even though the engine never saw it (see :func:`read_pin`).
    :meth:`busy` publishes a sequence number that pins nothing: the order is working on its own
    (building samples), and if that never ends, no input is blamed. ``slot``: the worker's index;
    ``base``: the order's first sequence number.
    """

    __slots__ = ("execute", "seq", "pos", "pin", "slot", "base", "trace", "i", "_whole")

    def __init__(self, execute: Any, seq: Any, pos: int, pin: Any, slot: int):
        self.execute, self.seq, self.pos, self.pin, self.slot = execute, seq, pos, pin, slot
        self.base, self.trace, self.i = 0, None, 0
        #: (tag, text) whose bytes fill the pin buffer, when they are ASCII: its prefixes are
        #: pinned by their header alone (see :meth:`prefix`)
        self._whole: tuple = ("", None)

    def __call__(self, text: str, tag: str = "", index: int = -1) -> Any:
        """Run one input; ``index``: its place in the order (what the order skips if it is sent
        again after this input hung or killed the worker)."""
        return outcome_of(self._run(text, tag, index))

    def _run(self, text: str, tag: str, index: int) -> tuple:
        self.enter(tag, index, text)
        return self.execute(text, self.trace, False)

    def prefix(self, text: str, end: int, tag: str = "", index: int = -1) -> tuple:
        """Run ``text[:end]`` as :meth:`__call__` runs a text, and return its row (see
        :func:`~fuzzer.isolation.wire.outcome_of`; most cut-offs are declined and need no
        :class:`Outcome`, :func:`~fuzzer.isolation.wire.declined_quietly`). The truncation sweep runs many
        prefixes of one text in a row; when it is ASCII, the whole text is pinned once and each
        prefix moves only the pinned size (encoding and copying every prefix cost a tenth of
        what running it did)."""
        pin = self.pin
        if pin is None:
            return self._run(text[:end], tag, index)
        whole_tag, whole = self._whole
        if whole is not text or whole_tag is not tag:
            data = f"{tag}\x00{text}".encode("utf-8", "surrogatepass")
            if len(data) != len(tag) + 1 + len(text):  # not ASCII: byte and character offsets differ
                return self._run(text[:end], tag, index)
            self._copy(data)
            self._whole = (tag, text)
        i = self.base + self.i
        self.i += 1
        full = len(tag) + 1 + end
        pin[:PIN_HEADER] = PIN_STRUCT.pack(i, index, min(full, len(pin) - PIN_HEADER), full)
        self.seq[self.pos] = i
        return self.execute(text[:end], self.trace, False)

    def enter(self, tag: str, index: int, text: str = "") -> None:
        """Pin input ``index`` of the order (``tag`` and ``text``) and publish its sequence number,
        before it runs. An order that can draw an input again from its index alone pins only its
        tag, and runs the input itself (the executor's scenarios)."""
        i = self.base + self.i
        self.i += 1
        if self.pin is not None:
            self._whole = ("", None)
            data = f"{tag}\x00{text}".encode("utf-8", "surrogatepass")
            self.pin[:PIN_HEADER] = PIN_STRUCT.pack(i, index, self._copy(data), len(data))
        self.seq[self.pos] = i

    def _copy(self, data: bytes) -> int:
        """``data`` (or as much as fits) into the pin buffer; the bytes kept."""
        size = min(len(data), len(self.pin) - PIN_HEADER)
        self.pin[PIN_HEADER:PIN_HEADER + size] = data if size == len(data) else data[:size]
        return size

    def busy(self) -> None:
        self.seq[self.pos] = self.base + self.i
        self.i += 1

    def frames(self, outcome: Any) -> Any:
        """``outcome`` (the last input's) with its frames, when it is a rejection that left them out."""
        if outcome.frames is None:
            exc, self.execute.rejection = self.execute.rejection, None
            outcome.__dict__["frames"] = _describe_exception(exc)[2] if exc is not None else ()
        return outcome



def read_pin(pin: Any, current: int) -> tuple[str, str, bool, int] | None:
    """(tag, text, whole, index in its order) of the input a worker pinned as sequence number
    ``current``; None when what is pinned is another input's (the worker died between inputs).
    ``whole`` is False when the text was longer than the buffer and only its beginning was kept."""
    number, index, size, full = PIN_STRUCT.unpack(bytes(pin[:PIN_HEADER]))
    if number != current or size <= 0:
        return None
    data = bytes(pin[PIN_HEADER:PIN_HEADER + size])
    try:
        decoded = data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:  # cut inside a character: only the beginning was kept
        decoded = data.decode("utf-8", "replace")
    tag, _, text = decoded.partition("\x00")
    return tag, text, size == full, index


# The audit hook's frames, and whatever it called, are toolfuzz's, not the target's (compared by
# path: a target may have an instrument.py of its own).
_INSTRUMENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "instrument.py")


#: Crash sites (exception type, frames) per worker whose first traceback is formatted and sent.
CRASH_SITES = 256
#: Characters of a formatted traceback kept (its end: the innermost frames and the message).
TRACEBACK_LIMIT = 8000


def _format_traceback(exc: BaseException) -> str:
    """The traceback as Python prints it, without the worker loop's own frame."""
    try:
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        text = "".join(traceback.format_exception(type(exc), exc, tb))
    except BaseException:  # noqa: BLE001 - a __str__ that raises, a traceback too deep to format
        return ""
    return text if len(text) <= TRACEBACK_LIMIT else "...\n" + text[-TRACEBACK_LIMIT:]


def _describe_exception(exc: BaseException) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """(qualified type name, truncated message, innermost frames) — plain data for the engine.
    The standard library's innermost frames are left out (fuzzer/engine/frames.py): a crash in
    ``json.loads`` is keyed by the target's frame that called it, not by which decoder function raised."""
    name, message = exception_name(type(exc)), exception_message(exc, MESSAGE_LIMIT)
    frames: list = []
    tb = exc.__traceback__
    tb = tb.tb_next if tb is not None else None  # skip the worker loop's own frame
    while tb is not None:
        code = tb.tb_frame.f_code
        if _is_instrument(code.co_filename):
            break
        frames.append((code.co_filename, code.co_name))
        tb = tb.tb_next
    return name, message, tuple(named(without_library_tail(frames), FRAME_LIMIT))


@functools.lru_cache(maxsize=4096)
def _is_instrument(filename: str) -> bool:
    """Is ``filename`` (a code object's) toolfuzz's instrument module? Cached: it is asked for
    every frame of every exception, and ``abspath`` was a third of what describing one cost."""
    return os.path.abspath(filename) == _INSTRUMENT


