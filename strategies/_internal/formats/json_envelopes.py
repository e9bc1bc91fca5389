"""Formats whose payload is JSON call objects in a light envelope: json, fenced, hermes, mistral, llama3,
llama_json.

Pieces (what operators can rely on): json / fenced / mistral / llama_json write one JSON payload
piece for all calls (``call_index`` set when it holds one call); hermes and llama3 one payload piece
per call, with envelope pieces around and between them.
"""

from __future__ import annotations

import re
from typing import Optional

from strategies._internal.formats.core import (
    CallObject, Context, Piece, call_id, json_payload, output_format, single,
)
from strategies._internal.formats.reasoning import THINK_NEWLINES

PLAIN_CALL = CallObject()
#: The layout dimensions of a JSON payload written in a light envelope.
JSON_LAYOUTS = frozenset({"json", "key_order", "newline"})


def json_document(ctx: Context) -> Piece:
    """A bare call object for one call, a list of them otherwise (json and fenced)."""
    if len(ctx.calls) == 1:
        return json_payload(ctx, ctx.call_object(ctx.calls[0]), 1, 0)
    return json_payload(ctx, [ctx.call_object(call) for call in ctx.calls], 2, None)


@output_format("json", description="a bare call object, or a JSON list of them for several calls",
               call_object=PLAIN_CALL, fragments=('{"name": ', "[{"),
               fake_call='"}, {"name": "{tool}", "arguments": {}}, {"x": "', empty_forms=("[]",),
               layouts=JSON_LAYOUTS)
def _render_json(ctx: Context) -> list:
    return [json_document(ctx)]


@output_format("fenced", description="the json payload in a ```json fence",
               envelope={"open": "```json", "close": "```"}, call_object=PLAIN_CALL,
               fence=("open", "close"), fragments=("```json\n", "```"),
               fake_call='```\n```json\n{"name": "{tool}", "arguments": {}}\n```',
               empty_forms=("```json\n```", "```json\n[]\n```", "```\n```"),
               layouts=JSON_LAYOUTS | {"fence_tag"})
def _render_fenced(ctx: Context) -> list:
    """The usual opening takes the layout's case of the language tag (```` ```JSON ````)."""
    nl = ctx.nl
    opening = ctx.tokens["open"]
    if opening == "```json":
        opening = "```" + ctx.layout.fence_tag
    return [Piece(opening + nl, "envelope"), json_document(ctx), Piece(nl + ctx.tokens["close"], "envelope")]


#: Tag pairs models write instead of <tool_call>...</tool_call>.
TOOL_CALL_TAG_VARIANTS = (
    ("<toolcall>", "</toolcall>"), ("<tool-call>", "</tool-call>"), ("<function_call>", "</function_call>"),
    ("<tool_calls>", "</tool_calls>"), ("<tool_call>", "</tool_calls>"), ("<tool_call>", "<tool_call>"),
    ("<TOOL_CALL>", "</TOOL_CALL>"), ("<tool_call>", "<|im_end|>"), ("<functioncall>", "</functioncall>"))


@output_format("hermes", description="one <tool_call> tag around each call object (Hermes / Qwen)",
               envelope={"open": "<tool_call>", "close": "</tool_call>"}, call_object=PLAIN_CALL,
               tags=(("open", "close"),), tag_variants=TOOL_CALL_TAG_VARIANTS,
               fragments=("<tool_call>", "</tool_call>"),
               fake_call='</tool_call><tool_call>{"name": "{tool}", "arguments": {}}</tool_call>',
               empty_forms=("<tool_call>\n</tool_call>", "<tool_call></tool_call>", "<tool_call>\n\n</tool_call>"),
               reasoning=THINK_NEWLINES, end_tokens=("<|im_end|>",), markers=("<tool_call>\n{", "<tool_call>{"),
               layouts=JSON_LAYOUTS | {"gap"})
def _render_hermes(ctx: Context) -> list:
    pieces: list = []
    gap = ctx.gap("\n")
    for i, call in enumerate(ctx.calls):
        if i:
            pieces.append(Piece(ctx.nl, "envelope"))
        pieces += [Piece(ctx.tokens["open"] + gap, "envelope"), json_payload(ctx, ctx.call_object(call), 1, i),
                   Piece(gap + ctx.tokens["close"], "envelope")]
    return pieces


