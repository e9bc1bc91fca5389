"""The reference parser's special-token families: gpt-oss harmony
(``<|channel|>commentary to=functions.NAME``), DeepSeek V3 and V3.1 (``<｜tool▁calls▁begin｜>``),
DeepSeek V3.2's DSML, Kimi K2 (``<|tool_calls_section_begin|>``) and Gemma 4
(``<|tool_call>call:NAME{...}<tool_call|>``). Each reader takes the text and the offset of its
marker and returns (calls, end of the envelope)."""

from __future__ import annotations

from typing import Any

from fuzzer.targets.reference_families.reading import (
    call, decode_at, expect, loads, name_until, repeated, section, skip_ws, tag_name,
)


_HARMONY_HINTS = ("", " json", " <|constrain|>json")


def parse_harmony(text: str, start: int) -> tuple:
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
        i = expect(text, i, "<|channel|>", "before a harmony message")
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
            arguments, end = decode_at(text, content)
            calls.append(call(tag_name(name, "harmony recipient"), arguments, "harmony call"))
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


def parse_deepseek(text: str, start: int) -> tuple:
    return section(text, start, _DS["calls_begin"], _DS["calls_end"], _one_deepseek)


def _one_deepseek(text: str, i: int) -> tuple:
    i = expect(text, i, _DS["call_begin"], "before a DeepSeek call")
    v3 = False
    if text.startswith("function" + _DS["sep"], i):  # V3 when a fence follows the name's line
        nl = text.find("\n", i + len("function" + _DS["sep"]))  # (a tool named "{" is V3 too)
        v3 = nl >= 0 and text.startswith("```", skip_ws(text, nl))
    if not v3:  # V3.1: NAME<｜tool▁sep｜>{arguments}
        name, sep = name_until(text, i, _DS["sep"], "a DeepSeek V3.1 call", "a DeepSeek call without <｜tool▁sep｜>")
        j = sep + len(_DS["sep"])
        if not text.startswith("{", j):
            raise ValueError("DeepSeek V3.1 arguments must be a JSON object")
        arguments, end = decode_at(text, j)
        i = expect(text, end, _DS["call_end"], "after the arguments")
        return call(name, arguments, "deepseek call"), i
    i += len("function" + _DS["sep"])
    nl = text.find("\n", i)
    if nl < 0:
        raise ValueError("a DeepSeek tool name must end its line")
    name = text[i:nl].rstrip("\r")
    if not name or name != name.strip() or "｜" in name:
        raise ValueError(f"invalid DeepSeek tool name {name!r:.60}")
    j = skip_ws(text, nl)
    line = text.find("\n", j)
    if not text.startswith("```", j) or line < 0 or text[j + 3:line].strip(" \t\r").lower() != "json":
        raise ValueError("DeepSeek arguments must be in a ```json fence")
    k = skip_ws(text, line)
    if not text.startswith("{", k):
        raise ValueError("DeepSeek arguments must be a JSON object")
    arguments, end = decode_at(text, k)
    end = expect(text, skip_ws(text, end), "```", "after the DeepSeek arguments")
    i = expect(text, end, _DS["call_end"], "after the fence")
    return call(name, arguments, "deepseek call"), i


_DSML = "｜DSML｜"


def parse_dsml(text: str, start: int) -> tuple:
    """DeepSeek V3.2: ``<｜DSML｜function_calls>``, ``<｜DSML｜invoke name="N">`` blocks of
    ``<｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>`` lines: a string value
    raw, any other as JSON."""
    return section(text, start, f"<{_DSML}function_calls>", f"</{_DSML}function_calls>", _one_dsml)


def _one_dsml(text: str, i: int) -> tuple:
    i = expect(text, i, f'<{_DSML}invoke name="', "in a DSML block")
    name, close = name_until(text, i, '">', "a DSML invoke", "an unclosed DSML invoke tag")
    if '"' in name:
        raise ValueError(f"invalid DSML name {name!r:.60}")
    i = skip_ws(text, close + 2)
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
        arguments[key] = raw if is_string else loads(raw)
        if not is_string and isinstance(arguments[key], str):
            raise ValueError('a string value marked string="false"')
        i = skip_ws(text, value_end + len(f"</{_DSML}parameter>"))
    i = expect(text, i, f"</{_DSML}invoke>", "after the DSML parameters")
    return call(name, arguments, "dsml call"), i


_KIMI = {"begin": "<|tool_calls_section_begin|>", "end": "<|tool_calls_section_end|>",
         "call": "<|tool_call_begin|>", "call_end": "<|tool_call_end|>", "args": "<|tool_call_argument_begin|>"}


def parse_kimi(text: str, start: int) -> tuple:
    """Kimi K2: ``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>``
    calls in a section."""
    return section(text, start, _KIMI["begin"], _KIMI["end"], _one_kimi)


def _one_kimi(text: str, i: int) -> tuple:
    i = skip_ws(text, expect(text, i, _KIMI["call"], "in a Kimi tool-call section"))
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
    tag_name(name, "a Kimi call")
    j = skip_ws(text, args + len(_KIMI["args"]))
    if not text.startswith("{", j):
        raise ValueError("Kimi arguments must be a JSON object")
    arguments, end = decode_at(text, j)
    i = expect(text, skip_ws(text, end), _KIMI["call_end"], "after the Kimi arguments")
    return call(name, arguments, "kimi call"), i


_GQ = '<|"|>'


def parse_gemma(text: str, start: int) -> tuple:
    return repeated(text, start, "<|tool_call>", _one_gemma)


def _one_gemma(text: str, i: int) -> tuple:
    """Gemma 4: ``<|tool_call>call:NAME{key:value,...}<tool_call|>``; strings in ``<|"|>`` quotes,
    keys bare or quoted, numbers, true/false/null, ``{...}`` and ``[...]`` (one pass, no recursion)."""
    i = expect(text, expect(text, i, "<|tool_call>", "before a Gemma call"), "call:", "after <|tool_call>")
    name, brace = name_until(text, i, "{", "a Gemma call", "a Gemma call without arguments")
    if ":" in name:
        raise ValueError(f"invalid Gemma tool name {name!r:.60}")
    value, j = _gemma_value(text, brace)
    return [call(name, value, "gemma call")], expect(text, j, "<tool_call|>", "after the Gemma arguments")


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
    value = loads(word)
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
                    i = expect(text, i, ":", "after a Gemma key")
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
                    i = expect(text, i, ":", "after a Gemma key")
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


__all__ = ["parse_deepseek", "parse_dsml", "parse_gemma", "parse_harmony", "parse_kimi"]
