"""The reference target: a correct, strict, linear-time parser for every format toolfuzz renders.

Why it exists: it is the yardstick the engine is tested against. Run on valid samples it must return
exactly the truth (so any verdict against it is an engine bug); run on anomalies it may only reject
(``ValueError``) or return the faithful calls — it never repairs, never hangs, never raises anything
else. It is deliberately unforgiving: anything it does not understand exactly is a ``ValueError``.

How it stays linear and safe:

* The format is the one whose marker (``{``, ``[``, ``[TOOL_CALLS]``, ``<|python_tag|>``, ``<tool_call>``,
  ````` ``` `````, ``Action:``, ``<function=``, ``<|channel|>``, ``<｜tool▁calls▁begin｜>``) occurs first. Prose before it cannot hold a marker by construction, so
  the first marker is where the envelope starts; markers inside JSON strings later on are never seen
  because JSON is consumed with ``JSONDecoder.raw_decode`` and scanning resumes after it.
* No regular expressions; every scan is ``str.find`` or a single pass. Prose around the envelope must
  hold no structural character (``{}[]<>`` or a backtick), no BOM and no envelope keyword.
* JSON is strict: no NaN/Infinity, no float overflow to inf, no duplicate keys, no raw control
  characters. Deep nesting ends in ``RecursionError``, which (like every other failure) becomes
  ``ValueError``. Pythonic calls are read with ``ast`` (the tokenizer caps nesting at 200 levels) and
  a literal walker of our own that admits only JSON values, after a size guard.

``parse_validated`` is the ``--level validate`` variant against the built-in registry.
"""

from __future__ import annotations

import ast
import json
import math
import warnings
from typing import Any, Callable, Optional

__all__ = ["parse", "parse_validated", "validated_parser"]

_WS = " \t\n\r"
#: Characters that never appear in prose around a call (chatter is built without them).
_STRUCTURAL = "{}[]<>`\ufeff"
#: Envelope markers, longest first where two share a start (``[TOOL_CALLS]`` vs ``[``).
_MARKERS = ("[TOOL_CALLS]", "<|python_tag|>", "<tool_call>", "</tool_call>", "```", "Action Input:",
            "Action:", "<function=", "<|channel|>", "<｜tool▁calls▁begin｜>", "<｜DSML｜function_calls>",
            "<|tool_calls_section_begin|>", "<|tool_call>", "{", "[")
#: Reasoning delimiters: a block at the start of the output, or — the generation prompt opened it —
#: only its closer, before any call marker. Its text is never read for calls.
_REASONING = (("<think>", "</think>"), ("[THINK]", "[/THINK]"))
#: Fragments of special tokens and tags: text holding one but no marker is a misspelled envelope.
_TAG_LIKE = ("<|", "|>", "<｜", "｜>", "</", "<tool", "<function", "<arg_", "<param")
#: End-of-turn tokens an engine may leave after the output; one is dropped from the end.
_END_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "</s>", "<｜end▁of▁sentence｜>", "<|observation|>",
               "<|user|>", "<turn|>")
_REACT_WORDS = ("Action:", "Action Input:")
#: Pythonic payloads beyond this size are parsed only when they are not dense in syntax (ast costs
#: about 1.5 s per MB of small literals); beyond _PY_HARD_LIMIT never.
_PY_SOFT_LIMIT = 256 * 1024
_PY_HARD_LIMIT = 8 * 1024 * 1024
_PY_MAX_DENSE = 20000


# ----------------------------------------------------------------------------------------------------
# strict JSON


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} overflows to {value}")
    return value


def _unique_pairs(pairs: list) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r:.60} in JSON object")
            seen.add(key)
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_reject_constant,
                            parse_float=_finite_float, strict=True)


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _decode_at(text: str, i: int) -> tuple:
    """The JSON document starting exactly at ``i`` and the offset after it."""
    try:
        return _DECODER.raw_decode(text, i)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON: {exc}") from None


def _loads(text: str) -> Any:
    """A whole string as one JSON document (surrounding whitespace allowed)."""
    value, end = _decode_at(text, _skip_ws(text, 0))
    if _skip_ws(text, end) != len(text):
        raise ValueError("extra data after the JSON document")
    return value


# ----------------------------------------------------------------------------------------------------
# calls


def _call(name: Any, arguments: Any, where: str) -> dict:
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: the tool name must be a non-empty string, got {name!r:.60}")
    if not isinstance(arguments, dict):
        raise ValueError(f"{where}: arguments must be a JSON object, got {type(arguments).__name__}")
    return {"name": name, "arguments": arguments}


def _plain_call(obj: Any, arguments_key: str = "arguments") -> dict:
    """``{"name": ..., "arguments": {...}}`` and nothing else (``parameters`` for Llama 3's objects)."""
    if arguments_key == "arguments" and isinstance(obj, dict) and set(obj) == {"name", "parameters"}:
        arguments_key = "parameters"
    if not isinstance(obj, dict) or set(obj) != {"name", arguments_key}:
        keys = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        raise ValueError(f"expected a call object with keys name and {arguments_key}, got {keys}")
    return _call(obj["name"], obj[arguments_key], "call")


