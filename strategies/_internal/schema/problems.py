"""The compiler's internal failure signals, turned into :class:`InvalidSchema` at the API boundary."""

from __future__ import annotations


class Problem(Exception):
    """Internal: a subschema cannot be generated; converted to InvalidSchema at the API boundary."""

    def __init__(self, message: str, pointer: str):
        super().__init__(message)
        self.message, self.pointer = message, pointer


class Unsat(Problem):
    """The subschema admits no value (e.g. ``false``, an empty enum, disjoint types)."""

