"""The oracles of the agent harness: one registered check per verdict, over one episode's record.

Each check reads an :class:`Episode` (the script, the loop's trace, the policy, the tools, and how
the worker process ended) and returns at most one :class:`Violation` — the first place the loop
broke that promise. Checks are registered in :data:`CHECKS` under their verdict names, the words of
the CLI, the reports and the corpus:

============================  =====================================================================
``nontermination``            more model requests than ``max_turns``, or executions than ``max_tool_calls``
``duplicate_execution``       an identical call (JSON-equal arguments) executed again (``duplicates = "forbid"``)
``result_not_fed_back``       the next request lacks the result of an executed call, or carries it under the wrong call id
                              (a loop that sends calls back as text: the result anywhere in the next request)
``unvalidated_execution``     a call whose arguments break the tool's JSON Schema reached the tool (real jsonschema)
``premature_execution``       a call was executed before the stream carrying it had delivered all its arguments
``truncated_execution``       a call from a response cut off at the length limit was executed
``converged_loop``            a tool executed after ``convergence`` identical results in a row
``lost_reply``                the model's final answer is not in what ``run()`` returned
``crash``                     ``run()`` raised an exception the policy does not declare, or the worker died
``hang``                      the episode did not finish within ``--timeout`` seconds
``chain_break``               a call that uses nothing from the last result was executed (``must_notice_chain_break``)
============================  =====================================================================

Signatures (:mod:`corpus.signature`) are never built from line numbers: crashes and hangs are keyed
by the exception type and the loop's innermost frames' file and function names; every other
verdict by the promise broken and how (e.g. ``duplicate_execution`` within one turn or across
turns, ``unvalidated_execution`` by the schema keyword the arguments broke).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from corpus.signature import crash_signature, hang_signature, verdict_signature
from fuzzer.harnesses.agent.responses import call_id
from fuzzer.harnesses.agent.policy import AgentPolicy
from fuzzer.harnesses.agent.script import EXECUTABLE_STEPS, Script, ScriptCall, call_text, related
from strategies._internal.sample import json_equal
from strategies._internal.schema import tool_validator
from fuzzer.engine.verdicts import Violation, verdict
from strategies.registry import Registry


@dataclass
class Episode:
    """What a check reads. ``trace`` is None when the worker hung or died (``outcome`` says how)."""

    script: Script
    trace: Optional[dict]
    policy: AgentPolicy
    registry: Any
    outcome: Any = None  # fuzzer.isolation.Outcome of the worker
    timeout: float = 2.0

    @property
    def executions(self) -> list:
        return self.trace["executions"] if self.trace else []

    @property
    def requests(self) -> list:
        return self.trace["requests"] if self.trace else []


@dataclass(frozen=True)
class Check:
    name: str
    description: str
    function: Callable[[Episode], Optional[Violation]]
    enabled: Callable[[AgentPolicy], bool]


#: Every check, by verdict name.
CHECKS: Registry[Check] = Registry("agent check")


def check(name: str, *, enabled: Optional[Callable[[AgentPolicy], bool]] = None) -> Callable:
    """Register a check; its docstring's first line is its description."""

    def register(function: Callable) -> Callable:
        doc = (function.__doc__ or name).strip().splitlines()[0]
        words = doc[:1].upper() + doc[1:] + ("" if doc.endswith(".") else ".")
        verdict(name, words.replace("`", ""), harness="agent", module=function.__module__,
                movable=name == "crash", timed=name == "hang")
        CHECKS.register(name, Check(name, doc, function, enabled or (lambda policy: True)),
                        module=function.__module__)
        return function

    return register


def execution_check(name: str, *, enabled: Optional[Callable[[AgentPolicy], bool]] = None) -> Callable:
    """Register a check of each execution on its own (:func:`check`): ``function(ep, execution)``
    tells whether that one call should not have run; the episode's violation is the first."""

    def register(function: Callable) -> Callable:
        def first(ep: Episode) -> Optional[Violation]:
            return next((v for v in (function(ep, e) for e in ep.executions) if v is not None), None)

        first.__doc__, first.__name__ = function.__doc__, function.__name__
        check(name, enabled=enabled)(first)
        return function

    return register


def judge(episode: Episode) -> list[Violation]:
    """Every violation of the episode, one per enabled check, in registry order."""
    found = []
    for item in CHECKS.values():
        if item.enabled(episode.policy):
            violation = item.function(episode)
            if violation is not None:
                found.append(violation)
    return found


