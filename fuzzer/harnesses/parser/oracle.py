"""The oracle: judge what a target did with a sample (DESIGN.md, "Oracles").

| sample | acceptable outcomes | otherwise |
|---|---|---|
| valid, in a supported format | exactly the truth | false_reject (rejected / no call), corruption |
| anomaly, truth = faithful calls | exactly the truth, rejection or no call | corruption |
| anomaly, truth None | rejection or no call | corruption |
| semantic anomaly, level parse | the calls as written, rejection or no call | corruption |
| any anomaly, level validate, truth breaks the promise | rejection or no call; duplicates may be collapsed; the calls that keep the promise may be returned without the others | missed_anomaly (truth returned), corruption |
| any sample | returns, raises only declared types | hang, crash |

The validate-level promise (DESIGN.md target contract) is checked with real jsonschema validation
(:class:`~fuzzer.harnesses.parser.promise.Promise`): every call names a known tool, satisfies its
schema (formats checked), and no two calls are identical.
Deciding "must reject" from the promise — not from the class name — is what keeps the table honest
for operators whose output happens to stay valid (an injection payload in a free-text field must be
returned exactly, not rejected).

A sample without a known truth — ``format`` ``raw`` (a captured production output) or a text reduced
as text while shrinking a crash — is judged for robustness only (crash, hang, a return that is not
a call).

The promise itself is :mod:`fuzzer.harnesses.parser.promise`; what kind of damage a corruption did
(the key of its signature) is :mod:`fuzzer.harnesses.parser.damage`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from corpus.signature import (Signature, crash_signature, normalize_message, hang_signature, rejection_signature,
                              unsafe_signature, verdict_signature)
from fuzzer.engine.events import Word
from fuzzer.engine.verdicts import verdict
from fuzzer.harnesses.parser.damage import corruption_key
from fuzzer.harnesses.parser.promise import Promise, without_duplicates
from strategies._internal.sample import ANOMALY_CLASSES, json_equal
from strategies.registry import Registry

RAW_FORMAT = "raw"


class Verdict(Word):
    PASS = "pass"
    CRASH = "crash"
    HANG = "hang"
    CORRUPTION = "corruption"
    FALSE_REJECT = "false_reject"
    MISSED_ANOMALY = "missed_anomaly"
    NONDETERMINISM = "nondeterminism"
    UNSAFE = "unsafe"
    SLOW = "slow"


FAILURE_VERDICTS = [v.value for v in Verdict if v is not Verdict.PASS]

for _name, _words, _how in (
        ("crash", "The target raised an exception it does not declare as a rejection, or its process died.",
         {"movable": True}),
        ("hang", "The target did not return within the timeout.", {"timed": True}),
        ("corruption", "The target returned calls that differ from what the model output denotes.",
         {"truth": True, "movable": True}),
        ("false_reject", "The target rejected, or found no call in, a valid model output in a supported format.",
         {"truth": True, "movable": True}),
        ("missed_anomaly", "At --level validate, the target returned a call that breaks its promise "
                           "(unknown tool, schema violation, duplicate).", {"truth": True}),
        ("nondeterminism", "The same input gave different results when run again.", {"timed": True}),
        ("unsafe", "Parsing executed code or touched the system.", {}),
        ("slow", "The target's time grows super-linearly with the input size.", {"timed": True})):
    verdict(_name, _words, harness="parser", module=__name__, **_how)
#: Verdicts whose input alone carries the failure, so the text may be shrunk as text.
TEXT_CARRIED = {Verdict.CRASH, Verdict.HANG, Verdict.NONDETERMINISM, Verdict.UNSAFE, Verdict.SLOW}


@dataclass(frozen=True)
class Judgment:
    verdict: Verdict
    reason: str = ""
    #: What went wrong, as a stable key (see :func:`corruption_key`); None = class and operator.
    key: Optional[str] = None
    #: The registered check that decided (its signature rule keys the finding).
    check: str = ""

    @property
    def failed(self) -> bool:
        return self.verdict is not Verdict.PASS


PASS = Judgment(Verdict.PASS)


def calls_equal(a: Sequence[dict], b: Sequence[dict]) -> bool:
    return json_equal(list(a), list(b))


def _is_subsequence(part: Sequence[dict], whole: Sequence[dict]) -> bool:
    it = iter(whole)
    return all(any(json_equal(p, w) for w in it) for p in part)


@dataclass(frozen=True)
class Check:
    """One row of the oracle table: ``judge(ctx) -> Judgment | None`` (None: not this check's
    business, ask the next one) and ``signature(ctx, judgment) -> Signature``, the rule that says
    two of its failures are the same bug. Checks run in registration order; the first answer wins."""

    name: str
    judge: Callable[["Case"], Optional[Judgment]]
    signature: Optional[Callable[["Case", Judgment], Signature]] = None


#: The oracle's checks. A new verdict is a new check (and its signature rule), not a new branch.
CHECKS: Registry[Check] = Registry("check")


def check(name: str, *, signature: Optional[Callable[["Case", Judgment], Signature]] = None) -> Callable:
    """Register ``judge`` as the check ``name`` (decorator)."""

    def register(judge: Callable[["Case"], Optional[Judgment]]) -> Callable:
        CHECKS.register(name, Check(name, judge, signature), module=judge.__module__)
        return judge

    return register


@dataclass
class Case:
    """What a check looks at: the sample, the outcome, the level and the validate-level promise."""

    sample: Any
    outcome: Any
    level: str
    promise: "Promise"
    #: Key the failure as signatures were keyed before they left out what a message copies of
    #: the input and the format of a rejection (:meth:`Oracle.legacy_signature`).
    legacy: bool = False

    @property
    def declined(self) -> bool:
        return self.outcome.kind == "rejected" or not self.outcome.calls

    @property
    def returned(self) -> list:
        return self.outcome.calls or []


def _judged(check_name: str, verdict: Verdict, reason: str, key: Optional[str] = None) -> Judgment:
    return Judgment(verdict, reason, key=key, check=check_name)


def _verdict_signature(case: Case, judgment: Judgment) -> Signature:
    s = case.sample
    if judgment.verdict is Verdict.NONDETERMINISM:
        # keyed by what differed between the runs (:func:`rerun_judgment`), not by the input's
        # class: one target answering at random is one bug, not one per kind of input it met
        # (legacy: by the class, as corpus entries of before were filed)
        key = None if case.legacy else judgment.key
        return verdict_signature(judgment.verdict.value, anomaly_class=s.anomaly_class, operator=s.operator,
                                 format=s.format, key=key)
    return verdict_signature(judgment.verdict.value, anomaly_class=s.anomaly_class, operator=s.operator,
                             format=s.format, key=judgment.key, what=judgment.reason if judgment.key else None)


def _crash_signature(case: Case, judgment: Judgment) -> Signature:
    o = case.outcome
    return crash_signature(exception=o.exception, frames=o.frames or (), detail=o.detail, message=o.message,
                           text=None if case.legacy else case.sample.text)


def _hang_signature(case: Case, judgment: Judgment) -> Signature:
    if case.outcome.frames:
        return hang_signature(frames=case.outcome.frames)
    return _verdict_signature(case, judgment)


def _rejection_signature(case: Case, judgment: Judgment) -> Signature:
    o = case.outcome
    rejected = o.kind == "rejected"
    # keyed by the format, not the variant (its reason names the variant: "a valid hermes (several
    # calls) output"): a signature must be computed again from what a corpus entry or a diff report
    # keeps, and the prose and reasoning a variant is told by are not kept there
    return rejection_signature(format=case.sample.format, exception=o.exception if rejected else None,
                               message=o.message if rejected else None, frames=o.frames if rejected else (),
                               text=None if case.legacy else case.sample.text, by_format=case.legacy)


def _unsafe_signature(case: Case, judgment: Judgment) -> Signature:
    event, _words, frames = case.outcome.unsafe[0]
    return unsafe_signature(event=event, frames=frames)


@check("unsafe", signature=_unsafe_signature)
def _unsafe(case: Case) -> Optional[Judgment]:
    """Executed code it was given, or touched the system (processes, files, network) while parsing."""
    if case.outcome.unsafe:
        event, words, _frames = case.outcome.unsafe[0]
        return _judged("unsafe", Verdict.UNSAFE, f"the target {words} while parsing ({event})")
    return None


@check("crash", signature=_crash_signature)
def _crash(case: Case) -> Optional[Judgment]:
    """Raised an undeclared exception, or the process died."""
    if case.outcome.kind in ("raised", "died"):
        return _judged("crash", Verdict.CRASH, _describe_crash(case.outcome))
    return None


@check("hang", signature=_hang_signature)
def _hang(case: Case) -> Optional[Judgment]:
    """No answer within the timeout."""
    if case.outcome.kind == "hung":
        return _judged("hang", Verdict.HANG, case.outcome.detail or "no result within the timeout")
    return None


def _not_a_call_problem(message: Optional[str]) -> str:
    """Which part of the call is wrong, without the type it had ("name is NoneType" and "name is
    dict" are one bug; "arguments is list" another) or the detail in parentheses."""
    problem = normalize_message((message or "").split(" (", 1)[0])
    return re.sub(r"\bis (?!not\b)[A-Za-z_][\w.]*", "is <type>", problem)


@check("not_a_call", signature=_verdict_signature)
def _not_a_call(case: Case) -> Optional[Judgment]:
    """Returned something the target contract does not allow (a string, a set, a generator...)."""
    if case.outcome.kind == "invalid":
        # keyed by what is wrong with it (a name that is None, arguments that are a list): two
        # different ways of returning garbage are two bugs; the detail in parentheses (why an
        # arguments string is not JSON) is the input's, not the bug's
        return _judged("not_a_call", Verdict.CORRUPTION,
                       f"returned something that is not a call: {case.outcome.message}",
                       key=f"not-a-call:{_not_a_call_problem(case.outcome.message)}")
    return None


@check("robustness_only")
def _robustness_only(case: Case) -> Optional[Judgment]:
    """No known truth (a captured output, a text reduced as text): only robustness is judged."""
    if case.sample.format == RAW_FORMAT or not case.sample.truth_known:
        return PASS
    return None


@check("false_reject", signature=_rejection_signature)
def _false_reject(case: Case) -> Optional[Judgment]:
    """A valid output in a supported format was rejected, or no call was returned."""
    if case.sample.anomaly_class is None and case.declined:
        o = case.outcome
        what = f"rejected it ({o.exception}: {_first_line(o.message)})" if o.kind == "rejected" else "returned no call"
        return _judged("false_reject", Verdict.FALSE_REJECT, f"a valid {case.sample.variant} output: the target {what}")
    return None


@check("exact", signature=_verdict_signature)
def _exact(case: Case) -> Optional[Judgment]:
    """A valid output must come back exactly as its truth."""
    if case.sample.anomaly_class is None:
        return PASS if calls_equal(case.returned, case.sample.calls) else _corruption(case.sample.calls, case.returned)
    return None


@check("declined")
def _declined(case: Case) -> Optional[Judgment]:
    """An anomalous output may always be rejected (or answered with no call)."""
    return PASS if case.declined else None


@check("no_faithful_call", signature=_verdict_signature)
def _no_faithful_call(case: Case) -> Optional[Judgment]:
    """An output that denotes no faithful call (truncated mid-value, garbage) must not yield calls."""
    if case.sample.calls is None:
        cls = ANOMALY_CLASSES.get(case.sample.anomaly_class)
        return _judged("no_faithful_call", Verdict.CORRUPTION,
                       f"the output denotes no faithful call ({case.sample.anomaly_class}), yet the target returned calls",
                       key=f"accepted:{cls.name}" if cls is not None and cls.one_bug else None)
    return None


@check("missed_anomaly", signature=_verdict_signature)
def _missed_anomaly(case: Case) -> Optional[Judgment]:
    """--level validate: calls that break the promise must be rejected (duplicates may be collapsed;
    of several calls, the ones that keep the promise may be returned without the others)."""
    if case.level != "validate":
        return None
    truth, returned, promise = case.sample.calls, case.returned, case.promise
    problem = promise.problem_key(truth)
    if problem is None:
        return None
    if calls_equal(returned, truth):
        return _judged("missed_anomaly", Verdict.MISSED_ANOMALY,
                       f"returned the calls as written despite {problem[1]}", key=problem[0])
    if case.sample.anomaly_class == "duplicate_call" and calls_equal(returned, without_duplicates(truth)):
        return PASS
    keeping = [c for c in truth if promise.call_ok(c)]
    if promise.problem(returned) is None and _is_subsequence(returned, keeping):
        return PASS
    return _corruption(truth, returned)


@check("as_written", signature=_verdict_signature)
def _as_written(case: Case) -> Optional[Judgment]:
    """Otherwise the calls as written (faithful repairs, semantic anomalies at parse level)."""
    truth = case.sample.calls
    return PASS if calls_equal(case.returned, truth) else _corruption(truth, case.returned)


class Oracle:
    """Judges (sample, outcome) at a level ("parse" or "validate") by running :data:`CHECKS`."""

    def __init__(self, registry: Any, level: str = "parse", *, cached: bool = True):
        if level not in ("parse", "validate"):
            raise ValueError(f"unknown level {level!r}")
        self.level = level
        self.registry = registry
        self.promise = Promise(registry, cached=cached)
        # the checks in registration order, read once: judging runs once per execution
        self._judges = tuple(item.judge for item in CHECKS.values())

    def judge(self, sample: Any, outcome: Any) -> Judgment:
        case = Case(sample, outcome, self.level, self.promise)
        for judge in self._judges:
            judgment = judge(case)
            if judgment is not None:
                return judgment
        return PASS

    def signature(self, sample: Any, judgment: Judgment, outcome: Any) -> Signature:
        case = Case(sample, outcome, self.level, self.promise)
        rule = CHECKS[judgment.check].signature if judgment.check in CHECKS else None
        return (rule or _verdict_signature)(case, judgment)

    def legacy_signature(self, sample: Any, judgment: Judgment, outcome: Any) -> Signature:
        """The signature this failure had before keys left out the text a message copies from the
        input and a rejection's format: what a corpus entry stored then is filed under. Replay
        tells such an entry, failing exactly as it was filed, from a changed failure by it
        (:func:`fuzzer.harnesses.parser.harness.replay_entries`)."""
        case = Case(sample, outcome, self.level, self.promise, legacy=True)
        rule = CHECKS[judgment.check].signature if judgment.check in CHECKS else None
        return (rule or _verdict_signature)(case, judgment)


def _first_line(message: Optional[str]) -> str:
    lines = (message or "").strip().splitlines()
    return lines[0][:200] if lines else ""


def _corruption(truth: Sequence[dict], returned: Sequence[dict]) -> Judgment:
    key, words = corruption_key(truth, returned)
    return Judgment(Verdict.CORRUPTION, words, key=key, check="as_written")


def _describe_crash(outcome: Any) -> str:
    from fuzzer.harnesses.parser.outcome import describe_outcome

    return describe_outcome(outcome) or "the target process died"


def outcome_fingerprint(outcome: Any) -> tuple:
    """What must be the same when the same input runs twice (nondeterminism check).

    A hang is left out: a re-run that finishes is timing, not a different answer.
    """
    kind = outcome.kind
    if kind == "returned":
        import json

        return (kind, json.dumps(outcome.calls, sort_keys=True, default=repr))
    if kind in ("rejected", "raised"):
        return (kind, outcome.exception)
    return (kind,)


def declined(outcome: Any) -> bool:
    """The target cleanly declined: it rejected the input or returned no call (all a sample whose
    truth is None may get)."""
    return outcome.kind == "rejected" or (outcome.kind == "returned" and not outcome.calls)


def rerun_judgment(first: Any, second: Any) -> Optional[Judgment]:
    """The nondeterminism verdict when one input, run twice, gave ``first`` then ``second``;
    None when they agree (or either hung: a re-run that finishes is timing)."""
    if first.kind == "hung" or second.kind == "hung" or outcome_fingerprint(first) == outcome_fingerprint(second):
        return None
    return Judgment(Verdict.NONDETERMINISM, f"the same input gave {brief(first)} then {brief(second)}",
                    key=difference(first, second), check="nondeterminism")


def difference(first: Any, second: Any) -> str:
    """What differed between two runs of one input, whichever ran first: the calls, or the kinds
    of answer (``rejected one time, returned another``). Not the kind of damage between the two
    call lists: a target answering at random alters one value in one run and another in the
    next, and is one bug."""
    kinds = sorted((first.kind, second.kind))
    if kinds == ["returned", "returned"]:
        return "different calls when run again"
    if kinds[0] == kinds[1]:
        return f"{kinds[0]} with another exception when run again"
    return f"{kinds[0]} one time, {kinds[1]} another"


def brief(outcome: Any) -> str:
    """A few words for what an outcome was (``2 call(s)``, ``rejected ValueError``, ``hung``)."""
    if outcome.kind == "returned":
        return f"{len(outcome.calls or [])} call(s)"
    if outcome.kind in ("rejected", "raised"):
        return f"{outcome.kind} {outcome.exception}"
    return outcome.kind
