"""A worker's Python stack: where a hang, a death or an import that never ends is.

Each worker (and the zygote while it imports the code under test) has faulthandler write its
stack to a file of its own (:func:`trace_path`) on a fatal signal, or when the supervisor sends
:data:`DUMP_SIGNAL` to a hung one: faulthandler writes from the signal handler itself, so this
works even while the target holds the GIL inside C code (a backtracking regex). The supervisor
reads the frames back (:func:`read_trace`; for a hang, the frames several dumps share:
:func:`lost_stack`), which give deaths and hangs the same kind of signature as crashes; for an
import that never finishes, where the user's code was (:func:`stuck_at`).
"""

from __future__ import annotations

import faulthandler
import os
import re
import signal
import tempfile
import time
from typing import Any

from fuzzer.engine.frames import in_stdlib, named, without_library_tail
from fuzzer.engine.references import INSTRUMENT, LOADER

#: Stacks dumped from a hung worker; the frames all of them share key the hang.
HANG_DUMPS = 4
#: The module whose frames are the worker's own loop: a dumped stack is read up to them.
_WORKER_LOOP = "worker.py"


#: Signal the supervisor sends a hung worker so it writes its Python stack before being killed.
DUMP_SIGNAL = getattr(signal, "SIGUSR1", None)
_TRACE_LINE = re.compile(r'^\s*File "(.*)", line \d+ in (.*)$')


#: The "slot" of the zygote's own stack file, written while it imports the target.
LOAD_SLOT = -1


def trace_path(zygote_pid: int, slot: int) -> str:
    """Where worker ``slot`` of a pool (:data:`LOAD_SLOT`: its zygote, importing the target)
    writes its stack on a fatal signal or a hang."""
    return os.path.join(tempfile.gettempdir(), f"toolfuzz-{zygote_pid}-{slot}.trace")


def arm_traceback_dump(path: str) -> Any:
    """Make the worker write its Python stack to ``path`` when it crashes on a fatal signal
    (segfault, abort) or when the supervisor signals a hang. faulthandler writes from the signal
    handler itself, so this works even while the target holds the GIL inside C code (a
    backtracking regex). The stack gives deaths and hangs the same kind of signature as crashes.
    Returns the open file (None when it could not be armed)."""
    try:
        fh = open(path, "w")  # noqa: SIM115 - must stay open for the life of the worker
        faulthandler.enable(file=fh, all_threads=False)
        if DUMP_SIGNAL is not None:
            faulthandler.register(DUMP_SIGNAL, file=fh, all_threads=False, chain=False)
        return fh
    except (OSError, RuntimeError, ValueError):
        return None


def disarm_traceback_dump(fh: Any) -> None:
    """Undo :func:`arm_traceback_dump` in the zygote once the target is imported: its workers
    arm their own files, and none of them may write into the zygote's."""
    if fh is None:
        return
    faulthandler.disable()
    if DUMP_SIGNAL is not None:
        faulthandler.unregister(DUMP_SIGNAL)
    fh.close()


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
        if os.path.basename(path) == _WORKER_LOOP:
            break
        inner.append((path, func))
    while inner and os.path.basename(inner[0][0]) == os.path.basename(INSTRUMENT):
        inner.pop(0)  # the coverage tracer's own frame, caught mid-call: toolfuzz's, not the target's
    if target_only and all(in_stdlib(path) for path, _ in inner):
        return ()  # only the standard library's frames: the worker was importing, not running the target
    return tuple(named(without_library_tail(inner[::-1]), TRACE_FRAMES))  # see fuzzer/engine/frames.py


#: toolfuzz's own packages: their frames in a stack are the harness's, never where the user's code is.
_OWN = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), package) + os.sep
             for package in ("fuzzer", "strategies", "corpus"))
_LOADER = LOADER
_TRACE_LINE_NUMBER = re.compile(r'^\s*File "(.*)", line (\d+) in (.*)$')


def stuck_at(path: str) -> str | None:
    """``file.py line N in function``: where the user's code was in a faulthandler dump of a
    process stopped while importing it (a loop at module level, a wait on a lock or the network).
    Read from the frame inside :mod:`fuzzer.engine.references`' loader (the one place user code is
    imported) inwards: the innermost frame that is neither the standard library's nor toolfuzz's,
    up to where that code calls back into toolfuzz (an executor's tools run on toolfuzz's virtual
    clock: what that calls is no more the user's code). None when the dump holds no such frame."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(200_000)
    except OSError:
        return None
    frames: list = []
    for line in text.splitlines():  # most recent call first, one block per dump: keep the last
        if line.startswith(("Fatal Python error", "Current thread", "Thread ", "Stack ")):
            frames = []
            continue
        match = _TRACE_LINE_NUMBER.match(line)
        if match:
            frames.append(match.groups())
    loader = [i for i, (file, _, _) in enumerate(frames) if os.path.abspath(file) == _LOADER]
    found = None
    for file, number, function in reversed(frames[:loader[0]] if loader else frames):  # outermost first
        if os.path.abspath(file).startswith(_OWN):
            if found is not None:
                break
        elif not in_stdlib(file):
            found = f"{os.path.basename(file)} line {number} in {function.strip()}"
    return found


def dump_stack(pid: int, path: str) -> tuple:
    """Ask process ``pid`` (a worker, or the zygote while it imports) to dump its Python stack to
    ``path`` (armed by :func:`arm_traceback_dump`) and read it once written."""
    if DUMP_SIGNAL is None:
        return ()
    try:
        before = os.path.getsize(path)
    except OSError:
        before = 0
    try:
        os.kill(pid, DUMP_SIGNAL)
    except OSError:
        return ()
    deadline, size = time.monotonic() + 0.5, -1
    while time.monotonic() < deadline:  # until the dump stops growing
        time.sleep(0.02)
        try:
            now = os.path.getsize(path)
        except OSError:
            now = 0
        if now > before and now == size:
            break
        size = now
    return read_trace(path)

def lost_stack(pid: int, path: str, *, hung: bool) -> tuple:
    """A lost worker's Python stack: a hung one is asked to dump it (:data:`HANG_DUMPS` times,
    keeping the frames every dump shares, so one stuck loop gets one stack whichever helper it
    was in at the moment — with two dumps, a loop that spends most of its time in a helper was
    caught there twice often enough to be two findings); a dead one already dumped it."""
    if not hung or DUMP_SIGNAL is None or not pid:
        return read_trace(path)
    first = dump_stack(pid, path)
    if not first:
        return ()
    shared = list(first)
    for _ in range(HANG_DUMPS - 1):  # a loop that calls a helper is caught in either, at random
        later = dump_stack(pid, path)
        common = 0
        while common < min(len(shared), len(later)) and shared[common] == later[common]:  # outermost first
            common += 1
        shared = shared[:common] if common else shared
    return tuple(shared)


def stuck_importing(pid: int) -> str | None:
    """Where the zygote's import of the target is (:func:`stuck_at`), asked with the signal that
    makes it dump its stack; None if unknown."""
    path = trace_path(pid, LOAD_SLOT)
    dump_stack(pid, path)
    return stuck_at(path)


__all__ = ["DUMP_SIGNAL", "HANG_DUMPS", "LOAD_SLOT", "arm_traceback_dump", "disarm_traceback_dump", "dump_stack",
           "lost_stack", "read_trace", "stuck_at", "stuck_importing", "trace_path"]
