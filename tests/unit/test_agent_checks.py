"""The oracles, each against a real loop with exactly that bug (and the state machine, which has none)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzer.harnesses.agent.checks import CHECKS, Episode, judge
from fuzzer.harnesses.agent.policy import AgentPolicy
from fuzzer.harnesses.agent.script import Script, ScriptCall, Turn, link_results
from fuzzer.harnesses.agent.worker import loop_maker, play
from fuzzer.harnesses.parser.outcome import Outcome
from fuzzer.engine.references import load_target
from fuzzer.engine.exception_names import resolve
from fuzzer.targets import agent_naive, agent_state_machine
from strategies._internal.tools import builtin_registry

REGISTRY = builtin_registry()
VERDICTS = ["nontermination", "duplicate_execution", "result_not_fed_back", "unvalidated_execution", "premature_execution",
            "truncated_execution", "converged_loop", "lost_reply", "crash", "hang", "chain_break"]


def call(name: str, raw: str = None, **arguments) -> ScriptCall:
    return ScriptCall(name, arguments if raw is None else None, raw=json.dumps(arguments) if raw is None else raw)


def turn(step: str, *calls: ScriptCall, **extra) -> Turn:
    return Turn(step=step, calls=list(calls), finish="tool_calls" if calls else "stop", **extra)


FINAL = Turn(step="final", text="Done: it is sunny.", content="Done: it is sunny.", final=True)
PARIS = call("get_weather", city="Paris")


def script(*turns: Turn, shape: str = "openai") -> Script:
    turns = [Turn.from_json(t.to_json()) for t in turns]  # fresh objects: results are linked per script
    link_results(turns)
    return Script(user="What is the weather in Paris?", turns=turns, shape=shape)


def verdicts(loop, s: Script, policy: AgentPolicy = AgentPolicy()) -> dict:
    """What the worker judges: the episode played with the policy's errors resolved, as there."""
    trace = play(s, loop_maker(loop, "test"), REGISTRY, policy.caps, declared=resolve(policy.errors))
    return {v.verdict: v for v in judge(Episode(s, trace, policy, REGISTRY))}


def test_the_checks_are_registered_under_the_verdict_names():
    assert list(CHECKS) == VERDICTS
    assert all(CHECKS[name].description for name in CHECKS)


@pytest.mark.parametrize("shape", ["openai", "anthropic", "text"])
def test_the_state_machine_keeps_every_promise_on_every_kind_of_turn(shape):
    text = shape == "text"

    def t(step, *calls, **extra):
        if text:
            body = [{"name": c.name, "arguments": c.arguments} for c in calls]
            extra.setdefault("text", json.dumps(body[0] if len(body) == 1 else body))
            return Turn(step=step, calls=[ScriptCall(c.name, c.arguments) for c in calls], finish="tool_calls", **extra)
        return turn(step, *calls, **extra)

    s = script(t("call", PARIS), t("parallel", call("get_weather", city="Rome"), call("calculate", expression="2+2")),
               t("repeat", PARIS), t("malformed", call("get_weather", city=3)),
               t("unknown_tool", call("get_wether", city="Paris")),
               Turn(step="length", calls=[call("get_weather", city="Pa")], finish="length", truncated=True,
                    text='{"name": "get_weather", "arguments": {"city": "Pa'),
               Turn(step="empty"), FINAL, shape=shape)
    found = verdicts(agent_state_machine.run, s)
    assert found == {}, {k: v.reason for k, v in found.items()}
    trace = play(s, loop_maker(agent_state_machine.run, "x"), REGISTRY, AgentPolicy().caps)
    assert trace["reply"] == "Done: it is sunny." and len(trace["requests"]) == 8
    assert [e["name"] for e in trace["executions"]] == ["get_weather", "get_weather", "calculate"]


def test_duplicate_execution_across_turns_and_within_one():
    across = verdicts(agent_naive.run, script(turn("call", PARIS), turn("repeat", PARIS), FINAL))
    assert across["duplicate_execution"].signature.title.endswith("across turns")
    within = verdicts(agent_naive.run, script(turn("malformed", PARIS, PARIS), FINAL))
    assert within["duplicate_execution"].signature.title.endswith("within one turn")
    allowed = AgentPolicy(duplicates="allow")
    assert "duplicate_execution" not in verdicts(agent_naive.run, script(turn("call", PARIS), turn("repeat", PARIS),
                                                                        FINAL), allowed)


