"""The scripted model's responses as the vendor SDKs shape them: small attribute records with the
SDKs' field names (awaitable too, for loops written against the async clients), and the one
response of a turn in each structured shape — what :mod:`fuzzer.harnesses.agent.models` answers a
request with, and what :mod:`fuzzer.harnesses.agent.streaming` cuts into chunks."""

from __future__ import annotations

import json
from typing import Any, Optional

from fuzzer.harnesses.agent.script import LENGTH, Turn

MODEL_NAME = "toolfuzz-scripted"
_CREATED = 1_760_000_000


def call_id(shape: str, window: int, index: int) -> str:
    """The id of call ``index`` of the response to request ``window`` (unique in an episode)."""
    return f"{'toolu' if shape == 'anthropic' else 'call'}_t{window + 1}c{index + 1}"


# --------------------------------------------------------------------------------------------
# Response records


class _Record:
    """An attribute record with a dict form (the SDK objects' ``to_dict`` / ``model_dump``).
    ``_fields`` gives the dict form's key order; every field is given when a record is made."""

    _fields: tuple = ()

    def __init__(self, **values: Any):
        self.__dict__.update(values)  # one C call: records are made on every request

    def to_dict(self, *, exclude_none: bool = False, **_: Any) -> dict:
        out = {}
        for name in self._fields:
            value = _dict_form(self.__dict__[name], exclude_none)
            if value is not None or not exclude_none:
                out[name] = value
        return out

    def model_dump(self, *, exclude_none: bool = False, **kwargs: Any) -> dict:
        return self.to_dict(exclude_none=exclude_none)

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={self.__dict__[n]!r}" for n in self._fields)
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_dict() == other.to_dict()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


def _dict_form(value: Any, exclude_none: bool) -> Any:
    if isinstance(value, _Record):
        return value.to_dict(exclude_none=exclude_none)
    if isinstance(value, list):
        return [_dict_form(v, exclude_none) for v in value]
    if isinstance(value, dict):
        return {k: _dict_form(v, exclude_none) for k, v in value.items()}
    return value


class Function(_Record):
    _fields = ("name", "arguments")


class ChatCompletionMessageToolCall(_Record):
    _fields = ("id", "type", "function")


class ChatCompletionMessage(_Record):
    _fields = ("role", "content", "refusal", "tool_calls")


class Choice(_Record):
    _fields = ("index", "message", "finish_reason", "logprobs")


class CompletionUsage(_Record):
    _fields = ("prompt_tokens", "completion_tokens", "total_tokens")


class _Awaitable:
    """A response an async loop can ``await`` too (``await client.chat.completions.create(...)``,
    as with ``AsyncOpenAI`` / ``AsyncAnthropic``): awaiting it gives the response itself."""

    def __await__(self) -> Any:
        if False:  # pragma: no cover - makes this a generator: the await finishes at once
            yield
        return self


class ChatCompletion(_Awaitable, _Record):
    _fields = ("id", "object", "created", "model", "choices", "usage")


class TextBlock(_Record):
    _fields = ("type", "text")


class ToolUseBlock(_Record):
    _fields = ("type", "id", "name", "input")


class Usage(_Record):
    _fields = ("input_tokens", "output_tokens")


class Message(_Awaitable, _Record):
    _fields = ("id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage")


# --------------------------------------------------------------------------------------------
# What a request's messages feed back


def openai_response(turn: Turn, window: int, *, model: str = MODEL_NAME) -> ChatCompletion:
    calls = [ChatCompletionMessageToolCall(id=call_id("openai", window, j), type="function",
                                           function=Function(name=c.name, arguments=c.raw))
             for j, c in enumerate(turn.calls) if c.raw is not None]
    finish = "length" if turn.finish == LENGTH else "tool_calls" if calls else "stop"
    message = ChatCompletionMessage(role="assistant", content=turn.content or None, refusal=None,
                                    tool_calls=calls or None)
    return ChatCompletion(id=f"chatcmpl-tf{window + 1}", object="chat.completion", created=_CREATED, model=model,
                          choices=[Choice(index=0, message=message, finish_reason=finish, logprobs=None)],
                          usage=CompletionUsage(prompt_tokens=0, completion_tokens=0, total_tokens=0))


def anthropic_response(turn: Turn, window: int, *, model: str = MODEL_NAME) -> Message:
    blocks: list = [TextBlock(type="text", text=turn.content)] if turn.content else []
    for j, c in enumerate(turn.calls):
        if c.raw is not None:
            blocks.append(ToolUseBlock(type="tool_use", id=call_id("anthropic", window, j), name=c.name,
                                       input=_input(c.raw, c.arguments)))
    uses = any(isinstance(b, ToolUseBlock) for b in blocks)
    stop = "max_tokens" if turn.finish == LENGTH else "tool_use" if uses else "end_turn"
    return Message(id=f"msg_tf{window + 1}", type="message", role="assistant", model=model, content=blocks,
                   stop_reason=stop, stop_sequence=None, usage=Usage(input_tokens=0, output_tokens=0))


def _input(raw: str, arguments: Optional[dict]) -> dict:
    """The tool_use input: the raw JSON parsed (its key order kept), else the arguments."""
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else dict(arguments or {})