def _openai(message: dict) -> list:
    extra = set(message) - {"tool_calls", "role", "content", "refusal"}
    if extra or message.get("role", "assistant") != "assistant":
        raise ValueError(f"unexpected keys in an OpenAI message: {sorted(extra) or 'role'}")
    tool_calls = message["tool_calls"]
    if not isinstance(tool_calls, list):
        raise ValueError("tool_calls must be a list")
    calls = []
    for item in tool_calls:
        if not isinstance(item, dict) or set(item) - {"id", "type", "function"} or "function" not in item:
            raise ValueError("a tool_calls item must be {id, type, function}")
        if item.get("type", "function") != "function" or not isinstance(item.get("id", ""), str):
            raise ValueError("a tool_calls item must have type 'function' and a string id")
        function = item["function"]
        if not isinstance(function, dict) or set(function) != {"name", "arguments"}:
            raise ValueError("function must be {name, arguments}")
        if not isinstance(function["arguments"], str):
            raise ValueError("OpenAI arguments must be a JSON string")
        calls.append(_call(function["name"], _loads(function["arguments"]), "openai call"))
    return calls


def _llama_json_call(obj: Any) -> dict:
    """``{"type": "function", "name": ..., "parameters": {...}}`` and nothing else."""
    if not isinstance(obj, dict) or set(obj) != {"type", "name", "parameters"} or obj["type"] != "function":
        raise ValueError("expected a Llama JSON call {type: function, name, parameters}")
    return _call(obj["name"], obj["parameters"], "llama json call")


def _mcp_call(obj: Any) -> dict:
    """An MCP ``tools/call`` JSON-RPC request: ``{jsonrpc: "2.0", id, method, params: {name, arguments}}``."""
    if not isinstance(obj, dict) or set(obj) != {"jsonrpc", "id", "method", "params"}:
        raise ValueError("expected a JSON-RPC request {jsonrpc, id, method, params}")
    if obj["jsonrpc"] != "2.0" or obj["method"] != "tools/call":
        raise ValueError("expected a JSON-RPC 2.0 tools/call request")
    if isinstance(obj["id"], bool) or not isinstance(obj["id"], (int, str)):
        raise ValueError("a JSON-RPC id must be a string or an integer")
    return _plain_call(obj["params"])


def _anthropic_blocks(blocks: Any) -> list:
    """Anthropic content blocks: text blocks are prose, tool_use blocks are calls."""
    if not isinstance(blocks, list):
        raise ValueError("Anthropic content must be a list of blocks")
    calls = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text" and set(block) == {"type", "text"} \
                and isinstance(block["text"], str):
            continue
        if not isinstance(block, dict) or set(block) != {"type", "id", "name", "input"} \
                or block["type"] != "tool_use" or not isinstance(block["id"], str):
            raise ValueError("a content block must be {type: text, text} or {type: tool_use, id, name, input}")
        calls.append(_call(block["name"], block["input"], "tool_use block"))
    return calls


def _item_kind(item: Any) -> str:
    if isinstance(item, dict):
        if "jsonrpc" in item:
            return "mcp"
        if item.get("type") in ("text", "tool_use"):
            return "anthropic"
        if item.get("type") == "function":
            return "llama_json"
    return "plain"


def _json_calls(value: Any) -> list:
    """A call object, a list of them, an OpenAI or Anthropic message, Anthropic content blocks, Llama
    JSON calls or MCP requests (a list holds one kind)."""
    if isinstance(value, list):
        kind = _item_kind(value[0]) if value else "plain"
        if any(_item_kind(item) != kind for item in value):
            raise ValueError("a list of calls must hold one kind of call")
        if kind == "anthropic":
            return _anthropic_blocks(value)
        read = {"mcp": _mcp_call, "llama_json": _llama_json_call, "plain": _plain_call}[kind]
        return [read(item) for item in value]
    if isinstance(value, dict):
        if "tool_calls" in value:
            return _openai(value)
        kind = _item_kind(value)
        if kind == "mcp":
            return [_mcp_call(value)]
        if kind == "llama_json":
            return [_llama_json_call(value)]
        if set(value) == {"role", "content"}:
            if value["role"] != "assistant":
                raise ValueError("expected an assistant message")
            return _anthropic_blocks(value["content"])
    return [_plain_call(value)]


# ----------------------------------------------------------------------------------------------------
# formats: each takes the text and the marker offset, returns (calls, end of the envelope)


def _parse_json(text: str, start: int) -> tuple:
    value, end = _decode_at(text, start)
    calls = _json_calls(value)
    # Llama 3's bare {"name", "parameters"} objects, several joined by ';'
    while isinstance(value, dict) and set(value) == {"name", "parameters"}:
        following = _skip_ws(text, end)
        if not text.startswith(";", following):
            break
        value, end = _decode_at(text, _skip_ws(text, following + 1))
        if not isinstance(value, dict) or set(value) != {"name", "parameters"}:
            raise ValueError("';' must join Llama JSON calls {name, parameters}")
        calls.append(_plain_call(value, "parameters"))
    return calls, end


def _repeated(text: str, start: int, opener: str, one: Any) -> tuple:
    """Envelopes written one after another: ``one(text, i) -> (calls, end)`` while ``opener`` follows."""
    calls: list = []
    i = start
    while True:
        found, end = one(text, i)
        calls += found
        following = _skip_ws(text, end)
        if not text.startswith(opener, following):
            return calls, end
        i = following


def _one_fence(text: str, i: int) -> tuple:
    nl = text.find("\n", i + 3)
    if nl < 0 or text[i + 3:nl].strip(" \t\r").lower() not in ("json", ""):
        raise ValueError("a fence must open with ```json or ``` on its own line")
    value, end = _decode_at(text, _skip_ws(text, nl + 1))
    return _json_calls(value), _expect(text, _skip_ws(text, end), "```", "to close the fence")


def _parse_fenced(text: str, start: int) -> tuple:
    return _repeated(text, start, "```", _one_fence)