def _violation(verdict: str, key: str, what: str, reason: str) -> Violation:
    return Violation(verdict, verdict_signature(verdict, anomaly_class=None, operator=None, format=None,
                                                key=key, what=what), reason)


def _shown(execution: dict) -> str:
    return call_text(ScriptCall(execution["name"], execution["arguments"]))


# --------------------------------------------------------------------------------------------
# The checks


@check("nontermination")
def nontermination(ep: Episode) -> Optional[Violation]:
    """more model requests than max_turns, or more tool executions than max_tool_calls"""
    p = ep.policy
    if len(ep.requests) > p.max_turns:
        return _violation("nontermination", "model requests", "more model requests than max_turns",
                          f"the loop asked the model {len(ep.requests)} times (max_turns = {p.max_turns})")
    if len(ep.executions) > p.max_tool_calls:
        return _violation("nontermination", "tool executions", "more tool executions than max_tool_calls",
                          f"the loop ran {len(ep.executions)} tool calls (max_tool_calls = {p.max_tool_calls})")
    return None


@check("duplicate_execution", enabled=lambda p: p.duplicates == "forbid")
def duplicate_execution(ep: Episode) -> Optional[Violation]:
    """an identical call (JSON-equal arguments) executed twice"""
    done: list[dict] = []
    for e in ep.executions:
        for before in done:
            if before["name"] == e["name"] and before["error"] is None and json_equal(before["arguments"], e["arguments"]):
                where = "within one turn" if before["window"] == e["window"] else "across turns"
                return _violation("duplicate_execution", where, f"an identical call executed twice {where}",
                                  f"{_shown(e)} ran again in turn {e['window'] + 1} "
                                  f"(it already ran in turn {before['window'] + 1})")
        done.append(e)
    return None


@check("result_not_fed_back")
def result_not_fed_back(ep: Episode) -> Optional[Violation]:
    """the next model request lacks an executed call's result, or carries it under a wrong call id"""
    if ep.trace is None:
        return None
    by_window: dict[int, list] = {}
    for e in ep.executions:
        if e["call"] is not None and (e["result"] is not None or e["error"] is not None):
            by_window.setdefault(e["window"], []).append(e)  # a tool that raised needs an answer too
    text = ep.script.shape == "text"
    for w in sorted(by_window):
        if w < 0 or w + 1 >= len(ep.requests):
            continue  # no later request: nothing to feed back into
        before, after = ep.requests[w], ep.requests[w + 1]
        if text or _sent_back_as_text(ep, w, after):
            found = _text_feedback(ep, by_window[w], before, after, w)
        else:
            found = _structured_feedback(ep, by_window[w], after, w)
        if found is not None:
            return found
    return None if text else (_unknown_ids(ep) or _unanswered_ids(ep))


def _sent_back_as_text(ep: Episode, w: int, after: dict) -> bool:
    """Whether the loop sent turn ``w``'s calls back to the model as text, not as ``tool_calls`` /
    ``tool_use`` (smolagents writes them into an assistant message and the results into a user
    message, ``Observation: ...``; the APIs accept that). Then a result counts wherever it
    appears in the next request, as for a text protocol. (A loop that kept neither the calls nor
    the results is found either way, under the same signature: the result is missing.)"""
    ids = {call_id(ep.script.shape, w, j) for j, c in enumerate(ep.script.turn(w).calls) if c.raw is not None}
    return bool(ids) and "refs" in after and not ids & set(after.get("calls", ()))


def _ref(ep: Episode, e: dict) -> str:
    """The ref of an execution's result: what it answered, or (a tool that raised, whose message
    names it) what the script holds for its call."""
    if e["result"] is not None:
        return e["result"]["ref"]
    return ep.script.turn(e["window"]).calls[e["call"]].result["ref"]


def _text_feedback(ep: Episode, executions: list, before: dict, after: dict, w: int) -> Optional[Violation]:
    needed: dict[str, int] = {}
    for e in executions:
        needed[_ref(ep, e)] = needed.get(_ref(ep, e), 0) + 1
    for ref, count in needed.items():
        if after["refs"].get(ref, 0) < before.get("refs", {}).get(ref, 0) + count:
            e = next(x for x in executions if _ref(ep, x) == ref)
            return _violation("result_not_fed_back", "missing result", "an executed call's result was not fed back",
                              f"request {w + 2} does not carry the result of {_shown(e)}, executed in turn {w + 1} "
                              f"(its result holds ref {ref})")
    return None


