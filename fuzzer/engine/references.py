"""References to the user's code: ``M:A`` names turned into objects, and what they raise turned into words.

Every harness names the code it tests this way (``--target``, ``--executor``, ``--agent``,
``--parser``, ``--reject-on``) and loads it in a worker process (the engine never imports user code).
Loading fails with a one-line :class:`~strategies.errors.TargetError` that says which part of the
reference failed, because these errors reach users as CLI usage errors (exit 2).
:func:`exception_name` / :func:`exception_message` / :func:`describe_exception` turn what user code
raised into plain text, one way for every harness, so the same exception reads the same everywhere.
"""

from __future__ import annotations

import builtins
import difflib
import functools
import importlib
import importlib.util
import inspect
import os
import pkgutil
import sys
import traceback
import types
from typing import Any, Callable

from fuzzer.engine.frames import named, without_library_tail
from strategies.errors import TargetError

__all__ = ["MESSAGE_LIMIT", "FRAME_LIMIT", "describe_exception", "exception_message", "exception_name",
           "format_traceback", "load_reject_types", "load_target"]

#: This file: the one place user code is imported from (a stack stuck importing it is read from here in).
LOADER = os.path.abspath(__file__)

#: Characters of an exception message kept, and innermost frames kept, in every description.
MESSAGE_LIMIT = 300
FRAME_LIMIT = 8



def load_target(ref: str, *, cwd: str | None = None, what: str = "target") -> Callable[..., Any]:
    """The callable named by ``ref`` (``module:attr``, ``module:Cls.method`` or ``path.py:attr``).

    ``cwd`` (default: the current directory) goes first on ``sys.path`` so a user's own module
    wins over an installed one of the same name. An instance method given as ``Cls.method`` is
    bound to ``Cls()`` when the class can be built without arguments.
    """
    obj, parent, last = _resolve(ref, cwd, what=what)
    if (inspect.isclass(parent) and last is not None
            and isinstance(inspect.getattr_static(parent, last, None), types.FunctionType)):
        try:
            obj = getattr(parent(), last)
        except Exception as exc:  # noqa: BLE001 - reported as one line
            raise TargetError(f"{what} {ref!r}: {last!r} is an instance method and "
                              f"{parent.__name__}() failed: {_one_line(exc)}") from None
    if not callable(obj):
        raise TargetError(f"{what} {ref!r}: {type(obj).__name__} object is not callable")
    return obj


def load_reject_types(refs: list[str] | tuple[str, ...], *,
                      cwd: str | None = None) -> tuple[type[BaseException], ...]:
    """Exception classes that count as a clean rejection; ``(ValueError,)`` when ``refs`` is empty.

    Each ref is ``M:NAME``, a dotted ``pkg.mod.NAME``, or a bare builtin name (``KeyError``).
    """
    if not refs:
        return (ValueError,)
    found = []
    for ref in refs:
        ref = str(ref).strip()
        if ":" not in ref and "." not in ref:
            obj = getattr(builtins, ref, None)
            if obj is None:
                close = difflib.get_close_matches(
                    ref, [n for n in dir(builtins) if _is_exception(getattr(builtins, n))], n=3)
                raise TargetError(f"--reject-on {ref!r}: no builtin exception of that name"
                                  f"{_hint(close)}; use MODULE:NAME for other types")
        else:
            if ":" not in ref:
                module, _, name = ref.rpartition(".")
                ref = f"{module}:{name}"
            obj = _resolve(ref, cwd, what="--reject-on")[0]
        if not _is_exception(obj):
            raise TargetError(f"--reject-on {ref!r}: {_describe(obj)} is not an exception class")
        if _swallows_every_crash(obj):
            raise TargetError(f"--reject-on {ref!r}: {obj.__name__} is a base class of every crash (TypeError, "
                              f"KeyError, RecursionError, ...), so each would count as a clean rejection and none "
                              f"be reported; declare the type your parser raises to reject an input (its own "
                              f"ParseError, or ValueError)")
        found.append(obj)
    return tuple(found)


#: Crashes of unrelated kinds. A declared rejection type that all of them are instances of
#: (``BaseException``, ``Exception``, a metaclass that claims every class) turns every crash of
#: the target into a clean rejection: a run that could only ever pass.
_CRASH_KINDS = (TypeError, AttributeError, KeyError, IndexError, RecursionError, ZeroDivisionError,
                UnboundLocalError, AssertionError)


