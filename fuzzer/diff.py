"""The differential runner: what does the new parser do differently from the old one?

Both targets run the same samples (corpus entries first, then fresh samples of every format and
anomaly class), each isolated in its own worker pool. Each sample is classified:

* ``same`` — both judged alike and answered alike;
* ``fixed`` — the old target failed, the new one passes;
* ``regression`` — the old target passed, the new one fails;
* ``changed`` — both pass or both fail, but the calls returned, the rejection or the failure differ
  (a different repair, a different crash).

Every distinct regression and change is shrunk on the structured sample (its recipe) so that the
same difference persists, so the example is small and its truth still right.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from corpus.minimize import NotInteresting, shrink_choices
from fuzzer.oracle import Oracle, outcome_fingerprint
from fuzzer.schedule import SampleStream
from fuzzer.engine import resolve_operators
from strategies._internal.build import Unbuildable, replay_recipe
from strategies._internal.formats import FORMATS

KINDS = ("same", "fixed", "regression", "changed")


@dataclass
class Side:
    """One side's view of a sample: its outcome, verdict and signature."""

    outcome: Any
    verdict: str
    signature: Optional[str]

    def describe(self) -> dict[str, Any]:
        from fuzzer.findings import jsonable

        o = self.outcome
        data: dict[str, Any] = {"outcome": o.kind, "verdict": self.verdict, "signature": self.signature}
        if o.kind == "returned":
            data["calls"] = jsonable(o.calls)
        elif o.kind in ("rejected", "raised"):
            data["exception"] = o.exception
        elif o.detail:
            data["detail"] = o.detail
        return data


@dataclass
class Difference:
    kind: str
    sample: Any
    old: Side
    new: Side
    count: int = 1
    minimized: Any = None
    min_old: Optional[Side] = None
    min_new: Optional[Side] = None

    @property
    def key(self) -> tuple:
        return (self.kind, self.sample.anomaly_class, self.sample.operator, self.old.verdict, self.new.verdict,
                self.old.signature, self.new.signature)

    def to_report(self) -> dict[str, Any]:
        best = self.minimized or self.sample
        return {"kind": self.kind, "anomaly_class": self.sample.anomaly_class, "operator": self.sample.operator,
                "format": self.sample.format, "tool": self.sample.tool, "input": best.text,
                "original_input": self.sample.text, "truth": best.calls if best.truth_known else None,
                "old": (self.min_old or self.old).describe(), "new": (self.min_new or self.new).describe(),
                "count": self.count}


@dataclass
class DiffResult:
    old: str
    new: str
    samples: int = 0
    counts: dict = field(default_factory=lambda: {k: 0 for k in KINDS})
    by_class: dict = field(default_factory=dict)
    by_format: dict = field(default_factory=dict)
    differences: list = field(default_factory=list)
    elapsed_s: float = 0.0
    stop_reason: str = ""

    def to_report(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "samples": self.samples, "counts": self.counts,
                "by_class": self.by_class, "by_format": self.by_format,
                "differences": [d.to_report() for d in self.differences],
                "elapsed_s": round(self.elapsed_s, 3), "stop_reason": self.stop_reason}


def classify(old: Side, new: Side) -> str:
    old_failed, new_failed = old.verdict != "pass", new.verdict != "pass"
    if old_failed and not new_failed:
        return "fixed"
    if new_failed and not old_failed:
        return "regression"
    if old.signature != new.signature or outcome_fingerprint(old.outcome) != outcome_fingerprint(new.outcome):
        return "changed"
    return "same"


