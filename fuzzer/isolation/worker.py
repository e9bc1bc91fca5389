"""The worker side: the zygote that loads what a spec serves once and forks workers, and the worker
loop that runs payloads (or orders) and sends plain-data results back (see :mod:`fuzzer.isolation`)."""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import sys
from multiprocessing import connection as mpc
from multiprocessing import reduction
from typing import Any

from fuzzer.isolation.spec import PIN_BYTES, PIN_HEADER, PIN_STRUCT, PROTOCOL, STRIDE
from fuzzer.isolation.stacks import LOAD_SLOT, arm_traceback_dump, disarm_traceback_dump, trace_path
from strategies.errors import TargetError

#: Characters of a loading error kept in its one line.
MESSAGE_LIMIT = 300



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


def load_served(spec: Any) -> Any:
    """What ``spec`` serves: ``spec.serve`` (``"module:function"``) called with the spec."""
    module, _, attr = spec.serve.partition(":")
    function: Any = importlib.import_module(module)
    for part in attr.split("."):
        function = getattr(function, part)
    return function(spec)


def _zygote_main(ctl: Any, spec: Any, seqs: Any, forked: bool, pins: Any = None) -> None:
    """Load what ``spec`` serves once, report, then fork a worker per "spawn" request until EOF/"exit"."""
    if forked:
        # A forked zygote holds copies of every fd the engine had, including the engine's end of
        # ``ctl``; it must drop them, or the engine's death would never show up here as EOF.
        keep = ctl.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, _max_fd())
    _quiet_process(spec.memory_limit_mb)
    dump = arm_traceback_dump(trace_path(os.getpid(), LOAD_SLOT))  # where an import that never ends is stuck
    try:
        if spec.cwd:
            os.chdir(spec.cwd)
        served = load_served(spec)
    except TargetError as exc:
        ctl.send(("error", str(exc)))
        return
    except BaseException as exc:  # noqa: BLE001 - anything at all must become one line
        text = " ".join(str(exc).split())[:MESSAGE_LIMIT]
        ctl.send(("error", f"{spec.label}: loading raised {type(exc).__name__}: {text}"))
        return
    warm = getattr(served, "warm_up", None)
    if callable(warm):
        # loaded: the engine's load timeout (an import that never ends) stops here; the warm-up
        # bounds itself (fuzzer.engine.warmup), the engine waits that long for it
        ctl.send(("loaded", float(getattr(served, "warm_up_limit_s", 0.0) or 0.0)))
        try:
            warm()
        except BaseException as exc:  # noqa: BLE001 - anything at all must become one line
            text = " ".join(str(exc).split())[:MESSAGE_LIMIT]
            ctl.send(("error", f"{spec.label}: its warm-up raised {type(exc).__name__}: {text}"))
            return
    disarm_traceback_dump(dump)
    try:
        info = getattr(served, "info", None)  # what the caller may ask of the loaded code
        ctl.send(("ok", os.getpid(), info))
    except BaseException as exc:  # noqa: BLE001 - an info that does not pickle
        ctl.send(("error", f"{spec.label}: its worker's info could not be sent ({type(exc).__name__}: {exc})"))
        return
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
                    arm_traceback_dump(trace_path(zygote_pid, slot))
                    pin = memoryview(pins).cast("B")[slot * PIN_BYTES:(slot + 1) * PIN_BYTES] if pins is not None \
                        else None
                    _serve(mpc.Connection(fd), seqs, slot * STRIDE, served, spec, pin, slot)
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