def _swallows_every_crash(cls: type) -> bool:
    try:
        return all(issubclass(kind, cls) for kind in _CRASH_KINDS)
    except Exception:  # noqa: BLE001 - a metaclass whose __subclasscheck__ fails: it cannot be trusted either
        return True


def _is_exception(obj: object) -> bool:
    return inspect.isclass(obj) and issubclass(obj, BaseException)


def _resolve(ref: str, cwd: str | None, *, what: str) -> tuple[Any, Any, str | None]:
    """(object, its parent, last attribute name) for ``M:A.B``; TargetError naming the bad part."""
    ref = str(ref).strip()
    module_name, colon, attr_path = ref.rpartition(":")
    if not colon:
        raise TargetError(f"{what} {ref!r}: missing ':' (expected MODULE:ATTRIBUTE, e.g. myparser:parse)")
    if not module_name:
        raise TargetError(f"{what} {ref!r}: empty module name before ':'")
    if not attr_path:
        raise TargetError(f"{what} {ref!r}: empty attribute after ':'")
    parts = attr_path.split(".")
    if not all(p.isidentifier() for p in parts):
        raise TargetError(f"{what} {ref!r}: {attr_path!r} is not a dotted attribute name")
    module = _import(module_name, cwd or os.getcwd(), ref, what)
    obj: Any = module
    parent: Any = None
    shown = module_name
    for part in parts:
        parent = obj
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = [n for n in dir(parent) if not n.startswith("__")]
            close = difflib.get_close_matches(part, names, n=3)
            kind = "module" if isinstance(parent, types.ModuleType) else _describe(parent)
            raise TargetError(f"{what} {ref!r}: {kind} {shown!r} has no attribute {part!r}"
                              f"{_hint(close)}") from None
        except Exception as exc:  # noqa: BLE001 - a property or __getattr__ that raises
            raise TargetError(f"{what} {ref!r}: getting {part!r} raised {_one_line(exc)}") from None
        shown = f"{shown}:{part}" if parent is module else f"{shown}.{part}"
    return obj, parent, parts[-1]


def _import(module_name: str, cwd: str, ref: str, what: str) -> types.ModuleType:
    """Import ``module_name`` (or a ``.py`` file path) with ``cwd`` first on ``sys.path``."""
    cwd = os.path.abspath(cwd)
    path_like = module_name.endswith(".py") or os.sep in module_name or "/" in module_name
    if path_like:
        file = module_path(module_name, cwd)
        if file is None:
            shown = os.path.abspath(os.path.join(cwd, module_name))
            also = "" if shown.endswith(".py") else f" (nor {os.path.basename(shown)}.py, nor a package directory)"
            raise TargetError(f"{what} {ref!r}: file {shown!r} not found{also}")
        search_dir = os.path.dirname(file)
        if os.path.basename(file) == "__init__.py":  # a package directory: imported by name from its parent
            module_name, path_like = os.path.basename(search_dir), False
            search_dir = os.path.dirname(search_dir)
    else:
        search_dir = cwd
    if search_dir in sys.path:
        sys.path.remove(search_dir)
    sys.path.insert(0, search_dir)
    importlib.invalidate_caches()
    try:
        if path_like:
            name = os.path.splitext(os.path.basename(module_name))[0]
            spec = importlib.util.spec_from_file_location(name, file)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            return module
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not path_like and (module_name == missing or module_name.startswith(missing + ".")):
            package, _, leaf = missing.rpartition(".")
            close = [f"{package}.{c}" if package else c
                     for c in difflib.get_close_matches(leaf, _module_names(missing, cwd), n=3)]
            raise TargetError(f"{what} {ref!r}: module {missing!r} not found (searched {cwd} "
                              f"and sys.path){_hint(close)}") from None
        raise TargetError(f"{what} {ref!r}: importing {module_name!r} raised {_one_line(exc)}") from None
    except (Exception, SystemExit) as exc:
        raise TargetError(f"{what} {ref!r}: importing {module_name!r} raised {_one_line(exc)}") from None


def module_path(module: str, cwd: str) -> str | None:
    """The file a path-like module reference names, relative to ``cwd`` (``..`` allowed):
    ``dir/mod.py``, ``../dir/mod`` (its ``mod.py``) or a package directory (its
    ``__init__.py``); None when there is none."""
    path = os.path.abspath(os.path.join(cwd, module))
    for candidate in (path, path + ".py", os.path.join(path, "__init__.py")):
        if os.path.isfile(candidate) and candidate.endswith(".py"):
            return candidate
    return None


