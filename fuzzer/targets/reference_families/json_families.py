"""The reference parser's JSON families: a call object or a list of them (also OpenAI messages,
Anthropic content blocks, Llama JSON calls, MCP requests), fenced ```json blocks, hermes
``<tool_call>`` tags, Mistral ``[TOOL_CALLS]`` (tokenizer v3 and v11+), Llama 3 ``<|python_tag|>``,
ReAct ``Action:`` / ``Action Input:``, and ``[`` (a JSON list of calls, or a pythonic one). Each
reader takes the text and the offset of its marker and returns (calls, end of the envelope)."""

from __future__ import annotations

from typing import Any

from fuzzer.targets.reference_families.pythonic import parse_pythonic
from fuzzer.targets.reference_families.reading import (
    WS, call, check_prose, decode_at, expect, loads, repeated, skip_ws, tag_name,
)


def _plain_call(obj: Any, arguments_key: str = "arguments") -> dict:
    """``{"name": ..., "arguments": {...}}`` and nothing else (``parameters`` for Llama 3's objects)."""
    if arguments_key == "arguments" and isinstance(obj, dict) and set(obj) == {"name", "parameters"}:
        arguments_key = "parameters"
    if not isinstance(obj, dict) or set(obj) != {"name", arguments_key}:
        keys = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        raise ValueError(f"expected a call object with keys name and {arguments_key}, got {keys}")
    return call(obj["name"], obj[arguments_key], "call")


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
        calls.append(call(function["name"], loads(function["arguments"]), "openai call"))
    return calls


def _llama_json_call(obj: Any) -> dict:
    """``{"type": "function", "name": ..., "parameters": {...}}`` and nothing else."""
    if not isinstance(obj, dict) or set(obj) != {"type", "name", "parameters"} or obj["type"] != "function":
        raise ValueError("expected a Llama JSON call {type: function, name, parameters}")
    return call(obj["name"], obj["parameters"], "llama json call")


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
        calls.append(call(block["name"], block["input"], "tool_use block"))
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


def parse_json(text: str, start: int) -> tuple:
    value, end = decode_at(text, start)
    calls = _json_calls(value)
    # Llama 3's bare {"name", "parameters"} objects, several joined by ';'
    while isinstance(value, dict) and set(value) == {"name", "parameters"}:
        following = skip_ws(text, end)
        if not text.startswith(";", following):
            break
        value, end = decode_at(text, skip_ws(text, following + 1))
        if not isinstance(value, dict) or set(value) != {"name", "parameters"}:
            raise ValueError("';' must join Llama JSON calls {name, parameters}")
        calls.append(_plain_call(value, "parameters"))
    return calls, end


def _one_fence(text: str, i: int) -> tuple:
    nl = text.find("\n", i + 3)
    if nl < 0 or text[i + 3:nl].strip(" \t\r").lower() not in ("json", ""):
        raise ValueError("a fence must open with ```json or ``` on its own line")
    value, end = decode_at(text, skip_ws(text, nl + 1))
    return _json_calls(value), expect(text, skip_ws(text, end), "```", "to close the fence")


def parse_fenced(text: str, start: int) -> tuple:
    return repeated(text, start, "```", _one_fence)


def _one_hermes(text: str, i: int) -> tuple:
    if not text.startswith("<tool_call>", i):
        raise ValueError("</tool_call> without <tool_call>")
    value, end = decode_at(text, skip_ws(text, i + len("<tool_call>")))
    return [_plain_call(value)], expect(text, skip_ws(text, end), "</tool_call>", "to close <tool_call>")


def parse_hermes(text: str, start: int) -> tuple:
    return repeated(text, start, "<tool_call>", _one_hermes)


def parse_mistral(text: str, start: int) -> tuple:
    """``[TOOL_CALLS]`` then a JSON list of calls (tokenizer v3), or ``NAME[ARGS]{...}`` per
    ``[TOOL_CALLS]`` (v11+, with ``[CALL_ID]ID`` before ``[ARGS]`` in some versions, and ``[ARGS]``
    missing where an engine skipped special tokens)."""
    i = skip_ws(text, start + len("[TOOL_CALLS]"))
    if text.startswith("[", i):
        value, end = decode_at(text, i)
        if not isinstance(value, list):
            raise ValueError("[TOOL_CALLS] must be followed by a JSON list of calls")
        return [_plain_call(_without_id(item)) for item in value], end
    return repeated(text, start, "[TOOL_CALLS]", _one_mistral_v11)


