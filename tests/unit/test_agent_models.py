"""The scripted model's three shapes: the fakes' dict forms are what the vendor SDKs accept, their
attributes are where loops look, and every request is answered from the script and recorded."""

from __future__ import annotations

import json

import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletion

from fuzzer.harnesses.agent.models import (AnthropicClient, OpenAIClient, TextModel, anthropic_feedback, anthropic_response,
                                 call_id, openai_feedback, openai_response, text_feedback)
from fuzzer.harnesses.agent.generation import ScriptSetup, generate_script
from fuzzer.harnesses.agent.trace import Caps, EpisodeAborted, Recorder
from strategies._internal.source import RandomSource
from strategies._internal.tools import builtin_registry

REGISTRY = builtin_registry()


def turns(shape: str, n: int = 250) -> list:
    setup = ScriptSetup(REGISTRY, shape=shape)
    return [t for seed in range(n) for t in generate_script(RandomSource(seed), setup).turns]


def test_every_openai_response_validates_as_a_chat_completion():
    kinds = set()
    for w, turn in enumerate(turns("openai")):
        fake = openai_response(turn, w % 7)
        sdk = ChatCompletion.model_validate(fake.to_dict())
        choice, mine = sdk.choices[0], fake.choices[0]
        assert choice.finish_reason == mine.finish_reason
        assert choice.message.content == mine.message.content
        emitted = [c for c in turn.calls if c.raw is not None]
        assert [tc.function.arguments for tc in choice.message.tool_calls or []] == [c.raw for c in emitted]
        assert [tc.id for tc in choice.message.tool_calls or []] == \
            [call_id("openai", w % 7, j) for j, c in enumerate(turn.calls) if c.raw is not None]
        kinds.add(choice.finish_reason)
    assert kinds == {"tool_calls", "stop", "length"}


def test_every_anthropic_response_validates_as_a_message():
    reasons = set()
    for w, turn in enumerate(turns("anthropic")):
        fake = anthropic_response(turn, w % 7)
        sdk = Message.model_validate(fake.to_dict())
        assert sdk.stop_reason == fake.stop_reason
        uses = [b for b in sdk.content if b.type == "tool_use"]
        assert [(b.name, b.input) for b in uses] == [(c.name, json.loads(c.raw)) for c in turn.calls if c.raw]
        texts = [b.text for b in sdk.content if b.type == "text"]
        assert texts == ([turn.content] if turn.content else [])
        reasons.add(sdk.stop_reason)
    assert reasons == {"tool_use", "end_turn", "max_tokens"}


def test_the_fakes_have_the_sdk_attribute_paths_loops_use():
    turn = next(t for t in turns("openai") if t.step == "parallel")
    response = openai_response(turn, 0)
    call = response.choices[0].message.tool_calls[1]
    assert (call.id, call.type, call.function.name) == ("call_t1c2", "function", turn.calls[1].name)
    assert json.loads(call.function.arguments) == turn.calls[1].arguments
    assert response.choices[0].message.model_dump(exclude_none=True)["role"] == "assistant"
    message = anthropic_response(next(t for t in turns("anthropic") if t.step == "call"), 2)
    block = [b for b in message.content if b.type == "tool_use"][0]
    assert block.id == "toolu_t3c1" and isinstance(block.input, dict)


def _recorder(shape: str, max_turns: int = 3) -> Recorder:
    script = generate_script(RandomSource(4), ScriptSetup(REGISTRY, shape=shape))
    return Recorder(script, Caps(max_turns=max_turns, max_tool_calls=5))


def test_each_shape_answers_requests_from_the_script_until_max_turns():
    for shape, ask in (("text", lambda m, msgs: m.generate(msgs, [])),
                       ("openai", lambda m, msgs: m.chat.completions.create(model="x", messages=msgs)),
                       ("anthropic", lambda m, msgs: m.messages.create(model="x", max_tokens=9, messages=msgs))):
        recorder = _recorder(shape)
        model = {"text": TextModel, "openai": OpenAIClient, "anthropic": AnthropicClient}[shape](recorder)
        for _ in range(3):
            ask(model, [{"role": "user", "content": "hi"}])
        with pytest.raises(EpisodeAborted):
            ask(model, [{"role": "user", "content": "hi"}])
        assert len(recorder.requests) == 4 and recorder.aborted == "model"
        assert ask is not None