def _structured_feedback(ep: Episode, executions: list, after: dict, w: int) -> Optional[Violation]:
    results = after["results"]
    calls = ep.script.turn(w).calls
    for e in executions:
        if calls[e["call"]].raw is None:
            continue  # the model wrote this call as text: it has no id to feed a result back under
        cid = call_id(ep.script.shape, w, e["call"])
        under = [refs for message_id, refs in results if message_id == cid]
        if not under:
            return _violation("result_not_fed_back", "missing result", "an executed call's result was not fed back",
                              f"request {w + 2} has no tool result for call {cid} ({_shown(e)}), "
                              f"executed in turn {w + 1}" + (f" (its tool raised {e['error']})" if e["error"] else ""))
        if e["result"] is None:
            continue  # the tool raised: any answer under its id tells the model (the words are the loop's)
        ref = e["result"]["ref"]
        if not any(ref in refs for refs in under):
            others = sorted({r for refs in under for r in refs})
            if others:
                return _violation("result_not_fed_back", "wrong call id", "a result fed back under the wrong call id",
                                  f"the tool result for call {cid} ({_shown(e)}) carries {', '.join(others)}, "
                                  f"not its own result {ref}")
            return _violation("result_not_fed_back", "result content lost", "a tool result fed back without its content",
                              f"the tool result for call {cid} ({_shown(e)}) does not carry its result (ref {ref})")
    return None


def _unknown_ids(ep: Episode) -> Optional[Violation]:
    issued: set[str] = set()
    for w, request in enumerate(ep.requests):
        for message_id, _refs in request["results"]:
            if message_id not in issued:
                return _violation("result_not_fed_back", "wrong call id", "a result fed back under the wrong call id",
                                  f"request {w + 1} carries a tool result for call id {message_id!r}, which the model "
                                  f"never issued")
        turn = ep.script.turn(w)
        issued.update(call_id(ep.script.shape, w, j) for j, c in enumerate(turn.calls) if c.raw is not None)
    return None


def _unanswered_ids(ep: Episode) -> Optional[Violation]:
    """A request that carries an assistant message's call but no result for it: the OpenAI and
    Anthropic APIs reject it (every call id needs a result — an error result for a call the loop
    refused), so the loop fails in production where a fake that accepts anything never would."""
    for w, request in enumerate(ep.requests):
        answered = {message_id for message_id, _refs in request["results"]}
        missing = [cid for cid in request.get("calls", ()) if cid not in answered]
        if missing:
            return _violation("result_not_fed_back", "unanswered call id", "a call the model made got no result",
                              f"request {w + 1} carries the model's call {missing[0]} but no tool result for it "
                              "(the API rejects that request; a refused call needs an error result)")
    return None


@execution_check("unvalidated_execution", enabled=lambda p: p.validates_calls)
def unvalidated_execution(ep: Episode, e: dict) -> Optional[Violation]:
    """a call whose arguments break the tool's JSON Schema reached the tool"""
    from jsonschema.exceptions import best_match

    if e["name"] not in ep.registry:
        return None
    if e["match"] == "exact" and ep.script.turn(e["window"]).step in EXECUTABLE_STEPS:
        # exactly a call the schema's generator drew for a valid step: valid by construction
        # (tests/unit/test_agent_script.py checks that with jsonschema); everything else the
        # loop ran is validated here — malformed calls, repairs, edits, calls of other turns.
        return None
    validator = tool_validator(ep.registry[e["name"]])
    if validator.is_valid(e["arguments"]):
        return None
    error = best_match(validator.iter_errors(e["arguments"]))
    at = "/" + "/".join(str(p) for p in error.absolute_path)
    return _violation("unvalidated_execution", f"schema keyword {error.validator}",
                      f"arguments breaking the schema ({error.validator}) reached the tool",
                      f"{_shown(e)} ran in turn {e['window'] + 1} although its arguments break the schema: "
                      f"{error.message[:200]} (at {at})")


@execution_check("premature_execution")
def premature_execution(ep: Episode, e: dict) -> Optional[Violation]:
    """a call was executed before the stream carrying it had delivered all of its arguments"""
    streamed = e.get("streamed")
    if not streamed or streamed[0] >= streamed[1]:
        return None
    taken, needed = streamed
    return _violation("premature_execution", "premature_execution|streamed",
                      "a call executed while its arguments were still streaming",
                      f"{_shown(e)} ran after {taken} of the {needed} chunks that carry its call had "
                      f"arrived (turn {e['window'] + 1}): its arguments were still being streamed")


