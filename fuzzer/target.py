"""The target contract: load the user's parser and normalize whatever it returns.

A **target** is named ``M:A`` (``M:Cls.method`` too) and called as ``target(text)``. This module
is the only place that knows the contract (DESIGN.md, "Target contract"):

* :func:`load_target` / :func:`load_reject_types` turn ``M:A`` references into objects, failing
  with a one-line :class:`~strategies.errors.TargetError` that says which part failed, because
  these errors reach users as CLI usage errors (exit 2).
* :func:`normalize_calls` turns every return shape the contract allows into plain
  ``{"name": str, "arguments": dict}`` values built only from JSON types. It runs inside the
  worker process, so the engine only ever receives plain data: it never unpickles (hence never
  imports) user classes, and oracles compare calls as JSON values.
* :func:`exception_name` / :func:`exception_message` turn what a target raised into plain text,
  one way for the worker's outcomes, the recorder's records and the executor's traces, so the
  same exception reads the same in each.

The engine itself must not import user code; these loaders run in worker processes
(:mod:`fuzzer.isolation`).
"""

from __future__ import annotations

import builtins
import dataclasses
import difflib
import importlib
import importlib.util
import inspect
import json
import os
import pkgutil
import sys
import types
from collections.abc import Mapping
from typing import Any, Callable

from strategies.errors import TargetError

__all__ = ["InvalidReturn", "load_reject_types", "load_target", "normalize_calls", "takes_one_text"]

#: Deeper nesting than this in a returned value is refused (also catches cyclic containers),
#: so a pathological return cannot turn normalization into a RecursionError.
MAX_DEPTH = 100
_REPR_LIMIT = 200


# --------------------------------------------------------------------------------------------
# Loading


def load_target(ref: str, *, cwd: str | None = None) -> Callable[[str], Any]:
    """The callable named by ``ref`` (``module:attr``, ``module:Cls.method`` or ``path.py:attr``).

    ``cwd`` (default: the current directory) goes first on ``sys.path`` so a user's own module
    wins over an installed one of the same name. An instance method given as ``Cls.method`` is
    bound to ``Cls()`` when the class can be built without arguments.
    """
    obj, parent, last = _resolve(ref, cwd, what="target")
    if (inspect.isclass(parent) and last is not None
            and isinstance(inspect.getattr_static(parent, last, None), types.FunctionType)):
        try:
            obj = getattr(parent(), last)
        except Exception as exc:  # noqa: BLE001 - reported as one line
            raise TargetError(f"target {ref!r}: {last!r} is an instance method and "
                              f"{parent.__name__}() failed: {_one_line(exc)}") from None
    if not callable(obj):
        raise TargetError(f"target {ref!r}: {type(obj).__name__} object is not callable")
    return obj


def takes_one_text(target: Any, ref: str) -> Any:
    """``target``, when it can be called with one argument (the model output); else a one-line
    TargetError. A ``parse()`` with no parameter (or with two required ones) otherwise "crashes"
    on every input: a whole budget spent on one TypeError in the harness's call, not a bug found."""
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # a builtin or extension callable without one: cannot tell
        return target
    try:
        signature.bind("model output")
    except TypeError as exc:
        raise TargetError(f"target {ref!r}: cannot be called with one argument, the model output "
                          f"({_one_line(exc)}); its signature is {signature}") from None
    return target


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
    from fuzzer.frames import in_stdlib

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


# --------------------------------------------------------------------------------------------
# Normalizing returns


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


class InvalidReturn(ValueError):
    """The target returned something that is not a call, a list of calls, or None."""


def normalize_calls(value: Any) -> list[dict[str, Any]]:
    """Every return shape of the target contract as a list of plain ``{"name", "arguments"}``.

    ``None`` and ``[]`` mean no call; a list or tuple holds calls; anything else must be one call:
    a mapping with ``name`` and ``arguments``, an OpenAI-style ``{"type": "function", "function":
    {...}}`` (or ``{"id": ..., "function": {...}}``), or an object with ``.name`` and
    ``.arguments`` (also one with ``.function``, like the OpenAI SDK's tool-call objects). The
    arguments may also sit under ``args`` (LangChain), ``input`` (Anthropic) or ``parameters``
    (Llama), and a whole message with ``tool_calls`` stands for its calls.
    ``arguments`` is a mapping or a JSON string decoding to an object. Values become JSON types
    (tuples -> lists); anything else becomes ``{"$repr": repr(x)}`` so it can never compare equal
    to a real JSON value. Raises :class:`InvalidReturn` describing the first problem.
    """
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        value = _message_calls(value)
        if value is None:
            return []
    try:
        if isinstance(value, (list, tuple)):
            return [_call(item, f"call #{i}") for i, item in enumerate(value)]
        return [_call(value, "call")]
    except RecursionError:
        raise InvalidReturn("return value is nested too deeply") from None


