"""Outcomes relative to their target, so that two versions of one parser compare as one code.

``fuzz diff --old myparser_v1:parse --new myparser_v2:parse`` runs two copies of a parser that
live in two modules. The parser's own exception is ``myparser_v1.ParseError`` on one side and
``myparser_v2.ParseError`` on the other, and its frames are in ``myparser_v1.py`` and
``myparser_v2.py``: the same class and the same code, named after the module each version lives
in. Compared as they were, every rejection of such a diff read "changed" (17,475 of 47,176 samples
in one run), and records replay read every recorded rejection as a "different error".

This module is the one place where an outcome is seen relative to its target: a name in the
target's own module becomes ``<target>.ParseError``, a name elsewhere in the target's top-level
package ``<package>.errors.ParseError``, and frames in the target's file ``<target>.py``. Names
outside the target's module and package (builtins, ``json``, ``pydantic``) are kept as they are: a
``ValueError`` that became a ``json.JSONDecodeError`` is a real change. Only comparisons use the
relative form; what is shown and reported keeps the real names.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass
from typing import Any, Optional

from fuzzer.gitref import split_git_target

TARGET = "<target>"
PACKAGE = "<package>"
_NOT_OWN = frozenset(sys.stdlib_module_names) | {"builtins", "__main__"}


@dataclass(frozen=True)
class TargetModule:
    """The module a target's code lives in, as its worker imports it (``myparser_v1``,
    ``mypkg.parsing``; a ``path/to/myparser.py`` target is imported as ``myparser``)."""

    module: str

    @classmethod
    def of(cls, ref: str) -> "TargetModule":
        """From a target reference: ``M:A``, ``path/m.py:A`` or ``git:REF:M:A``."""
        git = split_git_target(ref)
        module = (git[1] if git else ref).rpartition(":")[0] or ref
        if module.endswith(".py") or "/" in module or os.sep in module:
            module = os.path.splitext(os.path.basename(module))[0]
        return cls(module)

    @property
    def package(self) -> Optional[str]:
        """The top-level package of a dotted module (None for a top-level module)."""
        top, dot, _ = self.module.partition(".")
        return top if dot else None

    @property
    def file(self) -> str:
        """The basename of the module's file as frames name it (a package's is ``__init__.py``,
        the same in every version, so it needs no rewriting)."""
        return self.module.rpartition(".")[2] + ".py"

    def exception(self, name: Optional[str]) -> Optional[str]:
        """``name`` (``module.QualName``) relative to this target."""
        if not name:
            return name
        if name.startswith(self.module + "."):
            return f"{TARGET}.{name[len(self.module) + 1:]}"
        if self.package and name.startswith(self.package + "."):
            return f"{PACKAGE}.{name[len(self.package) + 1:]}"
        return name

    def frames(self, frames: Any) -> tuple:
        """``(file basename, function)`` frames with the target's own file renamed."""
        own = self.file
        return tuple((f"{TARGET}.py", frame[1], *frame[2:]) if frame and frame[0] == own else tuple(frame)
                     for frame in (frames or ()))

    def outcome(self, outcome: Any) -> Any:
        """``outcome`` with its exception and frames relative to this target (the same object when
        nothing names the target)."""
        exception, frames = self.exception(outcome.exception), self.frames(outcome.frames)
        if exception == outcome.exception and frames == tuple(map(tuple, outcome.frames or ())):
            return outcome
        return dataclasses.replace(outcome, exception=exception, frames=frames)

    def same_exception(self, recorded: Optional[str], raised: Optional[str]) -> bool:
        """Whether ``raised`` (by this target) is the exception type ``recorded`` names, when the
        module the recorded parser lived in is unknown (a production record names the type as
        production imported it): equal names; or, when ``raised`` is the target's own
        (``<target>.X``, ``<package>.m.X``), the same qualified name under a module of the
        application's own (not the standard library's: ``json.X`` is never the parser's ``X``).
        ``raised`` may be given relative already."""
        if recorded == raised:
            return True
        if not recorded or not raised:
            return False
        relative = self.exception(raised)
        for prefix in (f"{TARGET}.", f"{PACKAGE}."):
            if relative.startswith(prefix):
                tail = relative[len(prefix):]
                module = recorded[:-len(tail) - 1] if recorded.endswith("." + tail) else ""
                if prefix == f"{PACKAGE}." and "." in module:
                    return False  # <package>.errors.X is a top-level package's errors module
                return bool(module) and module.partition(".")[0] not in _NOT_OWN
        return False


__all__ = ["PACKAGE", "TARGET", "TargetModule"]
