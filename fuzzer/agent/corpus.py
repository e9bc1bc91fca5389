"""The corpus writer: every finding of a job becomes (or improves) a corpus entry.

A handler (:class:`fuzzer.pipeline.EventHandler`) that puts ``finding.to_entry(...)`` into the
corpus directory on every ``FindingRecorded``. It only uses the :class:`fuzzer.results.Reportable`
protocol, so it serves any harness; the store keeps the smaller input per signature, so a finding
announced again with a smaller script replaces its entry.
"""

from __future__ import annotations

from typing import Any, Optional

from corpus.store import CorpusStore
from fuzzer.events import Event, FindingRecorded
from fuzzer.pipeline import EventHandler


class CorpusWriter(EventHandler):
    def __init__(self, directory: str, *, target: str, cwd: Optional[str] = None):
        from fuzzer.corpus_link import target_version

        self.directory = directory
        self.store = CorpusStore(directory)
        self.target = target
        self.version = target_version(target, cwd)
        self.outcomes: dict[str, str] = {}  # signature -> added | replaced | kept

    def handle_event(self, event: Event) -> None:
        if isinstance(event, FindingRecorded):
            finding: Any = event.finding
            outcome = self.store.put(finding.to_entry(target=self.target, version=self.version))
            if self.outcomes.get(finding.signature.id) != "added":
                self.outcomes[finding.signature.id] = outcome

    def summary(self) -> str:
        counts = {k: list(self.outcomes.values()).count(k) for k in ("added", "replaced", "kept")}
        line = (f"corpus {self.directory}: {counts['added']} new, {counts['replaced']} smaller, "
                f"{counts['kept']} already known")
        if self.store.problems:
            line += "; problems: " + "; ".join(self.store.problems)
        return line


__all__ = ["CorpusWriter"]
