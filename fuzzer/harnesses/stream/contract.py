"""The streaming target contract: incremental parsers, their event shapes, and chunk accumulators.

Why one module: every shape a user's streaming code may speak is read here and turned into one
plain-data event vocabulary, so folding and the oracles (:mod:`.fold`, :mod:`.checks`) never ask
which shape a target used. It runs in the worker process (user code is imported there only).

**Incremental parser** (``fuzz stream --parser M:A``). ``M:A`` is a factory called once per
stream, as ``M:A(tools)`` when it takes an argument (the OpenAI ``tools`` list) else ``M:A()``;
it returns an object with ``feed(delta)`` and ``finish()``. Each returns None, one event or a
list of events, an event being any of:

* an OpenAI-style delta, a mapping or an object with the same attributes (vLLM's
  ``DeltaMessage``, the OpenAI chunk's ``choices[0].delta``): ``content``, optional
  ``reasoning_content`` (or ``reasoning``), ``tool_calls`` = ``[{index, id?, type?,
  function: {name?, arguments?}}]``;
* an SGLang-style result: ``normal_text`` and ``calls`` = ``[{tool_index, name?, parameters}]``;
* toolfuzz's own typed events: :class:`Text`, :class:`Reasoning`, :class:`CallStart`,
  :class:`ArgumentsDelta`, :class:`CallEnd`.

Adapters (duck-typed, no engine imported): ``--parser-api vllm`` wraps an object with
``extract_tool_calls_streaming(previous_text, current_text, delta_text, previous_token_ids,
current_token_ids, delta_token_ids, request)`` (token ids are empty lists; ``request`` has
``tools`` and ``tool_choice``), ``--parser-api sglang`` one with ``parse_streaming_increment(
new_text, tools)``, whose end-of-stream call is the first of :data:`SGLANG_FLUSH` it has.

**Normalized events** are tuples (cheap to build, pickle and compare): ``("text", s)``,
``("reasoning", s)``, ``("start", index, id, name)`` (``id`` None when the shape has no ids),
``("args", index, fragment)``, ``("end", index)``.

**Chunk accumulator** (``fuzz stream --consumer M:A``): ``M:A(chunks)`` takes an iterable of
chunks (:mod:`.chunks` builds them as the real SDK types) and returns the calls it assembled, in
any shape the parser contract accepts (:func:`fuzzer.engine.calls.normalize_calls`).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Optional

from strategies.errors import ToolfuzzError

#: The parser APIs ``--parser-api`` names.
PARSER_APIS = ("events", "vllm", "sglang")
#: The end-of-stream methods of an SGLang-style detector, the first one present is called.
SGLANG_FLUSH = ("finish", "flush", "parse_streaming_end", "end_of_stream")
#: ``--consumer-shape``: what the accumulator is given.
CONSUMER_SHAPES = ("openai", "anthropic", "sse")


class ContractError(ToolfuzzError, TypeError):
    """The target does not keep the streaming contract (a factory that is not callable, an
    object without ``feed``, an event of an unknown shape, a consumer returning a generator):
    a usage error (exit 2), never a finding."""


# -- toolfuzz's own typed events (public) ------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """Content the model wrote for the user."""

    text: str


@dataclass(frozen=True)
class Reasoning:
    """Reasoning text (``<think>``, an analysis channel)."""

    text: str


@dataclass(frozen=True)
class CallStart:
    """Call ``index`` begins: its name (and id, if the parser makes ids)."""

    index: int
    name: str
    id: Optional[str] = None


@dataclass(frozen=True)
class ArgumentsDelta:
    """The next fragment of call ``index``'s arguments JSON text."""

    index: int
    delta: str


@dataclass(frozen=True)
class CallEnd:
    """Call ``index`` is complete."""

    index: int


# -- reading events ------------------------------------------------------------------------------


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _has(obj: Any, key: str) -> bool:
    if isinstance(obj, Mapping):
        return key in obj
    return hasattr(obj, key) and not callable(getattr(obj, key, None))


