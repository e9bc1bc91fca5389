"""The corpus writer of executor campaigns: every finding becomes (or improves) an entry.

An :class:`~fuzzer.pipeline.EventHandler`: on each :class:`~fuzzer.events.FindingRecorded` it
puts the finding's entry (``kind="executor"``) into the corpus, which keeps the smallest
rendering per signature and never reopens an entry marked fixed by an older observation
(:meth:`corpus.store.Store.put`). The counts it keeps are what the console prints.
"""

from __future__ import annotations

from typing import Optional

from fuzzer.events import Event, FindingRecorded
from fuzzer.pipeline import EventHandler


class ExecutorCorpusWriter(EventHandler):
    def __init__(self, directory: str, *, target: str, version: Optional[str] = None):
        from corpus.store import CorpusStore

        self.store = CorpusStore(directory)
        self.directory = directory
        self.target = target
        self.version = version
        self.counts = {"added": 0, "replaced": 0, "kept": 0}

    def handle_event(self, event: Event) -> None:
        if isinstance(event, FindingRecorded):
            entry = event.finding.to_entry(target=self.target, version=self.version)
            self.counts[self.store.put(entry)] += 1

    def summary(self) -> str:
        c = self.counts
        return f"corpus {self.directory}: {c['added']} added, {c['replaced']} replaced, {c['kept']} kept"

    def problems(self) -> list:
        return list(self.store.problems)


__all__ = ["ExecutorCorpusWriter"]
