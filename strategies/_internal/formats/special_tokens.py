"""Formats built from a model family's special tokens or tags: llama_function (Llama 3.1
``<function=NAME>{...}</function>``), qwen3_xml (Qwen3-Coder ``<function=..><parameter=..>``), harmony
(gpt-oss ``<|channel|>commentary to=functions.NAME``) and deepseek (``<｜tool▁call▁begin｜>`` markers).

Pieces: the tool name is a non-JSON payload piece (no ``args_end``); llama_function, harmony and
deepseek write the arguments object as a JSON payload piece (``args_end`` = its end); qwen3_xml writes
each call's parameters as one non-JSON payload piece whose ``args_end`` follows the last
``</parameter>``.

Qwen3-Coder writes string values raw and other values as JSON, so a string that reads as JSON
(``"5"``, ``"true"``, ``"[1]"``), has leading or trailing whitespace, or holds a closing tag would
denote something else: such calls raise :class:`Unrepresentable` (the builder draws others).
Its line ends are ``\n`` only (no CRLF layout): the chat template writes ``<parameter=K>\nV\n</parameter>``
and the serving parsers (vLLM's and SGLang's qwen3_coder) take off exactly one ``\n`` on each side of
a value, so a ``\r`` there would be part of the value the text denotes, not a line end.
"""

from __future__ import annotations

import json
from typing import Any

from strategies._internal.formats.core import (
    CHATTER_BEFORE, Context, Piece, Unrepresentable, json_payload, one_line_name, output_format, tag_name,
)
from strategies._internal.formats.json_envelopes import TOOL_CALL_TAG_VARIANTS
from strategies._internal.formats.reasoning import HARMONY_ANALYSIS, THINK_NEWLINES


def _require(ok: bool, fmt: str, name: str) -> None:
    if not ok:
        raise Unrepresentable(f"{fmt} cannot write the tool name {name!r}")


# ----------------------------------------------------------------------------------------------------
# Llama 3.1 custom tool calls


@output_format("llama_function", description="Llama 3.1 custom tool calls: <function=NAME>{arguments}</function>",
               envelope={"open": "<function=", "name_end": ">", "close": "</function>"}, bare_arguments=True,
               writes_name=tag_name, tags=(("open", "close"),),
               tag_variants=(("<function=", "</function"), ("<function=", "</func>"), ("<function=", "<function>"),
                             ("<func=", "</func>"), ("<Function=", "</Function>"), ("<function=", "</tool_call>"),
                             ("<function ", "</function>")),
               fragments=("<function=", "</function>"), fake_call="</function><function={tool}>{}</function>",
               markers=("<function=",), layouts=frozenset({"json", "gap", "newline"}))
def _render_llama_function(ctx: Context) -> list:
    pieces: list = []
    gap = ctx.gap("")
    for i, call in enumerate(ctx.calls):
        _require(tag_name(call["name"]), "llama_function", call["name"])
        if i:
            pieces.append(Piece(ctx.nl, "envelope"))
        pieces += [Piece(ctx.tokens["open"], "envelope"), Piece(call["name"], "payload", call_index=i),
                   Piece(ctx.tokens["name_end"] + gap, "envelope"), json_payload(ctx, call["arguments"], 0, i),
                   Piece(gap + ctx.tokens["close"], "envelope")]
    return pieces


# ----------------------------------------------------------------------------------------------------
# Qwen3-Coder XML

_QWEN_CLOSERS = ("</parameter>", "<parameter=", "</function>", "</tool_call>")


def qwen_value(value: Any, ctx: Context) -> str:
    """The text of a parameter value: strings raw, everything else as one-line JSON."""
    if isinstance(value, str):
        if value != value.strip() or any(c in value for c in _QWEN_CLOSERS) or "\r" in value \
                or any("\ud800" <= c <= "\udfff" for c in value):
            raise Unrepresentable(f"qwen3_xml cannot write the string {value!r:.60} unambiguously")
        if value in ("True", "False", "None"):  # read as Python literals, as Qwen3-Coder's parsers do
            raise Unrepresentable(f"qwen3_xml cannot tell the string {value!r} from a Python literal")
        if value:
            try:
                json.loads(value)
            except ValueError:
                return value
            raise Unrepresentable(f"qwen3_xml cannot tell the string {value!r:.60} from JSON")
        return value
    text = ctx.normal_dump(value)
    if any(c in text for c in _QWEN_CLOSERS):
        raise Unrepresentable(f"qwen3_xml cannot write {text[:60]!r}: it holds a closing tag")
    return text


