"""Shrinking a finding without changing its meaning (DESIGN.md, "Shrinking keeps the meaning").

Two stages, both run through the isolated worker pool in batches:

1. **Structured** (:func:`shrink_structured`): shrink the sample's recipe (its choice sequence)
   with :func:`corpus.minimize.shrink_choices` and regenerate; the truth is recomputed by
   construction and each candidate is re-judged, so a shrunk corruption is still a corruption of
   a correctly labelled sample. Every verdict gets this stage, and ``fuzz diff`` uses it too, with
   "the same difference" as its predicate.
2. **Text**: for the verdicts the text alone carries (crash, hang, unsafe, slow), the text is
   reduced further with :func:`corpus.minimize.shrink_text` while the signature holds. The result
   has no known truth any more, which those verdicts do not need.

Nondeterminism findings are not shrunk: a flaky predicate makes any minimizer lie. What the
stages keep is then moved clear of the edge it was shrunk to: a RecursionError input away from the
recursion limit, a hang away from the timeout (it must still hang at twice it: :mod:`fuzzer.engine.hangs`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from corpus.minimize import NotInteresting, longest_repeat, shortlex, shrink_choices, shrink_text
from corpus.signature import same_hang
from fuzzer.engine.hangs import HANG_MARGIN
from fuzzer.harnesses.parser.oracle import TEXT_CARRIED, Oracle, Verdict
from fuzzer.harnesses.parser.shrink_values import shrink_values
from strategies._internal.build import Unbuildable, replay_recipe
from strategies._internal.sample import Sample
from strategies.json_values import json_identical

#: A sample regenerated from an edited recipe can raise anything its generator raises on
#: pathological choice sequences; such a candidate is simply not interesting.
_REPLAY_ERRORS = (Unbuildable, ValueError, KeyError, IndexError, RecursionError, TypeError)


@dataclass(frozen=True)
class Shrunk:
    sample: Any
    observation: Any  # the outcome (or, for diff, the pair of sides) of ``sample``
    complete: bool  # ran to a local minimum, not stopped by its budget
    note: str = ""
    #: no single character of a string value, no element (no token or character of the text,
    #: for a text-carried verdict) can be removed with the signature holding; None: not known
    one_minimal: Optional[bool] = None


def size_key(sample: Sample) -> tuple:
    return shortlex(sample.text)


def regenerate(sample: Sample, registry: Any, **changes: Any) -> Optional[Sample]:
    """The sample ``sample``'s recipe makes with ``changes`` (``choices=``, a variation), or None
    when it cannot be built."""
    try:
        return replay_recipe(dataclasses.replace(sample.recipe, **changes), registry)
    except _REPLAY_ERRORS:
        return None


def shrink_structured(sample: Sample, observation: Any, *, registry: Any, observe: Callable[[list], list],
                      keeps: Callable[[Sample, Any], bool], budget_s: float, max_tests: int = 4000) -> Shrunk:
    """The smallest regenerated sample ``keeps`` accepts. ``observe(samples)`` runs them (one
    observation each, None when the deadline cut it off)."""
    best = {"sample": sample, "observation": observation}
    status: dict = {}
    if sample.recipe is None:
        return Shrunk(sample, observation, True)  # a raw input: only the text stage applies

    def kept(built: list) -> list:
        """The size key of each built sample that still fails (None otherwise); keeps the best."""
        runnable = [s for s in built if s is not None]
        observed = iter(observe(runnable) if runnable else ())
        keys: list = []
        for s in built:
            o = next(observed) if s is not None else None
            if o is not None and keeps(s, o):
                keys.append(size_key(s))
                if size_key(s) < size_key(best["sample"]):
                    best["sample"], best["observation"] = s, o
            else:
                keys.append(None)
        return keys

    def test(candidates: list) -> list:
        return kept([regenerate(sample, registry, choices=tuple(c)) for c in candidates])

    # A forced variation (several calls, prose around them) is tried without first: the same
    # failure on one bare call is the smaller input, and no choice edit could remove the force.
    for variation in ("multi", "chatter"):
        if getattr(sample.recipe, variation):
            plain = regenerate(sample, registry, **{variation: False})
            if kept([plain])[0] is not None:
                sample = plain
    try:
        shrink_choices(tuple(sample.recipe.choices), test, budget_s=budget_s, max_tests=max_tests, status=status)
    except NotInteresting:
        return Shrunk(sample, observation, False, "did not reproduce when regenerated; not shrunk structurally")
    return Shrunk(best["sample"], best["observation"], status.get("complete", False))


class FindingShrinker:
    """Shrinks findings of the parser harness; ``run(texts, deadline=)`` is the pool's run."""

    def __init__(self, run: Callable[..., list], oracle: Oracle, registry: Any):
        self._target_run = run
        self._oracle = oracle
        self._registry = registry
        self._seen: dict[str, Any] = {}
        self._judged: dict[tuple, list] = {}  # text and sample fields -> [(truth, signature id)]
        self._deadline: Optional[float] = None

    def _run(self, texts: list[str]) -> list[Any]:
        """Run texts, each distinct text once per shrink: different choice sequences often render
        the same text, and a hang costs a whole timeout every time it is run."""
        seen = self._seen
        fresh = list(dict.fromkeys(t for t in texts if t not in seen))
        if fresh:
            for text, outcome in zip(fresh, self._target_run(fresh, deadline=self._deadline)):
                if outcome is not None:
                    seen[text] = outcome
        return [seen.get(t) for t in texts]

    def _signature_id(self, sample: Sample, outcome: Any) -> Optional[str]:
        """The signature ``sample`` fails with (None: it passes), judged once per shrink for each
        text and truth: most candidates regenerate a text seen before (three in four, shrinking a
        validate-level finding), whose one outcome (:meth:`_run`) gets the same judgment. Keyed by
        the text and what else the oracle reads of a sample; the truth is compared, not hashed (a
        ``repr`` of a 64 KB argument cost more than judging it)."""
        key = (sample.text, sample.tool, sample.format, sample.anomaly_class, sample.operator, sample.truth_known)
        judged = self._judged.setdefault(key, [])
        for calls, found in judged:
            if (calls is None) == (sample.calls is None) and (calls is None or json_identical(calls, sample.calls)):
                return found
        judgment = self._oracle.judge(sample, outcome)
        found = self._oracle.signature(sample, judgment, outcome).id if judgment.failed else None
        judged.append((sample.calls, found))
        return found

    def shrink(self, sample: Sample, outcome: Any, verdict: Verdict, signature_id: str, *,
               budget_s: float, max_tests: int = 4000, hang_timeout: Optional[float] = None,
               also: Optional[Callable[[Sample, Any], bool]] = None) -> Shrunk:
        """The smallest sample failing with ``signature_id`` found within ``budget_s``.

        ``hang_timeout``: for a hang, the timeout it was caught with; the input kept must still
        hang at :data:`HANG_MARGIN` times it (:meth:`_hang_margin`), and part of the budget is
        kept for checking that. ``also``: what else a smaller input must keep (a corruption filed
        by its path: that it takes the same path — the same damage on another path is another bug,
        and shrinking must not cross into it)."""
        if verdict is Verdict.NONDETERMINISM:
            return Shrunk(sample, outcome, False, "nondeterministic failures are not shrunk")
        if budget_s <= 0:
            return Shrunk(sample, outcome, False, "not minimized: the budget ran out")
        self._seen, self._judged = {sample.text: outcome}, {}
        started = time.monotonic()
        margin_s = HANG_MARGIN * hang_timeout if verdict is Verdict.HANG and hang_timeout else 0.0
        # checking the margin of the input kept (and of one padded input) costs up to twice margin_s:
        # shrinking leaves that much, or half the budget
        budget_s, whole_s = max(budget_s - min(2 * margin_s, budget_s / 2), 0.0), budget_s
        self._deadline = started + budget_s
        notes: list[str] = []

        def keeps(s: Sample, o: Any) -> bool:
            return self._signature_id(s, o) == signature_id and (also is None or also(s, o))

        def observe(samples: list) -> list:
            return self._run([s.text for s in samples])

        structured = shrink_structured(sample, outcome, registry=self._registry, observe=observe, keeps=keeps,
                                       budget_s=budget_s, max_tests=max_tests)
        best, best_outcome, complete = structured.sample, structured.observation, structured.complete
        if structured.note:
            notes.append(structured.note)
        one_minimal: Optional[bool] = None
        if best.recipe is not None and time.monotonic() < self._deadline:
            # every value, one edit at a time (fuzzer.harnesses.parser.shrink_values): what choices cannot reach
            values = shrink_values(best, best_outcome, registry=self._registry, promise=self._oracle.promise,
                                   observe=observe, keeps=keeps, deadline=self._deadline)
            best, best_outcome = values.sample, values.observation
            complete = complete and values.complete
            one_minimal = values.one_minimal and complete

        if verdict in TEXT_CARRIED and time.monotonic() < self._deadline:
            base = best

            def as_text(text: str) -> Sample:
                return dataclasses.replace(base, text=text, calls=None, recipe=None, truth_known=False,
                                           description="reduced as text")

            found = {"sample": best, "outcome": best_outcome}

            def test_texts(texts: list[str]) -> list[bool]:
                verdicts = []
                for text, o in zip(texts, self._run(list(texts))):
                    s = as_text(text)
                    same = o is not None and keeps(s, o)
                    if same and size_key(s) < size_key(found["sample"]):
                        found["sample"], found["outcome"] = s, o
                    verdicts.append(same)
                return verdicts

            status: dict = {}
            try:
                shrink_text(base.text, test_texts, budget_s=max(0.0, self._deadline - time.monotonic()),
                            max_tests=max_tests, status=status)
                complete = complete and status.get("complete", False)
                one_minimal = status.get("complete", False)
            except NotInteresting:
                notes.append("did not reproduce on a re-run; not shrunk as text")
                one_minimal = None
            best, best_outcome = found["sample"], found["outcome"]
        elif verdict in TEXT_CARRIED:
            complete, one_minimal = False, None
        if not complete:
            notes.append("not minimized: shrinking stopped at its time budget"
                         if time.monotonic() >= self._deadline else "not fully minimized")
        if getattr(best_outcome, "exception", None) == "RecursionError":
            padded = self._with_margin(best, best_outcome, keeps)
            if padded[0] is not best:
                # one unit fewer than the least that fails is no longer a removal that keeps it
                best, best_outcome = padded
                one_minimal = False
                notes.append(f"its repeated run is kept {RECURSION_MARGIN} repetitions above the least that fails "
                             "(a margin: at the least, one frame more or less decides)")
        if margin_s:
            self._deadline = started + whole_s
            hung = best
            best, best_outcome, note = self._hang_margin(best, best_outcome, keeps, margin_s)
            if note:
                notes.append(note)
            if best is not hung:
                one_minimal = False  # padded to hang at twice the timeout: a margin, not a minimum
        self._seen, self._judged = {}, {}
        return Shrunk(best, best_outcome, complete, "; ".join(dict.fromkeys(notes)), one_minimal=one_minimal)

    def with_hang_margin(self, sample: Sample, outcome: Any, signature_id: str, *, hang_timeout: float,
                         budget_s: float) -> Shrunk:
        """A hang stored without shrinking (``--no-shrink``) is kept with margin all the same."""
        self._seen, self._judged = {sample.text: outcome}, {}
        self._deadline = time.monotonic() + budget_s
        best, best_outcome, note = self._hang_margin(
            sample, outcome, lambda s, o: self._signature_id(s, o) == signature_id, HANG_MARGIN * hang_timeout)
        self._seen, self._judged = {}, {}
        return Shrunk(best, best_outcome, False, note)

    def _hang_margin(self, sample: Sample, outcome: Any, keeps: Callable[[Sample, Any], bool],
                     margin_s: float) -> tuple:
        """A hang shrunk to the least input that still hangs sits at the timeout: a slower or a
        less loaded machine and it finishes in time, and a corpus entry of it hangs or passes by
        chance (replay once marked such an unfixed bug fixed). The input kept must hang when given
        ``margin_s`` (twice the timeout); if it does not, its longest run of a repeated unit is
        made :data:`HANG_PAD` times as long (then that again), kept when that hangs the same way.
        Returns (sample, outcome, note): the note says when no margin could be shown."""
        def hangs(candidate: Sample) -> tuple[Optional[Any], bool]:
            (again,) = self._target_run([candidate.text], deadline=self._deadline, timeout=margin_s)
            same = again is not None and again.kind == "hung" and (
                keeps(candidate, again) or same_hang(getattr(outcome, "frames", ()), getattr(again, "frames", ())))
            return again, same

        again, held = hangs(sample)
        if held:
            return sample, outcome, ""
        candidate, padded = sample, None
        for _ in range(HANG_PAD_TRIES):
            if again is None:
                break  # the budget ended: nothing more can be run
            found = longest_repeat(candidate.text, min_count=4)
            if found is None:
                break
            start, unit, count = found
            text = candidate.text[:start] + unit * (count * (HANG_PAD - 1)) + candidate.text[start:]
            candidate = dataclasses.replace(sample, text=text, calls=None, recipe=None, truth_known=False,
                                            description="reduced as text, repetition kept clear of the timeout")
            again, held = hangs(candidate)
            if held:
                padded = candidate
                break
        if padded is not None:
            return padded, again, (f"its repeated run made longer, so that it hangs given {margin_s:g} s "
                                   "(twice the timeout) as well")
        if again is None:
            return sample, outcome, f"not checked with margin: no time was left to run it with a {margin_s:g} s timeout"
        finished = f"it ended ({again.kind}) after {again.elapsed:.2f} s" if again.kind != "hung" else "it hung elsewhere"
        return sample, outcome, (f"no margin: given {margin_s:g} s (twice the timeout) {finished}; replay counts it "
                                 "fixed only when it finishes well inside the timeout")

    def _with_margin(self, sample: Sample, outcome: Any, keeps: Callable[[Sample, Any], bool]) -> tuple:
        """A RecursionError input shrunk to the least nesting that still fails sits exactly at the
        recursion limit: one frame more or less where it runs (a trace function's, a deeper
        caller's) and it passes, and a corpus entry of it passes or fails by chance. Its longest
        run of a repeated unit (the nesting) gets RECURSION_MARGIN more repetitions, kept when it
        still fails the same way."""
        found = longest_repeat(sample.text)
        if found is None:
            return sample, outcome
        start, unit, count = found
        text = sample.text[:start] + unit * max(RECURSION_MARGIN, count // 10) + sample.text[start:]
        padded = dataclasses.replace(sample, text=text, calls=None, recipe=None, truth_known=False,
                                     description="reduced as text, nesting kept clear of the recursion limit")
        (again,) = self._run([text])
        return (padded, again) if again is not None and keeps(padded, again) else (sample, outcome)


#: Repetitions of the nesting added above the least that fails (see FindingShrinker._with_margin).
RECURSION_MARGIN = 50
#: How many times longer a hang's repeated run is made when it does not hang at the margin, and
#: how many times that is tried.
HANG_PAD = 4
HANG_PAD_TRIES = 2


__all__ = ["FindingShrinker", "Shrunk", "regenerate", "shrink_structured", "size_key"]
