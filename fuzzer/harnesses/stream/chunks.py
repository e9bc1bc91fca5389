"""Chunk streams for accumulators: what an API or an open server sends a client, valid and anomalous.

Why built as the real SDK types: a client's accumulator reads ``chunk.choices[0].delta.tool_calls``
(``openai``) or ``event.delta.partial_json`` (``anthropic``); a chunk toolfuzz made up would let a
client pass here and fail on the wire. Every chunk is validated by the SDK's own pydantic model
(``ChatCompletionChunk.model_validate``, the ``Raw*Event`` models), so a stream the SDK would not
accept is never sent. The ``sse`` shape is the raw bytes of the OpenAI stream over HTTP
(``data: {...}\\n\\n`` ... ``data: [DONE]``), cut anywhere, inside a UTF-8 sequence too.

A stream's arguments are cut where the case's split says (``cuts`` apply to each call's arguments
text; for ``sse`` to the byte stream instead). The anomalies, and what the calls are then:

=========================  ===============================================================
``id_name_repeated``       id and name on every chunk of a call, not only the first
``all_index_0``            every call streamed at index 0 (told apart by their ids only)
``cumulative_last``        the last arguments chunk of a call repeats all its arguments
``empty_args_first``       an arguments chunk of ``""`` before the chunk naming the call
``content_between``        content chunks between the calls
``cut_length``             cut mid-arguments of the last call, ``finish_reason: "length"``:
                           only the calls before it are complete
``cut_no_finish``          cut mid-arguments, and no finish chunk at all
=========================  ===============================================================
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from fuzzer.harnesses.stream.splits import deltas

ANOMALIES = ("id_name_repeated", "all_index_0", "cumulative_last", "empty_args_first", "content_between",
             "cut_length", "cut_no_finish")
CUT = ("cut_length", "cut_no_finish")
#: Which shapes each anomaly applies to (the others have no such field).
APPLIES = {"id_name_repeated": ("openai", "sse"), "empty_args_first": ("openai", "sse")}


@dataclass(frozen=True)
class ChunkPlan:
    """The stream to build: the calls (with their arguments text), content before them, an
    anomaly, and where to cut."""

    calls: tuple
    content: str = ""
    anomaly: Optional[str] = None
    cuts: tuple = ()

    @classmethod
    def from_case(cls, case: Any) -> "ChunkPlan":
        """The plan a consumer case's ``text`` holds (:func:`plan_text`), cut at its ``cuts``."""
        data = json.loads(case.text)
        calls = tuple((c["name"], json.dumps(c["arguments"], ensure_ascii=False)) for c in data["calls"])
        return cls(calls=calls, content=data.get("content", ""), anomaly=data.get("anomaly"), cuts=tuple(case.cuts))


def plan_text(calls: list, content: str, anomaly: Optional[str]) -> str:
    """A consumer case's ``text``: the plan as JSON (what the corpus stores and shrinking edits)."""
    return json.dumps({"calls": calls, "content": content, "anomaly": anomaly}, ensure_ascii=False,
                      separators=(",", ":"))


def expected_calls(calls: list, anomaly: Optional[str]) -> list:
    """The calls a correct accumulator returns for this stream."""
    return list(calls[:-1]) if anomaly in CUT else list(calls)


def _pieces(text: str, cuts: tuple) -> list:
    return [p for p in deltas(text, [c for c in cuts if c < len(text)]) if p] or [""]


def server_cuts(text: str, seed: int, lo: int = 1, hi: int = 6) -> tuple:
    """Where a server cuts ``text`` into deltas: pieces of ``lo``-``hi`` characters (a token or a
    few; the serving engines and the hosted APIs send arguments and content that way), drawn from
    ``seed`` so the same response is always cut the same way."""
    import random

    rnd, cuts, at = random.Random(seed), [], 0
    while True:
        at += rnd.randint(lo, hi)
        if at >= len(text):
            return tuple(cuts)
        cuts.append(at)


def _cuts_for(arg_cuts: Any, i: int, text: str) -> tuple:
    return tuple(arg_cuts(i, text)) if callable(arg_cuts) else tuple(arg_cuts)


