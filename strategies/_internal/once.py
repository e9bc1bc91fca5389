"""``computed_once``: an attribute computed on first read and kept in the instance's ``__dict__``."""

from __future__ import annotations

from typing import Any, Callable


class computed_once:
    """``functools.cached_property`` without the lock Python 3.10 and 3.11 take on each first read
    (a rendering's text is read once or twice, and the lock was a fifth of its cost). It writes
    the instance's ``__dict__`` directly, so it also caches on frozen dataclasses, whose fields
    (and therefore equality and hash) it never touches."""

    def __init__(self, function: Callable[[Any], Any]):
        self.function, self.name, self.__doc__ = function, function.__name__, function.__doc__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.function(instance)
        return value


__all__ = ["computed_once"]
