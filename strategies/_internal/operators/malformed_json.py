"""Operators of the ``malformed_json`` class. JSON that is not JSON: trailing commas, single quotes, Python literals, comments, a missing
brace, duplicate keys, trailing garbage, NaN.

Truth rules are stated per operator (see :mod:`strategies._internal.operators`).
"""

from __future__ import annotations

from typing import Any

from strategies._internal.jsontext import IDENTIFIER, LITERALS, decode_string, single_quoted, splice
from strategies._internal.mutator import (
    Mutation, MutationContext, NotApplicable, closers_after_arguments, json_payload, mutator,
)
from strategies._internal.operators.textual import (
    _Doc, _any, _docs, _faithful, _may_have_arguments, _may_have_literals, _path, _pick, _replace_value,
)


@mutator("trailing_comma", anomaly_class="malformed_json", formats=json_payload)
def trailing_comma(source: Any, ctx: MutationContext) -> Mutation:
    """A trailing comma after the last member of an object or array (`{"a": 1,}`)."""
    rendered = ctx.render(ctx.calls)
    doc, found = _pick(source, _docs(rendered), lambda d: [c for c in d.analysis.containers
                                                             if c.last_value_end >= 0 and c.kind != "("])
    c = source.choice(found)
    closer = doc.text[c.close]
    text = doc.replace(doc.text[:c.last_value_end] + "," + doc.text[c.last_value_end:])
    return Mutation(text, _faithful(ctx), f"trailing comma before {closer!r}")


@mutator("single_quotes", anomaly_class="malformed_json", formats=json_payload)
def single_quotes(source: Any, ctx: MutationContext) -> Mutation:
    """Single-quoted strings, as a model printing a Python dict writes them (`{'city': 'Paris'}`)."""
    rendered = ctx.render(ctx.calls)
    keys_only = source.boolean(0.3)
    python = source.boolean(0.5)  # also True/False/None, i.e. Python's repr of the dict

    def strings(doc: _Doc) -> list:
        return [t for t in doc.analysis.tokens
                if t.kind == "s" and doc.text[t.start] == '"' and (t.key or not keys_only)]

    doc, found = _pick(source, _docs(rendered), strings)
    edits = []
    for tok in found:
        value = decode_string(doc.text[tok.start:tok.end])
        if value is None:
            raise NotApplicable
        edits.append((tok.start, tok.end, single_quoted(value)))
    if python:
        edits.extend((t.start, t.end, _PYTHON[doc.text[t.start:t.end]])
                     for t in doc.analysis.values("w") if doc.text[t.start:t.end] in _PYTHON)
    what = "keys" if keys_only else "strings"
    return Mutation(doc.replace(splice(doc.text, edits)), _faithful(ctx),
                    f"{len(found)} {what} single-quoted" + (" with Python literals" if python else ""))


_PYTHON = {"true": "True", "false": "False", "null": "None"}


@mutator("python_literals", anomaly_class="malformed_json", formats=json_payload, applies=_may_have_literals)
def python_literals(source: Any, ctx: MutationContext) -> Mutation:
    """Python's True/False/None where JSON has true/false/null."""
    rendered = ctx.render(ctx.calls)
    doc, found = _pick(source, _docs(rendered), lambda d: [t for t in d.analysis.values("w")
                                                           if d.text[t.start:t.end] in _PYTHON])
    every = not source.boolean(0.3)
    chosen = found if every else [source.choice(found)]
    edits = [(t.start, t.end, _PYTHON[doc.text[t.start:t.end]]) for t in chosen]
    words = sorted({doc.text[t.start:t.end] for t in chosen})
    return Mutation(doc.replace(splice(doc.text, edits)), _faithful(ctx),
                    f"{'/'.join(words)} -> {'/'.join(_PYTHON[w] for w in words)}")


