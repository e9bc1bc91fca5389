"""The worker side: the zygote that imports the target once and forks workers, and the worker
loop that runs texts and sends plain-data results back (see :mod:`fuzzer.isolation`)."""

from __future__ import annotations

import faulthandler
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

from fuzzer.frames import in_stdlib, named, without_library_tail
from fuzzer.isolation.outcome import FRAME_LIMIT, MESSAGE_LIMIT, NO_EXTRA, PROTOCOL, STRIDE, TargetSpec
from fuzzer.target import (InvalidReturn, exception_message, exception_name, load_reject_types, load_target,
                           normalize_calls)
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
                    _serve(mpc.Connection(fd), seqs, slot * STRIDE, target, reject, spec)
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
    return tuple(named(without_library_tail(inner[::-1]), TRACE_FRAMES))  # see fuzzer/frames.py


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


def _serve(conn: Any, seqs: Any, pos: int, target: Any, reject: tuple, spec: TargetSpec) -> None:
    """The worker loop: kept lean, since it runs once per execution."""
    from fuzzer.isolation.instrument import Instruments

    watch = (Instruments(target, coverage=spec.coverage, audit=spec.audit, share=spec.trace_share)
             if (spec.coverage or spec.audit) else None)
    begin = watch.begin if watch is not None else None
    end = watch.end if watch is not None else None
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
    crash_sites: set = set()
    while True:
        try:
            base, texts, trace = loads(recv())
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
            if begin is not None:
                begin(text, trace)
            start = clock()
            try:
                value = target(text)
            except reject as exc:
                row: tuple = (1, clock() - start, *describe(exc))
            except BaseException as exc:  # noqa: BLE001 - RecursionError, SystemExit, ... all count
                row = (2, clock() - start, *describe(exc))
                site = (row[2], row[4])
                if site not in crash_sites and len(crash_sites) < CRASH_SITES:
                    # The report's traceback: formatted once per place the target crashes (a
                    # crash per input would cost a formatting each), so the first input that
                    # crashed there carries it.
                    crash_sites.add(site)
                    add(row + (end(row[1]) if end is not None else NO_EXTRA, _format_traceback(exc)))
                    continue
            else:
                elapsed = clock() - start
                if end is not None:
                    extra = end(elapsed)
                    end_done = True
                else:
                    end_done = False
                try:
                    row = (0, elapsed, normalize(value))
                except InvalidReturn as exc:
                    row = (3, elapsed, None, str(exc)[:MESSAGE_LIMIT], ())
                except BaseException as exc:  # noqa: BLE001 - the returned object's own code failed
                    name, message, frames = describe(exc)
                    row = (3, elapsed, name, f"reading the return value raised {name}: {message}"[:MESSAGE_LIMIT],
                           frames)
                add(row + (extra,) if end_done else row)
                continue
            add(row + (end(row[1]),) if end is not None else row)
        send(dumps(out, PROTOCOL))


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
    The standard library's innermost frames are left out (fuzzer/frames.py): a crash in
    ``json.loads`` is keyed by the target's frame that called it, not by which decoder function raised."""
    name, message = exception_name(type(exc)), exception_message(exc, MESSAGE_LIMIT)
    frames: list = []
    tb = exc.__traceback__
    tb = tb.tb_next if tb is not None else None  # skip the worker loop's own frame
    while tb is not None:
        code = tb.tb_frame.f_code
        if os.path.abspath(code.co_filename) == _INSTRUMENT:
            break
        frames.append((code.co_filename, code.co_name))
        tb = tb.tb_next
    return name, message, tuple(named(without_library_tail(frames), FRAME_LIMIT))