def test_text_model_returns_the_turn_text():
    recorder = _recorder("text")
    assert TextModel(recorder)([{"role": "user", "content": "hi"}]) == recorder.script.turns[0].text


def test_feedback_reads_dicts_and_sdk_objects():
    from openai.types.chat import ChatCompletionToolMessageParam  # noqa: F401 - a TypedDict, i.e. a dict
    from pydantic import BaseModel

    class ToolMessage(BaseModel):  # a loop may keep pydantic messages in its history
        role: str
        tool_call_id: str
        content: str

    from openai.types.chat import ChatCompletionMessage
    from openai.types.chat.chat_completion_message_tool_call import ChatCompletionMessageToolCall, Function

    # the assistant message as the SDK returns it (loops append it to their history as it is)
    assistant = ChatCompletionMessage(role="assistant", content=None, tool_calls=[
        ChatCompletionMessageToolCall(id="call_t1c1", type="function", function=Function(name="f", arguments="{}")),
        ChatCompletionMessageToolCall(id="call_t1c2", type="function", function=Function(name="f", arguments="{}"))])
    messages = [{"role": "user", "content": "hi"}, assistant,
                {"role": "tool", "tool_call_id": "call_t1c1", "content": json.dumps({"ref": "tf-1-1"})},
                ToolMessage(role="tool", tool_call_id="call_t1c2", content="{'ref': 'tf-1-2'}")]
    assert openai_feedback(messages) == {"messages": 4, "results": [["call_t1c1", ["tf-1-1"]],
                                                                   ["call_t1c2", ["tf-1-2"]]],
                                         "calls": ["call_t1c1", "call_t1c2"], "refs": {"tf-1-1": 1, "tf-1-2": 1}}
    blocks = [{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_t1c1", "name": "f", "input": {}},
                                                {"type": "tool_use", "id": "toolu_t1c2", "name": "f", "input": {}}]},
              {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_t1c1", "content": "tf-1-1"},
        {"type": "tool_result", "tool_use_id": "toolu_t1c2", "content": [{"type": "text", "text": "ok tf-1-2"}]}]}]
    assert anthropic_feedback(blocks)["results"] == [["toolu_t1c1", ["tf-1-1"]], ["toolu_t1c2", ["tf-1-2"]]]
    assert anthropic_feedback(blocks)["calls"] == ["toolu_t1c1", "toolu_t1c2"]
    assert anthropic_feedback(blocks)["refs"] == {"tf-1-1": 1, "tf-1-2": 1}
    assert text_feedback([{"role": "tool", "content": "tf-2-1 and tf-2-1"}, "tf-u1"])["refs"] == {"tf-2-1": 2,
                                                                                                 "tf-u1": 1}


@pytest.mark.parametrize("given_shape, loop, fits", [
    ("text", lambda m: m.chat.completions.create(model="x", messages=[]), "openai"),
    ("anthropic", lambda m: m.chat.completions.create(model="x", messages=[]), "openai"),
    ("openai", lambda m: m.messages.create(model="x", max_tokens=9, messages=[]), "anthropic"),
    ("openai", lambda m: m.generate([], []), "text"),
    ("anthropic", lambda m: m([]), "text"),
])
def test_a_loop_written_against_another_shape_is_told_which_fits(given_shape, loop, fits):
    from fuzzer.harnesses.agent.models import shape_fitting

    model = {"text": TextModel, "openai": OpenAIClient, "anthropic": AnthropicClient}[given_shape](_recorder(given_shape))
    with pytest.raises((AttributeError, TypeError)) as info:
        loop(model)
    assert shape_fitting(info.value, model) == fits


def test_the_loops_own_attribute_errors_are_not_taken_for_a_shape():
    from fuzzer.harnesses.agent.models import shape_fitting

    model = OpenAIClient(_recorder("openai"))
    assert shape_fitting(AttributeError("'dict' object has no attribute 'chat'"), model) is None  # not the model
    try:
        model.chat.completions.nope  # the right client, a wrong path inside it: the loop's bug
    except AttributeError as exc:
        assert shape_fitting(exc, model) is None
    try:
        object().chat  # noqa: B018
    except AttributeError as exc:
        assert shape_fitting(exc, model) is None
