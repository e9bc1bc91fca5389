"""The scripted model, in the three shapes real loops are written against.

* :class:`TextModel` — a text protocol: ``model.generate(messages, tools) -> str`` (also callable as
  ``model(messages, tools)``); the loop parses the text itself.
* :class:`OpenAIClient` — ``client.chat.completions.create(model=, messages=, tools=)`` returning a
  ``ChatCompletion``-shaped object: ``.choices[0].message.tool_calls[i].function.name`` /
  ``.arguments`` (a JSON string), ``.id``, ``.choices[0].finish_reason``, ``.message.content``.
* :class:`AnthropicClient` — ``client.messages.create(model=, max_tokens=, messages=, tools=)``
  returning a ``Message``-shaped object: ``.content`` blocks of ``type`` ``text`` / ``tool_use``
  (``.id``, ``.name``, ``.input``), ``.stop_reason``.

Both structured shapes answer ``stream=True`` with the same response as a chunk stream, and their
``.stream(...)`` helpers with the SDK's own stream helper over it (:mod:`fuzzer.harnesses.agent.streaming`).

No vendor SDK is imported: the response objects are small attribute records with the SDKs' field
names (awaitable too, so ``async`` loops written against ``AsyncOpenAI`` / ``AsyncAnthropic`` run
unchanged), and ``to_dict()`` / ``model_dump()`` give their dict form, which the tests validate with
``openai.types.chat.ChatCompletion.model_validate`` and ``anthropic.types.Message.model_validate``
so the shapes cannot drift. A loop may append these objects (or their dicts) to its history.

Every request is answered from the script (:meth:`Script.turn`) and recorded with what its
messages feed back: for the structured shapes, each tool-result message's call id and the result
refs its content mentions; for the text protocol, how often each ref appears in the messages.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any, Optional

from fuzzer.harnesses.agent.responses import MODEL_NAME, anthropic_response, call_id, openai_response
from fuzzer.harnesses.agent.script import refs_in
from fuzzer.harnesses.agent.trace import Recorder

_PLAIN_DEPTH = 40


def plain(value: Any, depth: int = 0) -> Any:
    """Messages as plain data, whatever the loop appended: dicts, these records, SDK or pydantic
    objects (``to_dict`` / ``model_dump``), dataclasses; anything else as its repr."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if depth > _PLAIN_DEPTH:
        return "…"
    if isinstance(value, Mapping):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    for method in ("to_dict", "model_dump", "dict"):
        convert = getattr(value, method, None)
        if callable(convert):
            try:
                return plain(convert(), depth + 1)
            except Exception:  # noqa: BLE001 - fall through to the next way of reading it
                continue
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value), depth + 1)
    return repr(value)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(plain(value), ensure_ascii=False, default=str)


def _as_dict(message: Any) -> dict:
    if type(message) is dict:
        return message
    value = plain(message)
    return value if isinstance(value, dict) else {}


def openai_feedback(messages: Any) -> dict:
    """Each ``role: tool`` message: its ``tool_call_id`` and the refs its content mentions; the
    ids of the calls the assistant messages carry (each needs a tool message, the API says); and
    how often each ref appears in any message's content (``refs``: where a loop that sends the
    calls back as text, smolagents' way, feeds the results back — ``Observation: ...``)."""
    found, calls = [], []
    refs: Counter = Counter()
    items = messages if isinstance(messages, (list, tuple)) else ()
    for message in items:
        m = message if type(message) is dict else _as_dict(message)
        role = m.get("role")
        content = m.get("content")
        text = None if content is None else content if isinstance(content, str) else _text(content)
        if text is not None and "tf-" in text:
            refs.update(refs_in(text))
        if role in ("tool", "function"):
            found.append([m.get("tool_call_id"), refs_in(text or "")])
        elif role == "assistant" and isinstance(m.get("tool_calls"), (list, tuple)):
            calls += [c.get("id") for c in map(_as_dict, m["tool_calls"]) if c.get("id")]
    return {"messages": len(items), "results": found, "calls": calls, "refs": dict(refs)}


def anthropic_feedback(messages: Any) -> dict:
    """Each ``tool_result`` block of a user message: its ``tool_use_id`` and the refs it mentions;
    the ids of the ``tool_use`` blocks of assistant messages (each needs a result, the API says);
    and how often each ref appears in any message's content (``refs``, see :func:`openai_feedback`)."""
    found, calls = [], []
    refs: Counter = Counter()
    items = list(messages) if isinstance(messages, (list, tuple)) else []
    for message in items:
        m = _as_dict(message)
        content = m.get("content")
        if content is not None:
            text = content if isinstance(content, str) else _text(content)
            if "tf-" in text:
                refs.update(refs_in(text))
        if m.get("role") not in ("user", "assistant") or not isinstance(content, (list, tuple)):
            continue
        for block in content:
            b = _as_dict(block)
            if b.get("type") == "tool_result" and m.get("role") == "user":
                found.append([b.get("tool_use_id"), refs_in(_text(b.get("content")))])
            elif b.get("type") == "tool_use" and m.get("role") == "assistant" and b.get("id"):
                calls.append(b["id"])
    return {"messages": len(items), "results": found, "calls": calls, "refs": dict(refs)}


