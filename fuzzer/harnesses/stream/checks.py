"""The oracles of the stream harness: what one stream's folded events are judged against.

Each check reads a :class:`Judged` (the stream case: its output, split, truth, content and
markers; what the parser did: events per step or the exception it raised; and the folded result)
and returns at most one :class:`Violation`. Checks are registered in :data:`CHECKS` under their
verdict names, the words of the CLI, the reports and the corpus:

======================  ==========================================================================
``corruption``          the folded calls differ from the truth (names; arguments as JSON values,
                        types kept), or the content does
``content_whitespace``  the content differs from the truth only in whitespace (a lesser finding)
``truncation``          an output cut mid-call gave a complete-looking call
``event_grammar``       a call started twice, without a name or id, out of index order, or
                        arguments for a call never started or already ended
``not_append_only``     a call's arguments were complete JSON at one step and more was appended
                        later: a client that acted on them acted on a value the stream took back
``leakage``             a marker, or a fragment of one, in content, names or arguments where
                        the truth has none
``held_back``           content held back longer than the longest marker before any call, or
                        never released by ``finish()`` (nor the last call's tail)
``crash``               ``feed`` or ``finish`` raised
======================  ==========================================================================

``split_variance`` (two splits of one output, different results), ``nondeterminism`` (one split
run twice, different results), ``hang``, ``slow`` are judged over several runs: :func:`variance`,
the worker and the job. Signatures (:mod:`corpus.signature`) never hold line numbers or input
values: a corruption is keyed by the kind of damage, the others by the promise broken and how.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from corpus.signature import Signature, crash_signature, verdict_signature
from fuzzer.harnesses.stream.fold import NOT_JSON, Folded, fold
from strategies.json_values import json_equal
from fuzzer.engine.verdicts import verdict
from strategies.registry import Registry

#: Characters that make a piece of a marker recognisable as one (prose never holds them).
_MARKER_CHARS = frozenset("<>[]|｜")
#: A marker fragment shorter than this is not told apart from prose.
MIN_FRAGMENT = 3


@dataclass(frozen=True)
class Violation:
    """One broken promise in one stream."""

    verdict: str
    signature: Signature
    reason: str


@dataclass
class StreamCase:
    """One output and one split of it, with everything known about the output.

    ``truth``: the calls the output denotes, None when it denotes no faithful call (cut
    mid-call), and unknown (``truth_known`` False) for outputs judged only for robustness and
    split invariance. ``content``: the text meant for the user, None when not known."""

    text: str
    cuts: tuple = ()
    family: str = "whole"
    format: str = "raw"
    truth: Optional[list] = None
    content: Optional[str] = None
    markers: tuple = ()
    truth_known: bool = True
    anomaly_class: Optional[str] = None
    operator: Optional[str] = None
    tool: str = ""
    #: ``Recipe.to_json()`` of the generated output (shrinking replays edited choices), or None
    recipe: Optional[dict] = None


@dataclass
class Run:
    """What the parser did with one stream: the normalized events of each ``feed`` and of
    ``finish()``, or the exception it raised (``error``: type, message, frames, step) and the
    seconds each step took."""

    steps: list = field(default_factory=list)
    finish: list = field(default_factory=list)
    error: Optional[tuple] = None
    times: list = field(default_factory=list)
    #: set by the worker when a step returned something of no known shape
    contract: Optional[str] = None


@dataclass
class Judged:
    case: StreamCase
    run: Run
    folded: Folded

    @functools.cached_property
    def content_change(self) -> Optional[str]:
        """How the streamed content differs from the truth's (:func:`content_change`): worked out
        once, the one answer the three checks that read it share."""
        return content_change(self.folded.content, self.case.content)


@dataclass(frozen=True)
class Check:
    name: str
    description: str
    function: Callable[[Judged], Optional[Violation]]


CHECKS: Registry[Check] = Registry("stream check")
#: The verdicts that depend on the output's truth: shrinking keeps it by shrinking the output's
#: choices (the truth recomputed by construction), never its text.
TRUTH_VERDICTS = frozenset({"corruption", "content_whitespace", "truncation", "held_back"})


def check(name: str) -> Callable:
    """Register a check under its verdict name; its docstring's first line describes it, in the
    engine's one verdict registry too (the words of every report)."""

    def register(function: Callable) -> Callable:
        doc = (function.__doc__ or name).strip().splitlines()[0]
        CHECKS.register(name, Check(name, doc, function), module=function.__module__)
        verdict(name, f"Streaming: {doc[:1].lower()}{doc[1:]}", harness="stream", truth=name in TRUTH_VERDICTS,
                module=function.__module__)
        return function

    return register


