"""Tool-use loops written against streamed responses, as users write them: the clean state machine
(``fuzzer.targets.agent_state_machine``) asking with ``stream=True`` or through the SDKs'
``.stream(...)`` helpers and assembling the deltas itself; and one that runs a call as soon as its
first chunk arrives (its arguments still streaming)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from fuzzer.targets.agent_state_machine import MODEL, AgentStateMachine, AnthropicShape, OpenAIShape


class StreamedOpenAI(OpenAIShape):
    """``stream=True``: the deltas assembled by index (id and name once, arguments concatenated)."""

    def ask(self, history: list) -> Any:
        stream = self.model.chat.completions.create(model=MODEL, messages=history, tools=self.tools.openai(),
                                                    stream=True)
        content, calls, finish = [], {}, None
        for chunk in stream:
            if not chunk.choices:
                continue  # the usage chunk
            choice = chunk.choices[0]
            if choice.delta.content:
                content.append(choice.delta.content)
            for tc in choice.delta.tool_calls or []:
                call = calls.setdefault(tc.index, {"id": None, "name": None, "arguments": ""})
                call["id"] = tc.id or call["id"]
                if tc.function is not None:
                    call["name"] = tc.function.name or call["name"]
                    call["arguments"] += tc.function.arguments or ""
            finish = choice.finish_reason or finish
        tool_calls = [SimpleNamespace(id=c["id"], type="function",
                                      function=SimpleNamespace(name=c["name"], arguments=c["arguments"]))
                      for _i, c in sorted(calls.items())]
        message = SimpleNamespace(role="assistant", content="".join(content) or None, tool_calls=tool_calls or None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason=finish)])


class HelperOpenAI(OpenAIShape):
    """``client.chat.completions.stream(...)``: the SDK assembles the completion (and raises
    ``LengthFinishReasonError`` for one cut at the length limit, as it does against the API)."""

    def ask(self, history: list) -> Any:
        import openai

        with self.model.chat.completions.stream(model=MODEL, messages=history, tools=self.tools.openai()) as stream:
            for _event in stream:
                pass
            try:
                return stream.get_final_completion()
            except openai.LengthFinishReasonError:
                return SimpleNamespace(choices=[SimpleNamespace(message=None, finish_reason="length")])


class StreamedAnthropic(AnthropicShape):
    """``stream=True``: the events assembled by block (text deltas, input_json_delta pieces)."""

    def ask(self, history: list) -> Any:
        stream = self.model.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=history,
                                            tools=self.tools.anthropic(), stream=True)
        blocks: dict = {}
        stop = None
        for event in stream:
            if event.type == "content_block_start":
                block = event.content_block
                blocks[event.index] = {"type": block.type, "text": "", "json": "",
                                       "id": getattr(block, "id", None), "name": getattr(block, "name", None)}
            elif event.type == "content_block_delta":
                if event.delta.type == "text_delta":
                    blocks[event.index]["text"] += event.delta.text
                else:
                    blocks[event.index]["json"] += event.delta.partial_json
            elif event.type == "message_delta":
                stop = event.delta.stop_reason
        content = []
        for _i, b in sorted(blocks.items()):
            if b["type"] == "text":
                content.append(SimpleNamespace(type="text", text=b["text"]))
            else:
                content.append(SimpleNamespace(type="tool_use", id=b["id"], name=b["name"],
                                               input=json.loads(b["json"] or "{}")))
        return SimpleNamespace(content=content, stop_reason=stop)


class HelperAnthropic(AnthropicShape):
    """``client.messages.stream(...)``: the SDK assembles the message."""

    def ask(self, history: list) -> Any:
        with self.model.messages.stream(model="claude-sonnet-4-5", max_tokens=1024, messages=history,
                                        tools=self.tools.anthropic()) as stream:
            return stream.get_final_message()


class EagerOpenAI(StreamedOpenAI):
    """Runs each call as soon as its first chunk (id and name) arrives, with whatever arguments
    parse then (none yet): the bug of LangChain #38682."""

    def ask(self, history: list) -> Any:
        stream = self.model.chat.completions.create(model=MODEL, messages=history, tools=self.tools.openai(),
                                                    stream=True)
        self.ran = {}
        chunks = []
        for chunk in stream:
            chunks.append(chunk)
            for choice in chunk.choices:
                for tc in choice.delta.tool_calls or []:
                    if tc.id and tc.function and tc.function.name in self.tools and tc.id not in self.ran:
                        try:
                            self.ran[tc.id] = self.tools[tc.function.name](json.loads(tc.function.arguments or "{}"))
                        except Exception as exc:  # noqa: BLE001
                            self.ran[tc.id] = f"error: {exc}"
        return _assembled(chunks)


def _assembled(chunks: list) -> Any:
    calls, content, finish = {}, [], None
    for chunk in chunks:
        for choice in chunk.choices:
            content.append(choice.delta.content or "")
            for tc in choice.delta.tool_calls or []:
                call = calls.setdefault(tc.index, {"id": None, "name": None, "arguments": ""})
                call["id"] = tc.id or call["id"]
                call["name"] = (tc.function.name if tc.function else None) or call["name"]
                call["arguments"] += (tc.function.arguments if tc.function else "") or ""
            finish = choice.finish_reason or finish
    tool_calls = [SimpleNamespace(id=c["id"], type="function",
                                  function=SimpleNamespace(name=c["name"], arguments=c["arguments"]))
                  for _i, c in sorted(calls.items())]
    message = SimpleNamespace(role="assistant", content="".join(content) or None, tool_calls=tool_calls or None)
    return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason=finish)])


def _machine(shape: type) -> Any:
    def run(model: Any, tools: Any, user_input: str) -> Any:
        machine = AgentStateMachine(model, tools)
        machine.shape = shape(model, tools)
        return machine.run(user_input)
    return run


openai_stream = _machine(StreamedOpenAI)
openai_helper = _machine(HelperOpenAI)
anthropic_stream = _machine(StreamedAnthropic)
anthropic_helper = _machine(HelperAnthropic)
openai_eager = _machine(EagerOpenAI)
