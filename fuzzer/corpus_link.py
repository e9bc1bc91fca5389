"""Where the engine meets the corpus: findings become entries, entries become samples again.

``corpus`` knows files and signatures; ``fuzzer`` knows targets and oracles. This module converts
between them and implements replay (re-judge every entry on a target), which the campaign
(``--corpus``), ``fuzz replay`` and ``fuzz gate`` share.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

from corpus.store import CorpusStore, Entry
from fuzzer.events import FindingRecorded
from fuzzer.oracle import Oracle, RAW_FORMAT
from strategies._internal.sample import Recipe, Sample


def target_version(target: str, cwd: Optional[str] = None) -> Optional[str]:
    """A short hash of the target module's source file, so the corpus can tell which parser version
    an entry was found with. The file is located without importing anything (the engine never runs
    user code); None when it cannot be."""
    module = target.split(":", 1)[0]
    if module.startswith("git:") or not module:
        return None
    path = _module_file(module, cwd or os.getcwd())
    return _hash_file(path) if path else None


def _module_file(module: str, cwd: str) -> Optional[str]:
    from importlib.machinery import PathFinder

    parts = module.split(".")
    try:
        spec = PathFinder.find_spec(parts[0], [cwd] + sys.path)
        if spec is None:  # an editable install or another import hook
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if find is not None and finder is not PathFinder:
                    spec = find(parts[0], None)
                    if spec is not None:
                        break
        for i in range(1, len(parts)):
            if spec is None or not spec.submodule_search_locations:
                return None
            spec = PathFinder.find_spec(".".join(parts[:i + 1]), list(spec.submodule_search_locations))
    except (ImportError, ValueError, OSError, AttributeError):
        return None
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return None
    return spec.origin


def _hash_file(path: str) -> str:
    with open(path, "rb") as fh:
        return "sha256:" + hashlib.sha256(fh.read()).hexdigest()[:12]


def entry_from_finding(finding: Any, *, target: str, level: str, version: Optional[str]) -> Entry:
    best = finding.best
    report = finding.to_report()
    return Entry(text=best.text, signature=finding.signature.id, verdict=finding.verdict.value,
                 title=finding.signature.title, tool=best.tool or None, format=best.format,
                 anomaly_class=best.anomaly_class, operator=best.operator, exception=report["exception"],
                 calls=best.calls if best.truth_known else None,
                 recipe=best.recipe.to_json() if best.recipe is not None else None,
                 truth_known=best.truth_known, target=target, target_version=version, level=level)


def sample_from_entry(entry: Entry) -> Sample:
    recipe = Recipe.from_json(entry.recipe) if entry.recipe else None
    return Sample(text=entry.text, format=entry.format or RAW_FORMAT, anomaly_class=entry.anomaly_class,
                  operator=entry.operator, calls=entry.calls, tool=entry.tool or "", recipe=recipe,
                  truth_known=entry.truth_known)


@dataclass
class Replayed:
    path: str
    entry: Entry
    outcome: Any
    verdict: str  # "pass" or the failure verdict
    signature: Optional[str]  # signature of the failure now, if any

    @property
    def status(self) -> str:
        """pass | fail (same signature) | changed (fails differently) | regression (a fixed entry fails again)."""
        if self.signature is None:
            return "pass"
        if self.entry.status == "fixed" and self.signature == self.entry.signature:
            return "regression"
        return "fail" if self.signature == self.entry.signature else "changed"


def replay(store: CorpusStore, *, run: Callable[[list[str]], list[Any]], registry: Any,
           level: str) -> list[Replayed]:
    """Re-run every readable entry on the target and judge it again with the stored truth."""
    entries = store.entries()
    if not entries:
        return []
    oracles: dict[str, Oracle] = {}
    samples = [sample_from_entry(e) for _, e in entries]
    outcomes = run([s.text for s in samples])
    results = []
    for (path, entry), sample, outcome in zip(entries, samples, outcomes):
        oracle = oracles.setdefault(entry.level or level, Oracle(registry, entry.level or level))
        judgment = oracle.judge(sample, outcome)
        signature = oracle.signature(sample, judgment, outcome).id if judgment.failed else None
        results.append(Replayed(path, entry, outcome, judgment.verdict.value, signature))
    return results


class CorpusHandler:
    """`fuzz campaign --corpus DIR`: replay the corpus first, then store every new finding."""

    def __init__(self, directory: str, *, registry: Any, target: str, level: str,
                 run: Callable[[list[str]], list[Any]], quiet: bool = False):
        self.store = CorpusStore(directory)
        self.registry, self.target, self.level, self.run = registry, target, level, run
        self.version = target_version(target)
        self.quiet = quiet
        self.replayed: list[Replayed] = []
        self.changes: dict[str, int] = {}
        self.regressions: list[str] = []  # signatures of fixed entries found failing again

    @property
    def failing(self) -> bool:
        return any(r.status != "pass" for r in self.replayed) or bool(self.regressions)

    def replay(self) -> list[Replayed]:
        self.replayed = replay(self.store, run=self.run, registry=self.registry, level=self.level)
        return self.replayed

    def handle(self, event: Any) -> None:
        if isinstance(event, FindingRecorded):
            entry = entry_from_finding(event.finding, target=self.target, level=self.level, version=self.version)
            known = self.store.get(entry.signature)
            if known is not None and known.status == "fixed":
                self.regressions.append(entry.signature)  # stored again as open, and said so
            outcome = self.store.put(entry)
            self.changes[outcome] = self.changes.get(outcome, 0) + 1

    def summary(self) -> list[str]:
        lines = [f"corpus {self.store.path}: replayed {len(self.replayed)} entr{'y' if len(self.replayed) == 1 else 'ies'}"
                 f" ({sum(r.status == 'pass' for r in self.replayed)} pass, "
                 f"{sum(r.status != 'pass' for r in self.replayed)} fail); "
                 + ", ".join(f"{n} {what}" for what, n in sorted(self.changes.items()))]
        for r in self.replayed:
            if r.entry.status == "fixed" and r.status != "pass":
                lines.append(f"  REGRESSION {r.entry.signature} ({r.entry.title}): a fixed entry fails again")
        for signature in self.regressions:
            lines.append(f"  REGRESSION {signature}: found again by the campaign; the entry is open again")
        for problem in self.store.problems:
            lines.append(f"  skipped {problem}")
        return lines
