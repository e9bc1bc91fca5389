"""The corpus writer: a handler that stores every announced finding in the corpus.

One entry per signature, the smallest input known for it (the store's rule). A finding whose
signature is an entry marked fixed is a regression: the writer lists it, and the entry stays
fixed (its input may still get smaller) — re-opening it here would turn the gate's regression
into a "known open failure" that no longer blocks, just because someone ran a campaign with the
corpus. Marking it open is a decision: ``fuzz replay --update``. Works for findings of every
harness (anything with ``to_entry``).
"""

from __future__ import annotations

from typing import Any, Optional

from fuzzer.engine.events import Event, FindingRecorded, JobFinished
from fuzzer.engine.interrupts import BALANCED
from fuzzer.engine.pipeline import EventHandler


class CorpusWriter(EventHandler):
    def __init__(self, store: Any, *, target: str, version: Optional[str] = None):
        self.store, self.target, self.version = store, target, version
        self.changes: dict[str, int] = {}  # added / replaced / kept -> count
        self.reopened: list[str] = []  # signatures of fixed entries found failing again (kept fixed)
        self._added: set[str] = set()  # signatures this run added
        self._stored: set[str] = set()  # signatures this run stored (or kept)

    def handle_event(self, event: Event) -> None:
        if isinstance(event, JobFinished):
            # Every finding of the result is in the corpus, announced or not: a Ctrl-C that landed
            # while one was being stored (it counts as announced) or a second one that cut the
            # wrap-up short left findings the reports hold and the corpus did not.
            with BALANCED:
                for finding in getattr(event.result, "findings", None) or ():
                    if finding.signature.id not in self._stored and hasattr(finding, "to_entry"):
                        self._store(finding, improved=False)
            return
        if isinstance(event, FindingRecorded):
            with BALANCED:
                self._store(event.finding, event.improved)

    def _store(self, finding: Any, improved: bool) -> None:
        entry = finding.to_entry(target=self.target, version=self.version)
        known = self.store.get(entry.signature)
        if known is not None and known.status == "fixed":
            entry.status = "fixed"
            if entry.signature not in self.reopened:
                self.reopened.append(entry.signature)
        what = self.store.put(entry)
        self._stored.add(finding.signature.id)
        if entry.signature in self._added:
            return  # added by this run: a smaller input replacing it later is still one entry added
        if what == "added":
            self._added.add(entry.signature)
        if not improved or what != "kept":
            self.changes[what] = self.changes.get(what, 0) + 1


__all__ = ["CorpusWriter"]