def _one_hermes(text: str, i: int) -> tuple:
    if not text.startswith("<tool_call>", i):
        raise ValueError("</tool_call> without <tool_call>")
    value, end = _decode_at(text, _skip_ws(text, i + len("<tool_call>")))
    return [_plain_call(value)], _expect(text, _skip_ws(text, end), "</tool_call>", "to close <tool_call>")


def _parse_hermes(text: str, start: int) -> tuple:
    return _repeated(text, start, "<tool_call>", _one_hermes)


def _parse_tool_call_tag(text: str, start: int) -> tuple:
    """``<tool_call>`` holds a JSON call (hermes), a Qwen3-Coder ``<function=...>`` block or a GLM
    ``NAME<arg_key>...`` call."""
    inside = _skip_ws(text, start + len("<tool_call>"))
    if text.startswith("<function=", inside):
        return _parse_qwen3(text, start)
    if text.startswith("{", inside) or text.startswith("</tool_call>", inside):
        return _parse_hermes(text, start)
    return _repeated(text, start, "<tool_call>", _one_glm)


def _one_glm(text: str, i: int) -> tuple:
    """``<tool_call>NAME`` then ``<arg_key>K</arg_key><arg_value>V</arg_value>`` pairs (whitespace
    between tags allowed, as GLM-4.5 writes them one per line and GLM-4.7 on one), ``</tool_call>``."""
    i = _expect(text, i, "<tool_call>", "before a GLM call")
    stop = len(text)
    for token in ("<arg_key>", "</tool_call>"):
        k = text.find(token, i)
        if 0 <= k < stop:
            stop = k
    if stop == len(text):
        raise ValueError("a GLM <tool_call> is not closed")
    raw = text[i:stop]
    name = raw.rstrip(_WS)
    if raw[:1] in _WS or any(c in name for c in '[]{}"') or _is_json(name):
        raise ValueError(f"invalid GLM tool name {raw!r:.60}")
    _tag_name(name, "a GLM call")
    i = stop
    arguments: dict = {}
    while text.startswith("<arg_key>", i):
        key_end = text.find("</arg_key>", i)
        if key_end < 0:
            raise ValueError("<arg_key> is not closed")
        key = text[i + len("<arg_key>"):key_end]
        if not key or key != key.strip() or "<" in key or ">" in key or "\n" in key:
            raise ValueError(f"invalid GLM argument name {key!r:.60}")
        if key in arguments:
            raise ValueError(f"argument {key!r:.60} given twice")
        j = _expect(text, _skip_ws(text, key_end + len("</arg_key>")), "<arg_value>", "after </arg_key>")
        value_end = text.find("</arg_value>", j)
        if value_end < 0:
            raise ValueError("<arg_value> is not closed")
        arguments[key] = _raw_value(text[j:value_end], ("<arg_key>", "<arg_value>", "</tool_call>"))
        i = _skip_ws(text, value_end + len("</arg_value>"))
    return [_call(name, arguments, "glm call")], _expect(text, i, "</tool_call>", "after the GLM arguments")


def _is_json(text: str) -> bool:
    try:
        _loads(text)
    except ValueError:
        return False
    return True


def _raw_value(raw: str, forbidden: tuple) -> Any:
    """A value written raw between tags: JSON when it is strict JSON, a Python literal's value for
    ``True``/``False``/``None``, else the string itself (which may not look like padding or tags)."""
    if raw != raw.strip() or "\r" in raw or any(token in raw for token in forbidden):
        raise ValueError(f"ambiguous value {raw!r:.60}")
    if raw in _PY_LITERALS:
        return _PY_LITERALS[raw]
    if not raw:
        return raw
    try:
        return _loads(raw)
    except ValueError:
        return raw


_PY_LITERALS = {"True": True, "False": False, "None": None}


def _expect(text: str, i: int, token: str, what: str) -> int:
    if not text.startswith(token, i):
        raise ValueError(f"expected {token!r} {what}")
    return i + len(token)


def _tag_name(name: str, where: str) -> str:
    if not name or any(c.isspace() or c in "<>|" for c in name):
        raise ValueError(f"{where}: invalid name {name!r:.60}")
    return name


def _strip_line_ends(raw: str) -> str:
    """A Qwen3-Coder value between its tags, without the one line end on each side."""
    for end in ("\r\n", "\n"):
        if raw.startswith(end):
            raw = raw[len(end):]
            break
    for end in ("\r\n", "\n"):
        if raw.endswith(end):
            raw = raw[:-len(end)]
            break
    return raw


def _qwen_value(raw: str) -> Any:
    """JSON when the text is strict JSON, else the raw string (which may not look like padding or tags)."""
    return _raw_value(_strip_line_ends(raw), ("<parameter=", "</function>", "</tool_call>"))


def _function_tag(text: str, i: int, where: str) -> tuple:
    """``<function=NAME>`` at ``i``: the name and the offset after the tag."""
    i = _expect(text, i, "<function=", where)
    close = text.find(">", i)
    if close < 0:
        raise ValueError("unclosed <function= tag")
    return _tag_name(text[i:close], where), close + 1


def _one_qwen3(text: str, i: int) -> tuple:
    i = _skip_ws(text, _expect(text, i, "<tool_call>", "before a Qwen3 call"))
    name, i = _function_tag(text, i, "in a Qwen3 <tool_call>")
    i = _skip_ws(text, i)
    arguments: dict = {}
    while text.startswith("<parameter=", i):
        key_end = text.find(">", i)
        value_end = text.find("</parameter>", key_end + 1) if key_end >= 0 else -1
        if value_end < 0:
            raise ValueError("a <parameter= tag is not closed by </parameter>")
        key = text[i + len("<parameter="):key_end]
        if not key or key != key.strip() or "<" in key or "\n" in key:
            raise ValueError(f"invalid parameter name {key!r:.60}")
        if key in arguments:
            raise ValueError(f"parameter {key!r:.60} given twice")
        arguments[key] = _qwen_value(text[key_end + 1:value_end])
        i = _skip_ws(text, value_end + len("</parameter>"))
    i = _skip_ws(text, _expect(text, i, "</function>", "after the parameters"))
    return [_call(name, arguments, "qwen3 call")], _expect(text, i, "</tool_call>", "after </function>")