def _module_names(missing: str, cwd: str) -> list[str]:
    """Candidate names for a "did you mean": siblings of the missing module in its package, or
    for a top-level name the modules and packages of the user's own directories (``cwd`` and the
    ``sys.path`` entries outside the standard library and site-packages). Not every installed
    top-level module: a typo of the user's parser name was offered 'xdist' or 'xdrlib'."""
    package, _, _ = missing.rpartition(".")
    if package:
        try:
            paths = importlib.import_module(package).__path__  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - best effort
            return []
        return [m.name for m in pkgutil.iter_modules(paths)]
    names = set()
    for directory in [cwd] + [p for p in sys.path if _users_directory(p)]:
        try:
            entries = os.listdir(directory or ".")
        except OSError:
            continue
        for entry in entries:
            stem, ext = os.path.splitext(entry)
            if stem.isidentifier() and (ext == ".py" or (not ext and os.path.isdir(os.path.join(directory, entry)))):
                names.add(stem)
    return sorted(names)


def _users_directory(path: str) -> bool:
    """A ``sys.path`` entry holding the user's own code (a PYTHONPATH directory), not the standard
    library's or installed packages'."""
    from fuzzer.engine.frames import in_stdlib

    if not path or not os.path.isdir(path):
        return False
    parts = os.path.normpath(path).split(os.sep)
    return not in_stdlib(os.path.join(path, "x.py")) and "site-packages" not in parts and "dist-packages" not in parts


def _hint(close: list[str]) -> str:
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def _describe(obj: object) -> str:
    return f"class {obj.__name__}" if inspect.isclass(obj) else f"{type(obj).__name__} object"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__




def exception_name(cls: type) -> str:
    """``module.QualName`` of an exception type (bare for builtins and ``__main__``). Looked up once
    per class: a worker names the exception of every rejection. A class whose metaclass makes it
    unhashable (or compares it with code that raises) is named every time, uncached."""
    try:
        name = _NAMES.get(cls)
    except Exception:  # noqa: BLE001 - the target's metaclass: naming must not fail with it
        return _qualified_name(cls)
    if name is None:
        name = _qualified_name(cls)
        if len(_NAMES) < 4096:
            _NAMES[cls] = name
    return name


def _qualified_name(cls: type) -> str:
    module = getattr(cls, "__module__", None)
    return cls.__qualname__ if module in (None, "builtins", "__main__") else f"{module}.{cls.__qualname__}"


_NAMES: dict = {}


def exception_message(exc: BaseException, limit: int) -> str:
    """``str(exc)`` cut to ``limit`` characters (ending in ``...``). Never raises: the exception's
    ``__str__`` is the target's code and may itself fail."""
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001
        message = "<str() of the exception failed>"
    if len(message) > limit:
        message = message[:limit - 3] + "..."
    return message




def describe_exception(exc: BaseException) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """(qualified type name, truncated message, innermost frames) of what user code raised, as
    plain data. The worker loop's own frame (the outermost) and toolfuzz's instruments are left
    out, and so are the standard library's innermost frames (:mod:`fuzzer.engine.frames`): a crash
    in ``json.loads`` is keyed by the frame of the user's code that called it, not by which
    decoder function raised."""
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


#: Characters of a formatted traceback kept (its end: the innermost frames and the message).
TRACEBACK_LIMIT = 8000


def format_traceback(exc: BaseException) -> str:
    """The traceback as Python prints it, without the worker loop's own frame."""
    try:
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        text = "".join(traceback.format_exception(type(exc), exc, tb))
    except BaseException:  # noqa: BLE001 - a __str__ that raises, a traceback too deep to format
        return ""
    return text if len(text) <= TRACEBACK_LIMIT else "...\n" + text[-TRACEBACK_LIMIT:]


#: The instruments' module: its frames, and whatever it called, are toolfuzz's, not the user's
#: (compared by path: user code may have an instrument.py of its own).
INSTRUMENT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "isolation", "instrument.py")


@functools.lru_cache(maxsize=4096)
def _is_instrument(filename: str) -> bool:
    """Is ``filename`` (a code object's) toolfuzz's instrument module? Cached: it is asked for
    every frame of every exception, and ``abspath`` was a third of what describing one cost."""
    return os.path.abspath(filename) == INSTRUMENT
