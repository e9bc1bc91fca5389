"""A scenario's trace read once, for the executor's oracles (:mod:`fuzzer.harnesses.executor.checks`).

A :class:`Judgement` holds the scenario, the trace the worker recorded for it, the policy and the
registry, and what every check would otherwise work out again: each call's invocations as
:class:`Attempt` records (its own tool's attempts apart), the virtual waits between them, whether
a tool's schema accepts the arguments it received (jsonschema, cached by value), and where the
declared circuit breaker stood at every attempt — a :class:`BreakerModel` replays the invocations
through pybreaker's state machine, and notes the calls an executor made into an open breaker.
Times are the worker's virtual seconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from fuzzer.harnesses.executor.faults import FAULTS

#: Tolerance of time comparisons (virtual seconds; a datetime has microseconds).
EPS = 1e-3


@dataclass
class Attempt:
    """One invocation, as the oracles see it."""

    tool: str
    number: int
    fault: str
    t0: float
    t1: float
    raised: bool
    committed: bool
    retry_after: Optional[float]
    args: Any  # None: the call's arguments unchanged
    via: str = "builtin"  # the library whose exception a failure was (a retry rule may name it)
    open_after: bool = False  # the strict model breaker of its tool is open once this attempt ended
    maybe_open_after: bool = False  # ... the eager one (see BreakerModel)

    @property
    def category(self) -> str:
        kind = FAULTS[self.fault]
        if self.raised and kind.returns:  # the tool's own error on a healthy or garbage answer
            return "tool_error" if kind.category == "success" else kind.category
        return kind.category


@dataclass
class StepView:
    index: int
    step: Any  # scenario.Step
    record: dict
    invocations: list
    attempts: list  # invocations of the step's own tool

    @property
    def outcome(self) -> str:
        return self.record.get("outcome", "aborted")

    def waits(self) -> tuple:
        a = self.attempts
        return tuple(round(a[k + 1].t0 - a[k].t1, 6) for k in range(len(a) - 1))


class Judgement:
    """One scenario, its trace, the policy and the registry: what every check reads."""

    def __init__(self, scenario: Any, trace: Any, policy: Any, registry: Any):
        self.scenario, self.trace, self.policy, self.registry = scenario, trace, policy, registry
        self.views: list[StepView] = []
        for index, record in enumerate(trace.steps if trace.kind == "ran" else []):
            if index >= len(scenario.steps):
                break
            step = scenario.steps[index]
            invocations = [_attempt(i) for i in record.get("invocations", [])]
            self.views.append(StepView(index, step, record, invocations,
                                       [a for a in invocations if a.tool == step.name]))
        self.breaker = BreakerModel(policy, self.views)

    def transient(self, a: Attempt) -> bool:
        return a.raised and self.policy.transient(a.fault, a.via) and not FAULTS[a.fault].returns

    def may_retry_unsafely(self, view: StepView, a: Attempt) -> bool:
        """Retrying after ``a`` is required of a correct executor (not merely allowed)."""
        return self.policy.is_idempotent(view.step.name) or a.fault in self.policy.retry_non_idempotent_on

    def arguments_valid(self, view: StepView, a: Attempt) -> tuple[bool, str]:
        """Whether the arguments ``a`` received satisfy its tool's schema (and why not)."""
        if a.args is None and a.tool == view.step.name:
            if view.step.valid:
                return True, ""
            arguments = view.step.arguments
        else:
            arguments = view.step.arguments if a.args is None else a.args
        if a.tool not in self.registry:
            return False, f"{a.tool!r} is not in the registry"
        return _schema_verdict(self.registry[a.tool], arguments)


_VERDICTS: dict = {}


def json_key(value: Any) -> Any:
    """A canonical text of a JSON value, for caches (orjson: a few microseconds)."""
    try:
        import orjson

        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (ImportError, TypeError):
        return json.dumps(value, sort_keys=True, default=repr)


def _schema_verdict(tool: Any, arguments: Any) -> tuple[bool, str]:
    """(valid, why not) by the tool's real jsonschema validator; cached by the arguments' JSON,
    since the same anomalous calls reach tools again and again."""
    key = (id(tool), json_key(arguments))
    hit = _VERDICTS.get(key)
    if hit is not None and hit[0] is tool:
        return hit[1]
    from strategies._internal.schema import tool_validator

    error = next(iter(tool_validator(tool).iter_errors(arguments)), None)
    if error is None:
        answer = (True, "")
    else:
        where = "/".join(str(p) for p in error.absolute_path) or "arguments"
        answer = (False, f"{where}: {error.message[:160]} ({error.validator})")
    if len(_VERDICTS) > 8192:
        _VERDICTS.clear()
    _VERDICTS[key] = (tool, answer)
    return answer