@mutator("unquoted_keys", anomaly_class="malformed_json", formats=json_payload)
def unquoted_keys(source: Any, ctx: MutationContext) -> Mutation:
    """Object keys without quotes, JavaScript style (`{city: "Paris"}`)."""
    rendered = ctx.render(ctx.calls)

    def keys(doc: _Doc) -> list:
        out = []
        for t in doc.analysis.keys():
            name = decode_string(doc.text[t.start:t.end])
            if name and IDENTIFIER.match(name) and name not in LITERALS:
                out.append((t, name))
        return out

    doc, found = _pick(source, _docs(rendered), keys)
    every = not source.boolean(0.3)
    chosen = found if every else [source.choice(found)]
    text = doc.replace(splice(doc.text, [(t.start, t.end, name) for t, name in chosen]))
    return Mutation(text, _faithful(ctx), f"key {chosen[0][1]!r} unquoted" if len(chosen) == 1
                    else f"{len(chosen)} keys unquoted")


_COMMENTS = ("// required\n", "/* the user's request */", "// TODO: confirm with the user\n",
             "/* optional */", "//\n")


@mutator("json_comments", anomaly_class="malformed_json", formats=json_payload)
def json_comments(source: Any, ctx: MutationContext) -> Mutation:
    """A `//` or `/* */` comment between members, as models annotate their JSON."""
    rendered = ctx.render(ctx.calls)
    doc, found = _pick(source, _docs(rendered), lambda d: [t for t in d.analysis.tokens
                                                           if t.kind in ("{", "[", ",", ":")])
    tok = source.choice(found)
    comment = source.choice(_COMMENTS)
    text = doc.replace(doc.text[:tok.end] + " " + comment + doc.text[tok.end:])
    return Mutation(text, _faithful(ctx), f"comment {comment.strip()!r} after {tok.kind!r}")


@mutator("missing_closing_brace", anomaly_class="malformed_json", formats=closers_after_arguments)
def missing_closing_brace(source: Any, ctx: MutationContext) -> Mutation:
    """The final closing brace(s) missing, after the arguments are complete (`{"name": ..., "arguments": {...}`)."""
    rendered = ctx.render(ctx.calls)

    def closers(doc: _Doc) -> list:
        tokens, limit = doc.analysis.tokens, doc.limit()
        out = []
        for tok in reversed(tokens):
            if tok.kind not in ("}", "]") or tok.start < limit:
                break
            out.append(tok)
        return out

    doc, found = _pick(source, _docs(rendered, inner=False), closers)
    k = source.integer(1, len(found))
    first = found[k - 1]
    dropped = "".join(doc.text[t.start] for t in reversed(found[:k]))
    return Mutation(doc.replace(doc.text[:first.start]), _faithful(ctx), f"final {dropped!r} dropped")


@mutator("duplicate_key", anomaly_class="malformed_json", formats=json_payload)
def duplicate_key(source: Any, ctx: MutationContext) -> Mutation:
    """A member repeated with the same key and the same value (`{"city": "Paris", "city": "Paris"}`)."""
    rendered = ctx.render(ctx.calls)
    doc, found = _pick(source, _docs(rendered), lambda d: d.analysis.members)
    start, end = source.choice(found)
    member = doc.text[start:end]
    text = doc.replace(doc.text[:end] + ", " + member + doc.text[end:])
    return Mutation(text, _faithful(ctx), f"member {member[:40]!r} repeated")


_GARBAGE = ("}", ";", "]", ",", "}}", " <|im_end|>", ")")


@mutator("trailing_garbage", anomaly_class="malformed_json", formats=json_payload)
def trailing_garbage(source: Any, ctx: MutationContext) -> Mutation:
    """Extra characters right after the complete JSON value (a stray `}`, `;`, a stop token)."""
    rendered = ctx.render(ctx.calls)
    docs = _docs(rendered, inner=False)
    if not docs:
        raise NotApplicable
    doc = source.choice(docs)
    garbage = source.choice(_GARBAGE)
    return Mutation(doc.replace(doc.text.rstrip() + garbage + doc.text[len(doc.text.rstrip()):]),
                    _faithful(ctx), f"{garbage.strip()!r} after the JSON value")


@mutator("nan_value", anomaly_class="malformed_json", formats=json_payload, applies=_may_have_arguments,
         truth="none")
def nan_value(source: Any, ctx: MutationContext) -> Mutation:
    """NaN or Infinity as an argument value (Python's json.dumps writes them; JSON has no such number)."""
    word = source.choice(("NaN", "Infinity", "-Infinity", "nan", "inf"))
    text, path, old = _replace_value(source, ctx, _any, lambda old: word)
    return Mutation(text, None, f"{_path(path)} {old!r} -> {word}")