def text_feedback(messages: Any) -> dict:
    """How often each result ref appears anywhere in the messages (a text protocol has no ids)."""
    items = list(messages) if isinstance(messages, (list, tuple)) else [messages]
    counts: Counter = Counter()
    for message in items:
        for part in (message.values() if type(message) is dict else (message,)):
            text = part if isinstance(part, str) else _text(part)
            if "tf-" in text:
                counts.update(refs_in(text))
    return {"messages": len(items), "refs": dict(counts)}


# --------------------------------------------------------------------------------------------
# The three shapes


class TextModel:
    """``generate(messages, tools=None) -> str``: the turn's text."""

    def __init__(self, recorder: Recorder):
        self._recorder = recorder

    def generate(self, messages: Any, tools: Any = None, **options: Any) -> str:
        return self._recorder.request(text_feedback(messages)).text

    __call__ = generate


class OpenAIClient:
    """``client.chat.completions.create(model=, messages=, tools=)`` -> a ChatCompletion; with
    ``stream=True`` its chunks, and ``client.chat.completions.stream(...)`` the SDK's stream
    helper over them (:mod:`fuzzer.harnesses.agent.streaming`)."""

    def __init__(self, recorder: Recorder):
        self._recorder = recorder
        self.chat = _Namespace(completions=_Namespace(create=self._create, stream=self._stream))
        self.beta = _Namespace(chat=_Namespace(completions=_Namespace(stream=self._stream)))  # older SDKs' path

    def _create(self, *, messages: Any, model: str = MODEL_NAME, tools: Any = None, stream: bool = False,
                **options: Any) -> Any:
        turn = self._recorder.request(openai_feedback(messages))
        if stream:
            from fuzzer.harnesses.agent.streaming import stream_of

            return stream_of("openai", turn, self._recorder, model=model)
        return openai_response(turn, self._recorder.window, model=model)

    def _stream(self, *, messages: Any, model: str = MODEL_NAME, tools: Any = None, **options: Any) -> Any:
        from fuzzer.harnesses.agent.streaming import openai_manager

        turn = self._recorder.request(openai_feedback(messages))
        return openai_manager(turn, self._recorder, model=model, tools=tools)


class AnthropicClient:
    """``client.messages.create(model=, max_tokens=, messages=, tools=)`` -> a Message; with
    ``stream=True`` its events, and ``client.messages.stream(...)`` the SDK's stream helper over
    them (:mod:`fuzzer.harnesses.agent.streaming`)."""

    def __init__(self, recorder: Recorder):
        self._recorder = recorder
        self.messages = _Namespace(create=self._create, stream=self._stream)

    def _create(self, *, messages: Any, model: str = MODEL_NAME, max_tokens: Optional[int] = None,
                tools: Any = None, stream: bool = False, **options: Any) -> Any:
        turn = self._recorder.request(anthropic_feedback(messages))
        if stream:
            from fuzzer.harnesses.agent.streaming import stream_of

            return stream_of("anthropic", turn, self._recorder, model=model)
        return anthropic_response(turn, self._recorder.window, model=model)

    def _stream(self, *, messages: Any, model: str = MODEL_NAME, max_tokens: Optional[int] = None,
                tools: Any = None, **options: Any) -> Any:
        from fuzzer.harnesses.agent.streaming import anthropic_manager

        turn = self._recorder.request(anthropic_feedback(messages))
        return anthropic_manager(turn, self._recorder, model=model)


class _Namespace:
    def __init__(self, **attributes: Any):
        self.__dict__.update(attributes)


MODELS = {"text": TextModel, "openai": OpenAIClient, "anthropic": AnthropicClient}
#: The attribute a loop first asks each shape's client for: asked of another shape's client, it
#: says which ``--model-shape`` the loop is written against.
ENTRY_POINTS = {"chat": "openai", "messages": "anthropic", "generate": "text"}


def shape_fitting(exc: BaseException, model: Any) -> Optional[str]:
    """The ``--model-shape`` a loop is written against, when ``exc`` (what it raised) shows it
    used the scripted ``model`` as another shape's client: an openai-style loop given the text
    model fails on ``model.chat`` before any turn, which read as a crash of the loop, not as the
    wrong option. None for any other failure."""
    if isinstance(exc, AttributeError) and getattr(exc, "obj", None) is model:
        fits = ENTRY_POINTS.get(getattr(exc, "name", None) or "")
        return fits if fits is not None and not isinstance(model, MODELS[fits]) else None
    if isinstance(exc, TypeError) and str(exc) == f"'{type(model).__name__}' object is not callable":
        return "text"  # model(messages): the text model is callable
    return None


def scripted_model(shape: str, recorder: Recorder) -> Any:
    """The scripted model of ``shape`` playing ``recorder``'s script."""
    return MODELS[shape](recorder)


__all__ = ["AnthropicClient", "ENTRY_POINTS", "MODELS", "OpenAIClient", "TextModel", "anthropic_feedback",
           "anthropic_response", "call_id", "openai_feedback", "openai_response", "plain", "scripted_model",
           "shape_fitting", "text_feedback"]