def qwen_key(key: str) -> bool:
    return bool(key) and key == key.strip() and not any(c in key for c in "<>\n\r")


@output_format("qwen3_xml", description="Qwen3-Coder XML calls: <tool_call><function=NAME><parameter=KEY>value"
               "</parameter></function></tool_call>",
               envelope={"open": "<tool_call>", "close": "</tool_call>", "function": "<function=",
                         "function_close": "</function>", "parameter": "<parameter=",
                         "parameter_close": "</parameter>", "name_end": ">"},
               json_payload=False, raw_strings=True, schema_typed=True, writes_name=tag_name,
               tags=(("open", "close"), ("function", "function_close")),
               tag_variants=TOOL_CALL_TAG_VARIANTS, fragments=("<tool_call>\n<function=", "<parameter="),
               fake_call="</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function={tool}>\n</function>\n"
                         "</tool_call>",
               empty_forms=("<tool_call>\n</tool_call>", "<tool_call></tool_call>"),
               family="qwen3", version="xml", aliases=("qwen3:xml",), reasoning=THINK_NEWLINES,
               end_tokens=("<|im_end|>",), markers=("<function=", "<parameter="),
               layouts=frozenset({"gap"}))
def _render_qwen3_xml(ctx: Context) -> list:
    t, nl = ctx.tokens, ctx.nl
    # only line ends may surround a raw value: a space there would be part of it
    gap = "" if ctx.layout.gap == "" else nl
    pieces: list = []
    for i, call in enumerate(ctx.calls):
        _require(tag_name(call["name"]), "qwen3_xml", call["name"])
        if i:
            pieces.append(Piece(nl, "envelope"))
        pieces += [Piece(t["open"] + nl + t["function"], "envelope"), Piece(call["name"], "payload", call_index=i),
                   Piece(t["name_end"] + nl, "envelope")]
        body = []
        for key, value in call["arguments"].items():
            if not qwen_key(key):
                raise Unrepresentable(f"qwen3_xml cannot write the parameter name {key!r}")
            body.append(f"{t['parameter']}{key}{t['name_end']}{gap}{qwen_value(value, ctx)}{gap}{t['parameter_close']}"
                        + nl)
        text = "".join(body)
        if text:
            pieces.append(Piece(text, "payload", args_end=len(text) - len(nl), call_index=i))
        pieces.append(Piece(t["function_close"] + nl + t["close"], "envelope"))
    return pieces


# ----------------------------------------------------------------------------------------------------
# gpt-oss harmony


@output_format("harmony", description="gpt-oss harmony messages: <|channel|>commentary to=functions.NAME "
               "<|constrain|>json<|message|>{arguments}<|call|>",
               envelope={"channel": "<|channel|>", "commentary": "commentary", "recipient": " to=functions.",
                         "constrain": "<|constrain|>json", "message": "<|message|>", "call": "<|call|>",
                         "start": "<|start|>assistant", "analysis": "analysis", "end": "<|end|>"},
               bare_arguments=True, prose_inside=True, chatter_after=False,
               writes_name=lambda name: tag_name(name) and "|" not in name,
               fragments=("<|channel|>commentary to=functions.", "<|call|>"),
               fake_call="<|call|><|start|>assistant<|channel|>commentary to=functions.{tool} <|constrain|>json"
                         "<|message|>{}<|call|>",
               empty_forms=("<|channel|>final<|message|>I can answer that directly.<|return|>",
                            "<|channel|>analysis<|message|>No tool is needed here.<|end|>"),
               reasoning=HARMONY_ANALYSIS, markers=(" to=functions.", "<|channel|>commentary", "<|channel|>"),
               layouts=frozenset({"json"}))
