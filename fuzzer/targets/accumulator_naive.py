"""A naive chunk accumulator, written the way many clients are: calls keyed by ``index``, every
field concatenated, arguments decoded with a fallback to ``{}``.

An example to fuzz (``fuzz stream --consumer fuzzer.targets.accumulator_naive:accumulate``). What
is wrong with it:

* two calls streamed at the same index (every call at index 0) are merged into one;
* a name repeated on a later chunk is appended (``get_weatherget_weather``);
* arguments that do not decode (a stream cut mid-arguments, a last chunk repeating the whole
  arguments) silently become ``{}``, so a cut call looks complete;
* SSE: each network chunk is decoded and parsed on its own (a chunk cut inside a UTF-8 sequence
  or a ``data:`` line crashes it).
"""

from __future__ import annotations

import json


def _deltas(chunks):
    for chunk in chunks:
        if isinstance(chunk, bytes):  # SSE: one chunk = one event, as far as this client knows
            for line in chunk.decode("utf-8").split("\n"):
                if line.startswith("data: ") and line != "data: [DONE]":
                    data = json.loads(line[len("data: "):])
                    for choice in data.get("choices", []):
                        for call in choice.get("delta", {}).get("tool_calls") or []:
                            yield call["index"], call.get("id"), call.get("function", {}).get("name"), \
                                call.get("function", {}).get("arguments")
            continue
        kind = getattr(chunk, "type", None)
        if kind == "content_block_start" and chunk.content_block.type == "tool_use":
            yield chunk.index, chunk.content_block.id, chunk.content_block.name, None
        elif kind == "content_block_delta" and chunk.delta.type == "input_json_delta":
            yield chunk.index, None, None, chunk.delta.partial_json
        elif getattr(chunk, "choices", None):
            for call in chunk.choices[0].delta.tool_calls or []:
                yield call.index, call.id, call.function.name if call.function else None, \
                    call.function.arguments if call.function else None


def accumulate(chunks):
    calls = {}
    for index, call_id, name, arguments in _deltas(chunks):
        call = calls.setdefault(index, {"name": "", "arguments": ""})
        if name:
            call["name"] += name
        if arguments:
            call["arguments"] += arguments
    out = []
    for index in sorted(calls):
        try:
            arguments = json.loads(calls[index]["arguments"] or "{}")
        except ValueError:
            arguments = {}
        out.append({"name": calls[index]["name"], "arguments": arguments})
    return out