def _parse_qwen3(text: str, start: int) -> tuple:
    return _repeated(text, start, "<tool_call>", _one_qwen3)


def _one_llama_function(text: str, i: int) -> tuple:
    name, after = _function_tag(text, i, "a Llama function call")
    j = _skip_ws(text, after)
    if not text.startswith("{", j):
        raise ValueError("<function=...> must be followed by a JSON object")
    arguments, end = _decode_at(text, j)
    return [_call(name, arguments, "llama function call")], _expect(text, _skip_ws(text, end), "</function>",
                                                                    "after the arguments")


def _parse_llama_function(text: str, start: int) -> tuple:
    return _repeated(text, start, "<function=", _one_llama_function)


_HARMONY_HINTS = ("", " json", " <|constrain|>json")


def _parse_harmony(text: str, start: int) -> tuple:
    """gpt-oss harmony messages: commentary calls ``to=functions.NAME``, analysis/final messages are prose."""
    calls: list = []
    i = start
    while True:
        recipient = ""
        if text.startswith(" to=functions.", i):  # the recipient before the channel
            channel = text.find("<|channel|>", i)
            if channel < 0:
                raise ValueError("a harmony recipient without <|channel|>")
            recipient, i = text[i + 1:channel], channel
        i = _expect(text, i, "<|channel|>", "before a harmony message")
        message = text.find("<|message|>", i)
        if message < 0:
            raise ValueError("a harmony header without <|message|>")
        header, content = text[i:message], message + len("<|message|>")
        if recipient:
            if not header.startswith("commentary") or "to=" in header:
                raise ValueError(f"unexpected harmony header {header!r:.80}")
            header = "commentary " + recipient + header[len("commentary"):]
        if header.startswith("commentary to=functions."):
            rest = header[len("commentary to=functions."):]
            cut = min((k for k in (rest.find(" "), rest.find("<")) if k >= 0), default=len(rest))
            name, hint = rest[:cut], rest[cut:]
            if hint not in _HARMONY_HINTS:
                raise ValueError(f"unexpected harmony header {header!r:.80}")
            if not text.startswith("{", content):
                raise ValueError("a harmony call's message must be a JSON object")
            arguments, end = _decode_at(text, content)
            calls.append(_call(_tag_name(name, "harmony recipient"), arguments, "harmony call"))
            if text.startswith("<|call|>", end):
                end += len("<|call|>")
        elif header in ("analysis", "final"):
            stop = "<|end|>" if header == "analysis" else "<|return|>"
            close = text.find(stop, content)
            if close < 0 or "<|" in text[content:close]:
                raise ValueError(f"a harmony {header} message must end with {stop}")
            end = close + len(stop)
        else:
            raise ValueError(f"unexpected harmony header {header!r:.80}")
        if not text.startswith("<|start|>assistant", end):
            return calls, end
        i = end + len("<|start|>assistant")


_DS = {"calls_begin": "<｜tool▁calls▁begin｜>", "call_begin": "<｜tool▁call▁begin｜>", "sep": "<｜tool▁sep｜>",
       "call_end": "<｜tool▁call▁end｜>", "calls_end": "<｜tool▁calls▁end｜>"}


def _parse_deepseek(text: str, start: int) -> tuple:
    calls: list = []
    i = start + len(_DS["calls_begin"])
    while True:
        i = _skip_ws(text, i)
        if text.startswith(_DS["calls_end"], i):
            return calls, i + len(_DS["calls_end"])
        i = _expect(text, i, _DS["call_begin"], "before a DeepSeek call")
        v3 = False
        if text.startswith("function" + _DS["sep"], i):  # V3 when a fence follows the name's line
            nl = text.find("\n", i + len("function" + _DS["sep"]))  # (a tool named "{" is V3 too)
            v3 = nl >= 0 and text.startswith("```", _skip_ws(text, nl))
        if not v3:  # V3.1: NAME<｜tool▁sep｜>{arguments}
            sep = text.find(_DS["sep"], i)
            if sep < 0:
                raise ValueError("a DeepSeek call without <｜tool▁sep｜>")
            name = _tag_name(text[i:sep], "a DeepSeek V3.1 call")
            j = sep + len(_DS["sep"])
            if not text.startswith("{", j):
                raise ValueError("DeepSeek V3.1 arguments must be a JSON object")
            arguments, end = _decode_at(text, j)
            i = _expect(text, end, _DS["call_end"], "after the arguments")
            calls.append(_call(name, arguments, "deepseek call"))
            continue
        i += len("function" + _DS["sep"])
        nl = text.find("\n", i)
        if nl < 0:
            raise ValueError("a DeepSeek tool name must end its line")
        name = text[i:nl].rstrip("\r")
        if not name or name != name.strip() or "｜" in name:
            raise ValueError(f"invalid DeepSeek tool name {name!r:.60}")
        j = _skip_ws(text, nl)
        line = text.find("\n", j)
        if not text.startswith("```", j) or line < 0 or text[j + 3:line].strip(" \t\r").lower() != "json":
            raise ValueError("DeepSeek arguments must be in a ```json fence")
        k = _skip_ws(text, line)
        if not text.startswith("{", k):
            raise ValueError("DeepSeek arguments must be a JSON object")
        arguments, end = _decode_at(text, k)
        end = _expect(text, _skip_ws(text, end), "```", "after the DeepSeek arguments")
        i = _expect(text, end, _DS["call_end"], "after the fence")
        calls.append(_call(name, arguments, "deepseek call"))