def _render_harmony(ctx: Context) -> list:
    """Prose is an analysis-channel message before the calls. The ``<|constrain|>json`` hint may be
    written as ``json`` or left out, the ``<|call|>`` stop token is often stripped by servers, and
    a recipient may precede the channel (``<|start|>assistant to=functions.NAME<|channel|>commentary``):
    all valid, drawn here."""
    t = ctx.tokens
    constrain = (" " + t["constrain"], " json", "")[ctx.source.weighted((6, 3, 1))]
    end_token = t["call"] if not ctx.source.boolean(0.3) else ""
    pieces: list = []
    if ctx.chatter:
        pieces += [Piece(t["channel"] + t["analysis"] + t["message"], "envelope"),
                   Piece(ctx.sentences(CHATTER_BEFORE), "chatter"), Piece(t["end"], "envelope")]
    # after an explicit <|start|>assistant the recipient may come before the channel (gpt-oss writes both)
    recipient_first = (len(ctx.calls) > 1 or ctx.chatter) and ctx.source.boolean(0.3)
    for i, call in enumerate(ctx.calls):
        _require(tag_name(call["name"]) and "|" not in call["name"], "harmony", call["name"])
        if i or ctx.chatter:
            pieces.append(Piece(t["start"], "envelope"))
        if recipient_first and (i or ctx.chatter):  # <|start|>assistant to=functions.NAME<|channel|>commentary
            pieces += [Piece(t["recipient"], "envelope"), Piece(call["name"], "payload", call_index=i),
                       Piece(t["channel"] + t["commentary"] + constrain + t["message"], "envelope")]
        else:
            pieces += [Piece(t["channel"] + t["commentary"] + t["recipient"], "envelope"),
                       Piece(call["name"], "payload", call_index=i), Piece(constrain + t["message"], "envelope")]
        pieces += [json_payload(ctx, call["arguments"], 0, i), Piece(end_token, "envelope")]
    return pieces


# ----------------------------------------------------------------------------------------------------
# DeepSeek V3

#: DeepSeek V3's tool-call tokens, fullwidth bars and ``▁`` as its tokenizer writes them. V3.1
#: writes the same tokens without ``function`` and the ``json`` fence (:mod:`.versioned`).
DEEPSEEK_ENVELOPE = {"calls_begin": "<｜tool▁calls▁begin｜>", "call_begin": "<｜tool▁call▁begin｜>",
                     "type": "function", "sep": "<｜tool▁sep｜>", "fence_open": "```json", "fence_close": "```",
                     "call_end": "<｜tool▁call▁end｜>", "calls_end": "<｜tool▁calls▁end｜>"}
#: What the versions writing those tokens share besides: the tag pairs the tokens form, the
#: fragments that give a call away, the empty envelope and the token that ends the turn.
DEEPSEEK_TOKEN_TRAITS: dict = dict(tags=(("calls_begin", "calls_end"), ("call_begin", "call_end")),
                                   fragments=("<｜tool▁call▁begin｜>", "<｜tool▁sep｜>"),
                                   empty_forms=("<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>",),
                                   end_tokens=("<｜end▁of▁sentence｜>",))


def _deepseek_name(name: str) -> bool:
    return one_line_name(name) and "｜" not in name and "`" not in name


@output_format("deepseek", description="DeepSeek V3 tool calls: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function"
               "<｜tool▁sep｜>NAME, then the arguments in a ```json fence",
               envelope=DEEPSEEK_ENVELOPE, **DEEPSEEK_TOKEN_TRAITS,
               bare_arguments=True, chatter_after=False, writes_name=_deepseek_name,
               tag_variants=(("<|tool▁calls▁begin|>", "<|tool▁calls▁end|>"),
                             ("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"),
                             ("<｜tool calls begin｜>", "<｜tool calls end｜>"),
                             ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁end｜>"), ("", "<｜tool▁calls▁end｜>")),
               fence=("fence_open", "fence_close"),
               fake_call="```<｜tool▁call▁end｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{tool}\n```json\n{}\n"
                         "```<｜tool▁call▁end｜>",
               version="v3", aliases=("deepseek:v3",), reasoning=THINK_NEWLINES,
               markers=("<｜tool▁sep｜>", "<｜tool▁calls▁begin｜>"),
               layouts=frozenset({"json", "newline", "fence_tag"}))
def _render_deepseek(ctx: Context) -> list:
    t, nl = ctx.tokens, ctx.nl
    if not ctx.calls:
        return []
    fence = "```" + ctx.layout.fence_tag if t["fence_open"] == "```json" else t["fence_open"]
    # the chat template puts a line end between calls; engines' fixtures and models often do not
    between = nl if len(ctx.calls) < 2 or not ctx.source.boolean(0.3) else ""
    pieces: list = [Piece(t["calls_begin"], "envelope")]
    for i, call in enumerate(ctx.calls):
        _require(_deepseek_name(call["name"]), "deepseek", call["name"])
        if i:
            pieces.append(Piece(between, "envelope"))
        pieces += [Piece(t["call_begin"] + t["type"] + t["sep"], "envelope"), Piece(call["name"], "payload", call_index=i),
                   Piece(nl + fence + nl, "envelope"), json_payload(ctx, call["arguments"], 0, i),
                   Piece(nl + t["fence_close"] + t["call_end"], "envelope")]
    pieces.append(Piece(t["calls_end"], "envelope"))
    return pieces