# The verdicts judged over several runs, or from how a worker ended (see the module docstring).
verdict("split_variance", "Streaming: two splits of one output gave different calls, content or reasoning "
        "(shown with the split of fewest cuts).", harness="stream", module=__name__)
verdict("nondeterminism", "Streaming: the same stream, run twice, gave different results.", harness="stream",
        module=__name__)
verdict("crash", "Streaming: feed(), finish() or the accumulator raised, or the worker process died.",
        harness="stream", movable=True, module=__name__)
verdict("hang", "Streaming: a stream did not finish within --timeout seconds.", harness="stream", timed=True,
        module=__name__)
verdict("slow", "Streaming: the time a stream takes grows faster than linearly with the output's length "
        "(one character per delta).", harness="stream", timed=True, module=__name__)


def violation(verdict: str, key: str, what: str, reason: str) -> Violation:
    return Violation(verdict, verdict_signature(verdict, anomaly_class=None, operator=None, format=None,
                                                key=f"stream|{key}", what=what), reason)


def judge(case: StreamCase, run: Run) -> list:
    """Every violation of one stream, one per check at most, in registry order."""
    if run.error is not None:
        exception, message, frames, step = run.error
        where = "finish()" if step >= len(deltas_of(case)) else f"feed() of delta {step}"
        return [Violation("crash", crash_signature(exception=exception, frames=frames, message=message, text=case.text),
                          f"{exception}: {message} (in {where})")]
    judged = Judged(case, run, fold(run.steps, run.finish))
    found = []
    for item in CHECKS.values():
        found_one = item.function(judged)
        if found_one is not None:
            found.append(found_one)
    return found


def deltas_of(case: StreamCase) -> list:
    from fuzzer.harnesses.stream.splits import deltas

    return deltas(case.text, case.cuts)


# -- the checks ----------------------------------------------------------------------------------


@check("truncation")
def _truncation(j: Judged) -> Optional[Violation]:
    """A stream cut mid-call gave a complete-looking call."""
    case = j.case
    if not case.truth_known or (case.truth is not None and case.anomaly_class != "truncated_output"):
        return None
    extra = j.folded.calls[len(case.truth or ()):]
    complete = [c for c in extra if c["name"] and isinstance(c["arguments"], dict)]
    if not complete:
        return None
    return violation("truncation", "complete-call", "a stream cut mid-call gave a complete-looking call",
                     f"the output stops mid-call, yet {len(complete)} call(s) came out whole: "
                     f"{_compact(complete)}")


@check("corruption")
def _corruption(j: Judged) -> Optional[Violation]:
    """The folded calls (or content) differ from the truth."""
    from fuzzer.harnesses.parser.damage import coarse_damage, corruption_key

    case, folded = j.case, j.folded
    calls = folded.calls
    if case.anomaly_class is not None and case.truth and (rejected(j.run) or not calls):
        return None  # the calls of an anomalous output may always be declined: refused, or none streamed,
        # as the parser's oracle allows (an anomaly with calls carries no content truth)
    if case.anomaly_class == "truncated_output" and case.truth is not None:
        calls = calls[:len(case.truth)]  # a whole-looking cut call is truncation's finding
    if case.truth_known and case.truth is not None and not json_equal(calls, case.truth):
        if any(isinstance(c["arguments"], str) and c["arguments"].startswith(NOT_JSON) for c in calls):
            kind, words = "arguments:not-json", "the streamed arguments are not JSON"
        else:
            kind, words = coarse_damage(*corruption_key(case.truth, folded.calls))
        return violation("corruption", f"calls|{kind}", words,
                         f"{words}: expected {_compact(case.truth)}, streamed {_compact(calls)}")
    words = j.content_change
    if words in ("content lost", "content altered"):
        return violation("corruption", f"content|{words}", words,
                         f"{words}: expected {case.content!r:.200}, streamed {folded.content!r:.200}")
    return None