def _parse_mistral(text: str, start: int) -> tuple:
    """``[TOOL_CALLS]`` then a JSON list of calls (tokenizer v3), or ``NAME[ARGS]{...}`` per
    ``[TOOL_CALLS]`` (v11+, with ``[CALL_ID]ID`` before ``[ARGS]`` in some versions, and ``[ARGS]``
    missing where an engine skipped special tokens)."""
    i = _skip_ws(text, start + len("[TOOL_CALLS]"))
    if text.startswith("[", i):
        value, end = _decode_at(text, i)
        if not isinstance(value, list):
            raise ValueError("[TOOL_CALLS] must be followed by a JSON list of calls")
        return [_plain_call(_without_id(item)) for item in value], end
    return _repeated(text, start, "[TOOL_CALLS]", _one_mistral_v11)


def _without_id(item: Any) -> Any:
    """A v3 call object without the ``"id"`` (a string) Mistral's chat template writes last."""
    if isinstance(item, dict) and isinstance(item.get("id"), str) and set(item) - {"id"}:
        return {key: value for key, value in item.items() if key != "id"}
    return item


def _one_mistral_v11(text: str, i: int) -> tuple:
    i = _expect(text, i, "[TOOL_CALLS]", "before a Mistral call")
    brace = text.find("{", i)
    if brace < 0:
        raise ValueError("a Mistral call has no arguments object")
    head = text[i:brace]
    if head.endswith("[ARGS]"):
        head = head[:-len("[ARGS]")]
    name, _, ident = head.partition("[CALL_ID]")
    if _ and (not ident or not ident.isalnum()):
        raise ValueError(f"invalid Mistral call id {ident!r:.40}")
    _tag_name(name, "a Mistral call")
    if any(c in name for c in "[]"):
        raise ValueError(f"invalid Mistral tool name {name!r:.60}")
    arguments, end = _decode_at(text, brace)
    return [_call(name, arguments, "mistral call")], end


def _parse_llama3(text: str, start: int) -> tuple:
    calls: list = []
    i = start + len("<|python_tag|>")
    while True:
        i = _skip_ws(text, i)
        if not text.startswith("{", i):
            raise ValueError("<|python_tag|> must be followed by a JSON call object")
        value, end = _decode_at(text, i)
        calls.append(_plain_call(value, "parameters"))
        following = _skip_ws(text, end)
        if not text.startswith(";", following):
            return calls, end
        i = following + 1


def _parse_react(text: str, start: int) -> tuple:
    calls: list = []
    i = start
    while True:
        if not text.startswith("Action:", i):
            raise ValueError("Action Input: without a preceding Action:")
        nl = text.find("\n", i)
        if nl < 0:
            raise ValueError("Action: without Action Input:")
        name = text[i + len("Action:"):nl].strip(" \t\r")
        j = _skip_ws(text, nl)
        if not text.startswith("Action Input:", j):
            raise ValueError("Action: must be followed by an Action Input: line")
        j = _skip_ws(text, j + len("Action Input:"))
        if not text.startswith("{", j):
            raise ValueError("Action Input: must be a JSON object")
        arguments, end = _decode_at(text, j)
        calls.append(_call(name, arguments, "react call"))
        following = text.find("Action:", end)
        if following < 0:
            return calls, end
        between = text[end:following]
        # Only whitespace or a new "Thought: ..." may separate two actions.
        _check_prose(between, react=True)
        if between.strip(_WS) and not between.lstrip(_WS).startswith("Thought:"):
            raise ValueError("unexpected text between two ReAct actions")
        i = following


def _parse_pythonic(text: str, start: int) -> tuple:
    end = text.rfind("]") + 1
    source = text[start:end]
    if len(source) > _PY_SOFT_LIMIT:
        if len(source) > _PY_HARD_LIMIT or _syntax_count(source) > _PY_MAX_DENSE:
            raise ValueError(f"pythonic payload too large to parse safely ({len(source)} characters)")
    try:
        with warnings.catch_warnings():  # e.g. "invalid escape sequence": Python accepts it, so do we
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise ValueError(f"not a Python list of calls: {exc}") from None
    if not isinstance(tree.body, ast.List):
        raise ValueError("pythonic calls must be a Python list")
    calls = []
    for node in tree.body.elts:
        if not isinstance(node, ast.Call) or node.args:
            raise ValueError("each element must be a call with keyword arguments only")
        arguments: dict = {}
        for kw in node.keywords:
            if kw.arg is None:
                extra = _literal(kw.value)
                if not isinstance(extra, dict):
                    raise ValueError("** must unpack a dict literal")
                items = list(extra.items())
            else:
                items = [(kw.arg, _literal(kw.value))]
            for key, value in items:
                if key in arguments:
                    raise ValueError(f"argument {key!r:.60} given twice")
                arguments[key] = value
        calls.append(_call(_dotted_name(node.func), arguments, "pythonic call"))
    return calls, end