def _index(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ContractError(f"{where}: index must be an int, not {type(value).__name__} {value!r:.60}")
    return int(value)  # a plain int: events travel to the engine, which never unpickles a user's class


def _text(value: Any, where: str) -> Optional[str]:
    if value is None or type(value) is str:
        return value
    if isinstance(value, str):
        return str(value)  # a str subclass of the user's: plain text from here on
    raise ContractError(f"{where} must be a string or None, not {type(value).__name__}")


def normalize_events(value: Any) -> list:
    """The normalized events of one step's return value (see the module docstring).

    Raises :class:`ContractError` for a value of no known shape."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        out: list = []
        for item in value:
            out.extend(normalize_events(item))
        return out
    cls = value.__class__
    if cls is Text:
        return [("text", value.text)] if value.text else []
    if cls is Reasoning:
        return [("reasoning", value.text)] if value.text else []
    if cls is CallStart:
        return [("start", value.index, value.id, value.name)]
    if cls is ArgumentsDelta:
        return [("args", value.index, value.delta)]
    if cls is CallEnd:
        return [("end", value.index)]
    if _has(value, "normal_text") or _has(value, "calls"):
        return _sglang(value)
    if _has(value, "tool_calls") or _has(value, "content") or _has(value, "reasoning_content"):
        return _openai(value)
    raise ContractError(f"an event of an unknown shape: {type(value).__name__} {value!r:.80} (expected an "
                        f"OpenAI-style delta with content/tool_calls, an SGLang-style result with normal_text/"
                        f"calls, or toolfuzz's Text/Reasoning/CallStart/ArgumentsDelta/CallEnd)")


def _openai(delta: Any) -> list:
    out: list = []
    reasoning = _text(_get(delta, "reasoning_content") or _get(delta, "reasoning"), "reasoning_content")
    if reasoning:
        out.append(("reasoning", reasoning))
    content = _text(_get(delta, "content"), "content")
    if content:
        out.append(("text", content))
    for call in _get(delta, "tool_calls") or ():
        index = _index(_get(call, "index"), "tool_calls[].index")
        function = _get(call, "function")
        name = _text(_get(function, "name") if function is not None else None, "function.name")
        arguments = _text(_get(function, "arguments") if function is not None else None, "function.arguments")
        call_id = _text(_get(call, "id"), "tool_calls[].id")
        if name is not None or call_id is not None:
            out.append(("start", index, call_id or "", name or ""))
        if arguments:
            out.append(("args", index, arguments))
    return out


def _sglang(result: Any) -> list:
    out: list = []
    text = _text(_get(result, "normal_text"), "normal_text")
    if text:
        out.append(("text", text))
    for call in _get(result, "calls") or ():
        index = _index(_get(call, "tool_index"), "calls[].tool_index")
        name = _text(_get(call, "name"), "calls[].name")
        parameters = _get(call, "parameters")
        if parameters is not None and not isinstance(parameters, str):
            raise ContractError(f"calls[].parameters must be a string (JSON text), not {type(parameters).__name__}")
        if name:
            out.append(("start", index, None, name))
        if parameters:
            out.append(("args", index, parameters))
    return out


# -- making a parser -----------------------------------------------------------------------------


def takes_argument(factory: Callable) -> bool:
    """Whether ``factory`` is to be called with the tools list (it takes one argument)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return False
    try:
        signature.bind(None)
    except TypeError:
        return False
    try:
        signature.bind()
    except TypeError:
        return True
    return False  # both work: a factory with an optional argument is called without it


class _VllmAdapter:
    """``feed`` / ``finish`` over vLLM's ``extract_tool_calls_streaming``: the text so far is kept
    here, as the serving engine keeps it (vLLM has no end-of-stream call)."""

    def __init__(self, parser: Any, tools: list):
        self.parser, self.previous = parser, ""
        self.request = types.SimpleNamespace(tools=tools, tool_choice="auto", stream=True)

    def feed(self, delta: str) -> Any:
        previous, current = self.previous, self.previous + delta
        self.previous = current
        return self.parser.extract_tool_calls_streaming(previous, current, delta, [], [], [], self.request)

    def finish(self) -> Any:
        return None


class _SglangAdapter:
    """``feed`` / ``finish`` over SGLang's ``parse_streaming_increment(new_text, tools)``."""

    def __init__(self, parser: Any, tools: list):
        self.parser, self.tools = parser, tools
        self.flush = next((getattr(parser, n) for n in SGLANG_FLUSH if callable(getattr(parser, n, None))), None)

    def feed(self, delta: str) -> Any:
        return self.parser.parse_streaming_increment(delta, self.tools)

    def finish(self) -> Any:
        if self.flush is None:
            return None
        try:
            signature = inspect.signature(self.flush)
            signature.bind(self.tools)
            return self.flush(self.tools)
        except (TypeError, ValueError):
            return self.flush()


_NEEDS = {"events": ("feed", "finish"), "vllm": ("extract_tool_calls_streaming",),
          "sglang": ("parse_streaming_increment",)}


def parser_maker(factory: Any, ref: str, api: str = "events", option: str = "--parser") -> Callable[[list], Any]:
    """``make(tools) -> parser`` with ``feed`` and ``finish``, for the factory ``ref`` named (by
    ``option``: what the user typed, which every message names: ``--stream-parser`` in a gate).
    Raises :class:`ContractError` when ``factory`` is not callable; the object it makes is checked
    by :func:`make_parser` (a factory may fail only for some tools)."""
    if api not in _NEEDS:
        raise ContractError(f"--parser-api: {api!r} is not one of {', '.join(PARSER_APIS)}")
    if not callable(factory):
        raise ContractError(f"{option} {ref!r} is a {type(factory).__name__}, not a callable factory "
                            f"(M:A is called once per stream, as M:A(tools) or M:A())")
    with_tools = takes_argument(factory)

    def make(tools: list) -> Any:
        obj = factory(tools) if with_tools else factory()
        missing = [name for name in _NEEDS[api] if not callable(getattr(obj, name, None))]
        if missing:
            raise ContractError(f"{option} {ref!r} made a {type(obj).__name__} without "
                                f"{' or '.join(m + '()' for m in missing)}"
                                + ("" if api != "events" else " (use --parser-api vllm or sglang for those "
                                   "engines' parser interfaces)"))
        if api == "vllm":
            return _VllmAdapter(obj, tools)
        if api == "sglang":
            return _SglangAdapter(obj, tools)
        return obj

    return make


def load_parser_factory(ref: str, *, cwd: Optional[str] = None, api: str = "events",
                        option: str = "--parser") -> Callable[[list], Any]:
    """Import ``ref`` (in the worker) and return :func:`parser_maker`'s ``make`` (errors name ``option``)."""
    from fuzzer.engine.references import load_target

    return parser_maker(load_target(ref, cwd=cwd, what=option), ref, api, option)


def consumer_calls(value: Any, ref: str, option: str = "--consumer") -> list:
    """What an accumulator returned, as normalized calls; a generator or iterator is a contract
    error (its calls would be assembled lazily, after toolfuzz stopped looking)."""
    from fuzzer.engine.calls import normalize_calls

    if inspect.isgenerator(value) or inspect.isasyncgen(value) or inspect.iscoroutine(value) or (
            hasattr(value, "__next__") and not isinstance(value, (list, tuple, Mapping))):
        if inspect.iscoroutine(value):
            value.close()
        raise ContractError(f"{option} {ref!r} returned a {type(value).__name__}, not the calls it assembled "
                            f"(return a list: M:A(chunks) -> calls)")
    return normalize_calls(value)


__all__ = ["ArgumentsDelta", "CONSUMER_SHAPES", "CallEnd", "CallStart", "ContractError", "PARSER_APIS", "Reasoning",
           "SGLANG_FLUSH", "Text", "consumer_calls", "load_parser_factory", "normalize_events", "parser_maker",
           "takes_argument"]
