"""The scripted model answering ``stream=True`` and the SDKs' ``.stream(...)`` helpers: the chunks are
the SDKs' types, cut as servers cut them, and assemble into exactly the whole response; a loop that
runs a call before its arguments have all arrived is caught (``premature_execution``)."""

from __future__ import annotations

import json

import pytest
from anthropic.types import Message
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from fuzzer.harnesses.agent.checks import Episode, judge
from fuzzer.harnesses.agent.models import anthropic_response, openai_response
from fuzzer.harnesses.agent.policy import AgentPolicy
from fuzzer.harnesses.agent.generation import ScriptSetup, generate_script
from fuzzer.harnesses.agent.script import Script
from fuzzer.harnesses.agent.streaming import anthropic_events, openai_chunks, stream_of
from fuzzer.harnesses.agent.trace import Caps, Recorder
from fuzzer.harnesses.agent.worker import loop_maker, play
from strategies._internal.source import RandomSource
from strategies._internal.tools import builtin_registry

REGISTRY = builtin_registry()


def turns(shape: str, n: int = 40) -> list:
    setup = ScriptSetup(REGISTRY, shape=shape)
    return [t for seed in range(n) for t in generate_script(RandomSource(seed), setup).turns]


def test_a_streamed_openai_turn_is_sdk_chunks_that_assemble_into_the_whole_response():
    cut = 0
    for w, turn in enumerate(turns("openai")):
        dicts, complete_at = openai_chunks(turn, w % 5, model="m")
        state = ChatCompletionStreamState()
        for d in dicts:
            state.handle_chunk(ChatCompletionChunk.model_validate(d))
        final = state.get_final_completion() if dicts[-2]["choices"][0]["finish_reason"] != "length" else None
        whole = ChatCompletion.model_validate(openai_response(turn, w % 5, model="m").to_dict())
        snapshot = state.current_completion_snapshot.choices[0]
        assert snapshot.finish_reason == whole.choices[0].finish_reason
        assert (snapshot.message.content or None) == whole.choices[0].message.content
        got = [(t.id, t.function.name, t.function.arguments) for t in snapshot.message.tool_calls or []]
        want = [(t.id, t.function.name, t.function.arguments) for t in whole.choices[0].message.tool_calls or []]
        assert got == want
        if final is not None:
            assert [t.id for t in final.choices[0].message.tool_calls or []] == [w_[0] for w_ in want]
        assert len(complete_at) == len(want) and all(0 < k <= len(dicts) for k in complete_at)
        cut += any(len(d["choices"][0]["delta"].get("tool_calls") or ()) and
                   0 < len(d["choices"][0]["delta"]["tool_calls"][0]["function"].get("arguments") or "") < 7
                   for d in dicts if d.get("choices"))
    assert cut > 15  # arguments come in pieces, a token or a few at a time


def test_a_streamed_anthropic_turn_is_sdk_events_that_assemble_into_the_whole_message():
    from anthropic.lib.streaming._messages import accumulate_event
    from fuzzer.harnesses.stream.chunks import anthropic_model

    for w, turn in enumerate(turns("anthropic")):
        dicts, complete_at = anthropic_events(turn, w % 5, model="m")
        snapshot, bufs = None, {}
        for d in dicts:
            snapshot = accumulate_event(event=anthropic_model(d), current_snapshot=snapshot, json_bufs=bufs)
        whole = Message.model_validate(anthropic_response(turn, w % 5, model="m").to_dict())
        assert snapshot.stop_reason == whole.stop_reason
        assert [b.model_dump(exclude_none=True) for b in snapshot.content] == \
            [b.model_dump(exclude_none=True) for b in whole.content]
        assert len(complete_at) == sum(b.type == "tool_use" for b in whole.content)


def test_the_stream_records_have_the_sdk_fields_and_validate_as_them():
    from anthropic.types import RawMessageStreamEvent
    from pydantic import TypeAdapter

    events = TypeAdapter(RawMessageStreamEvent)
    for shape in ("openai", "anthropic"):
        for turn in turns(shape, 30):
            script = Script.from_json({"shape": shape, "formats": ["json"], "user": "hi", "turns": [turn.to_json()]})
            recorder = Recorder(script, Caps())
            recorder.request({})
            items = list(stream_of(shape, turn, recorder, model="m"))
            for item in items:
                if shape == "openai":
                    ChatCompletionChunk.model_validate(item.to_dict())
                    if item.choices:
                        delta = item.choices[0].delta
                        assert hasattr(delta, "content") and hasattr(delta, "tool_calls")
                else:
                    events.validate_python(item.to_dict())
            assert recorder._stream[1] == len(items)  # every chunk taken was counted


# -- loops in-process ----------------------------------------------------------------------------------


def _script(shape: str) -> Script:
    arguments = {"city": "Paris", "unit": "celsius"}
    return Script.from_json({"shape": shape, "formats": ["json"], "user": "What is the weather in Paris?", "turns": [
        {"step": "call", "finish": "tool_calls",
         "calls": [{"name": "get_weather", "arguments": arguments, "raw": json.dumps(arguments)}]},
        {"step": "final", "text": "Sunny.", "content": "Sunny.", "final": True}]})