def _without_id(item: Any) -> Any:
    """A v3 call object without the ``"id"`` (a string) Mistral's chat template writes last."""
    if isinstance(item, dict) and isinstance(item.get("id"), str) and set(item) - {"id"}:
        return {key: value for key, value in item.items() if key != "id"}
    return item


def _one_mistral_v11(text: str, i: int) -> tuple:
    i = expect(text, i, "[TOOL_CALLS]", "before a Mistral call")
    brace = text.find("{", i)
    if brace < 0:
        raise ValueError("a Mistral call has no arguments object")
    head = text[i:brace]
    if head.endswith("[ARGS]"):
        head = head[:-len("[ARGS]")]
    name, _, ident = head.partition("[CALL_ID]")
    if _ and (not ident or not ident.isalnum()):
        raise ValueError(f"invalid Mistral call id {ident!r:.40}")
    tag_name(name, "a Mistral call")
    if any(c in name for c in "[]'\"`"):  # (a quote before the brace: quoted arguments, not a name)
        raise ValueError(f"invalid Mistral tool name {name!r:.60}")
    arguments, end = decode_at(text, brace)
    return [call(name, arguments, "mistral call")], end


def _llama3_call(obj: Any) -> dict:
    """A call object after ``<|python_tag|>``: ``{"name", "parameters"}``, as Llama 3.1's template asks,
    and what Llama models also write there (and vLLM's and SGLang's llama3 parsers read):
    ``"arguments"`` for ``"parameters"``, and ``"type": "function"`` first."""
    if isinstance(obj, dict) and obj.get("type") == "function" and set(obj) == {"type", "name", "parameters"}:
        return _llama_json_call(obj)
    if isinstance(obj, dict) and set(obj) == {"name", "arguments"}:
        return _plain_call(obj)
    return _plain_call(obj, "parameters")


def parse_llama3(text: str, start: int) -> tuple:
    calls: list = []
    i = start + len("<|python_tag|>")
    while True:
        i = skip_ws(text, i)
        if not text.startswith("{", i):
            raise ValueError("<|python_tag|> must be followed by a JSON call object")
        value, end = decode_at(text, i)
        calls.append(_llama3_call(value))
        following = skip_ws(text, end)
        if not text.startswith(";", following):
            return calls, end
        i = following + 1


def parse_react(text: str, start: int) -> tuple:
    calls: list = []
    i = start
    while True:
        if not text.startswith("Action:", i):
            raise ValueError("Action Input: without a preceding Action:")
        nl = text.find("\n", i)
        if nl < 0:
            raise ValueError("Action: without Action Input:")
        name = text[i + len("Action:"):nl].strip(" \t\r")
        j = skip_ws(text, nl)
        if not text.startswith("Action Input:", j):
            raise ValueError("Action: must be followed by an Action Input: line")
        j = skip_ws(text, j + len("Action Input:"))
        if not text.startswith("{", j):
            raise ValueError("Action Input: must be a JSON object")
        arguments, end = decode_at(text, j)
        calls.append(call(name, arguments, "react call"))
        following = text.find("Action:", end)
        if following < 0:
            return calls, end
        between = text[end:following]
        # Only whitespace or a new "Thought: ..." may separate two actions.
        check_prose(between, react=True)
        if between.strip(WS) and not between.lstrip(WS).startswith("Thought:"):
            raise ValueError("unexpected text between two ReAct actions")
        i = following


def parse_bracket(text: str, start: int) -> tuple:
    """``[`` starts a JSON list of calls (``[{`` or ``[]``) or a pythonic list (``[name(``)."""
    i = skip_ws(text, start + 1)
    if i < len(text) and text[i] in "{]":
        return parse_json(text, start)
    if i < len(text) and (text[i].isidentifier() or text[i] == "_"):
        return parse_pythonic(text, start)
    raise ValueError("[ starts neither a JSON list of calls nor a Python list of calls")


__all__ = ["parse_bracket", "parse_fenced", "parse_hermes", "parse_json", "parse_llama3", "parse_mistral",
           "parse_react"]
