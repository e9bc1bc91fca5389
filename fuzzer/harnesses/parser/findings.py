"""Findings of the parser harness: one per signature, with the input that first showed it, its
minimized form, and everything a report says about it.

What a finding *says* — its title, ``why`` and ``exception`` — always describes the input it
shows: after shrinking, :meth:`Finding.adopt_minimized` re-judges the minimized input and takes
those words from it, so a report never prints "2 call(s) returned, 3 written" beside an input
that writes one call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from corpus.signature import format_less, format_specific, retitled_path
from fuzzer.harnesses.parser.outcome import describe_outcome
from fuzzer.harnesses.parser.reproduce import (Expected, command_for, expected_of, file_command, needs_file, reproducer_document,
                              reproducer_path)
from fuzzer.engine.results import ShrunkFinding, shown


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-safe copy of a target's return: non-finite floats become strings, depth is bounded."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    if depth > 200:
        return "…"
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v, depth + 1) for v in value]
    return value


@dataclass
class Finding(ShrunkFinding):
    kind = "parser"
    first_input = "sample"

    sample: Any  # the first failing Sample (minimized: the shrunk one); verdict: a Verdict
    outcome: Any  # its Outcome
    minimized_outcome: Any = None
    #: True only when shrinking ran to a local minimum (not stopped by its budget).
    shrink_complete: bool = False
    target: str = ""
    level: str = "parse"
    reject_on: tuple = ()
    reproduce_dir: Optional[str] = None
    #: For the slow verdict: the measured growth (fuzzer.harnesses.parser.explore.Growth).
    growth: Any = None
    #: For the hang verdict: the timeout it did not finish within (its reproducer runs it so).
    timeout: Optional[float] = None
    #: A crash's formatted traceback, when the outcomes it keeps came without one (a worker sends
    #: it for the first crash at a place; confirming runs the input in a fresh worker, which does).
    traceback: Optional[str] = None
    #: The signature the oracle gives this failure's inputs, when the finding was re-keyed by
    #: where it happened (a path or history signature): shrinking keeps this one.
    match_id: Optional[str] = None
    #: The formats a rejection was seen in for one reason (fuzzer.harnesses.parser.across_formats): the first
    #: one's, then each shown to fail the same way.
    formats: list = field(default_factory=list)
    #: The variants of valid outputs (``hermes (prose)``, ``hermes (reasoning)``) a rejection was
    #: seen in, first seen first: one anchored regex fails both, one finding that names both.
    variants: list = field(default_factory=list)
    #: No single character of a string value, no element of a list or object of the shown input
    #: (no token or character of its text, for a text-carried verdict) can be removed and the
    #: signature still hold: shrinking checked each (None: not known — not shrunk, or stopped).
    one_minimal: Optional[bool] = None

    @property
    def oracle_id(self) -> str:
        """The signature id an input must get from the oracle to show this finding."""
        return self.match_id or self.signature.id

    # -- what the finding shows (best: ShrunkFinding) ---------------------------------------------
    best_outcome = shown("outcome")

    @property
    def exception(self) -> Optional[str]:
        """What the shown input raised. None for a slow finding: what it shows is time, and the
        ValueError its short input was rejected with said nothing about what is slow."""
        if self.verdict.value == "slow":
            return None
        return describe_outcome(self.best_outcome)

    @property
    def title(self) -> str:
        """The signature's title; a rejection keyed without its format names the formats it was
        seen in ("valid fenced, deepseek outputs rejected ..."), and so does one keyed with its
        format that another format joined."""
        title = self.signature.title
        if self.formats and format_less(self.signature):
            shown = ", ".join(self.formats)
            title = title.replace("valid output rejected", f"valid {shown} output{'s' if len(self.formats) > 1 else ''} "
                                  "rejected", 1)
        elif len(self.formats) > 1 and format_specific(self.signature):  # a later format joined a split
            first = self.signature.key.split("|")[1]
            title = title.replace(f"valid {first} output rejected", f"valid {', '.join(self.formats)} outputs rejected",
                                  1)
        return title

    @property
    def is_minimized(self) -> bool:
        """Shrunk to a local minimum, not merely shrunk: a search its budget stopped is "not minimized"."""
        return self.shrink_complete

    @property
    def history_dependent(self) -> bool:
        return bool(self.history)

    def adopt_minimized(self, sample: Any, outcome: Any, oracle: Any, *, complete: bool, note: str = "",
                        one_minimal: Optional[bool] = None) -> None:
        """Take ``sample`` as the shown input and re-derive the words from it."""
        self.minimized, self.minimized_outcome = sample, outcome
        self.shrink_complete, self.shrink_note, self.one_minimal = complete, note, one_minimal
        judgment = oracle.judge(sample, outcome)
        # A nondeterminism finding's words are about two runs, not the one outcome kept here (the
        # oracle would call "no call" a false_reject): only a judgment of its own verdict re-words it.
        if judgment.failed and judgment.verdict is self.verdict:
            self.reason = judgment.reason
            fresh = oracle.signature(sample, judgment, outcome)
            if fresh.id == self.signature.id:
                self.signature = fresh  # same bug; the title now speaks of this input
            elif fresh.id == self.match_id and "|path|" in self.signature.key:
                from fuzzer.harnesses.parser.damage import coarse_damage

                # filed by where it happened: keep that key, take the words from this input
                self.signature = retitled_path(self.signature, coarse_damage(judgment.key, judgment.reason)[1])

    # -- reproduce -------------------------------------------------------------------------------
    @property
    def reproduce(self) -> str:
        if self.needs_reproducer_file:
            return file_command(reproducer_path(self.reproduce_dir, self.signature.id))
        return command_for(target=self.target, text=self.best.text, history=self.history,
                           reproduce_dir=self.reproduce_dir, signature=self.signature.id, expected=self.expected,
                           reject_on=self.reject_on)

    @property
    def expected(self) -> Optional[Expected]:
        """What the shown input must make the target do once fixed, when the verdict depends on
        the ground truth (its reproduce command checks it: exit 1 while it still fails)."""
        return expected_of(self.verdict.value, self.best, self.level)

    @property
    def _timed(self) -> bool:
        """A slow or hang finding: what it shows is time, which running the input once in a
        plain ``python -c`` does not show (a millisecond; or no end at all)."""
        return self.growth is not None or (self.verdict.value == "hang" and self.timeout is not None)

    @property
    def needs_reproducer_file(self) -> bool:
        """Slow and hang findings always have one: it times the repetitions (as replay does), or
        runs the input in a worker under the campaign's timeout and says where it is stuck."""
        return self.reproduce_dir is not None and (self._timed or needs_file(self.best.text, self.history))

    def reproducer(self) -> dict[str, Any]:
        growth = self._scenario().get("growth") if self.growth is not None else None
        return reproducer_document(target=self.target, text=self.best.text, history=self.history,
                                   reject_on=self.reject_on, signature=self.signature.id, title=self.title,
                                   growth=growth, hang_timeout=self.timeout if self.verdict.value == "hang" else None,
                                   expected=self.expected)

    def location(self) -> Optional[tuple[str, str]]:
        """(path, function) of the innermost frame in the user's code where it failed, if known
        (for SARIF: GitHub shows the finding on that line's file)."""
        from fuzzer.harnesses.parser.harness import user_location

        outcome = self.best_outcome
        frames = getattr(outcome, "frames", None) or getattr(self.outcome, "frames", None)
        if not frames and getattr(outcome, "unsafe", None):
            frames = outcome.unsafe[0][2]
        return user_location(self.target, frames) if frames else None

    # -- reports and the corpus ------------------------------------------------------------------
    def to_report(self) -> dict[str, Any]:
        sample, best = self.sample, self.best
        outcome = self.best_outcome
        report = {
            "signature": self.signature.id,
            "title": self.title,
            "verdict": self.verdict.value,
            "anomaly_class": sample.anomaly_class,
            "operator": sample.operator,
            "format": sample.format,
            "tool": sample.tool,
            "input": sample.text,
            "minimized_input": best.text,
            "minimized": self.shrink_complete,
            "one_minimal": self.one_minimal,
            "formats": list(self.formats) or [sample.format],
            "variants": list(self.variants),
            "exception": self.exception,
            # the crash's traceback as Python printed it: the first input that crashed at that
            # place carries it (the shown input crashes at the same place: same signature)
            "traceback": getattr(outcome, "traceback", None) or self.traceback
                         or getattr(self.outcome, "traceback", None),
            "reason": self.reason,
            "truth": best.calls if best.truth_known else None,
            "returned": jsonable(outcome.calls) if outcome is not None and outcome.kind == "returned" else None,
            "count": self.count,
            "recipe": best.recipe.to_json() if getattr(best, "recipe", None) is not None else None,
            "reproduce": self.reproduce,
            "found_at_s": round(self.found_at_s, 3),
            "frames": [list(f) for f in (getattr(outcome, "frames", None) or ())],
            "history": list(self.history),
            "note": self.shrink_note,
            # the oracle's own signature of the input, when the finding is filed by where it
            # happened (the functions a corruption ran, or "history")
            "oracle_signature": self.match_id,
        }
        location = self.location()
        report["location"] = {"file": location[0], "function": location[1]} if location else None
        if self.growth is not None:
            g = self.growth
            report["growth"] = {"exponent": round(g.exponent, 2), "fragment": g.fragment,
                                "sizes": [len(g.text(c)) for c in g.counts],
                                "seconds": [round(t, 5) for t in g.seconds]}
        return report

    def _scenario(self) -> Optional[dict]:
        """What replaying needs beyond the text: earlier inputs, or how a slow input grows."""
        scenario: dict = {}
        if self.history:
            scenario["history"] = list(self.history)
        if self.growth is not None:
            g = self.growth
            scenario["growth"] = {"prefix": g.prefix, "fragment": g.fragment, "suffix": g.suffix,
                                  "count": g.counts[0], "exponent": round(g.exponent, 2)}
        if self.match_id:
            scenario["match"] = self.match_id
        if self.verdict.value == "hang" and getattr(self.best_outcome, "frames", None):
            # the stack it was stuck in: replay calls a hang caught one helper deeper the same one
            scenario["frames"] = [list(f) for f in self.best_outcome.frames]
        return scenario or None

    def to_entry(self, *, target: str, version: Optional[str] = None) -> Any:
        from corpus.store import Entry

        best = self.best
        return Entry(text=best.text, signature=self.signature.id, verdict=self.verdict.value, title=self.title,
                     tool=best.tool or None, format=best.format, anomaly_class=best.anomaly_class,
                     operator=best.operator, exception=self.exception, what=self.signature.what,
                     calls=best.calls if best.truth_known else None,
                     recipe=best.recipe.to_json() if best.recipe is not None else None,
                     truth_known=best.truth_known, target=target, target_version=version, level=self.level,
                     scenario=self._scenario(),
                     minimized=self.shrink_complete, one_minimal=self.one_minimal,
                     formats=list(self.formats) or None)


__all__ = ["Finding", "jsonable"]