def test_a_repeat_with_its_keys_reordered_is_the_same_call():
    reordered = call("get_weather", raw=json.dumps({"unit": "celsius", "city": "Paris"}))
    reordered.arguments = {"unit": "celsius", "city": "Paris"}
    first = call("get_weather", city="Paris", unit="celsius")
    found = verdicts(agent_naive.run, script(turn("call", first), turn("repeat", reordered), FINAL))
    assert "duplicate_execution" in found


def _openai_loop(feed):
    def run(client, tools, user_input):
        messages = [{"role": "user", "content": user_input}]
        while True:
            message = client.chat.completions.create(model="m", messages=messages).choices[0].message
            if not message.tool_calls:
                return message.content
            results = [(c, tools[c.function.name](**json.loads(c.function.arguments))) for c in message.tool_calls]
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.function.name,
                                                              "arguments": c.function.arguments}}
                for c in message.tool_calls]})
            messages += feed(results)
    return run


TWO = turn("parallel", call("get_weather", city="Paris"), call("get_weather", city="Rome"))


@pytest.mark.parametrize("feed, key", [
    (lambda rs: [], "missing result"),
    (lambda rs: [{"role": "tool", "tool_call_id": rs[1 - i][0].id, "content": json.dumps(r)}
                 for i, (c, r) in enumerate(rs)], "wrong call id"),
    (lambda rs: [{"role": "tool", "tool_call_id": c.id, "content": "ok"} for c, r in rs], "result content lost"),
    (lambda rs: [{"role": "tool", "tool_call_id": c.id, "content": json.dumps(r)} for c, r in rs]
     + [{"role": "tool", "tool_call_id": "call_made_up", "content": "{}"}], "wrong call id"),
])
def test_result_not_fed_back(feed, key):
    found = verdicts(_openai_loop(feed), script(TWO, FINAL))
    assert found["result_not_fed_back"].signature.key == f"result_not_fed_back|{key}"
    right = lambda rs: [{"role": "tool", "tool_call_id": c.id, "content": json.dumps(r)} for c, r in rs]  # noqa: E731
    assert verdicts(_openai_loop(right), script(TWO, FINAL)) == {}


REFUSES_UNKNOWN = """
import json


def run(client, tools, user_input):
    messages = [{"role": "user", "content": user_input}]
    while True:
        message = client.chat.completions.create(model="m", messages=messages).choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message)  # the SDK's own object, tool_calls and all
        for c in message.tool_calls:
            if c.function.name not in tools:
                ANSWER  # a refused call
                continue
            result = tools[c.function.name](**json.loads(c.function.arguments))
            messages.append({"role": "tool", "tool_call_id": c.id, "content": json.dumps(result)})
"""


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_a_refused_call_left_without_a_result_is_not_fed_back(tmp_path: Path, monkeypatch, shape):
    """The APIs reject a request whose assistant message holds a call no result answers; a loop
    that skips an unknown tool silently breaks there, one that answers with an error does not."""
    refused = script(turn("unknown_tool", call("fetch_weather", city="Paris")), FINAL, shape=shape)
    if shape == "openai":
        (tmp_path / "silent.py").write_text(REFUSES_UNKNOWN.replace("ANSWER", "pass"))
        (tmp_path / "polite.py").write_text(REFUSES_UNKNOWN.replace("ANSWER", "messages.append({'role': 'tool', "
                                                                    "'tool_call_id': c.id, 'content': 'unknown tool'})"))
        monkeypatch.syspath_prepend(str(tmp_path))
        silent, polite = load_target("silent:run"), load_target("polite:run")
    else:
        def loop(answer):
            def run(client, tools, user_input):
                messages = [{"role": "user", "content": user_input}]
                while True:
                    reply = client.messages.create(model="m", max_tokens=100, messages=messages)
                    uses = [b for b in reply.content if b.type == "tool_use"]
                    if not uses:
                        return "".join(b.text for b in reply.content if b.type == "text")
                    messages.append({"role": "assistant", "content": reply.content})
                    answers = [{"type": "tool_result", "tool_use_id": b.id, "content": "unknown tool"}
                               for b in uses if b.name not in tools] if answer else []
                    messages.append({"role": "user", "content": answers or "go on"})
            return run
        silent, polite = loop(False), loop(True)
    found = verdicts(silent, refused)
    assert found["result_not_fed_back"].signature.key == "result_not_fed_back|unanswered call id"
    assert "result_not_fed_back" not in verdicts(polite, refused)


