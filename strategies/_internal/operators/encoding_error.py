"""Operators of the ``encoding_error`` class. Encoding damage: a BOM, typographic quotes, raw control characters, lone surrogates, invalid escapes.

Truth rules are stated per operator (see :mod:`strategies._internal.operators`).
"""

from __future__ import annotations

from typing import Any, Callable

from strategies._internal.jsontext import splice
from strategies._internal.mutator import (
    Mutation, MutationContext, NotApplicable, escaped_strings, json_payload, mutator,
)
from strategies._internal.operators.textual import (
    _Doc, _docs, _faithful, _inject_in_string, _is_str, _leaves, _may_have_strings, _path, _pick,
)


@mutator("utf8_bom", anomaly_class="encoding_error")
def utf8_bom(source: Any, ctx: MutationContext) -> Mutation:
    """A UTF-8 byte order mark (U+FEFF) at the start of the output."""
    return Mutation("\ufeff" + ctx.render(ctx.calls).text, _faithful(ctx), "U+FEFF before the output")


_SMART = {"“": "”", "„": "“", "«": "»"}


@mutator("smart_quotes", anomaly_class="encoding_error", formats=json_payload)
def smart_quotes(source: Any, ctx: MutationContext) -> Mutation:
    """Typographic quotes (“ ”) in place of the structural double quotes of the JSON."""
    rendered = ctx.render(ctx.calls)
    docs = _docs(rendered, inner=False)
    keys_only = source.boolean(0.3)

    def strings(doc: _Doc) -> list:
        if any(c in doc.text for c in "“”„«»"):
            return []  # a value that already holds one would make the repair ambiguous
        return [t for t in doc.analysis.tokens
                if t.kind == "s" and doc.text[t.start] == '"' and (t.key or not keys_only)]

    doc, found = _pick(source, docs, strings)
    open_q = source.choice(tuple(_SMART))
    close_q = _SMART[open_q]
    edits = []
    for t in found:
        edits.append((t.start, t.start + 1, open_q))
        edits.append((t.end - 1, t.end, close_q))
    return Mutation(doc.replace(splice(doc.text, edits)), _faithful(ctx),
                    f"{len(found)} {'keys' if keys_only else 'strings'} quoted {open_q}…{close_q}")


def _in_string(name: str, texts: tuple, **register: Any) -> Callable:
    """Register operator ``name``: one of ``texts``, raw, inside one string value of the output.

    The decorated ``meaning(text, ctx) -> (decoded, label)`` gives what the value then holds (None: the
    truth is None) and how the description names the text (it may raise ``NotApplicable``); its
    docstring is the operator's description. ``register``: the rest of :func:`mutator`'s arguments.
    """
    def decorate(meaning: Callable) -> Callable:
        def operator(source: Any, ctx: MutationContext) -> Mutation:
            raw = source.choice(texts)
            decoded, label = meaning(raw, ctx)
            text, truth, path = _inject_in_string(source, ctx, raw, decoded)
            return Mutation(text, truth, f"{label} in {_path(path)}")

        operator.__doc__, operator.__name__ = meaning.__doc__, meaning.__name__
        operator.__module__, operator.__qualname__ = meaning.__module__, meaning.__qualname__
        mutator(name, anomaly_class="encoding_error", applies=_may_have_strings, **register)(operator)
        return meaning

    return decorate


@_in_string("raw_control_char", ("\n", "\t", "\r", "\x00", "\x1b", "\x0b", "\x0c", "\x01"),
            formats=escaped_strings, truth="as_written")
def raw_control_char(char: str, ctx: MutationContext) -> tuple:
    """A raw (unescaped) newline, tab or control character inside a string value; the value holds it."""
    return char, f"raw {char!r}"


@_in_string("lone_surrogate", ("\\ud83d", "\\ud800", "\\udbff", "\\ude00", "\\udc00"),
            formats=escaped_strings, truth="as_written")
def lone_surrogate(escape: str, ctx: MutationContext) -> tuple:
    """A lone UTF-16 surrogate escape (`\\ud83d`, half an emoji) in a string value; the value holds it."""
    if any(any("\ud800" <= c <= "\udfff" for c in v) for _, _, v in _leaves(ctx.calls, _is_str)):
        raise NotApplicable  # an adjacent surrogate could pair with the escape
    return chr(int(escape[2:], 16)), escape


@_in_string("invalid_escape", ("\\x41", "\\q", "\\U0001F600", "\\u00G1", "\\e"), formats=json_payload, truth="none")
def invalid_escape(escape: str, ctx: MutationContext) -> tuple:
    """An escape JSON does not have (`\\x41`, `\\q`, `\\U0001F600`) inside a string value."""
    return None, escape
