"""The error hierarchy shared by every toolfuzz package.

One base class, :class:`ToolfuzzError`, so the CLI can turn any of them into a one-line usage error
(exit 2) while programming errors still surface as tracebacks.
"""

from __future__ import annotations


class ToolfuzzError(Exception):
    """Base class of every error toolfuzz raises on purpose."""


class RegistryError(ToolfuzzError):
    """A tools file or tool definition cannot be loaded.

    The message names the file, the tool and the JSON pointer of the problem.
    """

    def __init__(self, message: str, *, source: str | None = None, tool: str | None = None,
                 pointer: str | None = None):
        self.source, self.tool, self.pointer = source, tool, pointer
        where = []
        if source:
            where.append(str(source))
        if tool:
            where.append(f"tool {tool!r}")
        if pointer is not None:
            where.append(f"at {pointer or '/'}")
        super().__init__(f"{': '.join([', '.join(where), message]) if where else message}")


class InvalidSchema(RegistryError, TypeError):
    """A tool's JSON Schema is malformed or uses something no strategy can generate."""


class UnknownName(ToolfuzzError, KeyError):
    """A tool, format, operator or anomaly class name that is not registered."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class TargetError(ToolfuzzError):
    """A target (`M:A`) or a `--reject-on` type cannot be loaded or is not usable."""


class InvalidArgument(ToolfuzzError, TypeError):
    """A strategy was given an argument of the wrong type or value (the message names the argument,
    its repr and its type, and says what to pass instead)."""
