"""Formats that are text with a call syntax of their own: react (Thought / Action / Action Input) and
pythonic (a Python list of calls).

Pieces: react writes, per call, an ``Action:`` envelope, the name as a non-JSON payload piece, an
``Action Input:`` envelope and the arguments object as a JSON payload piece (``args_end`` = its end);
thoughts are ``chatter`` pieces even when ``chatter=False`` (the format always has them). pythonic
writes one non-JSON payload piece per call, ``name(k=v, ...)``, with ``args_end`` right before the
closing parenthesis.
"""

from __future__ import annotations

import keyword
import math
import unicodedata
from collections.abc import Mapping
from typing import Any

from strategies._internal.formats.core import (
    THOUGHTS, Context, Piece, Unrepresentable, json_payload, one_line_name, output_format,
)
from strategies.errors import ToolfuzzError


@output_format("react", description="Thought / Action / Action Input blocks (LangChain ReAct)",
               envelope={"thought": "Thought:", "action": "Action:", "input": "Action Input:"},
               chatter_after=False, bare_arguments=True, writes_name=one_line_name,
               fragments=("Action:", "Action Input:"),
               fake_call="\nObservation: done\nAction: {tool}\nAction Input: {}",
               empty_forms=("Thought: I can answer without a tool.\nFinal Answer: It is sunny.",
                            "Thought: I know the answer already."),
               layouts=frozenset({"json", "gap", "newline"}))
def _render_react(ctx: Context) -> list:
    pieces: list = []
    nl, gap = ctx.nl, ctx.gap(" ")
    for i, call in enumerate(ctx.calls):
        name = call["name"]
        if not one_line_name(name):
            raise Unrepresentable(f"react cannot write the tool name {name!r} on one Action line")
        if i == 0 or ctx.source.boolean(0.3):  # a thought before each further action, sometimes
            if i:
                pieces.append(Piece(nl, "envelope"))
            pieces += [Piece(ctx.tokens["thought"] + " ", "envelope"), Piece(ctx.source.choice(THOUGHTS), "chatter")]
        pieces += [Piece(nl + ctx.tokens["action"] + " ", "envelope"), Piece(name, "payload", call_index=i),
                   Piece(nl + ctx.tokens["input"] + gap, "envelope"), json_payload(ctx, call["arguments"], 0, i)]
    return pieces


def pythonic_name(name: str) -> bool:
    """A dotted Python name whose parts Python keeps as written."""
    return all(_is_keyword_name(part) for part in name.split("."))


@output_format("pythonic", description="a Python list of calls: [get_weather(city=\"Paris\")]",
               envelope={"open": "[", "close": "]"}, json_payload=False, writes_name=pythonic_name,
               fragments=("[{tool}(", "("), fake_call='"), {tool}(), print("', empty_forms=("[]",))
def _render_pythonic(ctx: Context) -> list:
    """Values are Python literals (True/False/None, escaped strings); keys that cannot be keyword
    arguments (``"from"``, ``"two words"``) go in a trailing ``**{...}``, which Python reads the same."""
    single = ctx.source.boolean(0.25)  # repr-style single quotes instead of the common double quotes
    pieces: list = [Piece(ctx.tokens["open"], "envelope")]
    for i, call in enumerate(ctx.calls):
        if i:
            pieces.append(Piece(", ", "envelope"))
        name = call["name"]
        if not pythonic_name(name):
            raise Unrepresentable(f"pythonic cannot write the tool name {name!r} as a Python name")
        plain, extra = [], {}
        for key, value in call["arguments"].items():
            if _is_keyword_name(key):
                plain.append(f"{key}={_py(value, single)}")
            else:
                extra[key] = value
        if extra:
            plain.append("**" + _py(extra, single))
        body = f"{name}({', '.join(plain)}"
        pieces.append(Piece(body + ")", "payload", args_end=len(body), call_index=i))
    pieces.append(Piece(ctx.tokens["close"], "envelope"))
    return pieces


def _is_keyword_name(name: str) -> bool:
    """A name Python keeps as written: an identifier, NFKC-normal (Python normalizes identifiers), not a keyword."""
    return (name.isidentifier() and not keyword.iskeyword(name) and name != "__debug__"
            and unicodedata.normalize("NFKC", name) == name)


def _py(value: Any, single: bool) -> str:
    """A Python literal that ``ast.literal_eval`` reads back as exactly ``value``."""
    if value is None or value is True or value is False:
        return repr(value)
    if isinstance(value, str):
        return _py_str(value, single)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ToolfuzzError(f"{value!r} is not a JSON value")
        return repr(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_py_str(k, single)}: {_py(v, single)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_py(v, single) for v in value) + "]"
    raise ToolfuzzError(f"{value!r:.100} is not a JSON value")


def _py_str(value: str, single: bool) -> str:
    literal = repr(value)
    if single or literal[0] == '"':
        return literal
    # repr chose single quotes: re-quote with double quotes, keeping repr's escapes for everything else.
    out, body, i = ['"'], literal[1:-1], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            nxt = body[i + 1]
            out.append("'" if nxt == "'" else c + nxt)
            i += 2
            continue
        out.append('\\"' if c == '"' else c)
        i += 1
    out.append('"')
    return "".join(out)