def _serve(conn: Any, seqs: Any, pos: int, served: Any, spec: Any, pin: Any = None, slot: int = 0) -> None:
    """The worker loop: a message holds payloads (run each with ``served.run``, send a result
    each) or an order (an object that makes its own inputs here and runs them with an
    :class:`OrderRunner`; its result goes back)."""
    # The user's code runs below everything already on this stack; give that back (and a margin),
    # so a RecursionError found here also happens when the printed reproduce command runs it from
    # a fresh interpreter — and starts at the same nesting whether this worker's zygote was forked
    # from a deep process or spawned bare (see _headroom).
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + (limit + 20 - _headroom()))
    seq = memoryview(seqs).cast("B").cast("q")
    runner = OrderRunner(served, spec.decode, seq, pos, pin, slot)
    run = served.run
    recv, send = conn.recv_bytes, conn.send_bytes
    loads, dumps = pickle.loads, pickle.dumps
    while True:
        try:
            base, payloads, options = loads(recv())
        except (EOFError, OSError):
            return
        if payloads.__class__ is not list:  # an order
            runner.base, runner.trace, runner.i = base, options, 0
            send(dumps(payloads.run(runner), PROTOCOL))
            continue
        out: list = []
        add = out.append
        i = base
        for payload in payloads:
            if payload.__class__ is tuple:  # a prefix of an earlier text of this message
                payload = payloads[payload[0]][:payload[1]]
            seq[pos] = i
            i += 1
            add(run(payload, options))
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


class OrderRunner:
    """What an order runs its inputs with, in the worker: ``runner(payload, tag, index)`` runs one
    payload with the served object exactly as a payload sent by the engine is run, and returns
    the decoded result; ``runner.served`` is the served object itself (a harness's orders may call
    its own methods, after :meth:`enter`).

    Before each input it *pins* it: ``tag`` and the text go into this worker's part of the pin
    buffer (shared memory), then its sequence number is published. A hang or a death is thereby
    pinned on the exact input even though the engine never saw it (see :func:`read_pin`).
    :meth:`busy` publishes a sequence number that pins nothing: the order is working on its own
    (building inputs), and if that never ends, no input is blamed. ``slot``: the worker's index;
    ``base``: the order's first sequence number; ``trace``: the options the order was sent with.
    """

    __slots__ = ("served", "decode", "seq", "pos", "pin", "slot", "base", "trace", "i", "_whole")

    def __init__(self, served: Any, decode: Any, seq: Any, pos: int, pin: Any, slot: int):
        self.served, self.decode, self.seq, self.pos, self.pin, self.slot = served, decode, seq, pos, pin, slot
        self.base, self.trace, self.i = 0, None, 0
        #: (tag, text) whose bytes fill the pin buffer, when they are ASCII: its prefixes are
        #: pinned by their header alone (see :meth:`enter_prefix`)
        self._whole: tuple = ("", None)

    def __call__(self, payload: Any, tag: str = "", index: int = -1) -> Any:
        """Run one payload; ``index``: its place in the order (what the order skips if it is sent
        again after this input hung or killed the worker)."""
        self.enter(tag, index, payload if payload.__class__ is str else "")
        return self.decode(self.served.run(payload, self.trace))

    def enter_prefix(self, text: str, end: int, tag: str = "", index: int = -1) -> bool:
        """Pin ``text[:end]`` as :meth:`enter` pins a text, before the order runs it. The
        truncation sweep runs many prefixes of one text in a row; when it is ASCII, the whole text
        is pinned once and each prefix moves only the pinned size (encoding and copying every
        prefix cost a tenth of what running it did). False when the prefix is not pinned that way
        (no pin buffer, or not ASCII): pin it with :meth:`enter`."""
        pin = self.pin
        if pin is None:
            return False
        whole_tag, whole = self._whole
        if whole is not text or whole_tag is not tag:
            data = f"{tag}\x00{text}".encode("utf-8", "surrogatepass")
            if len(data) != len(tag) + 1 + len(text):  # not ASCII: byte and character offsets differ
                return False
            self._copy(data)
            self._whole = (tag, text)
        i = self.base + self.i
        self.i += 1
        full = len(tag) + 1 + end
        pin[:PIN_HEADER] = PIN_STRUCT.pack(i, index, min(full, len(pin) - PIN_HEADER), full)
        self.seq[self.pos] = i
        return True

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