def openai_chunk_dicts(calls: Sequence, *, content: str = "", anomaly: Optional[str] = None,
                       finish: Optional[str] = None, arg_cuts: Any = (), content_cuts: tuple = (),
                       ids: Optional[Sequence[str]] = None, model: str = "toolfuzz", chunk_id: str = "chatcmpl-toolfuzz",
                       created: int = 0) -> list:
    """The chunks of a Chat Completions stream as the dicts the API sends: a role chunk, the
    content in pieces (``content_cuts``), each call's id and name with ``""`` arguments, then its
    arguments in pieces (``arg_cuts``: cuts, or ``(call index, text) -> cuts``), a finish chunk
    (``finish``, else tool_calls / stop, or length for a cut stream) and a usage chunk. ``calls``:
    (name, arguments text) pairs; ``anomaly``: one of :data:`ANOMALIES` (see the module docstring)."""
    base = {"id": chunk_id, "object": "chat.completion.chunk", "created": created, "model": model}

    def chunk(delta: dict, finish_reason: Optional[str] = None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    out = [chunk({"role": "assistant", "content": ""})]
    if content:
        out += [chunk({"content": piece}) for piece in _pieces(content, content_cuts)]
    last = len(calls) - 1
    for i, (name, arguments) in enumerate(calls):
        index = 0 if anomaly == "all_index_0" else i
        call_id = ids[i] if ids is not None else f"call_{i}"
        if anomaly == "content_between" and i:
            out.append(chunk({"content": " and "}))
        if anomaly == "empty_args_first":
            out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": ""}}]}))
        out.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}))
        cuts = _cuts_for(arg_cuts, i, arguments)
        pieces = _pieces(arguments, cuts)
        if anomaly in CUT and i == last:
            pieces = _pieces(arguments[:max(1, len(arguments) // 2)], cuts)
        for k, piece in enumerate(pieces):
            if anomaly == "cumulative_last" and k == len(pieces) - 1 and len(pieces) > 1:
                piece = arguments
            call: dict = {"index": index, "function": {"arguments": piece}}
            if anomaly == "id_name_repeated":
                call = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": piece}}
            out.append(chunk({"tool_calls": [call]}))
    if anomaly == "cut_no_finish":
        return out
    reason = finish or ("length" if anomaly == "cut_length" else "tool_calls" if calls else "stop")
    out.append(chunk({}, reason))
    out.append({**base, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}})
    return out


def _openai_dicts(plan: ChunkPlan, arg_cuts: tuple) -> list:
    """A plan's chunks as the dicts the API sends."""
    return openai_chunk_dicts(plan.calls, content=plan.content, anomaly=plan.anomaly, arg_cuts=arg_cuts)


def openai_chunks(plan: ChunkPlan) -> list:
    """``openai`` SDK ``ChatCompletionChunk`` objects."""
    from openai.types.chat import ChatCompletionChunk

    return [ChatCompletionChunk.model_validate(d) for d in _openai_dicts(plan, plan.cuts)]


def anthropic_event_dicts(calls: Sequence, *, content: str = "", anomaly: Optional[str] = None,
                          stop_reason: Optional[str] = None, arg_cuts: Any = (), content_cuts: tuple = (),
                          ids: Optional[Sequence[str]] = None, model: str = "toolfuzz",
                          message_id: str = "msg_toolfuzz") -> list:
    """The events of a Messages stream as the dicts the API sends (``message_start`` ...
    ``message_stop``): a text block with the content in pieces, then a ``tool_use`` block per call
    with its ``input_json_delta`` pieces (``arg_cuts`` as for :func:`openai_chunk_dicts`)."""
    events: list = [{"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}]
    block = 0

    def text_block(text: str, cuts: tuple = ()) -> None:
        nonlocal block
        events.append({"type": "content_block_start", "index": block, "content_block": {"type": "text", "text": ""}})
        for piece in _pieces(text, cuts):
            events.append({"type": "content_block_delta", "index": block, "delta": {"type": "text_delta", "text": piece}})
        events.append({"type": "content_block_stop", "index": block})
        block += 1

    if content:
        text_block(content, content_cuts)
    last = len(calls) - 1
    for i, (name, arguments) in enumerate(calls):
        if anomaly == "content_between" and i:
            text_block(" and ")
        index = 0 if anomaly == "all_index_0" else block
        call_id = ids[i] if ids is not None else f"toolu_{i}"
        events.append({"type": "content_block_start", "index": index,
                       "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}})
        cut = anomaly in CUT and i == last
        cuts = _cuts_for(arg_cuts, i, arguments)
        pieces = _pieces(arguments[:max(1, len(arguments) // 2)] if cut else arguments, cuts)
        for k, piece in enumerate(pieces):
            if anomaly == "cumulative_last" and k == len(pieces) - 1 and len(pieces) > 1:
                piece = arguments
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": piece}})
        if cut:
            break
        events.append({"type": "content_block_stop", "index": index})
        block += 1
    if anomaly == "cut_no_finish":
        return events
    stop = stop_reason or ("max_tokens" if anomaly == "cut_length" else "tool_use" if calls else "end_turn")
    events.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                   "usage": {"output_tokens": 20}})
    events.append({"type": "message_stop"})
    return events


#: The ``anthropic`` SDK's model of each stream event type.
_ANTHROPIC_MODELS = {"message_start": "RawMessageStartEvent", "content_block_start": "RawContentBlockStartEvent",
                     "content_block_delta": "RawContentBlockDeltaEvent", "content_block_stop": "RawContentBlockStopEvent",
                     "message_delta": "RawMessageDeltaEvent", "message_stop": "RawMessageStopEvent"}


def anthropic_model(event: dict) -> Any:
    """One event dict as the ``anthropic`` SDK's own model (validated)."""
    import anthropic.types as t

    return getattr(t, _ANTHROPIC_MODELS[event["type"]]).model_validate(event)


def anthropic_events(plan: ChunkPlan) -> list:
    """``anthropic`` SDK stream events (``message_start`` ... ``message_stop``)."""
    return [anthropic_model(e) for e in anthropic_event_dicts(plan.calls, content=plan.content, anomaly=plan.anomaly,
                                                              arg_cuts=plan.cuts)]


#: How the ``sse`` shape groups each call's arguments (its cuts split the bytes instead).
SSE_PIECE = 5


def sse_body(plan: ChunkPlan, *, validate: bool = True) -> bytes:
    """The whole body of the OpenAI stream over HTTP for ``plan`` (uncut): what the ``sse`` shape's
    cuts are byte offsets into."""
    longest = max((len(a) for _n, a in plan.calls), default=0)
    arg_cuts = tuple(range(SSE_PIECE, longest, SSE_PIECE))
    body = b""
    for d in _openai_dicts(plan, arg_cuts):
        if validate:
            from openai.types.chat import ChatCompletionChunk

            ChatCompletionChunk.model_validate(d)
        body += b"data: " + json.dumps(d, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n\n"
    if plan.anomaly != "cut_no_finish":
        body += b"data: [DONE]\n\n"
    return body


def split_body(plan: ChunkPlan, shape: str) -> Any:
    """The sequence ``plan.cuts`` index for ``shape``: the ``sse`` body's bytes; for the other
    shapes the longest call's arguments text (the cuts apply to each call's arguments, and a cut
    past the longest is no cut). Shrinking clips and places cuts in these coordinates."""
    if shape == "sse":
        return sse_body(plan, validate=False)
    return max((a for _n, a in plan.calls), key=len, default="")


def sse_bytes(plan: ChunkPlan) -> list:
    """The raw bytes of the OpenAI stream over HTTP, cut at ``plan.cuts`` (byte offsets: inside a
    ``data:`` line, between ``\\n`` and ``\\n``, inside a UTF-8 sequence)."""
    body = sse_body(plan)
    cuts = sorted({c for c in plan.cuts if 0 < c < len(body)})
    out, start = [], 0
    for cut in cuts:
        out.append(body[start:cut])
        start = cut
    out.append(body[start:])
    return out


def build_chunks(plan: ChunkPlan, shape: str) -> list:
    if shape == "anthropic":
        return anthropic_events(plan)
    if shape == "sse":
        return sse_bytes(plan)
    return openai_chunks(plan)


__all__ = ["ANOMALIES", "APPLIES", "CUT", "ChunkPlan", "anthropic_event_dicts", "anthropic_events", "anthropic_model",
           "build_chunks", "expected_calls", "openai_chunk_dicts", "openai_chunks", "plan_text", "server_cuts", "split_body",
           "sse_body", "sse_bytes"]
