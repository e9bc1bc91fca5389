"""Playback: while replaying records, every ``@recorder.tool`` answers from the recorded ``tool_io``
instead of running — no external call — and a call that was never recorded raises
:class:`UnrecordedToolCall` (replay fails loudly, as vcrpy does). Standard library only."""

from __future__ import annotations

import contextvars
import json
import sys
from collections import deque
from collections.abc import Mapping
from typing import Any, Iterable, Optional

from fuzzer.records.values import short_repr, storable


class UnrecordedToolCall(LookupError):
    """A tool was called during replay with arguments no record answers."""


class RecordedToolError(Exception):
    """Stands for a recorded tool exception whose type cannot be rebuilt in this process."""


def rebuild_exception(error: str) -> BaseException:
    """The exception a recorded ``"qualified.Type: message"`` describes: the real class when it is
    a builtin or lives in an already imported module (nothing is imported), else a
    :class:`RecordedToolError` subclass of the same name."""
    name, _, message = error.partition(": ")
    cls: Any = None
    module_name, _, qualname = name.rpartition(".")
    if not module_name:
        import builtins

        cls = getattr(builtins, name, None)
    elif module_name in sys.modules:
        cls = sys.modules[module_name]
        for part in qualname.split("."):
            cls = getattr(cls, part, None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        try:
            return cls(message)
        except Exception:  # noqa: BLE001 - a constructor with other arguments
            exc = cls.__new__(cls)
            exc.args = (message,)
            return exc
    stand_in = type(name.rpartition(".")[2] or "RecordedToolError", (RecordedToolError,), {})
    return stand_in(message)


def _canonical(value: Any) -> str:
    return json.dumps(storable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def tool_arguments(args: tuple, kwargs: dict) -> Any:
    """How a tool's arguments are stored: the keyword arguments, plus ``$args`` for positional ones."""
    if not args:
        return storable(kwargs)
    return dict(storable(kwargs), **{"$args": storable(list(args))})


class Playback:
    """Answers tool calls from recorded ``tool_io`` entries: the same tool with the same arguments
    gets the recorded answers in recorded order; anything else raises UnrecordedToolCall."""

    def __init__(self, tool_io: Iterable[Mapping]):
        self._answers: dict[tuple[str, str], deque] = {}
        self.used = 0
        for entry in tool_io or ():
            key = (str(entry.get("tool")), _canonical(entry.get("arguments")))
            self._answers.setdefault(key, deque()).append(entry)

    def answer(self, tool: str, args: tuple, kwargs: dict) -> Any:
        arguments = tool_arguments(args, kwargs)
        queue = self._answers.get((tool, _canonical(arguments)))
        if not queue:
            raise UnrecordedToolCall(f"no recorded answer for tool {tool!r} with arguments "
                                     f"{short_repr(arguments)}")
        entry = queue.popleft()
        self.used += 1
        if entry.get("status") == "error":
            raise rebuild_exception(str(entry.get("error") or "RecordedToolError"))
        return entry.get("result")


_PLAYBACK: contextvars.ContextVar[Optional[Playback]] = contextvars.ContextVar("toolfuzz_playback", default=None)


class playback:
    """``with playback(record.tool_io): executor(call)`` — tools answer from the record."""

    def __init__(self, tool_io: Iterable[Mapping]):
        self.player = Playback(tool_io)
        self._token: Any = None

    def __enter__(self) -> Playback:
        self._token = _PLAYBACK.set(self.player)
        return self.player

    def __exit__(self, *exc: object) -> None:
        _PLAYBACK.reset(self._token)


__all__ = ["Playback", "RecordedToolError", "UnrecordedToolCall", "playback", "rebuild_exception", "tool_arguments"]