def _syntax_count(source: str) -> int:
    """How many of ``,([{:=`` occur outside string literals and comments: a bound on ast's work.

    One pass; string bodies and comments are skipped with ``str.find``. Where this scan and Python's
    tokenizer could disagree (an unterminated or multi-line single-quoted string), Python fails fast
    with a SyntaxError, so the bound only has to be right for text Python accepts.
    """
    count, i, n = 0, 0, len(source)
    while i < n:
        c = source[i]
        if c == '"' or c == "'":
            quote = c * 3 if source.startswith(c * 3, i) else c
            j = i + len(quote)
            while True:
                k = source.find(quote, j)
                if k < 0:
                    return count
                backslashes = 0
                while source[k - 1 - backslashes] == "\\":
                    backslashes += 1
                if backslashes % 2 == 0:
                    break
                j = k + 1
            i = k + len(quote)
        elif c == "#":
            k = source.find("\n", i)
            i = n if k < 0 else k + 1
        else:
            if c in ",([{:=":
                count += 1
            i += 1
    return count


def _dotted_name(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise ValueError("a pythonic call must name a function")
    parts.append(node.id)
    return ".".join(reversed(parts))


def _literal(node: ast.AST) -> Any:
    """A JSON value written as a Python literal; anything else (tuples, sets, bytes, names) is rejected."""
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, (str, bool, int)):
            return value
        if isinstance(value, float) and math.isfinite(value):
            return value
        raise ValueError(f"{type(value).__name__} literal is not a JSON value")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        value = node.operand.value
        return _literal(ast.Constant(-value if isinstance(node.op, ast.USub) else value))
    if isinstance(node, ast.List):
        return [_literal(elt) for elt in node.elts]
    if isinstance(node, ast.Dict):
        result: dict = {}
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise ValueError("dict keys must be string literals")
            if key.value in result:
                raise ValueError(f"duplicate key {key.value!r:.60} in dict literal")
            result[key.value] = _literal(value)
        return result
    raise ValueError(f"{type(node).__name__} is not a JSON literal")


def _parse_bracket(text: str, start: int) -> tuple:
    """``[`` starts a JSON list of calls (``[{`` or ``[]``) or a pythonic list (``[name(``)."""
    i = _skip_ws(text, start + 1)
    if i < len(text) and text[i] in "{]":
        return _parse_json(text, start)
    if i < len(text) and (text[i].isidentifier() or text[i] == "_"):
        return _parse_pythonic(text, start)
    raise ValueError("[ starts neither a JSON list of calls nor a Python list of calls")


_DSML = "｜DSML｜"


def _parse_dsml(text: str, start: int) -> tuple:
    """DeepSeek V3.2: ``<｜DSML｜function_calls>``, ``<｜DSML｜invoke name="N">`` blocks of
    ``<｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>`` lines: a string value
    raw, any other as JSON."""
    i = start + len(f"<{_DSML}function_calls>")
    calls: list = []
    while True:
        i = _skip_ws(text, i)
        if text.startswith(f"</{_DSML}function_calls>", i):
            return calls, i + len(f"</{_DSML}function_calls>")
        i = _expect(text, i, f'<{_DSML}invoke name="', "in a DSML block")
        close = text.find('">', i)
        if close < 0:
            raise ValueError("an unclosed DSML invoke tag")
        name = _tag_name(text[i:close], "a DSML invoke")
        if '"' in name:
            raise ValueError(f"invalid DSML name {name!r:.60}")
        i = _skip_ws(text, close + 2)
        arguments: dict = {}
        while text.startswith(f'<{_DSML}parameter name="', i):
            i += len(f'<{_DSML}parameter name="')
            key_end = text.find('" string="', i)
            if key_end < 0:
                raise ValueError("a DSML parameter without string=")
            key = text[i:key_end]
            if not key or '"' in key or "<" in key or ">" in key or "\n" in key:
                raise ValueError(f"invalid DSML parameter name {key!r:.60}")
            j = key_end + len('" string="')
            if text.startswith('true">', j):
                is_string, j = True, j + len('true">')
            elif text.startswith('false">', j):
                is_string, j = False, j + len('false">')
            else:
                raise ValueError('string= must be "true" or "false"')
            value_end = text.find(f"</{_DSML}parameter>", j)
            if value_end < 0:
                raise ValueError("a DSML parameter is not closed")
            raw = text[j:value_end]
            if f"<{_DSML}" in raw:
                raise ValueError("a DSML tag inside a parameter value")
            if key in arguments:
                raise ValueError(f"parameter {key!r:.60} given twice")
            arguments[key] = raw if is_string else _loads(raw)
            if not is_string and isinstance(arguments[key], str):
                raise ValueError('a string value marked string="false"')
            i = _skip_ws(text, value_end + len(f"</{_DSML}parameter>"))
        i = _expect(text, i, f"</{_DSML}invoke>", "after the DSML parameters")
        calls.append(_call(name, arguments, "dsml call"))


_KIMI = {"begin": "<|tool_calls_section_begin|>", "end": "<|tool_calls_section_end|>",
         "call": "<|tool_call_begin|>", "call_end": "<|tool_call_end|>", "args": "<|tool_call_argument_begin|>"}