class DiffRunner:
    def __init__(self, registry: Any, *, run_old: Callable, run_new: Callable, old_label: str, new_label: str,
                 level: str = "parse"):
        self.registry = registry
        self.run_old, self.run_new = run_old, run_new
        self.oracle = Oracle(registry, level)
        self.result = DiffResult(old=old_label, new=new_label)
        self._differences: dict[tuple, Difference] = {}

    def _side(self, sample: Any, outcome: Any) -> Side:
        judgment = self.oracle.judge(sample, outcome)
        signature = self.oracle.signature(sample, judgment, outcome).id if judgment.failed else None
        return Side(outcome, judgment.verdict.value, signature)

    def compare(self, samples: list) -> list[tuple[str, Any, Side, Side]]:
        texts = [s.text for s in samples]
        olds, news = self.run_old(texts), self.run_new(texts)
        out = []
        for sample, o, n in zip(samples, olds, news):
            old, new = self._side(sample, o), self._side(sample, n)
            out.append((classify(old, new), sample, old, new))
        return out

    def _count(self, kind: str, sample: Any, old: Side, new: Side) -> None:
        r = self.result
        r.samples += 1
        r.counts[kind] += 1
        for table, name in ((r.by_class, sample.anomaly_class or "valid"), (r.by_format, sample.format)):
            row = table.setdefault(name, {k: 0 for k in KINDS})
            row[kind] += 1
        if kind in ("regression", "changed"):
            diff = Difference(kind, sample, old, new)
            found = self._differences.get(diff.key)
            if found is not None:
                found.count += 1
            else:
                self._differences[diff.key] = diff

    def run(self, *, corpus_samples: list, tools: list, operators: Optional[list], seed: int,
            budget_s: Optional[float], max_samples: Optional[int], batch_size: int = 256,
            shrink_budget_s: float = 5.0) -> DiffResult:
        start = time.monotonic()
        try:
            self._run(start, corpus_samples=corpus_samples, tools=tools, operators=operators, seed=seed,
                      budget_s=budget_s, max_samples=max_samples, batch_size=batch_size)
        except KeyboardInterrupt:  # keep what was compared; differences are reported unshrunk
            self.result.stop_reason = "interrupted"
        if self.result.stop_reason != "interrupted":
            try:
                for diff in self._differences.values():
                    self._shrink(diff, shrink_budget_s)
            except KeyboardInterrupt:
                self.result.stop_reason = "interrupted"
        order = {"regression": 0, "changed": 1}
        self.result.differences = sorted(self._differences.values(), key=lambda d: (order[d.kind], -d.count))
        self.result.elapsed_s = time.monotonic() - start
        return self.result

    def _run(self, start: float, *, corpus_samples: list, tools: list, operators: Optional[list], seed: int,
             budget_s: Optional[float], max_samples: Optional[int], batch_size: int) -> None:
        if corpus_samples:
            for kind, sample, old, new in self.compare(corpus_samples):
                self._count(kind, sample, old, new)
        names = resolve_operators(operators)
        formats = {name: (True, True) for name in FORMATS}
        streams = [SampleStream(registry=self.registry, tool=self.registry[t], formats=formats, operators=names,
                                include_valid=not operators or "valid" in operators, seed=seed + i)
                   for i, t in enumerate(tools)]
        fresh = 0
        turn = 0
        empty = 0
        self.result.stop_reason = "budget"
        while streams:
            if budget_s is not None and time.monotonic() - start >= budget_s:
                break
            if max_samples is not None and fresh >= max_samples:
                self.result.stop_reason = "max_examples"
                break
            size = batch_size if max_samples is None else max(1, min(batch_size, max_samples - fresh))
            batch = streams[turn % len(streams)].batch(size)
            turn += 1
            fresh += len(batch)
            empty = 0 if batch else empty + 1
            if empty >= 3 * len(streams):
                self.result.stop_reason = "nothing to generate: no selected operator applies"
                break
            for kind, sample, old, new in self.compare(batch):
                self._count(kind, sample, old, new)

    def _shrink(self, diff: Difference, budget_s: float) -> None:
        """Shrink the structured sample while the same difference (kind and both judgments) persists."""
        recipe = diff.sample.recipe
        if recipe is None:
            return
        want = diff.key
        best: dict[str, Any] = {}

        def test(candidates: list) -> list:
            built = []
            for choices in candidates:
                try:
                    built.append(replay_recipe(replace(recipe, choices=tuple(choices)), self.registry))
                except (Unbuildable, ValueError, KeyError, IndexError, RecursionError):
                    built.append(None)
            runnable = [s for s in built if s is not None]
            compared = iter(self.compare(runnable)) if runnable else iter(())
            keys = []
            for s in built:
                if s is None:
                    keys.append(None)
                    continue
                kind, sample, old, new = next(compared)
                if Difference(kind, sample, old, new).key == want:
                    size = (len(sample.text), sample.text)
                    keys.append(size)
                    if "size" not in best or size < best["size"]:
                        best.update(size=size, sample=sample, old=old, new=new)
                else:
                    keys.append(None)
            return keys

        try:
            shrink_choices(tuple(recipe.choices), test, budget_s=budget_s, max_tests=3000)
        except NotInteresting:  # a flaky difference: keep the original example
            return
        if best and best["size"] < (len(diff.sample.text), diff.sample.text):
            diff.minimized, diff.min_old, diff.min_new = best["sample"], best["old"], best["new"]
