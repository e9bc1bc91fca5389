"""What the worker watches while the target runs: the code it reaches and what it touches.

* **Coverage** — the lines of the *target's own files* an input reaches first (new to this
  worker), so the engine can keep the inputs that reach new code as seeds (AFL / libFuzzer's
  feedback). ``sys.settrace`` with a global trace function that returns no local tracer for frames
  outside the target's files (the standard library, the engine cost one call per frame), and none
  for a function all of whose lines were already reached — so after warm-up only the functions
  with unexplored lines pay for line events. Inputs are traced on a sampled share (see
  :data:`OVERHEAD`), or all of them when the engine asks. ``functions`` — the target functions a
  traced input ran — come back too; and, when the engine asks with a *needle* (a damaged string
  argument of a wrong answer, :func:`damage_needle`), the *maker*: the first target function whose
  return value holds the damaged string and no longer the string it should be — the function that
  made the damage, which a corruption's signature is keyed by (a comprehension or lambda stands for
  the named function around it).
* **Audit** — a ``sys.addaudithook`` hook, armed only while the target runs, reports (and for the
  dangerous ones, *blocks*) what a parser must never do while parsing: run code it was given
  (``exec``/``eval`` of text), start processes, open files for writing, change the file system,
  open network connections, unpickle data, import a module named in the input, load a native
  library. A blocked call raises ``PermissionError`` inside the target; the engine reports the
  ``unsafe`` verdict whatever the target did next.

  Only what the *input* causes counts. What a module does while it is being imported (urllib3
  probing IPv6 support with a ``socket.bind`` when a parser imports it lazily, inside its first
  parse; a ``.pyc`` written) is the import's side effect, not the parser touching the system: an
  event raised under the import system's frames is neither reported nor blocked (the import
  itself is judged by its own event: a module named in the input). Code a library generates for
  itself (attrs compiling a class's ``__init__`` the first time a jsonschema validator class is
  made, a ``namedtuple``) is run with ``exec`` from the library's frame, compiled from its own
  source: an ``exec`` counts when the target's own code runs it, or when what was compiled holds
  the input (``eval`` of the text or of a piece of it, a syntax tree — parsed from the input).

Everything here runs in the worker process; the engine receives plain tuples.
"""

from __future__ import annotations

import dis
import os
import sys
from typing import Any, Optional

#: What the instruments add to a result when they are off: (lines, functions, unsafe), all empty.
NO_EXTRA = ((), (), ())

_DONE: set = set()

