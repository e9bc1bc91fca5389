"""The oracles of the executor harness: does what the executor did keep the policy's promises?

Each check is registered in :data:`CHECKS` under the verdict it gives (the words of the CLI,
the reports and the corpus) and reads one :class:`~fuzzer.harnesses.executor.judgement.Judgement`
— a scenario, the trace the worker recorded for it read once, the policy and the registry —
yielding :class:`Violation` records. Every
violation has a signature built with :mod:`corpus.signature` from *what* went wrong (the rule
broken, the fault category, the channel a secret leaked through, the exception type and the
executor's own frames for a crash), never from line numbers or from values that vary between
runs, so one bug is one signature whichever scenario exposed it.

=======================  =====================================================================
crash                    an exception the policy does not declare escaped ``execute``
retry_violation          a non-transient failure retried (or a success), a non-idempotent tool
                         retried after a failure that may have reached the service (one not in
                         ``retry_non_idempotent_on``), or a transient one not retried while
                         attempts, time and the breaker allow
attempts_exceeded        more invocations of the tool than ``max_attempts``
backoff_violation        a wait shorter than the backoff (or than Retry-After), or above its cap
breaker_violation        a tool called while its breaker (fail_max consecutive failures, reset
                         window) is open, or never tried again after the window passed
unvalidated_execution    a call to an unknown tool, or schema-invalid arguments, reached a tool
duplicate_side_effect    a non-idempotent tool invoked again after an attempt that committed
fallback_violation       a structured error that does not match the fallback schema
deadline_exceeded        an attempt started, or the call returned after waiting, past the deadline
leaked_secret            a tool's canary secret in what the executor returned, raised or logged
hang                     the call never returned (real time: watchdog; virtual time: a day)
=======================  =====================================================================

Validity of arguments uses the real jsonschema validator of each tool
(:func:`strategies._internal.schema.tool_validator`). Times are the worker's virtual seconds.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional

from corpus.signature import Signature, crash_signature, hang_signature, verdict_signature
from fuzzer.harnesses.executor.faults import FAULTS
from fuzzer.harnesses.executor.judgement import EPS, Attempt, Judgement, StepView, json_key
from fuzzer.engine import verdicts
from fuzzer.engine.verdicts import verdict
from strategies.registry import Registry


@dataclass(frozen=True)
class Violation(verdicts.Violation):
    """A broken promise (:class:`fuzzer.engine.verdicts.Violation`) at one call of the scenario."""

    step: Optional[int] = None  # 0-based index of the step where it happened
    waits: tuple = ()  # virtual waits between that step's attempts, in seconds


Check = Callable[["Judgement"], Iterable[Violation]]
CHECKS: Registry[Check] = Registry("check")


def check(function: Optional[Check] = None, *, promise: Optional[str] = None) -> Any:
    """Register a check under its function name (= its verdict), and the verdict in words (its
    docstring's first line) in :data:`fuzzer.engine.verdicts.VERDICTS`.

    ``promise``: the policy key whose promise the check judges (``max_attempts``, ``deadline``,
    ``validates_calls``...). A policy that does not make it (the key is None or false) is not
    judged by the check at all; one that does hands the check its value: ``check(j, value)``."""
    if function is None:
        return functools.partial(check, promise=promise)
    name = function.__name__
    words = " ".join((function.__doc__ or name).strip().split("\n\n")[0].split())
    verdict(name, words.replace("``", ""), harness="executor", module=function.__module__,
            movable=name == "crash", timed=name == "hang")
    if promise is not None:
        function = _when_promised(function, promise)
    return CHECKS.decorator()(function)


def _when_promised(judge: Callable[..., Iterable[Violation]], key: str) -> Check:
    @functools.wraps(judge)
    def judged(j: Judgement) -> Iterator[Violation]:
        promised = getattr(j.policy, key)
        if promised is None or promised is False:
            return iter(())
        return iter(judge(j, promised))
    return judged


#: Fault categories in words, for titles.
WORDS = {"success": "success", "timeout": "timeout", "connection": "connection error", "rate_limit": "rate limit (429)",
         "server_error": "server error (5xx)", "client_error": "client error (4xx)", "bad_result": "bad result",
         "tool_error": "error of the tool's own"}


def _words(category: str) -> str:
    return WORDS.get(category, category.replace("_", " "))


@functools.lru_cache(maxsize=1024)
def _sig(verdict: str, key: str, what: str) -> Signature:
    """A signature from words alone (a pure function of them, and a hash to compute: the same few
    are built for thousands of scenarios, so each once)."""
    return verdict_signature(verdict, anomaly_class=None, operator=None, format=None, key=f"executor|{key}", what=what)


def _at(view: "StepView", verdict: str, key: str, what: str, reason: str, *, waits: bool = True) -> Violation:
    """A violation of ``verdict`` at ``view``'s call, signed from words alone (:func:`_sig`), with
    the virtual waits between that call's attempts unless they tell nothing about it (``waits``)."""
    return Violation(verdict, _sig(verdict, key, what), reason, view.index, view.waits() if waits else ())


def judge(scenario: Any, trace: Any, policy: Any, registry: Any) -> list[Violation]:
    """The violations of one scenario's trace (empty: every promise kept): every check's, one per
    signature (the first), in registry order."""
    j = Judgement(scenario, trace, policy, registry)
    found: dict[str, Violation] = {}
    for _name, function in CHECKS.items():
        for v in function(j):
            found.setdefault(v.signature.id, v)
    return list(found.values())


# ---------------------------------------------------------------------------------------------
# The checks, in the order of the verdict table


def _via(a: Attempt) -> str:
    """`` (raised by httpx)``: the library a failure came from, where it is not a builtin one."""
    return "" if a.via == "builtin" else f" (raised by {a.via})"


def _declared_escape(j: Judgement, exc: dict) -> bool:
    return j.policy.declares(exc)


@check
def crash(j: Judgement) -> Iterator[Violation]:
    """An undeclared exception escaped the executor (or its factory, or the worker died)."""
    trace = j.trace
    if trace.kind == "died":
        frames = [tuple(f) for f in trace.frames]
        yield Violation("crash", crash_signature(exception=None, frames=frames, detail=trace.detail),
                        f"the worker process died ({trace.detail})")
        return
    if trace.kind == "error":
        yield Violation("crash", _sig("crash", "runner", "the scenario could not be run"),
                        f"toolfuzz could not run the scenario: {trace.detail}")
        return
    factory = trace.data.get("factory_error") if trace.kind == "ran" else None
    if factory:
        yield Violation("crash", crash_signature(exception=factory["type"], frames=[tuple(f) for f in factory["frames"]]),
                        f"make_executor(tools) raised {factory['type']}: {factory['message']}")
    for view in j.views:
        exc = view.record.get("exception")
        if view.outcome != "raised" or not exc or _declared_escape(j, exc):
            continue
        if exc.get("injected"):
            category = FAULTS[exc["injected"]].category
            sig = _sig("crash", f"let_through|{category}", f"a tool's {_words(category)} escaped the executor")
            reason = (f"call {view.index + 1} ({view.step.name}): the {exc['injected']} the tool raised escaped as "
                      f"{exc['type']}: {exc['message']}")
        else:
            sig = crash_signature(exception=exc["type"], frames=[tuple(f) for f in exc["frames"]])
            reason = f"call {view.index + 1} ({view.step.name}) raised {exc['type']}: {exc['message']}"
        yield Violation("crash", sig, reason, view.index, view.waits())


@check
def retry_violation(j: Judgement) -> Iterator[Violation]:
    """Retried what must not be retried; gave up on what must be retried."""
    p = j.policy
    for view in j.views:
        if not view.step.valid or view.outcome == "aborted":
            continue
        a = view.attempts
        retried_wrongly = False
        for k in range(len(a) - 1):
            done = a[k]
            if not done.raised:
                retried_wrongly = True
                if p.is_idempotent(view.step.name):  # a non-idempotent one: duplicate_side_effect
                    yield _at(view, "retry_violation", "after_success", "called the tool again after it succeeded",
                              f"call {view.index + 1}: {view.step.name} attempt {k + 1} succeeded "
                              f"({done.fault}), yet attempt {k + 2} followed")
                break
            if not j.transient(done):
                retried_wrongly = True
                what = f"retried a non-transient {_words(done.category)}"
                yield _at(view, "retry_violation", f"non_transient|{done.category}", what,
                          f"call {view.index + 1}: {view.step.name} failed with {done.fault}{_via(done)} (not in "
                          f"retry_on) on attempt {k + 1} and was tried again")
                break
            if not j.may_retry_unsafely(view, done) and not done.committed:
                # A committed attempt repeated is a duplicate_side_effect, reported there.
                retried_wrongly = True
                # one finding whatever the failure: the fix is the same (ask whether the tool is idempotent)
                what = "retried a non-idempotent tool after a failure that may have reached the service"
                yield _at(view, "retry_violation", "unsafe", what,
                          f"call {view.index + 1}: {view.step.name} (not idempotent) failed with {done.fault} "
                          f"on attempt {k + 1}, which may have reached the service (not in "
                          f"retry_non_idempotent_on), and was tried again")
                break
        if not a or retried_wrongly:
            continue  # one retry_violation per call: the first thing that went wrong
        last = a[-1]
        if not j.transient(last) or (p.max_attempts is not None and len(a) >= p.max_attempts) or last.maybe_open_after:
            continue
        wrong = _wait_out_of_bounds(j, view)
        if wrong is not None:
            _k, wait, _lower, upper = wrong
            if wait > upper:
                continue  # it waited longer than the cap (backoff_violation), so ran out of time early
        if not j.may_retry_unsafely(view, last):
            continue
        ra = last.retry_after if p.backoff.honour_retry_after else None
        if ra is not None and ra > p.backoff.retry_after_cap:
            continue
        if p.deadline is not None:
            longest = max(_upper_wait(p, len(a)), (ra or 0.0) + p.backoff.jitter)
            if last.t1 + longest > view.record["t0"] + p.deadline + EPS:
                continue
        if len(a) > 1:
            # it retried this call, then stopped: too few attempts or too little time, whatever
            # the kind of failure it stopped after (one finding, not one per kind)
            key, what = "gave_up_early", "stopped retrying a transient failure while attempts and time remained"
        else:
            key, what = f"not_retried|{last.category}", f"gave up after a transient {_words(last.category)}"
        # a tool that is not idempotent is owed the retry only because the policy says this failure
        # never reached the service: say so, and how to promise otherwise
        why = "" if p.is_idempotent(view.step.name) else (
            f" ({view.step.name} is not idempotent, but {last.fault} is in retry_non_idempotent_on: the request "
            f"never reached the service; leave it out of retry_non_idempotent_on if such a tool is never retried)")
        yield _at(view, "retry_violation", key, what,
                  f"call {view.index + 1}: {view.step.name} failed with {last.fault}{_via(last)} on attempt "
                  f"{len(a)}{'' if p.max_attempts is None else f' of {p.max_attempts}'} and was not retried{why}")


@check(promise="max_attempts")
def attempts_exceeded(j: Judgement, limit: int) -> Iterator[Violation]:
    """More invocations of one call's tool than ``max_attempts`` (none: no attempt limit promised)."""
    for view in j.views:
        n = len(view.attempts)
        if n > limit or view.record.get("abort") == "runaway":
            stopped = " (stopped by toolfuzz: it would not stop)" if view.record.get("abort") == "runaway" else ""
            yield _at(view, "attempts_exceeded", "max_attempts", "more attempts than max_attempts",
                      f"call {view.index + 1}: {view.step.name} invoked {n} times{stopped}; max_attempts is {limit}")


def _bounds(p: Any, k: int, ra: Optional[float]) -> tuple[float, float]:
    """(shortest, longest) allowed wait before attempt ``k + 1``."""
    b = p.backoff
    base = b.base(k)
    lower, upper = (0.0 if b.full_jitter else base), base + b.jitter
    if b.honour_retry_after and ra is not None:
        lower = max(lower, min(ra, b.retry_after_cap))
        upper = max(upper, ra + b.jitter)
    return lower, upper


def _upper_wait(p: Any, k: int) -> float:
    return _bounds(p, k, None)[1]


def _wait_out_of_bounds(j: Judgement, view: StepView) -> Optional[tuple]:
    """The first wait between transient failures outside its bounds: ``(k, wait, lower, upper)``
    (``k``: 0-based attempt it followed), or None."""
    p, a = j.policy, view.attempts
    for k in range(len(a) - 1):
        done = a[k]
        if not j.transient(done):
            return None  # retrying it at all is the violation (retry_violation)
        wait = a[k + 1].t0 - done.t1
        lower, upper = _bounds(p, k + 1, done.retry_after)
        tol = EPS + 1e-6 * max(lower, upper)
        if wait < lower - tol or wait > upper + tol:
            return k, wait, lower, upper
    return None


@check
def backoff_violation(j: Judgement) -> Iterator[Violation]:
    """A wait between attempts shorter than the backoff or a Retry-After asked, or longer than the cap."""
    p = j.policy
    for view in j.views:
        if not view.step.valid:
            continue
        found = _wait_out_of_bounds(j, view)
        if found is None:
            continue
        k, wait, lower, upper = found
        ra = view.attempts[k].retry_after
        if wait < lower:
            honoured = p.backoff.honour_retry_after and ra is not None and wait < min(ra, p.backoff.retry_after_cap)
            key, what = (("below_retry_after", "waited less than Retry-After") if honoured
                         else ("below_minimum", "waited less than the backoff"))
            why = f"Retry-After said {ra:g} s" if honoured else f"the backoff requires at least {lower:g} s"
        else:
            key, what = "above_cap", "waited longer than the backoff cap"
            why = f"at most {upper:g} s allowed"
        yield _at(view, "backoff_violation", key, what,
                  f"call {view.index + 1}: waited {wait:g} s before attempt {k + 2} of {view.step.name}; {why}")


@check
def breaker_violation(j: Judgement) -> Iterator[Violation]:
    """A tool called while its breaker must be open, or never tried again after the window."""
    for event in j.breaker.events:
        what = ("called a tool while its breaker was open" if event.kind == "called_while_open"
                else "never tried a tool again after the breaker's reset window")
        yield _at(event.view, "breaker_violation", event.kind, what, f"call {event.view.index + 1}: {event.reason}")


@check(promise="validates_calls")
def unvalidated_execution(j: Judgement, _: bool) -> Iterator[Violation]:
    """A call naming an unknown tool, or arguments its schema rejects, reached a tool (when the
    policy promises validation: ``validates_calls``)."""
    for view in j.views:
        if not view.invocations:
            continue
        if view.step.name not in j.registry:
            names = ", ".join(sorted({a.tool for a in view.invocations}))
            yield _at(view, "unvalidated_execution", "unknown_tool", "a call to an unknown tool reached a tool",
                      f"call {view.index + 1} named {view.step.name!r}, which is not a tool; the executor "
                      f"invoked {names}", waits=False)
            continue
        for a in view.invocations:
            ok, why = j.arguments_valid(view, a)
            if not ok:
                yield _at(view, "unvalidated_execution", "invalid_arguments",
                          "a tool ran with arguments its schema rejects",
                          f"call {view.index + 1}: {a.tool} ran with invalid arguments ({why})", waits=False)
                break


@check
def duplicate_side_effect(j: Judgement) -> Iterator[Violation]:
    """A non-idempotent tool invoked again after an attempt whose side effect happened."""
    p = j.policy
    for view in j.views:
        if p.is_idempotent(view.step.name):
            continue
        committed = None
        for a in view.attempts:
            if committed is not None:
                hidden = committed.fault == "commit_then_timeout"
                key = "after_commit_then_timeout" if hidden else "after_success"
                what = ("repeated a side effect hidden behind a timeout" if hidden
                        else "repeated a side effect that had succeeded")
                yield _at(view, "duplicate_side_effect", key, what,
                          f"call {view.index + 1}: {view.step.name} (not idempotent) committed on attempt "
                          f"{committed.number} ({committed.fault}) and ran again on attempt {a.number}")
                break
            if a.committed:
                committed = a


_FALLBACK_VALIDATORS: dict = {}
_FALLBACK_ANSWERS: dict = {}


def _fallback_error(schema: Any, value: Any) -> Any:
    """The first jsonschema error of ``value`` against the fallback schema, or None. Answers are
    cached by value: an executor returns the same few structured errors thousands of times."""
    schema_key = json_key(schema)
    key = (schema_key, json_key(value))
    if key in _FALLBACK_ANSWERS:
        return _FALLBACK_ANSWERS[key]
    validator = _FALLBACK_VALIDATORS.get(schema_key)
    if validator is None:
        from jsonschema import FormatChecker

        from strategies._internal.schema import validator_for_schema

        validator = _FALLBACK_VALIDATORS[schema_key] = validator_for_schema(schema)(schema, format_checker=FormatChecker())
    if len(_FALLBACK_ANSWERS) > 8192:
        _FALLBACK_ANSWERS.clear()
    error = _FALLBACK_ANSWERS[key] = next(iter(validator.iter_errors(value)), None)
    return error


@check
def fallback_violation(j: Judgement) -> Iterator[Violation]:
    """What the executor returned instead of a tool result does not match the fallback schema."""
    for view in j.views:
        if view.outcome != "returned":
            continue
        if not view.step.valid and view.invocations:
            continue  # the invalid call ran: unvalidated_execution says so
        if view.step.valid and any(not a.raised for a in view.attempts):
            continue  # a tool result, not a fallback
        value = view.record.get("value")
        error = _fallback_error(j.policy.fallback_schema, value)
        if error is None:
            continue
        shown = json.dumps(value, ensure_ascii=False)
        shown = shown if len(shown) <= 120 else shown[:117] + "..."
        why = ("an invalid call" if not view.step.valid else "a call whose every attempt failed" if view.attempts
               else "a call that never reached its tool")
        yield _at(view, "fallback_violation", f"schema|{error.validator}",
                  "returned a fallback that breaks the fallback schema",
                  f"call {view.index + 1}: for {why} the executor returned {shown} ({error.message[:120]})")


@check(promise="deadline")
def deadline_exceeded(j: Judgement, deadline: float) -> Iterator[Violation]:
    """An attempt started, or waiting went on, after the deadline of the call."""
    for view in j.views:
        if not view.step.valid or view.outcome == "aborted":
            continue
        start = view.record["t0"]
        limit = start + deadline
        late = next((a for a in view.attempts[1:] if a.t0 > limit + EPS), None)
        if late is not None:
            yield _at(view, "deadline_exceeded", "attempt_after_deadline", "started an attempt after the deadline",
                      f"call {view.index + 1}: attempt {late.number} of {view.step.name} started at "
                      f"{late.t0 - start:g} s, after the {deadline:g} s deadline")
            continue
        end = view.record["t1"]
        last_end = max((a.t1 for a in view.invocations), default=start)
        if end > max(limit, last_end) + EPS:
            yield _at(view, "deadline_exceeded", "returned_late", "kept waiting after the deadline",
                      f"call {view.index + 1}: returned at {end - start:g} s, waiting past the {deadline:g} s "
                      f"deadline")


@check(promise="redacts_secrets")
def leaked_secret(j: Judgement, _: bool) -> Iterator[Violation]:
    """A canary secret a tool's error carried reappeared in the executor's output (when the policy
    promises redaction: ``redacts_secrets``)."""
    for view in j.views:
        for leak in view.record.get("leaks", []):
            channel = leak["channel"]
            where = {"return": "returned", "raise": "raised", "log": "logged", "output": "printed"}.get(channel, channel)
            yield _at(view, "leaked_secret", channel, f"a tool's secret was {where}",
                      f"call {view.index + 1}: the secret in a {view.step.name} error was {where}: "
                      f"…{leak['excerpt']}…", waits=False)


@check
def hang(j: Judgement) -> Iterator[Violation]:
    """The call never returned: the watchdog's real timeout, or a day of virtual time."""
    trace = j.trace
    if trace.kind == "hung":
        frames = [tuple(f) for f in trace.frames]
        sig = hang_signature(frames=frames) if frames else _sig("hang", "no_stack", "the executor hung")
        yield Violation("hang", sig, f"the scenario did not finish ({trace.detail})")
        return
    for view in j.views:
        if view.record.get("abort") == "virtual_time":
            yield _at(view, "hang", "virtual_time", "a call that never returns",
                      f"call {view.index + 1} ({view.step.name}) was still running after "
                      f"{view.record['t1'] - view.record['t0']:g} s of virtual time")


__all__ = ["CHECKS", "Judgement", "Violation", "check", "judge"]