def _parse_kimi(text: str, start: int) -> tuple:
    """Kimi K2: ``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>``
    calls in a section."""
    i = start + len(_KIMI["begin"])
    calls: list = []
    while True:
        i = _skip_ws(text, i)
        if text.startswith(_KIMI["end"], i):
            return calls, i + len(_KIMI["end"])
        i = _skip_ws(text, _expect(text, i, _KIMI["call"], "in a Kimi tool-call section"))
        args = text.find(_KIMI["args"], i)
        if args < 0:
            raise ValueError("a Kimi call without <|tool_call_argument_begin|>")
        ident = text[i:args].rstrip(" ")
        head, colon, index = ident.rpartition(":")
        if not colon or not index.isdigit() or not index.isascii():
            raise ValueError(f"invalid Kimi call id {ident!r:.60}")
        name = head[len("functions."):] if head.startswith("functions.") else head
        if "." in name or ":" in name:
            raise ValueError(f"invalid Kimi tool name {name!r:.60}")
        _tag_name(name, "a Kimi call")
        j = _skip_ws(text, args + len(_KIMI["args"]))
        if not text.startswith("{", j):
            raise ValueError("Kimi arguments must be a JSON object")
        arguments, end = _decode_at(text, j)
        i = _expect(text, _skip_ws(text, end), _KIMI["call_end"], "after the Kimi arguments")
        calls.append(_call(name, arguments, "kimi call"))


_GQ = '<|"|>'


def _parse_gemma(text: str, start: int) -> tuple:
    return _repeated(text, start, "<|tool_call>", _one_gemma)


def _one_gemma(text: str, i: int) -> tuple:
    """Gemma 4: ``<|tool_call>call:NAME{key:value,...}<tool_call|>``; strings in ``<|"|>`` quotes,
    keys bare or quoted, numbers, true/false/null, ``{...}`` and ``[...]`` (one pass, no recursion)."""
    i = _expect(text, _expect(text, i, "<|tool_call>", "before a Gemma call"), "call:", "after <|tool_call>")
    brace = text.find("{", i)
    if brace < 0:
        raise ValueError("a Gemma call without arguments")
    name = _tag_name(text[i:brace], "a Gemma call")
    if ":" in name:
        raise ValueError(f"invalid Gemma tool name {name!r:.60}")
    value, j = _gemma_value(text, brace)
    return [_call(name, value, "gemma call")], _expect(text, j, "<tool_call|>", "after the Gemma arguments")


def _gemma_scalar(text: str, i: int) -> tuple:
    if text.startswith(_GQ, i):
        close = text.find(_GQ, i + len(_GQ))
        if close < 0:
            raise ValueError("an unclosed Gemma string")
        return text[i + len(_GQ):close], close + len(_GQ)
    j = i
    n = len(text)
    while j < n and text[j] not in ",}]:":
        j += 1
    word = text[i:j]
    if word in ("true", "false", "null"):
        return {"true": True, "false": False, "null": None}[word], j
    if not word or word != word.strip():
        raise ValueError(f"invalid Gemma value {word!r:.60}")
    value = _loads(word)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ValueError(f"invalid Gemma value {word!r:.60}")
    return value, j


def _gemma_key(text: str, i: int) -> tuple:
    if text.startswith(_GQ, i):
        return _gemma_scalar(text, i)
    colon = text.find(":", i)
    if colon < 0:
        raise ValueError("a Gemma key without ':'")
    key = text[i:colon]
    if not key or not all(c.isalnum() or c in "_-." for c in key):
        raise ValueError(f"invalid Gemma key {key!r:.60}")
    return key, colon


def _gemma_value(text: str, i: int) -> tuple:
    """The value at ``i`` and the offset after it, with an explicit stack instead of recursion."""
    root: list = []
    stack: list = [(root, None)]  # (container, pending key)
    n = len(text)
    while True:
        container, _ = stack[-1]
        if i < n and text[i] in "{[":
            new: Any = {} if text[i] == "{" else []
            stack.append((new, None))
            i += 1
            if i < n and text[i] in "}]":
                pass
            else:
                if isinstance(new, dict):
                    key, i = _gemma_key(text, i)
                    i = _expect(text, i, ":", "after a Gemma key")
                    stack[-1] = (new, key)
                continue
        else:
            value, i = _gemma_scalar(text, i)
            _gemma_store(stack, value)
        # after a value (or an empty container about to close)
        while True:
            container, key = stack[-1]
            if i < n and text[i] == ",":
                i += 1
                if isinstance(container, dict):
                    key, i = _gemma_key(text, i)
                    i = _expect(text, i, ":", "after a Gemma key")
                    stack[-1] = (container, key)
                break
            closer = "}" if isinstance(container, dict) else "]"
            if i < n and text[i] == closer and len(stack) > 1:
                i += 1
                stack.pop()
                if len(stack) == 1:
                    return container, i
                _gemma_store(stack, container)
                continue
            raise ValueError("malformed Gemma arguments")


def _gemma_store(stack: list, value: Any) -> None:
    container, key = stack[-1]
    if isinstance(container, dict):
        if key in container:
            raise ValueError(f"argument {key!r:.60} given twice")
        container[key] = value
    else:
        container.append(value)


_PARSERS = {"[TOOL_CALLS]": _parse_mistral, "<|python_tag|>": _parse_llama3, "<tool_call>": _parse_tool_call_tag,
            "</tool_call>": _parse_hermes, "```": _parse_fenced, "Action Input:": _parse_react,
            "Action:": _parse_react, "<function=": _parse_llama_function, "<|channel|>": _parse_harmony,
            "<｜tool▁calls▁begin｜>": _parse_deepseek, "<｜DSML｜function_calls>": _parse_dsml,
            "<|tool_calls_section_begin|>": _parse_kimi, "<|tool_call>": _parse_gemma,
            "{": _parse_json, "[": _parse_bracket}


# ----------------------------------------------------------------------------------------------------
# prose


def _check_prose(prose: str, *, react: bool = False) -> None:
    for c in _STRUCTURAL:
        if c in prose:
            raise ValueError(f"unexpected {c!r} in the text around the call")
    if not react:
        for word in _REACT_WORDS:
            if word in prose:
                raise ValueError(f"unexpected {word!r} in the text around the call")
    elif "Action Input:" in prose:
        raise ValueError("Action Input: without a preceding Action:")