def _attempt(data: dict) -> Attempt:
    return Attempt(tool=data["tool"], number=data["attempt"], fault=data["fault"], t0=data["t0"], t1=data["t1"],
                   raised=bool(data.get("raised")), committed=bool(data.get("committed")),
                   retry_after=data.get("retry_after"), args=data.get("args"), via=data.get("via", "builtin"))


# ---------------------------------------------------------------------------------------------
# The breaker model (pybreaker's state machine, per tool)


@dataclass
class _ToolBreaker:
    state: str = "closed"
    consecutive: int = 0
    opened_at: float = 0.0
    ever_opened: bool = False
    trial_successes: int = 0


@dataclass
class BreakerEvent:
    kind: str  # "called_while_open" | "never_retried"
    view: StepView
    reason: str


@dataclass
class BreakerModel:
    """Replays every invocation through model breakers per tool (pybreaker's state machine) and
    notes where the executor broke the declared breaker.

    Two models bracket what a reasonable breaker does. The *strict* one counts only the fault
    kinds the policy's breaker counts and resets on anything else (pybreaker counts excluded
    exceptions as successes): the latest a breaker could open, so a call while it is open really
    is a call into an open breaker. The *eager* one counts every failure: the earliest a breaker
    could open, so an executor that stops calling while it may be open is not blamed for giving
    up. Violations: a call while the strict model is open (before ``reset_timeout`` has passed
    since the failure that opened it), and a valid call refused once both models' windows passed.
    """

    policy: Any
    views: list
    events: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.policy.breaker.enabled:
            return
        b = self.policy.breaker
        strict: dict[str, _ToolBreaker] = {}
        eager: dict[str, _ToolBreaker] = {}
        counts = self.policy.counts_for_breaker
        for view in self.views:
            step = view.step
            if step.valid and not view.attempts and view.outcome != "aborted":
                start = view.record.get("t0", 0.0)
                model, maybe = strict.get(step.name), eager.get(step.name)
                if (model and model.state == "open" and start >= model.opened_at + b.reset_timeout + EPS
                        and not (maybe and maybe.state == "open" and start < maybe.opened_at + b.reset_timeout)):
                    self.events.append(BreakerEvent("never_retried", view, (
                        f"{step.name} was not called at {start:g} s although its breaker opened at "
                        f"{model.opened_at:g} s and the {b.reset_timeout:g} s reset window had passed")))
            for a in view.invocations:
                # (get, then create: setdefault would build a model per invocation and drop it)
                model = strict.get(a.tool)
                if model is None:
                    model = strict[a.tool] = _ToolBreaker()
                if self._feed(model, a, a.raised and counts(a.fault, a.via)):
                    self.events.append(BreakerEvent("called_while_open", view, (
                        f"{a.tool} called at {a.t0:g} s, {a.t0 - model.opened_at:g} s after its breaker opened "
                        f"({b.fail_max} consecutive failures); it should stay open {b.reset_timeout:g} s")))
                a.open_after = model.state == "open"
                maybe = eager.get(a.tool)
                if maybe is None:
                    maybe = eager[a.tool] = _ToolBreaker()
                self._feed(maybe, a, a.raised)
                a.maybe_open_after = maybe.state == "open"

    def _feed(self, model: _ToolBreaker, a: Attempt, failed: bool) -> bool:
        """Update ``model`` with attempt ``a``; True if ``a`` was made while it was open."""
        b = self.policy.breaker
        if model.state == "open":
            if a.t0 < model.opened_at + b.reset_timeout - EPS:
                return True
            model.state, model.trial_successes = "half_open", 0
        if model.state == "half_open":
            if failed:
                self._open(model, a.t1)
            else:
                model.trial_successes += 1
                if model.trial_successes >= b.half_open_trials:
                    model.state, model.consecutive = "closed", 0
        elif failed:
            model.consecutive += 1
            if model.consecutive >= b.fail_max:
                self._open(model, a.t1)
        else:
            model.consecutive = 0
        return False

    @staticmethod
    def _open(model: _ToolBreaker, at: float) -> None:
        model.state, model.opened_at, model.ever_opened, model.consecutive = "open", at, True, 0


__all__ = ["EPS", "Attempt", "BreakerEvent", "BreakerModel", "Judgement", "StepView", "json_key"]