def test_a_text_protocol_loop_that_forgets_a_result():
    def run(model, tools, user_input):
        history = [{"role": "user", "content": user_input}]
        for _ in range(5):
            text = model.generate(history, tools.specs())
            if not text.startswith("{"):
                return text
            c = json.loads(text)
            tools[c["name"]](**c["arguments"])  # the result is dropped
            history.append({"role": "assistant", "content": text})
        return None

    s = script(Turn(step="call", calls=[ScriptCall("get_weather", {"city": "Paris"})], finish="tool_calls",
                    text='{"name": "get_weather", "arguments": {"city": "Paris"}}'), FINAL, shape="text")
    assert set(verdicts(run, s)) == {"result_not_fed_back"}


def test_unvalidated_execution_is_judged_by_real_jsonschema():
    found = verdicts(agent_naive.run, script(turn("malformed", call("get_weather", city=["Paris"])), FINAL))
    assert found["unvalidated_execution"].signature.key == "unvalidated_execution|schema keyword type"
    unpromised = AgentPolicy(validates_calls=False)  # a loop that leaves validation to its tools
    assert "unvalidated_execution" not in verdicts(agent_naive.run, script(turn("malformed", call(
        "get_weather", city=["Paris"])), FINAL), unpromised)
    found = verdicts(agent_naive.run, script(turn("malformed", call("get_weather", city="Paris", unit="kelvin")), FINAL))
    assert found["unvalidated_execution"].signature.key == "unvalidated_execution|schema keyword enum"


def test_truncated_execution_when_a_loop_ignores_the_stop_reason():
    def run(client, tools, user_input):
        messages = [{"role": "user", "content": user_input}]
        while True:
            response = client.messages.create(model="m", max_tokens=5, messages=messages)
            uses = [b for b in response.content if b.type == "tool_use"]
            if not uses:
                return "".join(b.text for b in response.content if b.type == "text")
            results = [{"type": "tool_result", "tool_use_id": b.id, "content": json.dumps(tools[b.name](**b.input))}
                       for b in uses]
            messages += [{"role": "assistant", "content": [b.to_dict() for b in response.content]},
                         {"role": "user", "content": results}]

    cut = Turn(step="length", calls=[call("search_flights", from_city="Paris")], finish="length", truncated=True)
    found = verdicts(run, script(cut, FINAL, shape="anthropic"))
    assert "truncated_execution" in found
    assert "truncated_execution" not in verdicts(agent_state_machine.run, script(cut, FINAL, shape="anthropic"))


def _stuck(n: int) -> list:
    turns = [turn("runaway", call("get_weather", city=f"City {i}"), mode="stuck") for i in range(n)]
    return turns


def test_converged_loop_after_identical_results():
    s = script(*_stuck(6))
    policy = AgentPolicy(duplicates="allow")
    found = verdicts(agent_naive.run, s, policy)
    assert "converged_loop" in found and "ran in turn 4" in found["converged_loop"].reason
    assert "converged_loop" not in verdicts(agent_naive.run, s, AgentPolicy(convergence=0))
    assert "converged_loop" not in verdicts(agent_state_machine.run, s, policy)


def test_lost_reply():
    for reply in ("done", None):
        found = verdicts(lambda m, t, u: (m.chat.completions.create(messages=[]), reply)[1], script(FINAL))
        assert set(found) == {"lost_reply"}
    assert verdicts(lambda m, t, u: m.chat.completions.create(messages=[]).choices[0].message.content,
                    script(FINAL)) == {}


def test_crash_unless_the_policy_declares_the_error():
    def run(model, tools, user_input):
        raise ValueError("no")

    found = verdicts(run, script(FINAL))
    assert found["crash"].signature.title == "crash: ValueError in test_agent_checks.py:run"
    assert verdicts(run, script(FINAL), AgentPolicy(errors=("ValueError",))) == {}


def test_nontermination_by_model_requests_and_by_tool_executions():
    found = verdicts(agent_naive.run, script(turn("runaway", PARIS, mode="same")))
    assert found["nontermination"].signature.key == "nontermination|model requests"

    def executes_forever(model, tools, user_input):
        model.chat.completions.create(messages=[])
        while True:
            tools["get_weather"](city="Paris")

    found = verdicts(executes_forever, script(turn("call", PARIS), FINAL), AgentPolicy(duplicates="allow"))
    assert found["nontermination"].signature.key == "nontermination|tool executions"