@check("content_whitespace")
def _content_whitespace(j: Judged) -> Optional[Violation]:
    """The content differs from the truth only in whitespace (a lesser finding)."""
    if j.content_change != "whitespace":
        return None
    case, folded = j.case, j.folded
    return violation("content_whitespace", "content-whitespace", "the content differs in whitespace only",
                     f"expected {case.content!r:.200}, streamed {folded.content!r:.200}")


@check("event_grammar")
def _grammar(j: Judged) -> Optional[Violation]:
    """A call started twice, without a name or id, out of order, or arguments out of place."""
    if not j.folded.grammar or j.case.format == "chunks":  # an accumulator returns calls, not events
        return None
    kind, step, words = j.folded.grammar[0]
    return violation("event_grammar", f"grammar|{kind}", _GRAMMAR_WORDS.get(kind, kind), f"{words} (step {step})")


_GRAMMAR_WORDS = {"restart": "a call was started twice (name or id emitted again)",
                  "index": "call indices are not dense from 0 and in order",
                  "noname": "a call started without a name", "noid": "a call started without an id",
                  "orphan": "arguments for a call never started", "after_end": "arguments after the call ended",
                  "orphan_end": "a call ended that never started", "end_twice": "a call ended twice"}


@check("not_append_only")
def _append_only(j: Judged) -> Optional[Violation]:
    """A call's arguments were complete JSON at one step, then more was appended."""
    if not j.folded.reopened:
        return None
    index, step = j.folded.reopened[0]
    return violation("not_append_only", "arguments-reopened",
                     "arguments streamed as complete JSON, then appended to",
                     f"call {index}'s arguments were a complete JSON object after step {step}, then more "
                     f"was streamed: {j.folded.raw_arguments[index]!r:.200}")


@check("leakage")
def _leakage(j: Judged) -> Optional[Violation]:
    """A marker or a fragment of one in content, names or arguments."""
    case, folded = j.case, j.folded
    if not case.markers:
        return None
    truth_calls = case.truth if case.truth_known and case.truth is not None else None
    places = []
    if case.content is not None:
        places.append(("content", folded.content, case.content))
    if truth_calls is not None:
        calls = folded.calls
        if case.anomaly_class == "truncated_output":
            calls = calls[:len(truth_calls)]  # the cut call's text may hold a marker inside a string
        truth_names = " ".join(str(c.get("name")) for c in truth_calls)
        truth_args = json.dumps([c.get("arguments") for c in truth_calls], ensure_ascii=False)
        places.append(("names", " ".join(c["name"] for c in calls), truth_names))
        places.append(("arguments", json.dumps([c["arguments"] for c in calls], ensure_ascii=False), truth_args))
    for where, got, allowed in places:
        for fragment in fragments(case.markers):
            if fragment in got and fragment not in allowed:
                whole = fragment in case.markers
                what = f"a marker in {where}" if whole else f"a marker fragment in {where}"
                return violation("leakage", f"{where}|{'marker' if whole else 'fragment'}", what,
                                 f"{fragment!r} in the streamed {where}: {got!r:.200}")
    return None


@check("held_back")
def _held_back(j: Judged) -> Optional[Violation]:
    """Content held back longer than the longest marker, or not released by finish()."""
    case, folded = j.case, j.folded
    if case.content is None:
        return None
    if j.content_change == "held back":
        return violation("held_back", "finish", "finish() did not release held-back content",
                         f"{len(case.content) - len(folded.content)} character(s) of content never came: "
                         f"{case.content[len(folded.content):]!r:.120}")
    if not case.markers:
        return None
    longest = max(len(m) for m in case.markers)
    from fuzzer.harnesses.stream.splits import marker_spans

    spans = marker_spans(case.text, case.markers)
    first = spans[0][0] if spans else len(case.text)
    if not case.content.startswith(case.text[:first]):
        return None
    fed = 0
    for step, part in enumerate(deltas_of(case)):
        fed += len(part)
        if folded.first_start is not None and step >= folded.first_start:
            break
        safe = len(case.text[:min(fed, first)].rstrip())
        if step < len(folded.content_after) and folded.content_after[step] < safe - longest:
            return violation("held_back", "before-call", "content held back longer than the longest marker",
                             f"after {fed} characters fed, {folded.content_after[step]} of content came out; "
                             f"{safe} were plain text (longest marker: {longest})")
    return None


