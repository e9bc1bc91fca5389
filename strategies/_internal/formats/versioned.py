"""Formats of model families with versions: the syntaxes the newer open-weight models write.

``mistral:v11`` (``[TOOL_CALLS]NAME[ARGS]{...}``), ``deepseek:v3.1`` (V3's markers without the fence),
``deepseek:v3.2`` (DSML), ``glm:4.5`` / ``glm:4.7`` (``<arg_key>``/``<arg_value>`` pairs), ``kimi:k2``
(``functions.NAME:IDX`` sections), ``gemma:4`` (``<|tool_call>call:NAME{k:<|"|>v<|"|>}``) and
``llama3:json`` (Llama 3.1's bare ``{"name", "parameters"}`` object). The special tokens, their
spellings (fullwidth bars, ``▁``) and the whitespace are the ones the families' chat templates and
reference encoders write; the tests hold each against a published example.

Pieces: the tool name is a non-JSON payload piece (no ``args_end``); JSON arguments are a JSON
payload piece; raw-value syntaxes (GLM, DSML, Gemma) write each call's arguments as one non-JSON
payload piece whose ``args_end`` follows the last value, as ``qwen3_xml`` does.

Raw values: GLM writes strings raw and everything else as JSON, so a string that reads as JSON
(``"5"``, ``"true"``, ``"[1]"``) or as a Python literal (``"False"``, ``"None"``, which models and
parsers read as values), or has edge whitespace, would denote something else: such calls raise
:class:`Unrepresentable`. DSML says which values are strings (``string="true"``), so only a string
holding its closing tag is unwritable; Gemma quotes strings with ``<|"|>``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from strategies._internal.formats.core import (
    CallObject, Context, Piece, Unrepresentable, call_id, json_payload, output_format, tag_name,
)
from strategies._internal.formats.reasoning import THINK_GLM, THINK_MISTRAL, THINK_TIGHT
from strategies._internal.formats.special_tokens import DEEPSEEK_ENVELOPE, DEEPSEEK_TOKEN_TRAITS

_JSON_END = frozenset({"json", "end_token"})


def _require(ok: bool, fmt: str, what: str) -> None:
    if not ok:
        raise Unrepresentable(f"{fmt} cannot write {what}")


def raw_string_value(value: str, fmt: str, closers: tuple) -> str:
    """A string written raw between tags, when it cannot be read as anything else."""
    if value != value.strip() or "\r" in value or any(c in value for c in closers) \
            or any("\ud800" <= c <= "\udfff" for c in value):
        raise Unrepresentable(f"{fmt} cannot write the string {value!r:.60} unambiguously")
    if value in ("True", "False", "None"):
        raise Unrepresentable(f"{fmt} cannot tell the string {value!r} from a Python literal")
    if value:
        try:
            json.loads(value)
        except ValueError:
            return value
        raise Unrepresentable(f"{fmt} cannot tell the string {value!r:.60} from JSON")
    return value


# ----------------------------------------------------------------------------------------------------
# Mistral tokenizer v11+


def _mistral_name(name: str) -> bool:
    """A name v11 writes unquoted before ``[ARGS]``: no bracket or brace (they end it), no quote
    (a quote before the arguments reads as arguments written quoted, which parsers reject)."""
    return tag_name(name) and not any(c in name for c in "[]{}'\"`")


@output_format("mistral:v11", description="Mistral tokenizer v11+: [TOOL_CALLS]NAME[ARGS]{arguments} per call, "
               "[CALL_ID]ID before [ARGS] in some versions, [ARGS] dropped when an engine skips special tokens",
               envelope={"open": "[TOOL_CALLS]", "call_id": "[CALL_ID]", "args": "[ARGS]"}, bare_arguments=True,
               chatter_after=False, chatter_gaps=("", " ", "\n"), writes_name=_mistral_name,
               marker_variants={"open": ("", "[TOOL_CALL]", "[TOOLCALLS]", "TOOL_CALLS", "[tool_calls]",
                                         "[TOOL_CALLS", "[TOOL_CALLS][TOOL_CALLS]")},
               fragments=("[TOOL_CALLS]", "[ARGS]"), fake_call="[TOOL_CALLS]{tool}[ARGS]{}",
               empty_forms=("[TOOL_CALLS]",), reasoning=THINK_MISTRAL, end_tokens=("</s>",),
               markers=("[ARGS]", "[CALL_ID]", "[TOOL_CALLS]"), layouts=_JSON_END)
def _render_mistral_v11(ctx: Context) -> list:
    """Call ids (9 letters and digits, as mistral-common and vLLM write them) sometimes; ``[ARGS]``
    sometimes missing, as text detokenized with special tokens skipped shows it."""
    t = ctx.tokens
    with_ids = ctx.source.boolean(0.25)
    args_marker = t["args"] if not ctx.source.boolean(0.15) else ""
    pieces: list = []
    for i, call in enumerate(ctx.calls):
        _require(_mistral_name(call["name"]), "mistral:v11", f"the tool name {call['name']!r}")
        ident = t["call_id"] + call_id(ctx.source.integer(0, 2**48 - 1), 9) if with_ids else ""
        pieces += [Piece(t["open"], "envelope"), Piece(call["name"], "payload", call_index=i),
                   Piece(ident + args_marker, "envelope"), json_payload(ctx, call["arguments"], 0, i)]
    return pieces


# ----------------------------------------------------------------------------------------------------
# DeepSeek V3.1 and V3.2


def _deepseek_name(name: str) -> bool:
    return tag_name(name) and "｜" not in name and "{" not in name


@output_format("deepseek:v3.1", description="DeepSeek V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>"
               "{arguments}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜> (V3's markers, no fence)",
               envelope={k: v for k, v in DEEPSEEK_ENVELOPE.items() if k not in ("type", "fence_open", "fence_close")},
               **DEEPSEEK_TOKEN_TRAITS,
               bare_arguments=True, chatter_after=False, chatter_gaps=("", "\n", " "), writes_name=_deepseek_name,
               tag_variants=(("<|tool▁calls▁begin|>", "<|tool▁calls▁end|>"),
                             ("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"), ("", "<｜tool▁calls▁end｜>")),
               fake_call="<｜tool▁call▁end｜><｜tool▁call▁begin｜>{tool}<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
               reasoning=THINK_TIGHT, markers=("<｜tool▁sep｜>{", "<｜tool▁calls▁begin｜>"),
               layouts=_JSON_END)
def _render_deepseek_v31(ctx: Context) -> list:
    t = ctx.tokens
    if not ctx.calls:
        return []
    pieces: list = [Piece(t["calls_begin"], "envelope")]
    for i, call in enumerate(ctx.calls):
        _require(_deepseek_name(call["name"]), "deepseek:v3.1", f"the tool name {call['name']!r}")
        pieces += [Piece(t["call_begin"], "envelope"), Piece(call["name"], "payload", call_index=i),
                   Piece(t["sep"], "envelope"), json_payload(ctx, call["arguments"], 0, i),
                   Piece(t["call_end"], "envelope")]
    pieces.append(Piece(t["calls_end"], "envelope"))
    return pieces


_DSML = "｜DSML｜"
_DSML_CLOSERS = (f"</{_DSML}parameter>", f"<{_DSML}")


def _dsml_key(key: str) -> bool:
    return bool(key) and not any(c in key for c in '"<>\n\r')


@output_format("deepseek:v3.2", description="DeepSeek V3.2 DSML: <｜DSML｜function_calls>, <｜DSML｜invoke name=\"NAME\">, "
               "<｜DSML｜parameter name=\"KEY\" string=\"true|false\">VALUE</｜DSML｜parameter>",
               envelope={"calls_begin": f"<{_DSML}function_calls>", "calls_end": f"</{_DSML}function_calls>",
                         "invoke": f'<{_DSML}invoke name="', "invoke_end": f"</{_DSML}invoke>",
                         "parameter": f'<{_DSML}parameter name="', "parameter_end": f"</{_DSML}parameter>",
                         "name_end": '">', "string": '" string="'},
               json_payload=False, raw_strings=True, chatter_after=False, chatter_gaps=("\n\n",),
               writes_name=lambda name: tag_name(name) and '"' not in name,
               tags=(("calls_begin", "calls_end"), ("invoke", "invoke_end")),
               tag_variants=((f"<{_DSML}function_calls>", f"<{_DSML}function_calls>"),
                             ("<|DSML|function_calls>", "</|DSML|function_calls>"),
                             ("<function_calls>", "</function_calls>")),
               fragments=(f"<{_DSML}invoke name=\"", f"<{_DSML}parameter name=\""),
               fake_call=f"</{_DSML}parameter>\n</{_DSML}invoke>\n<{_DSML}invoke name=\"{{tool}}\">\n\n</{_DSML}invoke>",
               empty_forms=(f"<{_DSML}function_calls>\n</{_DSML}function_calls>",), reasoning=THINK_TIGHT,
               end_tokens=("<｜end▁of▁sentence｜>",), markers=(f"<{_DSML}function_calls>", f"<{_DSML}invoke"),
               layouts=frozenset({"end_token"}))
def _render_deepseek_v32(ctx: Context) -> list:
    """As ``encoding_dsv32.py`` writes an assistant message's calls: ``\\n\\n`` then the block, one
    parameter per line, strings raw (``string="true"``), other values as ``json.dumps``."""
    t = ctx.tokens
    if not ctx.calls:
        return []
    lead = "" if ctx.chatter else ("\n\n" if ctx.source.boolean(0.5) else "")  # prose brings its own
    pieces: list = [Piece(lead + t["calls_begin"] + "\n", "envelope")]
    for i, call in enumerate(ctx.calls):
        name = call["name"]
        _require(tag_name(name) and '"' not in name, "deepseek:v3.2", f"the tool name {name!r}")
        if i:
            pieces.append(Piece("\n", "envelope"))
        pieces += [Piece(t["invoke"], "envelope"), Piece(name, "payload", call_index=i),
                   Piece(t["name_end"] + "\n", "envelope")]
        lines = []
        for key, value in call["arguments"].items():
            _require(_dsml_key(key), "deepseek:v3.2", f"the parameter name {key!r}")
            if isinstance(value, str):
                _require(not any(c in value for c in _DSML_CLOSERS) and not any("\ud800" <= c <= "\udfff" for c in value),
                         "deepseek:v3.2", f"the string {value!r:.60}")
                text, is_str = value, "true"
            else:
                text, is_str = ctx.normal_dump(value), "false"
            lines.append(f"{t['parameter']}{key}{t['string']}{is_str}{t['name_end']}{text}{t['parameter_end']}")
        body = "\n".join(lines)
        if body:
            pieces.append(Piece(body, "payload", args_end=len(body) - len(t["parameter_end"]), call_index=i))
        pieces.append(Piece("\n" + t["invoke_end"], "envelope"))
    pieces.append(Piece("\n" + t["calls_end"], "envelope"))
    return pieces


# ----------------------------------------------------------------------------------------------------
# GLM-4.5 / 4.6 and GLM-4.7

_GLM_CLOSERS = ("</arg_value>", "<arg_key>", "</arg_key>", "<arg_value>", "</tool_call>", "<tool_call>")


def _glm_name(name: str) -> bool:
    """A name that cannot be mistaken for JSON inside ``<tool_call>`` (hermes): no brackets or
    quotes, and no JSON literal (``0``, ``true``)."""
    if not tag_name(name) or any(c in name for c in '[]{}"'):
        return False
    try:
        json.loads(name)
    except ValueError:
        return True
    return False


def _glm_key(key: str) -> bool:
    return bool(key) and key == key.strip() and not any(c in key for c in "<>\n\r")


def _glm_renderer(version: str, nl: bool):
    def render(ctx: Context) -> list:
        t = ctx.tokens
        sep = "\n" if nl else ""
        pieces: list = []
        for i, call in enumerate(ctx.calls):
            _require(_glm_name(call["name"]), f"glm:{version}", f"the tool name {call['name']!r}")
            if i:
                pieces.append(Piece(sep, "envelope"))
            pieces += [Piece(t["open"], "envelope"), Piece(call["name"], "payload", call_index=i),
                       Piece(sep, "envelope")]
            body = []
            for key, value in call["arguments"].items():
                _require(_glm_key(key), f"glm:{version}", f"the parameter name {key!r}")
                if isinstance(value, str):
                    text = raw_string_value(value, f"glm:{version}", _GLM_CLOSERS)
                else:
                    text = ctx.normal_dump(value)
                    _require(not any(c in text for c in _GLM_CLOSERS), f"glm:{version}", f"{text[:60]!r}")
                body.append(f"{t['key']}{key}{t['key_close']}{sep}{t['value']}{text}{t['value_close']}{sep}")
            text = "".join(body)
            if text:
                pieces.append(Piece(text, "payload", args_end=len(text) - len(sep) - len(t["value_close"]),
                                    call_index=i))
            pieces.append(Piece(t["close"], "envelope"))
        return pieces

    return render


_GLM_ENVELOPE = {"open": "<tool_call>", "close": "</tool_call>", "key": "<arg_key>", "key_close": "</arg_key>",
                 "value": "<arg_value>", "value_close": "</arg_value>"}
_GLM_COMMON = dict(json_payload=False, raw_strings=True, schema_typed=True, writes_name=_glm_name, chatter_after=False,
                   chatter_gaps=("\n", "", " ", "\n\n"), tags=(("open", "close"), ("key", "key_close"), ("value", "value_close")),
                   tag_variants=(("<tool_call>", "</tool_calls>"), ("<tool_call>", "<tool_call>"),
                                 ("<function_call>", "</function_call>")),
                   fragments=("<arg_key>", "<arg_value>"), empty_forms=("<tool_call></tool_call>",),
                   reasoning=THINK_GLM, end_tokens=("<|observation|>", "<|user|>"),
                   markers=("<arg_key>", "<arg_value>"), layouts=frozenset({"end_token"}))

output_format("glm:4.5", description="GLM-4.5/4.6: <tool_call>NAME, then <arg_key>KEY</arg_key> <arg_value>VALUE</arg_value> "
              "pairs one per line, </tool_call>", envelope=_GLM_ENVELOPE,
              fake_call="</arg_value>\n</tool_call>\n<tool_call>{tool}\n</tool_call>", **_GLM_COMMON)(
    _glm_renderer("4.5", True))
output_format("glm:4.7", description="GLM-4.7: <tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>"
              "</tool_call> without line breaks", envelope=_GLM_ENVELOPE,
              fake_call="</arg_value></tool_call><tool_call>{tool}</tool_call>", **_GLM_COMMON)(
    _glm_renderer("4.7", False))


# ----------------------------------------------------------------------------------------------------
# Kimi K2


def _kimi_name(name: str) -> bool:
    return tag_name(name) and not any(c in name for c in ".:")


@output_format("kimi:k2", description="Kimi K2: <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX"
               "<|tool_call_argument_begin|>{arguments}<|tool_call_end|>...<|tool_calls_section_end|>",
               envelope={"section_begin": "<|tool_calls_section_begin|>", "section_end": "<|tool_calls_section_end|>",
                         "call_begin": "<|tool_call_begin|>", "call_end": "<|tool_call_end|>",
                         "argument_begin": "<|tool_call_argument_begin|>", "prefix": "functions."},
               bare_arguments=True, chatter_after=False, chatter_gaps=("", " ", "\n"), writes_name=_kimi_name,
               tags=(("section_begin", "section_end"), ("call_begin", "call_end")),
               tag_variants=(("<|tool_call_section_begin|>", "<|tool_call_section_end|>"),
                             ("<|tool_calls_section_begin|>", "<|tool_call_end|>")),
               fragments=("<|tool_call_begin|>functions.", "<|tool_call_argument_begin|>"),
               fake_call="<|tool_call_end|><|tool_call_begin|>functions.{tool}:9<|tool_call_argument_begin|>{}"
                         "<|tool_call_end|>",
               empty_forms=("<|tool_calls_section_begin|><|tool_calls_section_end|>",), reasoning=THINK_TIGHT,
               end_tokens=("<|im_end|>",), markers=("<|tool_calls_section_begin|>", "<|tool_call_argument_begin|>"),
               layouts=_JSON_END)
def _render_kimi(ctx: Context) -> list:
    """Ids ``functions.NAME:IDX`` count calls across the conversation (0 in a fresh one); some
    engines write a space before ``<|tool_call_argument_begin|>``."""
    t = ctx.tokens
    if not ctx.calls:
        return []
    first = 0 if not ctx.source.boolean(0.3) else ctx.source.integer(1, 9)
    space = " " if ctx.source.boolean(0.25) else ""
    pieces: list = [Piece(t["section_begin"], "envelope")]
    for i, call in enumerate(ctx.calls):
        _require(_kimi_name(call["name"]), "kimi:k2", f"the tool name {call['name']!r}")
        pieces += [Piece(t["call_begin"] + t["prefix"], "envelope"), Piece(call["name"], "payload", call_index=i),
                   Piece(f":{first + i}{space}{t['argument_begin']}", "envelope"),
                   json_payload(ctx, call["arguments"], 0, i), Piece(t["call_end"], "envelope")]
    pieces.append(Piece(t["section_end"], "envelope"))
    return pieces


# ----------------------------------------------------------------------------------------------------
# Gemma 4

_QUOTE = '<|"|>'


def gemma_key(key: str) -> str:
    """A key bare when it is a plain word, else quoted like a string."""
    if key and all(c.isalnum() or c in "_-." for c in key):
        return key
    _require(_QUOTE not in key, "gemma:4", f"the key {key!r}")
    return _QUOTE + key + _QUOTE


def gemma_value(value: Any) -> str:
    """A value as Gemma 4's template writes it: strings in ``<|"|>`` quotes, unescaped; numbers,
    booleans and null bare; objects ``{k:v,...}``; arrays ``[v,...]``."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, str):
        _require(_QUOTE not in value and "<tool_call|>" not in value, "gemma:4", f"the string {value!r:.60}")
        _require(not any("\ud800" <= c <= "\udfff" for c in value), "gemma:4", f"the string {value!r:.60}")
        return _QUOTE + value + _QUOTE
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise Unrepresentable(f"gemma:4 cannot write {value!r}")
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{gemma_key(k)}:{gemma_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(gemma_value(v) for v in value) + "]"
    raise Unrepresentable(f"gemma:4 cannot write {value!r:.60}")


def _gemma_name(name: str) -> bool:
    return tag_name(name) and not any(c in name for c in "{}:")


@output_format("gemma:4", description="Gemma 4: <|tool_call>call:NAME{key:<|\"|>value<|\"|>,n:3}<tool_call|> per call",
               envelope={"open": "<|tool_call>", "close": "<tool_call|>", "call": "call:"}, json_payload=False,
               raw_strings=True,
               writes_name=_gemma_name, chatter_after=False, chatter_gaps=("", " ", "\n"),
               tags=(("open", "close"),),
               tag_variants=(("<|tool_call>", "</tool_call>"), ("<tool_call>", "<tool_call|>"), ("<|tool_call|>", "<|tool_call|>")),
               fragments=("<|tool_call>call:", '<|"|>'), fake_call="}<tool_call|><|tool_call>call:{tool}{}<tool_call|>",
               empty_forms=("<|tool_call><tool_call|>",), end_tokens=("<turn|>",),
               markers=("<|tool_call>", "<tool_call|>"), layouts=frozenset({"end_token"}))
def _render_gemma4(ctx: Context) -> list:
    t = ctx.tokens
    pieces: list = []
    for i, call in enumerate(ctx.calls):
        _require(_gemma_name(call["name"]), "gemma:4", f"the tool name {call['name']!r}")
        body = gemma_value(call["arguments"])
        pieces += [Piece(t["open"] + t["call"], "envelope"), Piece(call["name"], "payload", call_index=i),
                   Piece(body, "payload", args_end=len(body) - 1 if len(body) > 2 else None, call_index=i),
                   Piece(t["close"], "envelope")]
    return pieces


# ----------------------------------------------------------------------------------------------------
# Llama 3.1 JSON tool calls without <|python_tag|>


@output_format("llama3:json", description="Llama 3.1/3.2 JSON tool calls: a bare {\"name\", \"parameters\"} object "
               "(no <|python_tag|>), several joined by '; '",
               envelope={"separator": "; "}, call_object=CallObject(arguments_key="parameters"),
               chatter_after=False, fragments=('{"name": ', '"parameters": '),
               fake_call='"}}; {"name": "{tool}", "parameters": {}}; {"x": {"y": "',
               end_tokens=("<|eot_id|>", "<|eom_id|>"), markers=('"parameters"',),
               layouts=frozenset({"json", "key_order", "end_token"}))
def _render_llama3_json(ctx: Context) -> list:
    pieces: list = []
    for i, call in enumerate(ctx.calls):
        if i:
            pieces.append(Piece(ctx.tokens["separator"], "envelope"))
        pieces.append(json_payload(ctx, ctx.call_object(call), 1, i))
    return pieces
