"""The reference parser's tag families: inside ``<tool_call>``, hermes' JSON
(:mod:`~fuzzer.targets.reference_families.json_families`), Qwen3-Coder's
``<function=NAME><parameter=K>V</parameter></function>`` or GLM's
``NAME<arg_key>K</arg_key><arg_value>V</arg_value>``; and Llama 3.1's ``<function=NAME>{...}</function>``.
Each reader takes the text and the offset of its marker and returns (calls, end of the envelope)."""

from __future__ import annotations

from typing import Any

from fuzzer.targets.reference_families.json_families import parse_hermes
from fuzzer.targets.reference_families.reading import (
    WS, call, decode_at, expect, is_json, name_until, raw_value, repeated, skip_ws, tag_name,
)


def parse_tool_call_tag(text: str, start: int) -> tuple:
    """``<tool_call>`` holds a JSON call (hermes), a Qwen3-Coder ``<function=...>`` block or a GLM
    ``NAME<arg_key>...`` call."""
    inside = skip_ws(text, start + len("<tool_call>"))
    if text.startswith("<function=", inside):
        return _parse_qwen3(text, start)
    if text.startswith("{", inside) or text.startswith("</tool_call>", inside):
        return parse_hermes(text, start)
    return repeated(text, start, "<tool_call>", _one_glm)


def _one_glm(text: str, i: int) -> tuple:
    """``<tool_call>NAME`` then ``<arg_key>K</arg_key><arg_value>V</arg_value>`` pairs (whitespace
    between tags allowed, as GLM-4.5 writes them one per line and GLM-4.7 on one), ``</tool_call>``."""
    i = expect(text, i, "<tool_call>", "before a GLM call")
    stop = len(text)
    for token in ("<arg_key>", "</tool_call>"):
        k = text.find(token, i)
        if 0 <= k < stop:
            stop = k
    if stop == len(text):
        raise ValueError("a GLM <tool_call> is not closed")
    raw = text[i:stop]
    name = raw.rstrip(WS)
    if raw[:1] in WS or any(c in name for c in '[]{}"') or is_json(name):
        raise ValueError(f"invalid GLM tool name {raw!r:.60}")
    tag_name(name, "a GLM call")
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
        j = expect(text, skip_ws(text, key_end + len("</arg_key>")), "<arg_value>", "after </arg_key>")
        value_end = text.find("</arg_value>", j)
        if value_end < 0:
            raise ValueError("<arg_value> is not closed")
        arguments[key] = raw_value(text[j:value_end], ("<arg_key>", "<arg_value>", "</tool_call>"))
        i = skip_ws(text, value_end + len("</arg_value>"))
    return [call(name, arguments, "glm call")], expect(text, i, "</tool_call>", "after the GLM arguments")


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
    return raw_value(_strip_line_ends(raw), ("<parameter=", "</function>", "</tool_call>"))


def _function_tag(text: str, i: int, where: str) -> tuple:
    """``<function=NAME>`` at ``i``: the name and the offset after the tag."""
    i = expect(text, i, "<function=", where)
    name, close = name_until(text, i, ">", where, "unclosed <function= tag")
    return name, close + 1


def _one_qwen3(text: str, i: int) -> tuple:
    i = skip_ws(text, expect(text, i, "<tool_call>", "before a Qwen3 call"))
    name, i = _function_tag(text, i, "in a Qwen3 <tool_call>")
    i = skip_ws(text, i)
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
        i = skip_ws(text, value_end + len("</parameter>"))
    i = skip_ws(text, expect(text, i, "</function>", "after the parameters"))
    return [call(name, arguments, "qwen3 call")], expect(text, i, "</tool_call>", "after </function>")


def _parse_qwen3(text: str, start: int) -> tuple:
    return repeated(text, start, "<tool_call>", _one_qwen3)


def _one_llama_function(text: str, i: int) -> tuple:
    name, after = _function_tag(text, i, "a Llama function call")
    j = skip_ws(text, after)
    if not text.startswith("{", j):
        raise ValueError("<function=...> must be followed by a JSON object")
    arguments, end = decode_at(text, j)
    return [call(name, arguments, "llama function call")], expect(text, skip_ws(text, end), "</function>",
                                                                    "after the arguments")


def parse_llama_function(text: str, start: int) -> tuple:
    return repeated(text, start, "<function=", _one_llama_function)


__all__ = ["parse_llama_function", "parse_tool_call_tag"]