def _looks_like_bare_call(text: str) -> bool:
    """``name(`` anywhere: a call without list brackets, which we neither accept nor call prose."""
    i = text.find("(")
    while i >= 0:
        if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
            return True
        i = text.find("(", i + 1)
    return False


def _first_marker(text: str) -> tuple:
    best: tuple = (-1, None)
    for marker in _MARKERS:
        i = text.find(marker)
        if i >= 0 and (best[0] < 0 or i < best[0]):
            best = (i, marker)
    return best


def _skip_reasoning(text: str) -> str:
    """The text after a leading reasoning block (or after the closer of one the generation prompt
    opened, when it comes before every call marker), else the text itself."""
    body = text.lstrip(_WS)
    for opener, closer in _REASONING:
        if body.startswith(opener):
            close = body.find(closer, len(opener))
            if close < 0:
                raise ValueError(f"{opener} is never closed")
            if opener in body[len(opener):close]:
                raise ValueError(f"{opener} inside reasoning")
            return body[close + len(closer):]
    for opener, closer in _REASONING:
        close = text.find(closer)
        if close >= 0:
            marker_at, _ = _first_marker(text[:close])
            if marker_at < 0 and opener not in text[:close]:
                return text[close + len(closer):]
    return text


def _drop_end_token(text: str) -> str:
    body = text.rstrip(_WS)
    for token in _END_TOKENS:
        if body.endswith(token):
            return body[:-len(token)]
    return text


def _parse(text: str) -> list:
    if not isinstance(text, str):
        raise ValueError(f"expected str, got {type(text).__name__}")
    text = _drop_end_token(_skip_reasoning(text))
    start, marker = _first_marker(text)
    if marker is None:
        if "\ufeff" in text or _looks_like_bare_call(text) or any(t in text for t in _TAG_LIKE):
            raise ValueError("text looks like a call but is in no known format")
        return []
    before = text[:start]
    _check_prose(before, react=marker.startswith("Action"))
    calls, end = _PARSERS[marker](text, start)
    _check_prose(text[end:], react=marker.startswith("Action"))
    return calls


def _guarded(function: Any, text: str) -> list:
    """Run ``function(text)``; every failure leaves as ``ValueError`` (the target contract)."""
    try:
        return function(text)
    except ValueError:
        raise
    except RecursionError:
        raise ValueError("input nested too deeply") from None
    except MemoryError:
        raise ValueError("input too large") from None
    except Exception as exc:  # nothing but ValueError may ever escape
        raise ValueError(f"unparseable input ({type(exc).__name__}: {exc})") from None


def parse(text: str) -> list:
    """The calls ``text`` denotes, ``[]`` for plain prose; ``ValueError`` for anything else.

    >>> parse('<tool_call>\\n{"name": "f", "arguments": {"x": 1}}\\n</tool_call>')
    [{'name': 'f', 'arguments': {'x': 1}}]
    """
    return _guarded(_parse, text)


# ----------------------------------------------------------------------------------------------------
# validate level


def validated_parser(registry: Any) -> Callable[[str], list]:
    """A ``--level validate`` parser for ``registry`` (any mapping-like set of tools with ``.schema``).

    It parses like :func:`parse`, then every call must name a tool of ``registry`` and satisfy its
    JSON Schema (the schema's own draft, ``format`` checked), and no two calls may be identical as
    JSON values; otherwise ``ValueError``. The validators are built here, once: a malformed schema
    raises ``jsonschema.SchemaError`` now instead of hiding later as a rejected input.
    """
    from strategies._internal.schema import tool_validator
    from strategies.json_values import canonical

    validators: dict = {}
    for tool in registry:
        validator = tool_validator(tool)
        type(validator).check_schema(tool.schema if isinstance(tool.schema, bool) else dict(tool.schema))
        validators[tool.name] = validator

    def validate(text: str) -> list:
        calls = _parse(text)
        seen: set = set()
        for call in calls:
            name = call["name"]
            validator = validators.get(name)
            if validator is None:
                raise ValueError(f"unknown tool {name!r:.80}")
            error = next(iter(validator.iter_errors(call["arguments"])), None)
            if error is not None:
                raise ValueError(f"{name}: arguments do not match the schema: {error.message:.200}")
            key = (name, canonical(call["arguments"]))
            if key in seen:
                raise ValueError(f"duplicate call of {name!r:.80}")
            seen.add(key)
        return calls

    def parse_validated_in_registry(text: str) -> list:
        return _guarded(validate, text)

    parse_validated_in_registry.__doc__ = validated_parser.__doc__
    return parse_validated_in_registry


_BUILTIN: Optional[Callable[[str], list]] = None


#: Environment variable naming the tools file the validate-level reference checks against; the
#: CLI sets it to its ``--tools`` so the bundled reference validates the registry being fuzzed.
TOOLS_ENV = "TOOLFUZZ_TOOLS"


def parse_validated(text: str) -> list:
    """:func:`parse`, then the ``--level validate`` promise against the registry being fuzzed
    (``$TOOLFUZZ_TOOLS``, set by the CLI from ``--tools``; the built-in registry otherwise).

    The registry is loaded on first use, outside the ``ValueError`` guard: a broken installation
    surfaces as itself, never as a rejected input.
    """
    global _BUILTIN
    if _BUILTIN is None:
        import os

        from strategies._internal.tools import load_registry

        _BUILTIN = validated_parser(load_registry(os.environ.get(TOOLS_ENV) or None))
    return _BUILTIN(text)