# -- over several runs ---------------------------------------------------------------------------


def variance(case: StreamCase, run: Run, whole: Run) -> Optional[Violation]:
    """``split_variance``: this split's result differs from the whole output's (judged where
    the truth cannot say which is right)."""
    if run.error is not None or whole.error is not None:
        return None
    mine, theirs = fold(run.steps, run.finish), fold(whole.steps, whole.finish)
    if mine.result() == theirs.result():
        return None
    part = "calls" if mine.result()[0] != theirs.result()[0] else "content" if mine.content != theirs.content \
        else "reasoning"
    return violation("split_variance", f"variance|{part}", f"the {part} depend on where the stream is split",
                     f"whole: {_compact(theirs.calls) if part == 'calls' else repr(theirs.content)[:150]}; "
                     f"split: {_compact(mine.calls) if part == 'calls' else repr(mine.content)[:150]}")


def nondeterminism(first: Run, second: Run) -> Optional[Violation]:
    """The same stream, run twice, gave different results."""
    a = fold(first.steps, first.finish).result() if first.error is None else ("raised", first.error[0])
    b = fold(second.steps, second.finish).result() if second.error is None else ("raised", second.error[0])
    if a == b:
        return None
    return violation("nondeterminism", "rerun", "the same stream gave another result when run again",
                     f"first: {str(a)[:150]}; again: {str(b)[:150]}")


def violations_of(case: StreamCase, run: Run, whole: Optional[Run] = None) -> list:
    """Every violation of one stream: the checks' (:func:`judge`), and its variance from
    ``whole`` (the same output streamed whole) where the truth cannot say which is right."""
    found = judge(case, run)
    if whole is not None and not case.truth_known and case.cuts:
        extra = variance(case, run, whole)
        if extra is not None:
            found.append(extra)
    return found


def fault_violation(kind: str, frames: Sequence, detail: Optional[str]) -> Violation:
    """The violation of a stream whose worker hung (``kind`` "hung": keyed by where it was stuck)
    or died (a crash keyed by how, and where)."""
    from corpus.signature import hang_signature

    if kind == "hung":
        return Violation("hang", hang_signature(frames=frames), detail or "the stream did not finish in time")
    return Violation("crash", crash_signature(exception=None, frames=frames, detail=detail),
                     f"the worker process died ({detail or 'it ended'})")


def rejected(run: Run) -> bool:
    """An accumulator refused the stream (raised ValueError): no calls, on purpose."""
    return any(event[0] == "rejected" for events in run.steps for event in events)


# -- helpers -------------------------------------------------------------------------------------


def fragments(markers: Sequence[str]) -> list:
    """Each marker, then its prefixes and suffixes of at least :data:`MIN_FRAGMENT` characters
    that hold a marker character, longest first."""
    out: dict = {}
    for marker in markers:
        out[marker] = None
        for k in range(len(marker) - 1, MIN_FRAGMENT - 1, -1):
            for piece in (marker[:k], marker[-k:]):
                if _MARKER_CHARS.intersection(piece):
                    out[piece] = None
    return sorted(out, key=lambda f: (-len(f), f))


def content_change(streamed: str, expected: Optional[str]) -> Optional[str]:
    """How the streamed content differs from the truth's, one answer for the three checks that
    read it (so a difference is one finding, never two, nor none): None (the same, or no truth
    to compare with); ``"whitespace"`` (only whitespace differs: ``content_whitespace``);
    ``"held back"`` (a prefix of it: ``held_back``); else ``"content lost"`` (what came is
    there, in order, but not all of it) or ``"content altered"`` (``corruption``)."""
    if expected is None or streamed == expected:
        return None
    if _squash(streamed) == _squash(expected):
        return "whitespace"
    if expected.startswith(streamed):
        return "held back"
    return "content lost" if _squash(streamed) in _squash(expected) else "content altered"


def _squash(text: str) -> str:
    return "".join(text.split())


def _compact(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 200 else text[:197] + "..."


__all__ = ["CHECKS", "Check", "Judged", "Run", "StreamCase", "TRUTH_VERDICTS", "Violation", "content_change",
           "fault_violation", "fragments", "judge", "nondeterminism", "variance", "violation", "violations_of"]