def _trace(loop, shape: str) -> dict:
    script = _script(shape)
    trace = play(script, loop_maker(loop, "tests:loop"), REGISTRY, AgentPolicy().caps)
    assert trace["error"] is None, trace["error"]
    assert [e["name"] for e in trace["executions"]] == ["get_weather"]  # the call ran: the test is not vacuous
    return trace


def _verdicts(loop, shape: str) -> list:
    trace = _trace(loop, shape)
    return [v.verdict for v in judge(Episode(_script(shape), trace, AgentPolicy(), REGISTRY))]


def _openai_stream_loop(eager: bool):
    def run(model, tools, user_input):
        history = [{"role": "user", "content": user_input}]
        for _turn in range(5):
            stream = model.chat.completions.create(model="m", messages=history, tools=tools.openai(), stream=True)
            calls, content, ran = {}, "", {}
            for chunk in stream:
                for choice in chunk.choices:
                    content += choice.delta.content or ""
                    for tc in choice.delta.tool_calls or []:
                        call = calls.setdefault(tc.index, {"id": tc.id, "name": tc.function.name, "arguments": ""})
                        call["arguments"] += tc.function.arguments or ""
                        if eager and tc.id and tc.id not in ran:  # the call runs on its first chunk
                            ran[tc.id] = tools[tc.function.name](json.loads(call["arguments"] or "{}"))
            if not calls:
                return content
            history.append({"role": "assistant", "content": content or None, "tool_calls": [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls.values()]})
            for c in calls.values():
                result = ran.get(c["id"]) if eager else tools[c["name"]](json.loads(c["arguments"]))
                history.append({"role": "tool", "tool_call_id": c["id"], "content": json.dumps(result)})
        return None
    return run


def test_a_loop_that_reads_the_whole_stream_before_it_runs_a_call_keeps_its_promises():
    assert _verdicts(_openai_stream_loop(eager=False), "openai") == []


def test_a_loop_that_runs_a_call_on_its_first_chunk_is_caught():
    assert "premature_execution" in _verdicts(_openai_stream_loop(eager=True), "openai")


def test_the_sdk_stream_helpers_run_over_the_scripted_streams():
    def openai_loop(model, tools, user_input):
        history = [{"role": "user", "content": user_input}]
        for _turn in range(5):
            with model.chat.completions.stream(model="m", messages=history, tools=tools.openai()) as stream:
                kinds = {event.type for event in stream}
                message = stream.get_final_completion().choices[0].message
            if not message.tool_calls:
                assert "content.done" in kinds
                return message.content
            assert "tool_calls.function.arguments.done" in kinds
            history.append({"role": "assistant", "tool_calls": [t.model_dump() for t in message.tool_calls]})
            for t in message.tool_calls:
                result = tools[t.function.name](json.loads(t.function.arguments))
                history.append({"role": "tool", "tool_call_id": t.id, "content": json.dumps(result)})
        return None

    def anthropic_loop(model, tools, user_input):
        history = [{"role": "user", "content": user_input}]
        for _turn in range(5):
            with model.messages.stream(model="m", max_tokens=100, messages=history, tools=tools.anthropic()) as stream:
                message = stream.get_final_message()
            uses = [b for b in message.content if b.type == "tool_use"]
            if not uses:
                return "".join(b.text for b in message.content if b.type == "text")
            history.append({"role": "assistant", "content": [b.model_dump() for b in message.content]})
            history.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": b.id, "content": json.dumps(tools[b.name](b.input))}
                for b in uses]})
        return None

    async def async_anthropic_loop(model, tools, user_input):
        history = [{"role": "user", "content": user_input}]
        for _turn in range(5):
            text, uses = "", []
            async with model.messages.stream(model="m", max_tokens=100, messages=history,
                                             tools=tools.anthropic()) as stream:
                async for event in stream:
                    if event.type == "text":
                        text += event.text
                message = await stream.get_final_message()
            uses = [b for b in message.content if b.type == "tool_use"]
            if not uses:
                return text
            history.append({"role": "assistant", "content": [b.model_dump() for b in message.content]})
            history.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": b.id, "content": json.dumps(tools[b.name](b.input))}
                for b in uses]})
        return None

    assert _verdicts(openai_loop, "openai") == []
    assert _verdicts(anthropic_loop, "anthropic") == []
    assert _verdicts(async_anthropic_loop, "anthropic") == []


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_an_async_loop_reads_the_stream_with_async_for(shape):
    async def run(model, tools, user_input):
        history = [{"role": "user", "content": user_input}]
        if shape == "openai":
            stream = await model.chat.completions.create(model="m", messages=history, tools=tools.openai(), stream=True)
            names = [tc.function.name async for chunk in stream for choice in chunk.choices
                     for tc in choice.delta.tool_calls or [] if tc.function.name]
        else:
            stream = await model.messages.create(model="m", max_tokens=9, messages=history, tools=tools.anthropic(),
                                                 stream=True)
            names = [e.content_block.name async for e in stream if e.type == "content_block_start"
                     and e.content_block.type == "tool_use"]
        return " ".join(names)

    script = _script(shape)
    trace = play(script, loop_maker(run, "tests:run"), REGISTRY, AgentPolicy().caps)
    assert trace["error"] is None and trace["reply"] == "get_weather", trace