#: Where real libraries keep a call's arguments, in order: OpenAI ``arguments``, LangChain
#: ``args``, Anthropic ``input``, Llama ``parameters``. A parser returning its framework's own
#: shape must not be judged as returning garbage.
ARGUMENT_KEYS = ("arguments", "args", "input", "parameters")
_MISSING = object()


def _message_calls(value: Any) -> Any:
    """A whole assistant message (a mapping or object with ``tool_calls``, as OpenAI's SDK and
    LangChain return) stands for its calls; anything else is returned unchanged."""
    if isinstance(value, Mapping):
        if "name" not in value and "tool_calls" in value:
            return value["tool_calls"]
        return value
    if not hasattr(value, "name"):
        calls = getattr(value, "tool_calls", _MISSING)
        if calls is not _MISSING:
            return calls
    return value


def _call(obj: Any, where: str, unwrapped: bool = False) -> dict[str, Any]:
    if type(obj) is dict or isinstance(obj, Mapping):
        if "name" not in obj:
            inner = obj.get("function")
            if inner is not None and not unwrapped:
                return _call(inner, where + ".function", True)
            keys = ", ".join(repr(k) for k in list(obj)[:6])
            raise InvalidReturn(f"{where}: mapping has no 'name' (keys: {keys or 'none'})")
        key = next((k for k in ARGUMENT_KEYS if k in obj), None)
        if key is None:
            raise InvalidReturn(f"{where}: mapping has no 'arguments'")
        name, arguments = obj["name"], obj[key]
    elif obj is None or isinstance(obj, (str, bytes, bytearray, int, float, list, tuple)):
        shown = f" of length {len(obj)}" if isinstance(obj, (list, tuple)) else f" {_short_repr(obj)}"
        raise InvalidReturn(f"{where}: {type(obj).__name__}{shown} is not a call")
    elif hasattr(obj, "name") and any(hasattr(obj, k) for k in ARGUMENT_KEYS):
        name = obj.name
        arguments = next(getattr(obj, k) for k in ARGUMENT_KEYS if hasattr(obj, k))
    elif getattr(obj, "function", None) is not None and not unwrapped:
        return _call(obj.function, where + ".function", True)
    else:
        raise InvalidReturn(f"{where}: {type(obj).__name__} object has no 'name' and 'arguments'")
    if not isinstance(name, str):
        raise InvalidReturn(f"{where}: name is {type(name).__name__}, not a string")
    return {"name": str.__str__(name), "arguments": _arguments(arguments, where)}


def _arguments(arguments: Any, where: str) -> dict[str, Any]:
    if type(arguments) is dict:
        return _json(arguments, 1)
    if isinstance(arguments, (str, bytes, bytearray)):
        try:
            decoded = json.loads(arguments)
        except RecursionError:
            raise InvalidReturn(f"{where}: arguments JSON is nested too deeply") from None
        except ValueError as exc:
            raise InvalidReturn(f"{where}: arguments string is not JSON ({exc})") from None
        if not isinstance(decoded, dict):
            raise InvalidReturn(f"{where}: arguments JSON is {type(decoded).__name__}, not an object")
        arguments = decoded
    elif not isinstance(arguments, Mapping):
        if callable(getattr(arguments, "model_dump", None)):  # pydantic models
            arguments = arguments.model_dump()
        elif dataclasses.is_dataclass(arguments) and not isinstance(arguments, type):
            arguments = dataclasses.asdict(arguments)
        else:
            raise InvalidReturn(f"{where}: arguments is {type(arguments).__name__}, "
                                f"not a mapping or a JSON object string")
    return _json(arguments, 1)


def _json(x: Any, depth: int) -> Any:
    """A JSON-typed copy of ``x`` (depth-bounded, so cycles and deep nesting are refused)."""
    t = type(x)
    if t is str or t is int or t is float or t is bool or x is None:
        return x
    if depth > MAX_DEPTH:
        raise InvalidReturn(f"return value is nested deeper than {MAX_DEPTH} levels")
    if t is dict or isinstance(x, Mapping):
        return {(k if type(k) is str else _key(k)): _json(v, depth + 1) for k, v in x.items()}
    if t is list or t is tuple or isinstance(x, (list, tuple)):
        return [_json(v, depth + 1) for v in x]
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, int):  # IntEnum and friends; bool was handled above (it cannot be subclassed)
        return int(x)
    if isinstance(x, float):
        return float(x)
    return {"$repr": _short_repr(x)}


def _key(k: Any) -> str:
    # A non-string key is not JSON; mark it so it never equals the string a JSON key would be.
    return str.__str__(k) if isinstance(k, str) else f"$repr:{_short_repr(k)}"


def _short_repr(x: Any) -> str:
    try:
        if isinstance(x, (str, bytes, bytearray)) and len(x) > _REPR_LIMIT:
            x = x[:_REPR_LIMIT]  # never repr a huge blob just to cut it
        text = repr(x)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real problem
        text = f"<{type(x).__name__} with a failing __repr__>"
    return text if len(text) <= _REPR_LIMIT else text[:_REPR_LIMIT - 3] + "..."
