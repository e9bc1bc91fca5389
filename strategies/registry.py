"""One generic registry for every named, pluggable thing: formats, mutation operators, oracle
checks, fault kinds, harnesses, report writers.

Registered names are the contract's vocabulary: they are the words of the CLI (``--format``,
``--anomaly``), of the reports and of the corpus, unchanged. So a registry is a read-only mapping
from name to item with two strict rules (the Schemathesis ``Registry`` habit):

* registering a name twice is a programming error — it raises :class:`DuplicateName` naming both
  modules, a plain exception that surfaces as a traceback (never as a usage error);
* looking up an unknown name raises :class:`~strategies.errors.UnknownName` (a ``KeyError``) with
  the close matches, which the CLI turns into one ``Error:`` line and exit status 2.

This module imports nothing but the standard library and :mod:`strategies.errors`, so every layer
(strategies, corpus, fuzzer) can use it without pulling in Hypothesis or click.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable, Generic, Iterator, Mapping, Optional, TypeVar

from strategies.errors import UnknownName

T = TypeVar("T")


class DuplicateName(Exception):
    """A name registered twice: a programming error in toolfuzz or in a plugin, not a user error."""


class Registry(Mapping[str, T], Generic[T]):
    """Named items of one kind, in registration order.

    >>> checks = Registry("check")
    >>> @checks.decorator()
    ... def crash(...): ...

    ``kind`` is the word used in messages ("unknown format 'hermez'; did you mean hermes?").
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}
        self._modules: dict[str, str] = {}

    # -- registration ----------------------------------------------------------------------------
    def register(self, name: str, item: T, *, module: Optional[str] = None) -> T:
        """Add ``item`` under ``name``; returns it. A name already taken raises :class:`DuplicateName`."""
        if not isinstance(name, str) or not name:
            raise DuplicateName(f"{self.kind} names must be non-empty strings, got {name!r}")
        origin = module or getattr(item, "__module__", None) or "?"
        if name in self._items:
            raise DuplicateName(f"{self.kind} {name!r} is already registered by {self._modules[name]}; "
                                f"{origin} registers it again")
        self._items[name] = item
        self._modules[name] = origin
        return item

    def decorator(self, name: Optional[str] = None, *, wrap: Optional[Callable[[str, Any], T]] = None) -> Callable:
        """A decorator registering the decorated object under ``name`` (default: its ``__name__``).

        ``wrap(name, obj)`` builds the registered item from the decorated object (e.g. an
        ``Operator`` record around a function); the decorated object itself is returned unchanged.
        """

        def register(obj: Any) -> Any:
            key = name or obj.__name__
            self.register(key, wrap(key, obj) if wrap is not None else obj,
                          module=getattr(obj, "__module__", None))
            return obj

        return register

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests and plugins that register temporary items)."""
        self._items.pop(name, None)
        self._modules.pop(name, None)

    # -- lookup ----------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> T:
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise UnknownName(self.unknown_message(name)) from None

    def unknown_message(self, name: Any) -> str:
        """``unknown <kind> 'x'; did you mean y?`` (or the known names when none is close)."""
        close = difflib.get_close_matches(str(name), list(self._items), n=3)
        hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(self._items) or 'none'}"
        return f"unknown {self.kind} {name!r}; {hint}"

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def module_of(self, name: str) -> str:
        """The module that registered ``name``."""
        self[name]
        return self._modules[name]

    def names(self) -> list[str]:
        return list(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._items)} items)"


__all__ = ["DuplicateName", "Registry"]
