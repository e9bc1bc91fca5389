"""A correct chunk accumulator for the three shapes toolfuzz streams (``openai`` chunks,
``anthropic`` events, raw ``sse`` bytes): ``fuzz stream --consumer
fuzzer.targets.accumulator_reference:accumulate`` finds nothing in it.

* a call is identified by its index *and* its id: a new id at a used index is a new call (servers
  that stream every call at index 0);
* the id and name are taken once (servers that repeat them on every chunk);
* an arguments chunk that repeats everything so far and more replaces the text (servers whose last
  chunk is cumulative);
* a stream that did not finish normally (``finish_reason: "length"``, ``max_tokens``, or no finish
  at all) keeps only the calls whose arguments are complete JSON;
* SSE bytes are buffered and decoded incrementally, events split on blank lines.
"""

from __future__ import annotations

import codecs
import json


def _sse_events(chunks):
    decoder, buffer = codecs.getincrementaldecoder("utf-8")(), ""
    for chunk in chunks:
        buffer += decoder.decode(chunk)
        while "\n\n" in buffer:
            event, buffer = buffer.split("\n\n", 1)
            for line in event.split("\n"):
                if line.startswith("data:"):
                    yield line[5:].strip()


def _openai_dicts(chunks):
    """(tool call deltas, finish reason) per chunk, from SDK objects or SSE bytes."""
    chunks = iter(chunks)
    first = next(chunks, None)
    if first is None:
        return
    if isinstance(first, (bytes, bytearray)):
        def all_bytes():
            yield first
            yield from chunks
        for data in _sse_events(all_bytes()):
            if data == "[DONE]":
                continue
            obj = json.loads(data)
            for choice in obj.get("choices", []):
                yield choice.get("delta", {}).get("tool_calls") or [], choice.get("finish_reason")
        return
    for chunk in [first, *chunks]:
        for choice in chunk.choices:
            calls = [c.model_dump() for c in choice.delta.tool_calls or []]
            yield calls, choice.finish_reason


class _Calls:
    def __init__(self):
        self.calls = []  # [{"id", "name", "arguments", "key"}]
        self.by_key = {}

    def get(self, key, call_id):
        call = self.by_key.get(key)
        if call is None or (call_id and call["id"] and call_id != call["id"]):
            call = {"id": call_id, "name": "", "arguments": ""}
            self.by_key[key] = call
            self.calls.append(call)
        return call

    def add(self, call, name, call_id, fragment):
        if name and not call["name"]:
            call["name"] = name
        if call_id and not call["id"]:
            call["id"] = call_id
        if fragment:
            so_far = call["arguments"]
            if len(so_far) >= 2 and fragment.startswith(so_far) and _complete(fragment) and not _complete(so_far + fragment):
                call["arguments"] = fragment
            else:
                call["arguments"] = so_far + fragment

    def result(self, finished):
        """The calls; a finished stream with a call that is not complete is refused (ValueError),
        a cut one loses its incomplete calls."""
        out = []
        for call in self.calls:
            if not _complete(call["arguments"]) or not call["name"]:
                if finished:
                    raise ValueError(f"call {call['name']!r} is incomplete: {call['arguments']!r:.80}")
                continue
            out.append({"name": call["name"], "arguments": json.loads(call["arguments"])})
        return out


def _complete(text):
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def accumulate(chunks):
    chunks = iter(chunks)
    first = next(chunks, None)
    if first is None:
        return []
    rest = [first, *chunks]
    calls = _Calls()
    if getattr(first, "type", None) == "message_start":
        finished = False
        for event in rest:
            if event.type == "content_block_start" and event.content_block.type == "tool_use":
                calls.get(event.index, event.content_block.id)
                calls.add(calls.by_key[event.index], event.content_block.name, event.content_block.id, None)
            elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                if event.index in calls.by_key:
                    calls.add(calls.by_key[event.index], None, None, event.delta.partial_json)
            elif event.type == "message_delta":
                finished = event.delta.stop_reason in ("tool_use", "end_turn", "stop_sequence")
        return calls.result(finished)
    finished = False
    for deltas, finish in _openai_dicts(rest):
        for delta in deltas:
            function = delta.get("function") or {}
            call = calls.get(delta["index"], delta.get("id"))
            calls.add(call, function.get("name"), delta.get("id"), function.get("arguments"))
        if finish is not None:
            finished = finish in ("tool_calls", "stop")
    return calls.result(finished)
