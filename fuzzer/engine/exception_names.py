"""Exception types a policy declares, resolved to classes where the code under test is loaded.

A policy names the exceptions its target may raise (``raises`` of an executor policy, ``errors``
of an agent policy) the way a user writes them: ``requests.RequestException`` (a re-export: the
class is ``requests.exceptions.RequestException``), ``mypkg.errors:ToolError``, ``ValueError``,
``UnexpectedModelBehavior``. Compared as strings with the name of the class that was raised, such
names miss re-exports and subclasses (pydantic-ai's ``IncompleteToolCall`` *is an*
``UnexpectedModelBehavior``), and every miss is a false crash. So the names are resolved once, in
the process that imported the target (its worker, after a warm-up run), and an exception is
declared when it is an instance of a class they name — the worker records, with every exception
that escapes, the declared names it matches (:meth:`Declared.matching`), and the oracles read that.

How a name resolves:

* a **dotted name** (``a.b.C``, ``a.b:C``, a nested ``a.b.Outer.Inner``) must import and be an
  exception class; it covers that class and its subclasses;
* a **builtin** (``ValueError``) is the builtin class; it covers it and its subclasses;
* any other **bare name** (``UnexpectedModelBehavior``) covers every exception with a class of
  that name in its MRO, from whatever module (a user need not know where a library defines it);
  it must still be the name of an exception class some loaded module defines, so a typo is an
  error instead of a declaration of nothing.

A name that does not resolve comes back with why (:attr:`Declared.problems`), for the one-line
error that names the policy file and key. :func:`written` is the fallback where nothing could be
resolved (a trace judged without its worker): the names compared as written with the qualified
names of the exception's MRO.
"""

from __future__ import annotations

import builtins
import difflib
import importlib
import sys
from dataclasses import dataclass
from typing import Any, Iterable, Optional


def _is_exception(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseException)


def normalized(name: str) -> str:
    """``mypkg.errors:ToolError`` and ``mypkg.errors.ToolError`` both mean the dotted name."""
    return name.replace(":", ".").strip()


@dataclass(frozen=True)
class Declared:
    """Declared exception names and what they resolved to in this process.

    ``classes``: (name as written, class) for dotted and builtin names; ``bare``: bare names
    matched by class name anywhere in an exception's MRO; ``problems``: (name, why) for names
    that did not resolve."""

    names: tuple = ()
    classes: tuple = ()
    bare: tuple = ()
    problems: tuple = ()

    def matching(self, exc_type: type) -> list[str]:
        """The declared names (as written) ``exc_type`` is an instance of: isinstance for the
        resolved classes, the MRO's class names for bare names."""
        try:
            mro = exc_type.__mro__
        except AttributeError:
            return []
        found = [name for name, cls in self.classes if cls in mro]
        if self.bare:
            short = {getattr(c, "__name__", "") for c in mro}
            found += [name for name in self.bare if name in short]
        return found


def resolve(names: Iterable[str]) -> Declared:
    """Resolve ``names`` in this process (see the module docstring)."""
    names = tuple(names)
    classes, bare, problems = [], [], []
    for name in names:
        dotted = normalized(name)
        if "." not in dotted:
            builtin = getattr(builtins, dotted, None)
            if _is_exception(builtin):
                classes.append((name, builtin))
            elif _defined_somewhere(dotted):
                bare.append(name)
            else:
                close = difflib.get_close_matches(dotted, [n for n in dir(builtins) if _is_exception(getattr(builtins, n))], 1)
                problems.append((name, "no loaded module defines an exception class of that name"
                                 + (f" (did you mean {close[0]!r}?)" if close else "; give its dotted name")))
            continue
        cls, why = _import_class(dotted)
        if cls is not None:
            classes.append((name, cls))
        else:
            problems.append((name, why))
    return Declared(names=names, classes=tuple(classes), bare=tuple(bare), problems=tuple(problems))


def _defined_somewhere(name: str) -> bool:
    return any(_is_exception(getattr(m, name, None)) for m in list(sys.modules.values()) if m is not None)


def _import_class(dotted: str) -> tuple[Optional[type], str]:
    """(the exception class ``dotted`` names, "") or (None, why not). The module is the longest
    prefix that imports (``a.b.Outer.Inner``: module ``a.b``, attributes ``Outer.Inner``)."""
    parts = dotted.split(".")
    first_failure = ""
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module_name != exc.name and not module_name.startswith(exc.name + "."):
                return None, f"module {module_name!r} cannot be imported (ModuleNotFoundError: {exc})"
            first_failure = first_failure or f"module {module_name!r} cannot be imported (ModuleNotFoundError: {exc})"
            continue
        except Exception as exc:  # noqa: BLE001 - any import failure is the answer
            return None, f"module {module_name!r} cannot be imported ({type(exc).__name__}: {exc})"
        value: Any = module
        for attribute in parts[cut:]:
            value = getattr(value, attribute, None)
            if value is None:
                break
        attribute = ".".join(parts[cut:])
        if value is None:
            return None, f"{attribute!r} in {module_name!r}: not found"
        if not _is_exception(value):
            return None, f"{attribute!r} in {module_name!r}: a {type(value).__name__}, not an exception class"
        return value, ""
    return None, first_failure


def written(names: Iterable[str], mro: Iterable[str]) -> list[str]:
    """The declared names (as written) an exception with these qualified MRO names matches when
    nothing was resolved: a dotted name equal to one of them, a bare name equal to one's last part."""
    mro = list(mro)
    shorts = {m.rpartition(".")[2] for m in mro}
    full = set(mro)
    return [n for n in names if normalized(n) in full or ("." not in normalized(n) and normalized(n) in shorts)]


def declared_by(names: Iterable[str], exc: Optional[dict]) -> bool:
    """Whether an escaped exception, as a worker described it, is declared by ``names``.

    ``declared_by`` in the description is the worker's answer: the declared names the exception
    is an instance of, resolved there (the worker runs with the policy that judges it). Without
    it (nothing was resolved), its qualified MRO names (``mro``, else ``type`` / ``exception``)
    are compared with the names as written (:func:`written`)."""
    if not exc:
        return False
    matched = exc.get("declared_by")
    if matched is not None:
        return any(n in matched for n in names)
    mro = exc.get("mro") or [exc.get("type") or exc.get("exception") or ""]
    return bool(written(names, mro))


__all__ = ["Declared", "declared_by", "normalized", "resolve", "written"]
