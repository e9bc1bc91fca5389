"""The report writers' registry and base class (each writer module registers itself here).

Each writer is an :class:`fuzzer.engine.pipeline.EventHandler` that writes its file atomically when the
job finishes (``JobFinished``), from the result's own interface (:mod:`fuzzer.engine.results`), so every
format shows the same counts. Writers are registered in :data:`WRITERS` by option name
(``--report``, ``--junit``, ...); a subclass of :class:`FileWriter` only says how to render.
"""

from __future__ import annotations

from typing import Any, Callable

from fuzzer.engine.events import Event, JobFinished
from fuzzer.engine.pipeline import EventHandler
from strategies.registry import Registry

#: option name (without dashes) -> handler factory ``(path) -> EventHandler``
WRITERS: Registry[Callable[[str], Any]] = Registry("report writer")


def writer(name: str) -> Callable:
    """Register a report writer class under the CLI option ``--<name>``."""
    return WRITERS.decorator(name)


class FileWriter(EventHandler):
    """Writes ``render(result)`` (text) to ``path`` atomically when the job finishes."""

    def __init__(self, path: str):
        self.path = path

    def render(self, result: Any) -> str:
        raise NotImplementedError

    def handle_event(self, event: Event) -> None:
        if isinstance(event, JobFinished):
            from fuzzer.engine.text import write_text_atomic

            write_text_atomic(self.path, self.render(event.result))


__all__ = ["FileWriter", "WRITERS", "writer"]