@execution_check("truncated_execution")
def truncated_execution(ep: Episode, e: dict) -> Optional[Violation]:
    """a call from a response cut off at the length limit was executed"""
    w = e["window"]
    if w < 0 or e["call"] is None or not ep.script.turn(w).truncated:
        return None
    return _violation("truncated_execution", "truncated response", "a call from a truncated response executed",
                      f"{_shown(e)} ran although the model's response in turn {w + 1} was cut off "
                      f"({ep.script.turn(w).note or 'finish_reason=length'})")


@check("converged_loop", enabled=lambda p: p.convergence >= 2)
def converged_loop(ep: Episode) -> Optional[Violation]:
    """a tool executed again after `convergence` identical results in a row"""
    n = ep.policy.convergence
    streak, last = 0, None
    for e in ep.executions:
        if streak >= n:
            return _violation("converged_loop", "converged", "the loop went on after identical tool results",
                              f"after {n} identical tool results in a row (ref {last['ref']}), {_shown(e)} "
                              f"ran in turn {e['window'] + 1} (convergence = {n})")
        if e["result"] is None:
            continue
        streak = streak + 1 if last is not None and json_equal(last, e["result"]) else 1
        last = e["result"]
    return None


@check("lost_reply")
def lost_reply(ep: Episode) -> Optional[Violation]:
    """the model's final answer is not in what run() returned"""
    if ep.trace is None or not ep.trace["returned"] or not ep.requests:
        return None
    turn = ep.script.turn(len(ep.requests) - 1)
    if not turn.final:
        return None
    answer = (turn.content or turn.text).strip()
    reply = ep.trace["reply"]
    if reply is not None and answer in reply:
        return None
    return _violation("lost_reply", "final answer not returned", "the final answer was not returned",
                      f"the model's final answer {answer!r} is not in run()'s reply {reply!r:.200}")


@check("crash")
def crash(ep: Episode) -> Optional[Violation]:
    """the loop's run() raised an undeclared exception, or the worker process died"""
    if ep.outcome is not None and ep.outcome.kind == "died":
        sig = crash_signature(exception=None, frames=ep.outcome.frames, detail=ep.outcome.detail)
        return Violation("crash", sig, f"the worker running the loop died ({ep.outcome.detail})")
    if ep.outcome is not None and ep.outcome.kind in ("raised", "invalid"):  # toolfuzz's own worker code failed
        sig = crash_signature(exception=ep.outcome.exception or "InvalidTrace", frames=ep.outcome.frames)
        return Violation("crash", sig, f"the episode failed outside the loop: {ep.outcome.message}")
    error = ep.trace["error"] if ep.trace else None
    if error is None or ep.policy.declares(error):
        return None
    sig = crash_signature(exception=error["exception"], frames=[tuple(f) for f in error["frames"]])
    return Violation("crash", sig, f"run() raised {error['exception']}: {error['message']}")


@check("hang")
def hang(ep: Episode) -> Optional[Violation]:
    """the episode did not finish within the timeout"""
    if ep.outcome is None or ep.outcome.kind != "hung":
        return None
    reason = f"the episode did not finish within {ep.timeout:g} s"
    if ep.outcome.frames:
        return Violation("hang", hang_signature(frames=ep.outcome.frames), reason)
    return _violation("hang", "no stack", "hang (no stack captured)", reason)


@check("chain_break", enabled=lambda p: p.must_notice_chain_break)
def chain_break(ep: Episode) -> Optional[Violation]:
    """a call that uses nothing from the last result was executed"""
    last: Optional[list] = None
    last_window = -1
    window: Optional[int] = None
    current: list = []
    for e in ep.executions + [None]:
        if e is None or e["window"] != window:
            if current:
                last, last_window = current, window
            current, window = [], (e["window"] if e is not None else None)
        if e is None:
            break
        if last is not None and related(e["arguments"], last) is False:
            return _violation("chain_break", "unrelated call", "a call unrelated to the last result executed",
                              f"{_shown(e)} ran in turn {e['window'] + 1} although it uses nothing from the last "
                              f"result (turn {last_window + 1})")
        if e["result"] is not None:
            current.append(e["result"])
    return None


__all__ = ["CHECKS", "Check", "Episode", "check", "judge"]