def test_chain_break_only_when_the_policy_says_the_loop_must_notice():
    follows = call("get_weather", city="Paris")
    s = script(turn("call", call("search_flights", from_city="Rome", to_city="Paris", date="2030-01-01")),
               turn("call", follows), turn("chain_break", call("calculate", expression="1+1"), chain_break=True), FINAL)
    notice = AgentPolicy(must_notice_chain_break=True)
    found = verdicts(agent_naive.run, s, notice)
    assert set(found) == {"chain_break"} and "calculate" in found["chain_break"].reason
    assert verdicts(agent_naive.run, s) == {}
    assert verdicts(agent_state_machine.run_noticing_chain_breaks, s, notice) == {}


def test_hangs_and_deaths_are_judged_from_how_the_worker_ended():
    s = script(FINAL)
    hung = Outcome(kind="hung", frames=(("loop.py", "spin"),), detail="no result within 2 s")
    found = judge(Episode(s, None, AgentPolicy(), REGISTRY, outcome=hung))
    assert [v.verdict for v in found] == ["hang"] and found[0].signature.title == "hang: stuck in loop.py:spin"
    died = Outcome(kind="died", detail="killed by SIGSEGV")
    found = judge(Episode(s, None, AgentPolicy(), REGISTRY, outcome=died))
    assert [v.verdict for v in found] == ["crash"] and "SIGSEGV" in found[0].signature.title


LOOP = '''
import json


def run(client, tools, user_input):
    message = client.chat.completions.create(messages=[]).choices[0].message
    for call in message.tool_calls or []:
        tools[call.function.name](**json.loads(call.function.arguments))
    return message.content
'''


def test_signatures_do_not_change_when_the_loop_s_lines_move(tmp_path: Path):
    s = script(turn("unknown_tool", call("get_wether", city="Paris")), FINAL)
    ids = []
    for blank_lines in (0, 7):
        directory = tmp_path / str(blank_lines)
        directory.mkdir()
        (directory / "agent_mod.py").write_text("\n" * blank_lines + LOOP)
        loop = load_target("agent_mod.py:run", cwd=str(directory))
        ids.append(verdicts(loop, s)["crash"].signature.id)
    assert ids[0] == ids[1]


def test_a_loop_editing_the_schemas_it_is_given_does_not_change_what_the_oracle_judges_with():
    def strict(client, tools, user_input):
        for spec in tools.openai():
            spec["function"]["parameters"]["required"] = []  # what an over-eager strict-mode helper might do
        return agent_naive.run(client, tools, user_input)

    found = verdicts(strict, script(turn("malformed", call("get_weather", unit="celsius")), FINAL))
    assert found["unvalidated_execution"].signature.key == "unvalidated_execution|schema keyword required"
    assert REGISTRY["get_weather"].schema["required"] == ["city"]


def test_an_async_loop_runs_against_the_awaitable_fakes():
    async def run(client, tools, user_input):
        messages = [{"role": "user", "content": user_input}]
        while True:
            response = await client.chat.completions.create(model="m", messages=messages)
            message = response.choices[0].message
            if not message.tool_calls:
                return message.content
            messages.append({"role": "assistant", "tool_calls": [c.to_dict() for c in message.tool_calls]})
            for c in message.tool_calls:  # runs everything it is given, like the naive loop
                result = tools[c.function.name](**json.loads(c.function.arguments))
                messages.append({"role": "tool", "tool_call_id": c.id, "content": json.dumps(result)})

    assert verdicts(run, script(turn("call", PARIS), FINAL)) == {}
    assert set(verdicts(run, script(turn("call", PARIS), turn("repeat", PARIS), FINAL))) == {"duplicate_execution"}


def test_a_call_the_model_wrote_as_text_needs_no_result_under_an_id():
    def reads_text_calls(client, tools, user_input):  # an Anthropic loop that also runs calls written as text
        messages = [{"role": "user", "content": user_input}]
        while True:
            response = client.messages.create(model="m", max_tokens=5, messages=messages)
            text = "".join(b.text for b in response.content if b.type == "text")
            if not text.startswith("{"):
                return text
            call = json.loads(text)
            result = tools[call["name"]](**call["arguments"])
            messages += [{"role": "assistant", "content": text}, {"role": "user", "content": json.dumps(result)}]

    written = Turn(step="malformed", calls=[ScriptCall("get_weather", {"city": "Paris"})],
                   content='{"name": "get_weather", "arguments": {"city": "Paris"}}', note="written as text")
    assert verdicts(reads_text_calls, script(written, FINAL, shape="anthropic")) == {}


