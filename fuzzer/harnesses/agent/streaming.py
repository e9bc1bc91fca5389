"""The scripted model's answers as streams: ``stream=True`` and the SDKs' ``.stream(...)`` helpers.

A loop that calls ``client.chat.completions.create(..., stream=True)`` (or
``client.messages.create(..., stream=True)``) gets the turn as a chunk stream, split as servers
split them (:func:`fuzzer.harnesses.stream.chunks.server_cuts`: arguments and content in pieces of
a token or a few), built by the stream harness's chunk builders (:mod:`fuzzer.harnesses.stream.chunks`)
with the ids, names, arguments and finish reason of the turn's whole response
(:func:`~fuzzer.harnesses.agent.responses.openai_response` /
:func:`~fuzzer.harnesses.agent.responses.anthropic_response`), so whether a loop reads a turn whole
or streamed, it is given the same calls. The chunks are attribute records with the SDK types'
field names (no SDK imported: ``to_dict()`` / ``model_dump()`` give the dicts, which the tests
validate with the SDKs' own models); the stream iterates (``for`` and ``async for``), is a context
manager and has ``close()``.

``client.chat.completions.stream(...)`` and ``client.messages.stream(...)`` hand the same chunks,
as the SDK's own models, to the SDK's own stream helpers (``ChatCompletionStream``, ``MessageStream``
and their managers, sync and async): a loop written against them sees exactly the events and the
final message the SDK makes. They need the SDK installed, as such a loop does anyway.

Every chunk the loop takes is counted (:meth:`~fuzzer.harnesses.agent.trace.Recorder.consumed`):
a tool executed before the chunks that carry its call's arguments have all arrived is
``premature_execution`` (:mod:`fuzzer.harnesses.agent.checks`).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from fuzzer.harnesses.agent.responses import _Awaitable, _Record

# --------------------------------------------------------------------------------------------
# Chunk records (the SDK types' fields; a field the API leaves out is None)


def _record(name: str, fields: tuple, **nested: Callable) -> type:
    def make(cls: type, data: dict) -> Any:
        values = {}
        for field in cls._fields:
            value = data.get(field)
            convert = nested.get(field)
            if convert is not None and value is not None:
                value = [convert(v) for v in value] if isinstance(value, list) else convert(value)
            values[field] = value
        return cls(**values)

    return type(name, (_Record,), {"_fields": fields, "of": classmethod(make)})


ChoiceDeltaToolCallFunction = _record("ChoiceDeltaToolCallFunction", ("arguments", "name"))
ChoiceDeltaToolCall = _record("ChoiceDeltaToolCall", ("index", "id", "function", "type"),
                              function=lambda d: ChoiceDeltaToolCallFunction.of(d))
ChoiceDelta = _record("ChoiceDelta", ("content", "function_call", "refusal", "role", "tool_calls"),
                      tool_calls=lambda d: ChoiceDeltaToolCall.of(d))
ChunkChoice = _record("Choice", ("delta", "finish_reason", "index", "logprobs"), delta=lambda d: ChoiceDelta.of(d))
ChunkUsage = _record("CompletionUsage", ("completion_tokens", "prompt_tokens", "total_tokens"))
ChatCompletionChunk = _record("ChatCompletionChunk", ("id", "choices", "created", "model", "object", "service_tier",
                                                      "system_fingerprint", "usage"),
                              choices=lambda d: ChunkChoice.of(d), usage=lambda d: ChunkUsage.of(d))

_BLOCK_FIELDS = {"text": ("type", "text"), "tool_use": ("type", "id", "name", "input")}
_DELTA_FIELDS = {"text_delta": ("type", "text"), "input_json_delta": ("type", "partial_json")}


def _typed(table: dict, prefix: str) -> Callable:
    kinds = {kind: _record(f"{prefix}{kind.title().replace('_', '')}", fields) for kind, fields in table.items()}
    return lambda d: kinds[d["type"]].of(d)


_Usage = _record("Usage", ("input_tokens", "output_tokens"))
_Message = _record("Message", ("id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"),
                   usage=lambda d: _Usage.of(d))
_MessageDelta = _record("Delta", ("stop_reason", "stop_sequence"))
_DeltaUsage = _record("MessageDeltaUsage", ("output_tokens",))
_EVENTS = {
    "message_start": _record("RawMessageStartEvent", ("type", "message"), message=lambda d: _Message.of(d)),
    "content_block_start": _record("RawContentBlockStartEvent", ("type", "index", "content_block"),
                                   content_block=_typed(_BLOCK_FIELDS, "")),
    "content_block_delta": _record("RawContentBlockDeltaEvent", ("type", "index", "delta"),
                                   delta=_typed(_DELTA_FIELDS, "")),
    "content_block_stop": _record("RawContentBlockStopEvent", ("type", "index")),
    "message_delta": _record("RawMessageDeltaEvent", ("type", "delta", "usage"),
                             delta=lambda d: _MessageDelta.of(d), usage=lambda d: _DeltaUsage.of(d)),
    "message_stop": _record("RawMessageStopEvent", ("type",)),
}


def event_record(event: dict) -> Any:
    return _EVENTS[event["type"]].of(event)


# --------------------------------------------------------------------------------------------
# A turn as chunks


def _seed(window: int, salt: int) -> int:
    return (window + 1) * 7919 + salt


def openai_chunks(turn: Any, window: int, *, model: str) -> tuple:
    """(chunk dicts, the chunks that must have arrived for each call's arguments to be whole)."""
    from fuzzer.harnesses.agent.responses import openai_response
    from fuzzer.harnesses.stream.chunks import openai_chunk_dicts, server_cuts

    response = openai_response(turn, window, model=model)
    choice = response.choices[0]
    calls = choice.message.tool_calls or []
    pairs = [(c.function.name, c.function.arguments) for c in calls]
    content = choice.message.content or ""
    dicts = openai_chunk_dicts(pairs, content=content, finish=choice.finish_reason,
                               arg_cuts=lambda i, text: server_cuts(text, _seed(window, i)),
                               content_cuts=server_cuts(content, _seed(window, 99)), ids=[c.id for c in calls],
                               model=model, chunk_id=response.id, created=response.created)
    return dicts, _complete_at(dicts, len(pairs), lambda d: [c["index"] for ch in d.get("choices", ())
                                                              for c in ch["delta"].get("tool_calls") or ()])


def anthropic_events(turn: Any, window: int, *, model: str) -> tuple:
    """(event dicts, the events that must have arrived for each call's input to be whole)."""
    from fuzzer.harnesses.agent.responses import anthropic_response
    from fuzzer.harnesses.stream.chunks import anthropic_event_dicts, server_cuts

    message = anthropic_response(turn, window, model=model)
    uses = [b for b in message.content if b.type == "tool_use"]
    text = "".join(b.text for b in message.content if b.type == "text")
    pairs = [(b.name, json.dumps(b.input, ensure_ascii=False)) for b in uses]
    dicts = anthropic_event_dicts(pairs, content=text, stop_reason=message.stop_reason,
                                  arg_cuts=lambda i, t: server_cuts(t, _seed(window, i)),
                                  content_cuts=server_cuts(text, _seed(window, 99)), ids=[b.id for b in uses],
                                  model=model, message_id=message.id)
    first_block = 1 if text else 0
    return dicts, _complete_at(dicts, len(pairs), lambda d: [d["index"] - first_block] if d["type"] in (
        "content_block_start", "content_block_delta", "content_block_stop") and d["index"] >= first_block else [])


def _complete_at(items: list, calls: int, indices: Callable[[dict], list]) -> list:
    """For each call, how many items of the stream carry it, up to its last one (1-based)."""
    last = [0] * calls
    for position, item in enumerate(items, 1):
        for index in indices(item):
            if 0 <= index < calls:
                last[index] = position
    return last


# --------------------------------------------------------------------------------------------
# The stream a loop is given


class ChunkStream(_Awaitable):
    """What ``create(..., stream=True)`` returns: the chunks, one at a time (``for`` or ``async
    for``), each counted by the recorder as the loop takes it; a context manager (sync and async)
    with ``close()``. Awaiting it gives itself (``await client...create(stream=True)``)."""

    def __init__(self, items: list, recorder: Any, window: int):
        self._items, self._recorder, self._window, self._next = items, recorder, window, 0

    def __iter__(self) -> "ChunkStream":
        return self

    def __next__(self) -> Any:
        if self._next >= len(self._items):
            raise StopIteration
        item = self._items[self._next]
        self._next += 1
        self._recorder.consumed(self._window)
        return item

    def __aiter__(self) -> "ChunkStream":
        return self

    async def __anext__(self) -> Any:
        try:
            return self.__next__()
        except StopIteration:
            raise StopAsyncIteration from None

    def __enter__(self) -> "ChunkStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> "ChunkStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> "_Closed":
        return _Closed()

    # what the SDKs' helpers ask of a raw stream
    @property
    def response(self) -> "_Response":
        return _Response()


class _Closed(_Awaitable):
    """``close()``'s value: nothing, and awaitable (``await stream.close()`` in async code)."""


class _Response:
    headers: dict = {}

    def close(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def stream_of(shape: str, turn: Any, recorder: Any, *, model: str) -> ChunkStream:
    """The records of ``turn`` streamed in ``shape`` (openai | anthropic)."""
    return _counted_stream(shape, turn, recorder, model,
                           ChatCompletionChunk.of if shape == "openai" else event_record)


def _counted_stream(shape: str, turn: Any, recorder: Any, model: str, item: Callable[[dict], Any]) -> ChunkStream:
    """The turn's chunk dicts in ``shape``, each made an ``item`` (our records, or the SDK's
    models), in a stream that counts what the loop takes; the recorder learns which chunks each
    call's arguments need (``premature_execution``)."""
    window = recorder.window
    chunks = openai_chunks if shape == "openai" else anthropic_events
    dicts, complete_at = chunks(turn, window, model=model)
    items = [item(d) for d in dicts]
    recorder.streaming(window, complete_at, len(items))
    return ChunkStream(items, recorder, window)


# --------------------------------------------------------------------------------------------
# The SDKs' .stream(...) helpers, over the same chunks


class StreamManager:
    """What ``client.chat.completions.stream(...)`` / ``client.messages.stream(...)`` return: the
    SDK's own stream helper over the turn's chunks (as the SDK's models), entered with ``with`` or
    ``async with`` (:func:`openai_manager`, :func:`anthropic_manager`)."""

    def __init__(self, make_sync: Callable[[], Any], make_async: Callable[[], Any]):
        self._make_sync, self._make_async = make_sync, make_async
        self._stream: Any = None

    def __enter__(self) -> Any:
        self._stream = self._make_sync()
        return self._stream

    def __exit__(self, *exc: object) -> None:
        if self._stream is not None:
            self._stream.close()

    async def __aenter__(self) -> Any:
        self._stream = self._make_async()
        return self._stream

    async def __aexit__(self, *exc: object) -> None:
        if self._stream is not None:
            await self._stream.close()


def _models_stream(shape: str, turn: Any, recorder: Any, model: str) -> ChunkStream:
    """The turn's chunks as the SDK's own validated models, counted as the helper takes them."""
    if shape == "openai":
        from openai.types.chat import ChatCompletionChunk as SdkChunk

        return _counted_stream(shape, turn, recorder, model, SdkChunk.model_validate)
    from fuzzer.harnesses.stream.chunks import anthropic_model

    return _counted_stream(shape, turn, recorder, model, anthropic_model)


def _not_given(module: Any) -> Any:
    return getattr(module, "omit", None) or getattr(module, "NOT_GIVEN")


def openai_manager(turn: Any, recorder: Any, *, model: str, tools: Any) -> StreamManager:
    """``client.chat.completions.stream(...)``: the ``openai`` SDK's ``ChatCompletionStream``."""
    import openai._types as types
    from openai.lib.streaming.chat import AsyncChatCompletionStream, ChatCompletionStream

    raw = _models_stream("openai", turn, recorder, model)
    given = _not_given(types)
    tools = tools if tools else given
    return StreamManager(
        lambda: ChatCompletionStream(raw_stream=raw, response_format=given, input_tools=tools),
        lambda: AsyncChatCompletionStream(raw_stream=raw, response_format=given, input_tools=tools))


def anthropic_manager(turn: Any, recorder: Any, *, model: str) -> StreamManager:
    """``client.messages.stream(...)``: the ``anthropic`` SDK's ``MessageStream``."""
    import inspect

    import anthropic._types as types
    from anthropic.lib.streaming import AsyncMessageStream, MessageStream

    raw = _models_stream("anthropic", turn, recorder, model)

    def make(cls: type) -> Any:
        params = inspect.signature(cls.__init__).parameters
        kwargs = {"output_format": _not_given(types)} if "output_format" in params else {}
        return cls(raw, **kwargs)

    return StreamManager(lambda: make(MessageStream), lambda: make(AsyncMessageStream))


__all__ = ["ChatCompletionChunk", "ChunkStream", "StreamManager", "anthropic_events", "anthropic_manager",
           "event_record", "openai_chunks", "openai_manager", "stream_of"]
