"""Shrinking a finding without changing its meaning (DESIGN.md, "Shrinking keeps the meaning").

Two stages, both run through the isolated worker pool in batches:

1. **Structured**: shrink the sample's recipe (its choice sequence) with
   :func:`corpus.minimize.shrink_choices` and regenerate; the truth is recomputed by construction and
   each candidate is re-judged, so a shrunk corruption is still a corruption of a correctly labelled
   sample. Every verdict gets this stage.
2. **Text**: for crash and hang only — the text alone carries those failures — the text is reduced
   further with :func:`corpus.minimize.shrink_text` while the signature holds. The result has no
   known truth any more, which those verdicts do not need.

Nondeterminism findings are not shrunk: a flaky predicate makes any minimizer lie.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Optional

from corpus.minimize import NotInteresting, shrink_choices, shrink_text
from fuzzer.oracle import Oracle, Verdict
from strategies._internal.build import Unbuildable, replay_recipe
from strategies._internal.sample import Sample

#: A sample regenerated from an edited recipe can raise anything its generator raises on
#: pathological choice sequences; such a candidate is simply not interesting.
_REPLAY_ERRORS = (Unbuildable, ValueError, KeyError, IndexError, RecursionError)


class FindingShrinker:
    def __init__(self, run: Callable[[list[str]], list[Any]], oracle: Oracle, registry: Any):
        self._target_run = run
        self._oracle = oracle
        self._registry = registry
        self._seen: dict[str, Any] = {}

    def _run(self, texts: list[str]) -> list[Any]:
        """Run texts, each distinct text once per shrink: different choice sequences often render
        the same text, and a hang costs a whole timeout every time it is run."""
        seen = self._seen
        fresh = list(dict.fromkeys(t for t in texts if t not in seen))
        if fresh:
            for text, outcome in zip(fresh, self._target_run(fresh)):
                seen[text] = outcome
        return [seen[t] for t in texts]

    def _signature_id(self, sample: Sample, outcome: Any) -> Optional[str]:
        judgment = self._oracle.judge(sample, outcome)
        if not judgment.failed:
            return None
        return self._oracle.signature(sample, judgment, outcome).id

    def shrink(self, sample: Sample, outcome: Any, verdict: Verdict, signature_id: str, *,
               budget_s: float, max_tests: int = 4000) -> tuple[Sample, Any, str]:
        """Return (smallest sample, its outcome, note) failing with ``signature_id``."""
        if verdict is Verdict.NONDETERMINISM:
            return sample, outcome, "nondeterministic failures are not shrunk"
        self._seen = {sample.text: outcome}
        deadline = time.monotonic() + budget_s
        best: dict[str, Any] = {"sample": sample, "outcome": outcome}
        notes: list[str] = []

        def key(s: Sample) -> tuple:
            return (len(s.text), s.text)

        if sample.recipe is not None:
            recipe = sample.recipe

            def test_choices(candidates: list[tuple]) -> list[Optional[tuple]]:
                built: list[Optional[Sample]] = []
                for choices in candidates:
                    try:
                        built.append(replay_recipe(dataclasses.replace(recipe, choices=tuple(choices)),
                                                   self._registry))
                    except _REPLAY_ERRORS:
                        built.append(None)
                runnable = [s for s in built if s is not None]
                outcomes = iter(self._run([s.text for s in runnable]))
                keys: list[Optional[tuple]] = []
                for s in built:
                    if s is None:
                        keys.append(None)
                        continue
                    o = next(outcomes)
                    if self._signature_id(s, o) == signature_id:
                        keys.append(key(s))
                        if key(s) < key(best["sample"]):
                            best["sample"], best["outcome"] = s, o
                    else:
                        keys.append(None)
                return keys

            try:
                shrink_choices(tuple(recipe.choices), test_choices,
                               budget_s=max(0.0, deadline - time.monotonic()), max_tests=max_tests)
            except NotInteresting:
                notes.append("did not reproduce when regenerated; not shrunk structurally")

        if verdict in (Verdict.CRASH, Verdict.HANG) and time.monotonic() < deadline:
            base = best["sample"]

            def as_text(text: str) -> Sample:
                return dataclasses.replace(base, text=text, calls=None, recipe=None, truth_known=False,
                                           description="reduced as text")

            def test_texts(texts: list[str]) -> list[bool]:
                outcomes = self._run(list(texts))
                verdicts = []
                for text, o in zip(texts, outcomes):
                    s = as_text(text)
                    same = self._signature_id(s, o) == signature_id
                    if same and key(s) < key(best["sample"]):
                        best["sample"], best["outcome"] = s, o
                    verdicts.append(same)
                return verdicts

            try:
                shrink_text(base.text, test_texts, budget_s=max(0.0, deadline - time.monotonic()),
                            max_tests=max_tests)
            except NotInteresting:
                notes.append("did not reproduce on a re-run; not shrunk as text")

        if time.monotonic() >= deadline:
            notes.append("shrinking stopped at its time budget")
        self._seen = {}
        return best["sample"], best["outcome"], "; ".join(notes)
