"""Writing findings into the corpus: the one route every command takes.

One entry per signature, the smallest input known for it (the store's rule). A finding that shows
the bug of an entry marked fixed (:func:`fuzzer.engine.decisions.fixed_entry_shown`, the gate's own rule)
is a regression: the route reports it, and the entry stays fixed; the failing input replaces the
stored one (which passed when the entry was marked fixed), so that ``fuzz replay --update`` sees
the bug and re-opens it. Re-opening it here would turn the gate's regression into a "known open failure" that no
longer blocks, just because someone ran a campaign with the corpus, added a captured output or
imported records. Changing an entry's status is a decision: ``fuzz replay --update`` (or
``fuzz corpus set-status``).

:func:`store_finding` is the route; :class:`CorpusWriter` is the handler that takes it for every
finding a job announces (campaigns of every harness: anything with ``to_entry``); ``fuzz corpus
add`` and ``fuzz corpus import`` call it directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from fuzzer.engine.events import Event, FindingRecorded, JobFinished
from fuzzer.engine.interrupts import BALANCED
from fuzzer.engine.pipeline import EventHandler


#: What ``corpus add``, ``corpus import`` and a campaign's corpus writer call a finding that shows
#: the bug of an entry marked fixed.
REGRESSION = "regression"


def regression_line(signature: str, title: str = "", where: str = "") -> str:
    """How a command that writes the corpus (a campaign, ``corpus add``, ``corpus import``) says a
    finding shows the bug of an entry marked fixed: the entry stays fixed, so the gate blocks.
    ``where``: the input's origin (" from record ID")."""
    about = f" ({title})" if title else ""
    return (f"REGRESSION {signature}{about}{where}: an entry marked fixed fails again; it stays fixed, so the gate "
            "blocks until the target is fixed (fuzz replay --update marks it open)")


@dataclass(frozen=True)
class Stored:
    """What writing one finding did: ``what`` is the store's answer (added / replaced / kept);
    ``regression`` the signature of the fixed entry the finding shows failing again (kept fixed)."""

    what: str
    regression: Optional[str] = None


def store_finding(store: Any, finding: Any, *, target: str, version: Optional[str] = None,
                  entry: Any = None) -> Stored:
    """Store ``finding`` (or ``entry``, an entry made of it with more in its scenario) in ``store``.

    A finding known as an entry marked fixed is stored marked fixed too (under its own signature
    when that differs: a hang caught one helper deeper, a corruption filed by path), so neither
    that entry nor this one becomes an open failure the gate would let through."""
    if entry is None:
        entry = finding.to_entry(target=target, version=version)
    from fuzzer.engine.decisions import fixed_entry_shown

    known = {e.signature: e for _path, e in store.entries()}
    regression = fixed_entry_shown(finding, known)
    if regression is not None:
        entry.status = "fixed"
    return Stored(store.put(entry, fails_again=regression == entry.signature), regression)


def _formats_of(finding: Any) -> tuple:
    """The formats a finding lists (a rejection seen in several for one reason), () for none."""
    return tuple(getattr(finding, "formats", None) or ())


#: Which of the store's answers for one signature says most about what a run did to its entry.
_RANK = {"kept": 0, "replaced": 1, "added": 2}


class CorpusWriter(EventHandler):
    """Stores every finding a job announces in ``store`` (and, at the end, any the result holds that
    was not announced), through :func:`store_finding`; counts what it did for the summary."""

    def __init__(self, store: Any, *, target: str, version: Optional[str] = None):
        self.store, self.target, self.version = store, target, version
        self._what: dict[str, str] = {}  # signature -> added / replaced / kept: what became of it
        self.regressions: list[str] = []  # signatures of fixed entries found failing again (kept fixed)
        self._added: set[str] = set()  # signatures this run added
        self._stored: set[str] = set()  # signatures this run stored (or kept)
        self._shown_formats: dict[str, tuple] = {}  # signature -> the formats its finding listed when stored

    def handle_event(self, event: Event) -> None:
        if isinstance(event, JobFinished):
            # Every finding of the result is in the corpus, announced or not: a Ctrl-C that landed
            # while one was being stored (it counts as announced) or a second one that cut the
            # wrap-up short left findings the reports hold and the corpus did not.
            with BALANCED:
                for finding in getattr(event.result, "findings", None) or ():
                    if not hasattr(finding, "to_entry"):
                        continue
                    if finding.signature.id not in self._stored:
                        self._store(finding, improved=False)
                    elif self._shown_formats.get(finding.signature.id) != _formats_of(finding):
                        # formats the finding was shown to fail in after it was stored (a rejection
                        # met in another format later): the entry lists them too, for replay to check
                        self._store(finding, improved=True)
            return
        if isinstance(event, FindingRecorded):
            with BALANCED:
                self._store(event.finding, event.improved)

    def _store(self, finding: Any, improved: bool) -> None:
        stored = store_finding(self.store, finding, target=self.target, version=self.version)
        signature = finding.signature.id
        self._shown_formats[signature] = _formats_of(finding)
        if stored.regression is not None and stored.regression not in self.regressions:
            self.regressions.append(stored.regression)
        self._stored.add(signature)
        if signature in self._added:
            return  # added by this run: a smaller input replacing it later is still one entry added
        if stored.what == "added":
            self._added.add(signature)
        if not improved or stored.what != "kept":
            before = self._what.get(signature)
            if before is None or _RANK[stored.what] > _RANK[before]:
                self._what[signature] = stored.what

    @property
    def changes(self) -> dict[str, int]:
        """added / replaced / kept -> how many signatures: each counted once, by what became of its
        entry in this run (a known entry filed when found, then again once shrunk, is one entry
        replaced, not one kept and one replaced)."""
        counts: dict[str, int] = {}
        for what in self._what.values():
            counts[what] = counts.get(what, 0) + 1
        return counts

    def changes_text(self) -> str:
        """``2 added, 1 kept`` (or ``nothing new``)."""
        return ", ".join(f"{n} {what}" for what, n in sorted(self.changes.items())) or "nothing new"

    def regression_lines(self) -> list[str]:
        return ["  " + regression_line(signature) for signature in self.regressions]

    def summary_lines(self) -> list[str]:
        """What this run did to the corpus (the console's footer after a campaign's summary)."""
        lines = [f"corpus {getattr(self.store, 'path', self.store)}: {self.changes_text()}", *self.regression_lines()]
        return lines + [f"  skipped: {problem}" for problem in self.store.problems]


__all__ = ["REGRESSION", "CorpusWriter", "Stored", "regression_line", "store_finding"]