#: Audit events, what they mean, and whether the call is blocked.
PROCESS = ("started a process", True)
WRITE = ("opened a file for writing", True)
FILESYSTEM = ("changed the file system", True)
NETWORK = ("opened a network connection", True)
UNPICKLE = ("unpickled data (pickle can run code)", False)
NATIVE = ("loaded a native library", False)
EVENTS: dict[str, tuple[str, bool]] = {
    "os.system": PROCESS, "subprocess.Popen": PROCESS, "os.exec": PROCESS, "os.posix_spawn": PROCESS,
    "os.spawn": PROCESS, "os.fork": PROCESS, "os.forkpty": PROCESS, "pty.spawn": PROCESS, "os.startfile": PROCESS,
    "os.remove": FILESYSTEM, "os.rename": FILESYSTEM, "os.rmdir": FILESYSTEM, "os.mkdir": FILESYSTEM,
    "shutil.rmtree": FILESYSTEM, "os.chmod": FILESYSTEM, "os.chown": FILESYSTEM, "os.truncate": FILESYSTEM,
    "os.link": FILESYSTEM, "os.symlink": FILESYSTEM, "shutil.copyfile": FILESYSTEM, "shutil.move": FILESYSTEM,
    "socket.connect": NETWORK, "socket.bind": NETWORK, "socket.sendto": NETWORK, "socket.getaddrinfo": NETWORK,
    "socket.gethostbyname": NETWORK, "urllib.Request": NETWORK, "http.client.connect": NETWORK,
    "pickle.find_class": UNPICKLE, "marshal.loads": UNPICKLE, "ctypes.dlopen": NATIVE,
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_FRAMES = 8


#: The import system's frames that run a module's body (or create an extension module): an
#: audit event under one of them is raised by a module being imported.
_IMPORTING = frozenset({"_call_with_frames_removed", "exec_module", "create_module", "_load_unlocked"})


def _while_importing(frame: Any) -> bool:
    """Whether ``frame`` (the Python code that raised an audit event) runs inside a module import."""
    while frame is not None:
        code = frame.f_code
        if code.co_name in _IMPORTING and code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


#: The shortest run of characters a compiled source and the input share for the source to count
#: as made from the input (a template around a piece of it: ``exec(f"result = {payload}")``).
_SHARED_RUN = 8


def _from_input(source: Any, text: str) -> bool:
    """Whether the source handed to ``compile`` holds the input: it is a piece of it, holds it
    whole, or shares a run of :data:`_SHARED_RUN` characters with it. A syntax tree counts as
    the input's (it cannot be compared, and parsers build them from the input: BFCL's decoder)."""
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8", "replace")
    if not isinstance(source, str):
        return True
    code, given = source.strip(), text.strip()
    if not code or not given:
        return False
    if code in text or given in source:
        return True
    half = _SHARED_RUN // 2
    for k in range(0, len(code) - half + 1, half):
        piece = code[max(0, k - half):k + _SHARED_RUN]
        if code[k:k + half] in text and any(piece[i:i + _SHARED_RUN] in text
                                            for i in range(0, len(piece) - _SHARED_RUN + 1)):
            return True
    return False


def _by_import_system(frame: Any) -> bool:
    """Whether ``frame`` (the Python code that raised an audit event) is the import system's:
    loading a ``.pyc`` is a ``marshal.loads``, which is the target unmarshalling data only when
    the target calls it."""
    return frame is not None and frame.f_code.co_filename.startswith("<frozen importlib")


def target_files(target: Any) -> set[str]:
    """The directory of the target's module (its own code), never toolfuzz's engine."""
    module = sys.modules.get(getattr(target, "__module__", "") or "")
    if module is None:
        function = getattr(target, "__func__", target)
        code = getattr(function, "__code__", None)
        file = code.co_filename if code is not None else None
    else:
        file = getattr(module, "__file__", None)
    if not file:
        return set()
    return {os.path.dirname(os.path.abspath(file)) + os.sep}


#: Values a return value is searched through for a needle (a deep return is searched in part).
MAKER_NODES = 2000


def _needle_forms(needle: Any) -> tuple:
    """(damaged, expected), each as written and as JSON writes it inside a string: a repair that
    rewrites the text returns the damaged string escaped (``Xi\\"an``)."""
    import json

    damaged, expected = needle
    return (damaged, json.dumps(damaged)[1:-1]), (expected, json.dumps(expected)[1:-1])


def _holds(value: Any, needle: tuple, depth: int, budget: list) -> bool:
    """Whether ``value`` (a return value of the target's, searched through containers and
    objects' attributes, within ``budget`` values) holds a string with the damaged form in it and
    without the expected one."""
    budget[0] -= 1
    if budget[0] < 0 or depth > 8:
        return False
    if value.__class__ is str:
        (damaged, damaged_escaped), (expected, expected_escaped) = needle
        return (damaged in value or damaged_escaped in value) and \
            not (expected and (expected in value or expected_escaped in value))
    if isinstance(value, dict):
        items: Any = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        attributes = getattr(value, "__dict__", None)
        if not isinstance(attributes, dict):
            return False
        items = attributes.values()
    for item in items:
        if _holds(item, needle, depth + 1, budget):
            return True
        if budget[0] < 0:
            return False
    return False


#: Most of the run time coverage may add, when it samples: tracing a pure-Python parser line by
#: line costs 4-8x an untraced run, so only a share of the inputs is traced (all of them when
#: the engine asks, for exploration batches).
OVERHEAD = 0.3
#: Longer inputs are never traced unless asked for: tracing multiplies a parser's time by up to
#: 20, which turned a megabyte input the reference parser reads in 0.2 s into a false hang.
TRACE_CHARS = 32_000


class Instruments:
    """Per-input instrumentation; ``begin(text, trace)`` before the target runs, ``end()`` after
    it, which returns ``(new arcs, new lines, functions, unsafe events)``.

    ``trace``: True traces this input; None lets the sampler decide (a share of the inputs sized
    so that tracing adds at most :data:`OVERHEAD` to the run time)."""

    def __init__(self, target: Any, *, coverage: bool, audit: bool, share: Optional[float] = None):
        self.prefixes = tuple(target_files(target))
        self.coverage = coverage and bool(self.prefixes)
        self._tracing = False
        self._adaptive = share is None
        self._share = 0.25 if share is None else share
        self._cost = {True: 0.0, False: 0.0}
        self._runs = {True: 0, False: 0}
        self._credit = 0.0
        self.audit = audit
        self.armed = False
        self.text = ""
        self._own = {os.path.dirname(os.path.abspath(__file__))}
        self._tracked: dict[str, bool] = {}
        #: per code object, the lines not reached yet (_DONE: not the target's code)
        self._remaining: dict = {}
        self._names: dict = {}
        self._lines: list = []
        self._functions: set = set()
        self._unsafe: list = []
        self._in_hook = False
        self._needle: Any = None  # (damaged, expected) forms of a damage whose maker is looked for
        self._maker: Any = None
        #: whether the last source compiled while this input ran holds the input (None: nothing
        #: compiled yet): an ``exec`` from a library's frame runs what was compiled last
        self._compiled: Optional[bool] = None
        if audit:
            sys.addaudithook(self._hook)

    # -- coverage --------------------------------------------------------------------------------
    def _is_target(self, filename: str) -> bool:
        tracked = self._tracked.get(filename)
        if tracked is None:
            path = os.path.abspath(filename) if not filename.startswith("<") else filename
            tracked = self._tracked[filename] = path.startswith(self.prefixes) and \
                os.path.dirname(path) not in self._own
        return tracked

    def _global_trace(self, frame: Any, event: str, arg: Any) -> Any:
        code = frame.f_code
        remaining = self._remaining.get(code)
        if remaining is _DONE:
            return None
        if remaining is None:
            if not self._is_target(code.co_filename):
                self._remaining[code] = _DONE
                return None
            remaining = self._remaining[code] = {line for _, line in dis.findlinestarts(code) if line} or {-1}
        self._functions.add(self._names.get(code) or self._name(code))
        watch = self._needle is not None
        if not remaining and not watch:
            return None  # every line of this function has been reached: stop paying for it
        return self._local_tracer(remaining, os.path.basename(code.co_filename), watch)

    def _local_tracer(self, remaining: Any, name: str, watch: bool) -> Any:
        """The tracer of one function's frames: each line not reached yet, once; and, in a run that
        looks for the maker of a damage (``watch``), each return value of the target's functions,
        until one holds the damaged string."""
        lines = self._lines

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                line = frame.f_lineno
                if line in remaining:
                    remaining.discard(line)
                    lines.append((name, line))
            elif watch and event == "return" and self._maker is None and arg is not None and \
                    _holds(arg, self._needle, 0, [MAKER_NODES]):
                self._maker = self._named_frame(frame)
            return local

        return local

    def _named_frame(self, frame: Any) -> str:
        """``file:function`` of ``frame``, or of the named target function around it when it is a
        comprehension, a lambda or a generator expression (Python 3.12 inlines comprehensions:
        the key must not depend on them)."""
        while frame is not None:
            code = frame.f_code
            if not code.co_name.startswith("<") and self._is_target(code.co_filename):
                return self._names.get(code) or self._name(code)
            frame = frame.f_back
        return ""

    def _name(self, code: Any) -> str:
        name = self._names[code] = f"{os.path.basename(code.co_filename)}:{code.co_name}"
        return name

    # -- audit -----------------------------------------------------------------------------------
    def _hook(self, event: str, args: tuple) -> None:
        if not self.armed or self._in_hook:
            return
        try:
            what = self._judge(event, args)
        except RecursionError:  # called at the bottom of a deep recursion: not ours to report
            return
        if what is None:
            return
        self._in_hook = True
        try:
            words, block = what
            self._unsafe.append((event, words, self._stack()))
        except RecursionError:
            return
        finally:
            self._in_hook = False
        if block:
            raise PermissionError(f"toolfuzz blocked {event} while the target was parsing ({words})")

    def _judge(self, event: str, args: tuple) -> Optional[tuple[str, bool]]:
        found = self._what(event, args)
        if found is None or _while_importing(sys._getframe(2)):
            return None  # (an import's side effect: see the module's docstring)
        return found

    def _what(self, event: str, args: tuple) -> Optional[tuple[str, bool]]:
        found = EVENTS.get(event)
        if found is not None:
            if found is UNPICKLE and _by_import_system(sys._getframe(3)):
                return None  # a module's compiled code being loaded (the import is judged by its own event)
            return found
        if event == "compile":
            self._compiled = _from_input(args[0] if args else None, self.text)
            return None
        if event == "exec":
            code = args[0] if args else None
            filename = getattr(code, "co_filename", "")
            if isinstance(filename, str) and filename.startswith("<") and filename != "<frozen>":
                caller = sys._getframe(3)
                if caller is not None and not self._is_target(caller.f_code.co_filename) and self._compiled is False:
                    return None  # a library running code it generated from its own source
                return ("executed code it was given (exec/eval)", False)
            return None
        if event == "open" and len(args) >= 3:
            mode, flags = args[1], args[2]
            if (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                    (isinstance(flags, int) and flags & _WRITE_FLAGS):
                path = args[0]
                if path in (os.devnull, "/dev/null"):
                    return None
                return WRITE
            return None
        if event == "import" and args:
            module = args[0]
            if isinstance(module, str) and module not in sys.modules and module.split(".")[-1] in self.text:
                return ("imported a module named in the input", False)
        return None

    def _stack(self) -> tuple:
        frames = []
        frame = sys._getframe(2)
        while frame is not None and len(frames) < 64:
            frames.append((os.path.basename(frame.f_code.co_filename), frame.f_code.co_name))
            frame = frame.f_back
        frames.reverse()  # innermost last
        # The target's frames are those below the worker loop, without this module's (the coverage
        # tracer can be caught mid-call anywhere in the stack).
        start = max((i + 1 for i, f in enumerate(frames) if f[0] == "worker.py"), default=0)
        own = os.path.basename(__file__)
        return tuple(f for f in frames[start:] if f[0] != own)[-_FRAMES:]

    # -- per input -------------------------------------------------------------------------------
    def begin(self, text: str, trace: Any = None) -> None:
        self.text = text
        self._needle = self._maker = None
        if trace.__class__ is tuple:  # ("damage", needle): trace this input and find the maker
            self._needle, trace = _needle_forms(trace[1]), True
        if self._lines:
            self._lines = []
        if self._functions:
            self._functions = set()
        if self._unsafe:
            self._unsafe = []
        self._compiled = None
        if self.coverage:
            if trace is None and len(text) > TRACE_CHARS:
                trace = False
            if trace is None:
                self._credit += self._share
                trace = self._credit >= 1.0
                if trace:
                    self._credit -= 1.0
            self._tracing = trace
            if trace:
                sys.settrace(self._global_trace)
        self.armed = self.audit

    def end(self, elapsed: float = 0.0) -> tuple:
        """What this input reached and did; the one shared empty answer when it was neither traced
        nor unsafe (most inputs: building three empty tuples cost more than the check)."""
        self.armed = False
        traced = self._tracing
        if traced:
            sys.settrace(None)
        if self.coverage:
            if self._adaptive:
                self._learn(traced, elapsed)
            self._tracing = False
        if not (traced or self._unsafe or self._lines):
            return NO_EXTRA
        if self._needle is not None:
            return (tuple(self._lines), tuple(sorted(self._functions)), tuple(self._unsafe), self._maker)
        return (tuple(self._lines), tuple(sorted(self._functions)), tuple(self._unsafe))

    def _learn(self, traced: bool, elapsed: float) -> None:
        """Keep the traced share so that tracing costs about OVERHEAD of the untraced run time."""
        self._cost[traced] += elapsed
        self._runs[traced] += 1
        if self._runs[True] >= 20 and self._runs[False] >= 20:
            ratio = (self._cost[True] / self._runs[True]) / max(1e-9, self._cost[False] / self._runs[False])
            self._share = 1.0 if ratio <= 1.0 + OVERHEAD else max(0.002, OVERHEAD / (ratio - 1.0))
            if self._runs[True] > 2000:  # forget slowly: the cost changes with the inputs
                for key in (True, False):
                    self._cost[key] /= 2
                    self._runs[key] //= 2


__all__ = ["EVENTS", "Instruments", "target_files"]
