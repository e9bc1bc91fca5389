"""The executor oracles on hand-made traces: each promise kept, each promise broken."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.harnesses.executor.checks import CHECKS, judge
from fuzzer.harnesses.executor.faults import make
from fuzzer.harnesses.executor.policy import Policy
from fuzzer.harnesses.executor.scenario import Scenario, Step
from fuzzer.harnesses.executor.schedule import Schedule
from fuzzer.harnesses.executor.worker import Trace
from strategies._internal.tools import builtin_registry

REGISTRY = builtin_registry()
POLICY = Policy(backoff=Policy().backoff.__class__(initial=1.0, multiplier=2.0, max=8.0, jitter=0.0))
FALLBACK = {"error": {"type": "x"}}


def at(*attempts, tool="get_weather", start=0.0):
    """Invocations from (fault, duration, wait-after) triples, starting at ``start``."""
    out, t = [], start
    for n, (fault, duration, wait) in enumerate(attempts, 1):
        from fuzzer.harnesses.executor.faults import FAULTS

        raised = not FAULTS[fault].returns
        inv = {"tool": tool, "attempt": n, "fault": fault, "t0": t, "t1": t + duration}
        if raised:
            inv["raised"] = True
        if FAULTS[fault].commits:
            inv["committed"] = True
        out.append(inv)
        t += duration + wait
    return out


def record(invocations, *, start=0.0, end=None, value=FALLBACK, exception=None, **extra):
    end = end if end is not None else max([i["t1"] for i in invocations], default=start)
    data = {"t0": start, "t1": end, "invocations": invocations}
    if exception is not None:
        data.update(outcome="raised", exception=exception)
    else:
        data.update(outcome="returned", value=value)
    data.update(extra)
    return data


def scenario_of(*steps):
    return Scenario(steps=tuple(steps))


def step(name="get_weather", arguments=None, *, gap=0.0, valid=True, faults=()):
    return Step(name=name, arguments=arguments if arguments is not None else {"city": "Paris"}, gap=gap, valid=valid,
                schedule=Schedule(faults=tuple(make(f) for f in faults)))


def verdicts(scenario, records, policy=POLICY, kind="ran", **data):
    trace = Trace(kind, {"steps": records, **data})
    return {(v.verdict, _key(v)) for v in judge(scenario, trace, policy, REGISTRY)}


def _key(violation):
    """The signature key without its verdict (and the harness prefix of non-crash keys)."""
    key = violation.signature.key.split("|", 1)[1]
    return key[len("executor|"):] if key.startswith("executor|") else key


def test_the_checks_are_the_verdicts_of_the_issue():
    assert list(CHECKS) == ["crash", "retry_violation", "attempts_exceeded", "backoff_violation", "breaker_violation",
                            "unvalidated_execution", "duplicate_side_effect", "fallback_violation",
                            "deadline_exceeded", "leaked_secret", "hang"]


def test_a_well_behaved_call_passes():
    inv = at(("http_503", 0, 1.0), ("timeout", 5, 2.0), ("ok", 0, 0))
    assert verdicts(scenario_of(step()), [record(inv, value={"tool": "get_weather"})]) == set()


def test_retrying_a_non_transient_failure_or_a_success():
    assert verdicts(scenario_of(step()), [record(at(("http_404", 0, 1.0), ("ok", 0, 0)), value={})]) == {
        ("retry_violation", "non_transient|client_error")}
    assert ("retry_violation", "after_success") in verdicts(
        scenario_of(step()), [record(at(("ok", 0, 1.0), ("ok", 0, 0)), value={})])


def test_giving_up_on_a_transient_failure_only_when_something_allowed_it():
    gave_up = [record(at(("http_503", 0, 0)))]
    assert verdicts(scenario_of(step()), gave_up) == {("retry_violation", "not_retried|server_error")}
    # attempts used up, a non-idempotent tool after an ambiguous failure, the deadline: all fine
    assert verdicts(scenario_of(step()), gave_up, Policy(max_attempts=1)) == set()
    assert verdicts(scenario_of(step("send_email", {"recipients": ["a@b.c"]})),
                    [record(at(("http_500", 0, 0), tool="send_email"))]) == set()
    assert verdicts(scenario_of(step()), [record(at(("timeout", 44.5, 0)))]) == set()
    # a Retry-After beyond the cap may end the retries
    inv = at(("http_429", 0, 0))
    inv[0]["retry_after"] = 120.0
    assert verdicts(scenario_of(step()), [record(inv)]) == set()


def test_giving_up_because_its_own_uncapped_waits_used_the_deadline_is_one_backoff_violation():
    """Waits doubling past the cap run into the deadline: the executor gives up early. That is a
    consequence of the one bug (the waits), not a second finding."""
    policy = Policy(max_attempts=10, deadline=45.0,
                    backoff=POLICY.backoff.__class__(initial=1.0, multiplier=2.0, max=4.0, jitter=0.0))
    uncapped = at(("timeout", 30, 1.0), ("timeout", 0, 2.0), ("timeout", 0, 8.0), ("timeout", 0, 0))
    assert verdicts(scenario_of(step()), [record(uncapped)], policy) == {("backoff_violation", "above_cap")}
    # with waits inside the cap, the same give-up is a retry_violation of its own, whichever the
    # kinds of failure it retried and stopped after
    for faults in (("timeout",) * 4, ("http_500",) * 4, ("http_500", "http_503", "connection_reset", "timeout")):
        capped = at((faults[0], 30, 1.0), (faults[1], 0, 2.0), (faults[2], 0, 4.0), (faults[3], 0, 0))
        assert verdicts(scenario_of(step()), [record(capped)], policy) == {("retry_violation", "gave_up_early")}


def test_more_attempts_than_promised():
    inv = at(*[("timeout", 0, 8.0)] * 11)
    found = verdicts(scenario_of(step()), [record(inv, end=200)], Policy(breaker=Policy().breaker.__class__(enabled=False),
                                                                        deadline=None,
                                                                        backoff=POLICY.backoff))
    assert ("attempts_exceeded", "max_attempts") in found


def test_backoff_below_the_minimum_below_retry_after_and_above_the_cap():
    assert verdicts(scenario_of(step()), [record(at(("http_503", 0, 0.2), ("ok", 0, 0)), value={})]) == {
        ("backoff_violation", "below_minimum")}
    inv = at(("http_429", 0, 2.0), ("ok", 0, 0))
    inv[0]["retry_after"] = 5.0
    assert verdicts(scenario_of(step()), [record(inv, value={})]) == {("backoff_violation", "below_retry_after")}
    assert verdicts(scenario_of(step()), [record(at(("http_503", 0, 30.0), ("ok", 0, 0)), value={})]) == {
        ("backoff_violation", "above_cap")}


def test_the_breaker_must_open_after_fail_max_and_close_again_after_its_window():
    policy = Policy(max_attempts=10, backoff=POLICY.backoff, deadline=None)
    five = at(("http_503", 0, 1.0), ("http_503", 0, 2.0), ("http_503", 0, 4.0), ("http_503", 0, 8.0),
              ("http_503", 0, 0))  # ends at t=15: the breaker opens
    tried_again = at(("http_503", 0, 0), start=20.0)
    steps = [step(), step()]
    assert ("breaker_violation", "called_while_open") in verdicts(
        scenario_of(*steps), [record(five), record(tried_again, start=20.0)], policy)
    assert verdicts(scenario_of(*steps), [record(five), record([], start=20.0)], policy) == set()
    assert verdicts(scenario_of(*steps), [record(five), record(at(("ok", 0, 0), start=80.0), start=80.0, value={})],
                    policy) == set()
    assert ("breaker_violation", "never_retried") in verdicts(
        scenario_of(*steps), [record(five), record([], start=80.0)], policy)


def test_a_4xx_does_not_count_toward_the_breaker_but_an_eager_breaker_may_stop_retries():
    policy = Policy(backoff=POLICY.backoff, deadline=None)
    inv = at(("http_503", 0, 1.0), ("http_503", 0, 2.0), ("http_503", 0, 4.0), ("http_503", 0, 8.0)) + \
        at(("http_404", 0, 0), start=15.0)
    for n, i in enumerate(inv, 1):
        i["attempt"] = n
    calls = [step(), step()]
    later = record(at(("http_503", 0, 0), start=20.0), start=20.0)
    assert not any(v == "breaker_violation" for v, _ in verdicts(scenario_of(*calls), [record(inv), later], policy))


def test_unvalidated_execution_of_unknown_tools_and_invalid_arguments():
    bad = step(arguments={"city": 7}, valid=False)
    assert verdicts(scenario_of(bad), [record(at(("ok", 0, 0)), value={})]) == {
        ("unvalidated_execution", "invalid_arguments")}
    assert verdicts(scenario_of(bad), [record([])]) == set()
    unknown = step("get_wether", valid=False)
    assert verdicts(scenario_of(unknown), [record(at(("ok", 0, 0)), value={})]) == {
        ("unvalidated_execution", "unknown_tool")}
    changed = at(("ok", 0, 0))
    changed[0]["args"] = {"city": ""}  # the executor passed arguments of its own: minLength 1
    assert verdicts(scenario_of(step()), [record(changed, value={})]) == {("unvalidated_execution", "invalid_arguments")}


def test_a_side_effect_repeated_after_commit_then_timeout():
    email = step("send_email", {"recipients": ["a@b.c"]})
    inv = at(("commit_then_timeout", 5, 1.0), ("ok", 0, 0), tool="send_email")
    assert verdicts(scenario_of(email), [record(inv, value={})]) == {
        ("duplicate_side_effect", "after_commit_then_timeout")}


@pytest.mark.parametrize("fault, category", [("connection_reset", "connection"), ("http_500", "server_error"),
                                             ("http_502", "server_error"), ("http_504", "server_error"),
                                             ("timeout", "timeout")])
def test_a_non_idempotent_tool_retried_after_a_failure_that_may_have_reached_the_service(fault, category):
    email = step("send_email", {"recipients": ["a@b.c"]})
    inv = at((fault, 0, 1.0), ("ok", 0, 0), tool="send_email")
    assert verdicts(scenario_of(email), [record(inv, value={})]) == {("retry_violation", "unsafe")}
    # the same retry of an idempotent tool is what the policy asks for
    assert verdicts(scenario_of(step()), [record(at((fault, 0, 1.0), ("ok", 0, 0)), value={})]) == set()
    # and a policy that calls the failure safe for non-idempotent tools allows it too
    lenient = Policy(backoff=POLICY.backoff, retry_non_idempotent_on=(fault,))
    assert verdicts(scenario_of(email), [record(inv, value={})], lenient) == set()


@pytest.mark.parametrize("fault", ["connection_refused", "http_429", "http_503"])
def test_a_non_idempotent_tool_may_be_retried_after_a_failure_that_surely_did_not_reach_the_service(fault):
    email = step("send_email", {"recipients": ["a@b.c"]})
    inv = at((fault, 0, 1.0), ("ok", 0, 0), tool="send_email")
    assert verdicts(scenario_of(email), [record(inv, value={})]) == set()


def test_fallbacks_must_match_the_fallback_schema():
    assert verdicts(scenario_of(step()), [record(at(("http_404", 0, 0)), value={"message": "nope"})]) == {
        ("fallback_violation", "schema|required")}
    assert verdicts(scenario_of(step("nope", valid=False)), [record([], value=None)]) == {
        ("fallback_violation", "schema|type")}
    assert verdicts(scenario_of(step()), [record(at(("ok", 0, 0)), value=[1, 2])]) == set()  # a tool result


def test_deadlines():
    late = at(("timeout", 30, 1.0), ("timeout", 30, 0))  # the second attempt starts at 31: fine
    assert verdicts(scenario_of(step()), [record(late)]) == set()
    later = at(("timeout", 30, 1.0), ("timeout", 30, 2.0), ("ok", 0, 0))  # the third at 63
    assert ("deadline_exceeded", "attempt_after_deadline") in verdicts(scenario_of(step()), [record(later, value={})])
    assert verdicts(scenario_of(step()), [record(at(("http_404", 0, 0)), end=50.0)]) == {
        ("deadline_exceeded", "returned_late")}


def test_crashes_and_leaks():
    exc = {"type": "KeyError", "mro": ["KeyError", "LookupError", "Exception"], "message": "'x'",
           "frames": [["executor.py", "execute"]]}
    assert verdicts(scenario_of(step()), [record([], exception=exc)]) == {
        ("crash", "KeyError|executor.py:execute")}
    declared = Policy(raises=("LookupError",), backoff=POLICY.backoff)
    assert verdicts(scenario_of(step()), [record([], exception=exc)], declared) == set()
    injected = dict(exc, type="requests.exceptions.ReadTimeout", injected="timeout")
    assert verdicts(scenario_of(step()), [record(at(("timeout", 0, 0)), exception=injected)], Policy(max_attempts=1)) \
        == {("crash", "let_through|timeout")}
    leak = record([], leaks=[{"channel": "log", "excerpt": "key sk-tfz-1"}])
    assert verdicts(scenario_of(step()), [leak]) == {("leaked_secret", "log")}


def test_hangs_and_deaths():
    assert verdicts(scenario_of(step()), [], kind="hung") == {("hang", "no_stack")}
    assert verdicts(scenario_of(step()), [record([], abort="virtual_time", outcome="aborted", end=86401)]) == {
        ("hang", "virtual_time")}
    trace = Trace("died", {}, frames=(("executor.py", "execute"),), detail="exit status 3")
    found = judge(scenario_of(step()), trace, POLICY, REGISTRY)
    assert [v.verdict for v in found] == ["crash"] and "exit status 3" in found[0].signature.key


@given(message=st.text(max_size=40), start=st.floats(0, 1e6, allow_nan=False), line=st.integers(1, 10_000))
@settings(max_examples=50, deadline=None)
def test_signatures_do_not_depend_on_messages_times_or_lines(message, start, line):
    exc = {"type": "KeyError", "mro": ["KeyError"], "message": message, "frames": [["executor.py", "execute"]],
           "line": line}
    trace = Trace("ran", {"steps": [record([], start=start, end=start, exception=exc)]})
    ids = {v.signature.id for v in judge(scenario_of(step()), trace, POLICY, REGISTRY)}
    base = Trace("ran", {"steps": [record([], exception=dict(exc, message="x"))]})
    assert ids == {v.signature.id for v in judge(scenario_of(step()), base, POLICY, REGISTRY)}


def test_a_non_idempotent_tool_not_retried_after_a_refused_connection_is_told_why_the_retry_was_owed():
    """The policy's retry_non_idempotent_on says a refused connection never reached the service,
    so even send_email is owed the retry; the reason says so and how to promise otherwise."""
    email = step("send_email", {"recipients": ["a@b.c"]})
    refused = [record(at(("connection_refused", 0, 0), tool="send_email"))]
    (violation,) = judge(scenario_of(email), Trace("ran", {"steps": refused}), POLICY, REGISTRY)
    assert violation.verdict == "retry_violation" and "retry_non_idempotent_on" in violation.reason
    cautious = Policy(backoff=POLICY.backoff, retry_non_idempotent_on=())
    assert judge(scenario_of(email), Trace("ran", {"steps": refused}), cautious, REGISTRY) == []
    plain = judge(scenario_of(step()), Trace("ran", {"steps": [record(at(("connection_refused", 0, 0)))]}),
                  POLICY, REGISTRY)
    assert plain and "retry_non_idempotent_on" not in plain[0].reason  # an idempotent tool: nothing to explain


def _via(invocations, via):
    for i in invocations:
        if i.get("raised"):
            i["via"] = via
    return invocations


def test_a_retry_rule_may_name_the_library_that_raised():
    """LangGraph's default rule retries an httpx timeout (an httpx.TransportError) but not a
    requests one (an OSError): ``timeout:httpx`` states that."""
    policy = Policy(retry_on=("timeout:httpx", "http_503"), backoff=POLICY.backoff, max_attempts=3)
    assert policy.transient("timeout", "httpx") and not policy.transient("timeout", "requests")
    assert policy.transient("commit_then_timeout", "httpx")  # a caller cannot tell it from a timeout
    assert policy.transient("timeout")  # retried through some library: its schedules are drawn
    requests_given_up = [record(_via(at(("timeout", 0, 0)), "requests"))]
    assert verdicts(scenario_of(step()), requests_given_up, policy) == set()
    httpx_given_up = [record(_via(at(("timeout", 0, 0)), "httpx"))]
    assert verdicts(scenario_of(step()), httpx_given_up, policy) == {("retry_violation", "not_retried|timeout")}
    requests_retried = [record(_via(at(("timeout", 0, 1.0), ("ok", 0, 0)), "requests"), value={})]
    assert verdicts(scenario_of(step()), requests_retried, policy) == {("retry_violation", "non_transient|timeout")}
    assert verdicts(scenario_of(step()), requests_retried, Policy(backoff=POLICY.backoff)) == set()


def test_no_attempt_limit_leaves_the_deadline_as_the_only_stop():
    """backoff's ``max_time`` alone: any number of attempts, none after the deadline, and giving
    up while time remains is a retry_violation however many attempts were made."""
    unbounded = POLICY.backoff.__class__(initial=1.0, multiplier=2.0, max=None, jitter=0.0)
    policy = Policy(max_attempts=None, deadline=120.0, backoff=unbounded,
                    breaker=Policy().breaker.__class__(enabled=False))
    twelve = at(*[("http_503", 0, 0.001)] * 11, ("ok", 0, 0))
    assert "attempts_exceeded" not in {v for v, _ in verdicts(scenario_of(step()), [record(twelve, value={})], policy)}
    waits = at(("http_503", 0, 1.0), ("http_503", 0, 2.0), ("http_503", 0, 4.0), ("http_503", 0, 8.0),
               ("http_503", 0, 16.0), ("http_503", 0, 0))  # waits doubling past 5 s: no cap was promised
    assert verdicts(scenario_of(step()), [record(waits)], policy) == {("retry_violation", "gave_up_early")}
    assert verdicts(scenario_of(step()), [record(waits)], Policy(max_attempts=6, deadline=120.0, backoff=unbounded,
                                                                 breaker=policy.breaker)) == set()
    assert ("backoff_violation", "above_cap") in verdicts(
        scenario_of(step()), [record(waits)], Policy(max_attempts=6, deadline=120.0, backoff=POLICY.backoff,
                                                     breaker=policy.breaker))


def test_promises_a_policy_does_not_make_are_not_checked():
    bad = step(arguments={"city": 7}, valid=False)
    ran = [record(at(("ok", 0, 0)), value={})]
    assert verdicts(scenario_of(bad), ran) == {("unvalidated_execution", "invalid_arguments")}
    assert verdicts(scenario_of(bad), ran, Policy(validates_calls=False, backoff=POLICY.backoff)) == set()
    leak = [record([], leaks=[{"channel": "log", "excerpt": "key sk-tfz-1"}])]
    assert verdicts(scenario_of(step()), leak) == {("leaked_secret", "log")}
    assert verdicts(scenario_of(step()), leak, Policy(redacts_secrets=False, backoff=POLICY.backoff)) == set()