FAILING = turn("tool_error", ScriptCall("get_weather", {"city": "Paris"}, raw='{"city": "Paris"}', fails=True))


def _reporting_loop(report_failures: bool, catch: bool = True):
    """An OpenAI loop that catches a tool's failure and either tells the model or drops it."""
    def run(client, tools, user_input):
        messages = [{"role": "user", "content": user_input}]
        while True:
            message = client.chat.completions.create(model="m", messages=messages).choices[0].message
            if not message.tool_calls:
                return message.content
            messages.append(message)
            for c in message.tool_calls:
                try:
                    content = json.dumps(tools[c.function.name](**json.loads(c.function.arguments)))
                except Exception as exc:  # noqa: BLE001
                    if not catch:
                        raise
                    if not report_failures:
                        continue
                    content = f"error: {exc}"
                messages.append({"role": "tool", "tool_call_id": c.id, "content": content})
    return run


def test_a_tool_that_fails_must_be_reported_to_the_model_under_its_call_id():
    s = script(FAILING, FINAL)
    assert s.turns[0].calls[0].fails and ScriptCall.from_json(s.turns[0].calls[0].to_json()).fails
    dropped = verdicts(_reporting_loop(report_failures=False), s)
    assert dropped["result_not_fed_back"].signature.key == "result_not_fed_back|missing result"
    assert "its tool raised ToolFailure" in dropped["result_not_fed_back"].reason
    assert verdicts(_reporting_loop(report_failures=True), s) == {}


def test_a_tool_failure_that_escapes_run_is_a_crash_unless_the_policy_declares_it():
    s = script(FAILING, FINAL)
    escaped = verdicts(_reporting_loop(True, catch=False), s)
    assert escaped["crash"].signature.title.startswith("crash: fuzzer.harnesses.agent.tools.ToolFailure in")
    assert "crash" not in verdicts(_reporting_loop(True, catch=False), s, AgentPolicy(errors=("ToolFailure",)))


def _smolagents_loop(observe: bool):
    """smolagents' ToolCallingAgent, shaped: it reads the calls from the response's tool_calls, but
    sends them back as assistant text ("Calling tools: ...") and each result as a user message
    ("Observation: ..."), not as tool_calls and role tool messages; the API accepts that."""

    def run(client, tools, user_input):
        messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": user_input}]
        for _ in range(8):
            message = client.chat.completions.create(model="m", messages=messages).choices[0].message
            if not message.tool_calls:
                return message.content
            shown = [{"id": c.id, "type": "function", "function": {"name": c.function.name,
                                                                   "arguments": c.function.arguments}}
                     for c in message.tool_calls]
            messages.append({"role": "assistant", "content": [{"type": "text", "text": f"Calling tools:\n{shown}"}]})
            for c in message.tool_calls:
                result = tools[c.function.name](**json.loads(c.function.arguments))
                if observe:
                    messages.append({"role": "user", "content": [{"type": "text", "text": f"Observation:\n{result}"}]})
        return None

    return run


def test_results_fed_back_as_text_by_a_loop_that_sends_calls_back_as_text():
    s = script(turn("call", call("calculate", expression="2+2")), TWO, FINAL)
    assert verdicts(_smolagents_loop(observe=True), s) == {}
    dropped = verdicts(_smolagents_loop(observe=False), s)
    assert dropped["result_not_fed_back"].signature.key == "result_not_fed_back|missing result"


class UnexpectedModelBehavior(Exception):
    """pydantic-ai's error a user declares ..."""


class IncompleteToolCall(UnexpectedModelBehavior):
    """... and the subclass pydantic-ai raises when the model's output stopped mid-call."""


@pytest.mark.parametrize("error, raised", [
    ("UnexpectedModelBehavior", IncompleteToolCall("the model stopped mid-call")),
    ("requests.RequestException", __import__("requests").HTTPError("502 Server Error")),
])
def test_a_declared_error_covers_re_exports_and_subclasses(error, raised):
    def run(model, tools, user_input):
        model.chat.completions.create(messages=[])
        raise raised

    assert "crash" in verdicts(run, script(FINAL))
    assert verdicts(run, script(FINAL), AgentPolicy(errors=(error,))) == {}