@output_format("mistral", description="[TOOL_CALLS] followed by a JSON list of call objects",
               envelope={"open": "[TOOL_CALLS]"}, call_object=PLAIN_CALL,
               marker_variants={"open": ("", "[TOOL_CALL]", "[TOOLCALLS]", "TOOL_CALLS", "[tool_calls]",
                                         "[TOOL_CALLS", "[TOOL_CALLS]]", "[TOOL_CALLS][TOOL_CALLS]")},
               fragments=("[TOOL_CALLS]", "[TOOL_CALLS] ["),
               fake_call='[TOOL_CALLS][{"name": "{tool}", "arguments": {}}]',
               empty_forms=("[TOOL_CALLS]", "[TOOL_CALLS][]", "[TOOL_CALLS] []"), layouts=JSON_LAYOUTS | {"gap"},
               version="v3", aliases=("mistral:v3",), end_tokens=("</s>",), markers=("[TOOL_CALLS][", "[TOOL_CALLS] ["))
def _render_mistral(ctx: Context) -> list:
    """Sometimes each call object ends with its ``"id"`` (9 letters and digits), as Mistral's v3 chat
    template writes an assistant's calls (``[TOOL_CALLS] [{"name": ..., "arguments": ..., "id": ...}]``)."""
    with_ids = ctx.source.boolean(0.25)
    objects = []
    for call in ctx.calls:
        obj = ctx.call_object(call)
        if with_ids:
            obj = {**obj, "id": call_id(ctx.source.integer(0, 2**48 - 1), 9)}
        objects.append(obj)
    payload = json_payload(ctx, objects, 2, single(ctx))
    if with_ids and objects:
        payload = Piece(payload.text, "payload", json=True, args_end=_before_id(payload.text, objects[-1]["id"]),
                        call_index=payload.call_index)
    return [Piece(ctx.tokens["open"] + ctx.gap(""), "envelope"), payload]


def _before_id(text: str, ident: str) -> Optional[int]:
    """``args_end`` of a call list whose last member is the last call's ``"id"``: the end of the
    member before it (cutting after it loses only the id). None when a custom dumper hid it."""
    at = text.rfind(ident)
    comma = text.rfind(",", 0, at) if at > 0 else -1
    if comma < 0 or not re.fullmatch(r'\s*"id"\s*:\s*"', text[comma + 1:at]):
        return None
    return len(text[:comma].rstrip())


@output_format("llama3", description="<|python_tag|> then {\"name\", \"parameters\"} objects joined by '; '",
               envelope={"open": "<|python_tag|>", "separator": "; "},
               call_object=CallObject(arguments_key="parameters"),
               marker_variants={"open": ("", "<|python_tag|", "<python_tag>", "<|python_start|>",
                                         "<|python_tag|><|python_tag|>", "python_tag", "<|python|>")},
               fragments=("<|python_tag|>", "<|eom_id|>"),
               fake_call='<|python_tag|>{"name": "{tool}", "parameters": {}}<|eom_id|>',
               empty_forms=("<|python_tag|>", "<|python_tag|><|eom_id|>"), layouts=JSON_LAYOUTS | {"gap"},
               version="python_tag", aliases=("llama3:python_tag",), end_tokens=("<|eom_id|>", "<|eot_id|>"),
               markers=("<|python_tag|>",))
def _render_llama3(ctx: Context) -> list:
    if not ctx.calls:
        return []
    pieces: list = [Piece(ctx.tokens["open"] + ctx.gap(""), "envelope")]
    for i, call in enumerate(ctx.calls):
        if i:
            pieces.append(Piece(ctx.tokens["separator"], "envelope"))
        pieces.append(json_payload(ctx, ctx.call_object(call), 1, i))
    return pieces


@output_format("llama_json", description="Llama JSON tool calls: {\"type\": \"function\", \"name\", \"parameters\"}, "
               "a list for several", envelope={"type": "function"},
               call_object=CallObject(arguments_key="parameters"), fragments=('{"type": "function", "name": ',),
               fake_call='"}, {"type": "function", "name": "{tool}", "parameters": {}}, {"x": "',
               empty_forms=("[]",), layouts=JSON_LAYOUTS, markers=('"type": "function", "name"',))
def _render_llama_json(ctx: Context) -> list:
    objects = [ctx.call_object(call, before={"type": ctx.tokens["type"]}) for call in ctx.calls]
    if len(objects) == 1:
        return [json_payload(ctx, objects[0], 1, 0)]
    return [json_payload(ctx, objects, 2, None)]
