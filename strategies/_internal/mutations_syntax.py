"""Mutation operators of the syntactic classes: malformed_json, truncated_output, envelope_error,
encoding_error and oversized_input.

Each operator is modelled on something real models emit (a trailing comma, a Python dict, an output
cut by the length limit, a misspelled tag, smart quotes, a 1 MB string) and states the ground truth by
construction (DESIGN.md, "Sample"):

* faithful noise (a careful parser may strip or repair it) -> the original calls, deep-copied;
* no faithful call (cut mid-value, NaN, an invalid escape, an unrepresentable number) -> ``None``;
* a value the text really spells differently (a raw control character, a lone surrogate, a huge
  string) -> the calls *as written*.

Three techniques keep the operators cheap (the campaign runs them ~25,000 times a second) and exact:

* **token edits** — render the valid calls, tokenize the JSON payload (:mod:`jsontext`, one regex pass)
  and splice a few characters at structural positions; every other byte stays as the format rendered it.
  A JSON document that a format embeds as a JSON *string* (OpenAI ``"arguments": "{...}"``) is edited
  inside the string and re-embedded with the same escaping.
* **sentinels** — to change one argument value in the text, put a unique ASCII sentinel into the calls,
  render, and replace the sentinel (with its quotes, however many times the format encoded them) by
  the raw replacement. No parse, no re-serialization, and the envelope is whatever the format renders.
* **string multiplication** for the oversized class: huge texts are built in one allocation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Optional

from strategies.json_values import copy_json, json_equal
from strategies._internal.jsontext import (
    IDENTIFIER, LITERALS, Analysis, analyze, decode_string, single_quoted, splice, string_encoder,
)
from strategies._internal.formats import FORMATS, Format, Style, Unrepresentable
from strategies._internal.mutations import (
    Mutation, MutationContext, NotApplicable, closers_after_arguments, json_payload, mutator, named,
)

SENTINEL = "tfzQ7sentinelX3"


# --------------------------------------------------------------------------- shared helpers


def _faithful(ctx: MutationContext) -> list:
    return copy_json(ctx.calls)


def _join(pieces, index: int, replacement: str, *, cut: bool = False) -> str:
    """The text with piece ``index`` replaced (and everything after it dropped when ``cut``)."""
    before = "".join(p.text for p in pieces[:index])
    if cut:
        return before + replacement
    return before + replacement + "".join(p.text for p in pieces[index + 1:])


_ANALYSES: dict[str, Analysis] = {}


@dataclass
class _Doc:
    """One JSON document in a rendering: a JSON payload piece, or a document a payload embeds as a
    JSON string (``inner``), which is edited decoded and re-encoded with the format's own escaping."""

    pieces: tuple
    index: int  # piece index
    text: str  # the document text
    start: int = 0  # offset of the string token holding an inner document, in the piece text
    end: int = 0
    encode: Optional[Callable[[str], str]] = None  # None = outer document
    _analysis: Optional[Analysis] = None

    @property
    def piece(self) -> Any:
        return self.pieces[self.index]

    @property
    def analysis(self) -> Analysis:
        if self._analysis is None:
            # Operators of one family share a rendering (see build.build_family), so the same
            # document is analysed again and again: keep the last few analyses.
            cached = _ANALYSES.get(self.text)
            if cached is None:
                if len(_ANALYSES) >= 32:
                    _ANALYSES.clear()
                cached = _ANALYSES[self.text] = analyze(self.text)
            self._analysis = cached
        return self._analysis

    def replace(self, new_text: str) -> str:
        if self.encode is None:
            return _join(self.pieces, self.index, new_text)
        ptext = self.piece.text
        return _join(self.pieces, self.index, ptext[:self.start] + self.encode(new_text) + ptext[self.end:])

    def cut(self, offset: int) -> str:
        """The whole text ending at ``offset`` of this document (the output stopped there)."""
        if self.encode is None:
            return _join(self.pieces, self.index, self.text[:offset], cut=True)
        encoded = self.encode(self.text[:offset])[:-1]  # the string is never closed
        return _join(self.pieces, self.index, self.piece.text[:self.start] + encoded, cut=True)

    def limit(self) -> int:
        """Cuts strictly before this offset lose argument content (``args_end`` of the contract)."""
        if self.encode is not None:
            return len(self.text)  # the whole embedded document lies before the piece's args_end
        args_end = self.piece.args_end
        return len(self.text) if args_end is None else args_end


def _docs(rendered: Any, *, inner: bool = True, json_only: bool = True, outer: bool = True) -> list:
    """The documents of a rendering, outer payloads first (the simplest choice).

    An embedded document is a string token that decodes to the JSON text of one call's arguments
    (OpenAI's ``"arguments": "{...}"``); a string *argument* that merely looks like JSON is a value and
    is never edited as a document.
    """
    pieces = tuple(rendered.pieces)
    out, nested = [], []
    arguments = None
    for i, piece in enumerate(pieces):
        if piece.role != "payload" or (json_only and not piece.json):
            continue
        doc = _Doc(pieces, i, piece.text)
        if outer:
            out.append(doc)
        text = piece.text
        if not inner or not piece.json or ('"{' not in text and '"[' not in text):
            continue
        if arguments is None:
            arguments = [c["arguments"] for c in rendered.calls]
        limit = piece.args_end if piece.args_end is not None else len(text)
        tokens = doc.analysis.tokens
        for j, tok in enumerate(tokens):
            if tok.kind != "s" or tok.key or tok.end > limit or text[tok.start + 1] not in "{[":
                continue
            # Only the value of an "arguments" key is an embedded document: a string argument
            # whose text happens to equal some call's arguments (say "{}") is a value.
            if not _is_arguments_value(tokens, j, text):
                continue
            value = decode_string(text[tok.start:tok.end])
            try:
                if value is None or not any(json_equal(json.loads(value), a) for a in arguments):
                    continue
            except ValueError:
                continue
            encode = string_encoder(text[tok.start:tok.end], value)
            if encode is not None:
                nested.append(_Doc(pieces, i, value, tok.start, tok.end, encode))
    return out + nested


def _is_arguments_value(tokens: list, j: int, text: str) -> bool:
    """Is string token ``j`` the value of an ``"arguments"`` key (``"arguments": "..."``)?"""
    k = j - 1
    while k >= 0 and tokens[k].kind not in (":", "s"):
        k -= 1
    if k < 1 or tokens[k].kind != ":":
        return False
    k -= 1
    while k >= 0 and tokens[k].kind != "s":
        if tokens[k].kind not in ("ws", "space", "comment"):
            return False
        k -= 1
    return k >= 0 and tokens[k].key and decode_string(text[tokens[k].start:tokens[k].end]) == "arguments"


def _pick(source: Any, docs: list, find: Callable[[_Doc], list]) -> tuple:
    """A document with something to mutate and its candidates; NotApplicable when none has any."""
    options = []
    for doc in docs:
        found = find(doc)
        if found:
            options.append((doc, found))
    if not options:
        raise NotApplicable
    return source.choice(options)


def _leaves(calls: list, accept: Callable[[Any], bool]) -> list:
    """``(call index, path, value)`` of every scalar (or empty container) argument value accepted,
    depth-first in document order, without recursion."""
    out = []
    for ci, call in enumerate(calls):
        args = call.get("arguments")
        if not isinstance(args, dict):
            continue
        stack = [((k,), args[k]) for k in reversed(list(args))]
        while stack:
            path, value = stack.pop()
            if isinstance(value, dict) and value:
                stack.extend((path + (k,), value[k]) for k in reversed(list(value)))
            elif isinstance(value, list) and value:
                stack.extend((path + (j,), value[j]) for j in reversed(range(len(value))))
            elif accept(value):
                out.append((ci, path, value))
    return out


def _with_value(calls: list, ci: int, path: tuple, value: Any) -> list:
    new = copy_json(calls)
    obj = new[ci]["arguments"]
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value
    return new


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _any(value: Any) -> bool:
    return True


def _render_with_sentinel(ctx: MutationContext, calls: list) -> tuple:
    """Render and locate the single sentinel occurrence; NotApplicable if it is not unique."""
    text = ctx.render(calls).text
    at = text.find(SENTINEL)
    if at < 0 or text.find(SENTINEL, at + 1) >= 0:
        raise NotApplicable
    return text, at


def _replace_value(source: Any, ctx: MutationContext, accept: Callable[[Any], bool],
                   replacement: Callable[[Any], str]) -> tuple:
    """Replace one whole argument value (with its quotes) by raw text. Returns (text, path, old value)."""
    leaves = _leaves(ctx.calls, accept)
    if not leaves:
        raise NotApplicable
    ci, path, old = source.choice(leaves)
    repl = replacement(old)
    text, at = _render_with_sentinel(ctx, _with_value(ctx.calls, ci, path, SENTINEL))
    lo, hi = at, at + len(SENTINEL)
    if text[lo - 1:lo] in ("'", '"'):  # the quotes, with the backslashes of each encoding level
        lo -= 1
        while text[lo - 1:lo] == "\\":
            lo -= 1
        while text[hi:hi + 1] == "\\":
            hi += 1
        hi += 1
    return text[:lo] + repl + text[hi:], path, old


def _inject_in_string(source: Any, ctx: MutationContext, injection: str,
                      decoded: Optional[str]) -> tuple:
    """Put raw ``injection`` text inside one string argument value. Returns (text, new calls or None,
    path); the new calls hold ``decoded`` at that position (None: the truth is None)."""
    leaves = _leaves(ctx.calls, _is_str)
    if not leaves:
        raise NotApplicable
    ci, path, old = source.choice(leaves)
    at = source.integer(0, len(old))
    left, right = old[:at], old[at:]
    text, pos = _render_with_sentinel(ctx, _with_value(ctx.calls, ci, path, left + SENTINEL + right))
    text = text[:pos] + injection + text[pos + len(SENTINEL):]
    truth = None if decoded is None else _with_value(ctx.calls, ci, path, left + decoded + right)
    return text, truth, path


def _path(path: tuple) -> str:
    return ".".join(str(p) for p in path)


def _schema_walk(schema: Any):
    """Every subschema dict of ``schema`` (iterative, cycle-safe)."""
    stack, seen = [schema], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            yield node
            stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))


def _may_have_strings(tool: Any) -> bool:
    """False only when the schema surely holds no string value (every typed node excludes string)."""
    for node in _schema_walk(getattr(tool, "schema", {}) or {}):
        types = node.get("type")
        if types == "string" or (isinstance(types, list) and "string" in types):
            return True
        if any(isinstance(v, str) for v in node.get("enum", ()) or ()) or isinstance(node.get("const"), str):
            return True
        if "$ref" in node or "pattern" in node or "format" in node:
            return True
    return False


def _may_have_arguments(tool: Any) -> bool:
    schema = getattr(tool, "schema", {}) or {}
    return bool(schema.get("properties")) or schema.get("additionalProperties") not in (None, False) \
        or any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref", "patternProperties"))


def _may_have(tool: Any, types: tuple, values: Callable[[Any], bool]) -> bool:
    """Whether the schema may produce a value of one of ``types`` (or an enum/const value accepted by
    ``values``); ``$ref`` and untyped combinators are assumed to."""
    for node in _schema_walk(getattr(tool, "schema", {}) or {}):
        declared = node.get("type")
        declared = [declared] if isinstance(declared, str) else (declared or [])
        if any(t in declared for t in types) or "$ref" in node:
            return True
        if any(values(v) for v in node.get("enum", ()) or ()) or ("const" in node and values(node["const"])):
            return True
    return False


def _may_have_literals(tool: Any) -> bool:
    return _may_have(tool, ("boolean", "null"), lambda v: v is None or isinstance(v, bool))


def _may_have_numbers(tool: Any) -> bool:
    return _may_have(tool, ("integer", "number"), lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))


# --------------------------------------------------------------------------- malformed_json


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


@mutator("nan_value", anomaly_class="malformed_json", formats=json_payload, applies=_may_have_arguments)
def nan_value(source: Any, ctx: MutationContext) -> Mutation:
    """NaN or Infinity as an argument value (Python's json.dumps writes them; JSON has no such number)."""
    word = source.choice(("NaN", "Infinity", "-Infinity", "nan", "inf"))
    text, path, old = _replace_value(source, ctx, _any, lambda old: word)
    return Mutation(text, None, f"{_path(path)} {old!r} -> {word}")


# --------------------------------------------------------------------------- truncated_output


def _truncate(source: Any, ctx: MutationContext, kind: str,
              positions: Callable[[_Doc, int], list], *, json_only: bool = False) -> Mutation:
    """Cut the output at one of ``positions(doc, limit)`` (offsets strictly below ``limit``)."""
    rendered = ctx.render(ctx.calls)
    docs = _docs(rendered, json_only=json_only)
    docs = [d for d in docs if d.encode is not None or d.piece.args_end is not None]
    doc, found = _pick(source, docs, lambda d: [k for k in positions(d, d.limit()) if k < d.limit()])
    k = source.choice(found)
    shown = doc.text[max(0, k - 12):k]
    return Mutation(doc.cut(k), None, f"cut {kind} (…{shown!r})")


def _after(kinds: tuple, *, nonempty: bool = False) -> Callable[[_Doc, int], list]:
    def positions(doc: _Doc, limit: int) -> list:
        a = doc.analysis
        filled = {c.open for c in a.containers if c.last_value_end >= 0} if nonempty else None
        return [t.end for t in a.tokens if t.kind in kinds and (filled is None or t.start in filled)]

    return positions


@mutator("truncate_after_open", anomaly_class="truncated_output")
def truncate_after_open(source: Any, ctx: MutationContext) -> Mutation:
    """Output stops right after an opening `{`, `[` or `(` of a non-empty container."""
    return _truncate(source, ctx, "after an opening bracket", _after(("{", "[", "("), nonempty=True))


@mutator("truncate_anywhere", anomaly_class="truncated_output")
def truncate_anywhere(source: Any, ctx: MutationContext) -> Mutation:
    """Output stops at an arbitrary character of a call, before its arguments are complete.

    The cheapest operator there is (a slice of the rendering), so the campaign runs it in bulk
    beside each valid sample: max_tokens cut-offs are the most common failure in the field.
    """
    rendered = ctx.render(ctx.calls)
    spans = payload_spans(rendered)
    if not spans:
        raise NotApplicable("no payload with arguments")
    # Two choices, in this order and with these bounds: the engine derives cut-offs of valid
    # samples without calling the operator and records exactly these (see fuzzer.schedule.Cut).
    start, end = spans[source.integer(0, len(spans) - 1)]
    cut = start + source.integer(1, end - 1)
    text = rendered.text
    return Mutation(text[:cut], None, f"cut after {cut} of {len(text)} characters")


def payload_spans(rendered: Any) -> list:
    """(offset in the text, args_end) of every payload piece that can be cut inside its arguments."""
    spans = []
    offset = 0
    for piece in rendered.pieces:
        if piece.role == "payload" and piece.args_end is not None and piece.args_end > 1:
            spans.append((offset, piece.args_end))
        offset += len(piece.text)
    return spans


@mutator("truncate_after_colon", anomaly_class="truncated_output")
def truncate_after_colon(source: Any, ctx: MutationContext) -> Mutation:
    """Output stops after a key's `:` (or a keyword's `=`), before its value."""
    return _truncate(source, ctx, "after a key", _after((":", "=")))


@mutator("truncate_after_comma", anomaly_class="truncated_output")
def truncate_after_comma(source: Any, ctx: MutationContext) -> Mutation:
    """Output stops after a `,` separating members or elements."""
    return _truncate(source, ctx, "after a comma", _after((",",)))


def _inside(kind: str, *, keys: Optional[bool]) -> Callable[[_Doc, int], list]:
    """Offsets strictly inside tokens of ``kind`` such that the cut loses part of the token's content
    (a string keeps at most all but its last character; a number's prefix denotes another number)."""
    def positions(doc: _Doc, limit: int) -> list:
        text, out = doc.text, []
        for t in doc.analysis.tokens:
            if t.kind != kind or (keys is not None and t.key != keys):
                continue
            if kind == "s":
                out.extend(range(t.start + 1, t.end - 1))  # leaves content[:-1] at most
            elif kind == "n":
                full = float(text[t.start:t.end])
                for k in range(t.start + 1, t.end):
                    try:
                        if float(text[t.start:k]) == full:
                            continue
                    except ValueError:
                        pass
                    out.append(k)
            else:
                out.extend(range(t.start + 1, t.end))
        return out

    return positions


@mutator("truncate_in_string", anomaly_class="truncated_output")
def truncate_in_string(source: Any, ctx: MutationContext) -> Mutation:
    """Output stops inside a string value."""
    return _truncate(source, ctx, "inside a string", _inside("s", keys=False))


@mutator("truncate_in_key", anomaly_class="truncated_output")
def truncate_in_key(source: Any, ctx: MutationContext) -> Mutation:
    """Output stops inside an object key."""
    def positions(doc: _Doc, limit: int) -> list:
        return _inside("s", keys=True)(doc, limit) + [
            k for t in doc.analysis.keys() if t.kind == "w" for k in range(t.start + 1, t.end)]

    return _truncate(source, ctx, "inside a key", positions)


@mutator("truncate_in_number", anomaly_class="truncated_output", applies=_may_have_numbers)
def truncate_in_number(source: Any, ctx: MutationContext) -> Mutation:
    """Output stops inside a number, leaving a prefix that denotes another number (`12.5` -> `12.`)."""
    return _truncate(source, ctx, "inside a number", _inside("n", keys=None))


@mutator("truncate_in_literal", anomaly_class="truncated_output", applies=_may_have_literals)
def truncate_in_literal(source: Any, ctx: MutationContext) -> Mutation:
    """Output stops inside true/false/null (`tr`)."""
    def positions(doc: _Doc, limit: int) -> list:
        return [k for t in doc.analysis.values("w") if doc.text[t.start:t.end] in LITERALS
                for k in range(t.start + 1, t.end)]

    return _truncate(source, ctx, "inside a literal", positions)


#: Every structural cut position of the truncation operators above, for truncate_last_call.
def _any_cut(doc: _Doc, limit: int) -> list:
    return sorted(set(_after(("{", "[", "("), nonempty=True)(doc, limit) + _after((":", "=", ","))(doc, limit)
                      + _inside("s", keys=None)(doc, limit) + _inside("n", keys=None)(doc, limit)))


@mutator("truncate_last_call", anomaly_class="truncated_output")
def truncate_last_call(source: Any, ctx: MutationContext) -> Mutation:
    """Several calls, the output cut inside the last one's arguments (the earlier calls are complete)."""
    calls = ctx.calls
    if len(calls) < 2:  # make it a multi-call output: the truth is None whatever the extra call is
        from strategies._internal.schema import compile_tool

        others = [t for t in ctx.registry if t.name != ctx.tool.name]
        other = source.choice(others) if others and source.boolean(0.5) else ctx.tool
        calls = calls + [{"name": other.name, "arguments": compile_tool(other).generate(source)}]
    try:
        rendered = ctx.render(calls)
    except Unrepresentable:  # the extra tool's name cannot be written in this format
        raise NotApplicable from None
    docs = [d for d in _docs(rendered, json_only=False) if d.encode is not None or d.piece.args_end is not None]
    if not docs:
        raise NotApplicable
    last_piece = max(d.index for d in docs)
    docs = [d for d in docs if d.index == last_piece]
    doc = docs[-1]  # the embedded arguments of the last call (openai), else the last payload
    region = 0
    if doc.encode is None and doc.piece.call_index is None:
        # several calls in one document: the last call starts after the last occurrence of its name
        # (every format writes the name before the arguments)
        name = calls[-1]["name"]
        region = max(0, doc.text.rfind(name, 0, doc.limit()))
    limit = doc.limit()
    found = [k for k in _any_cut(doc, limit) if region < k < limit]
    if not found:
        raise NotApplicable
    k = source.choice(found)
    return Mutation(doc.cut(k), None, f"{len(calls)} calls, cut inside the last (…{doc.text[max(0, k - 12):k]!r})")


# --------------------------------------------------------------------------- envelope_error


def _envelope_pieces(rendered: Any, token: str) -> list:
    return [i for i, p in enumerate(rendered.pieces) if p.role == "envelope" and token in p.text]


def _has_tags(fmt: Format) -> bool:
    return bool(fmt.tags)


@mutator("unclosed_tag", anomaly_class="envelope_error", formats=_has_tags)
def unclosed_tag(source: Any, ctx: MutationContext) -> Mutation:
    """The closing tag (`</tool_call>`) missing: the last one, or every one."""
    fmt = ctx.format_spec
    close_token = fmt.tags[source.integer(0, len(fmt.tags) - 1)][1]
    every = source.boolean(0.3)
    if every:
        text = ctx.render(ctx.calls, style=Style(envelope={close_token: ""})).text
        return Mutation(text, _faithful(ctx), "every closing tag dropped")
    rendered = ctx.render(ctx.calls)
    close = fmt.envelope[close_token]
    found = _envelope_pieces(rendered, close)
    if not found:
        raise NotApplicable
    i = found[-1]
    text = _join(rendered.pieces, i, rendered.pieces[i].text.replace(close, ""))
    return Mutation(text, _faithful(ctx), f"last {close!r} dropped")


def _has_tag_variants(fmt: Format) -> bool:
    return bool(fmt.tags and fmt.tag_variants)


@mutator("misspelled_tag", anomaly_class="envelope_error", formats=_has_tag_variants)
def misspelled_tag(source: Any, ctx: MutationContext) -> Mutation:
    """A misspelled or mismatched tag (`<toolcall>`, `<tool-call>`, `<function_call>`, `</tool_calls>`)."""
    fmt = ctx.format_spec
    open_token, close_token = fmt.tags[0]
    open_tag, close_tag = source.choice(fmt.tag_variants)
    text = ctx.render(ctx.calls, style=Style(envelope={open_token: open_tag, close_token: close_tag})).text
    return Mutation(text, _faithful(ctx), f"tags written {open_tag}…{close_tag}")


_FENCE_OPENS = ("```", "```JSON", "```javascript", "```tool_code", "``` json", "```jsonc", "```python")


def _fenced(fmt: Format) -> bool:
    return fmt.fence is not None


@mutator("fence_language", anomaly_class="envelope_error", formats=_fenced)
def fence_language(source: Any, ctx: MutationContext) -> Mutation:
    """A fence without its `json` language tag, or with another one (```` ``` ````, ```` ```python ````)."""
    opener = source.choice(_FENCE_OPENS)
    text = ctx.render(ctx.calls, style=Style(envelope={ctx.format_spec.fence[0]: opener})).text
    return Mutation(text, _faithful(ctx), f"fence opened with {opener!r}")


@mutator("unclosed_fence", anomaly_class="envelope_error", formats=_fenced)
def unclosed_fence(source: Any, ctx: MutationContext) -> Mutation:
    """The closing ```` ``` ```` of the fence missing (or only two backticks)."""
    close = source.choice(("", "``", "`"))
    text = ctx.render(ctx.calls, style=Style(envelope={ctx.format_spec.fence[1]: close})).text
    return Mutation(text, _faithful(ctx), f"fence closed with {close!r}" if close else "fence never closed")


def _marker_error(source: Any, ctx: MutationContext) -> Mutation:
    """One of the format's declared misspellings of its opening marker (missing, misspelled, doubled)."""
    variants = ctx.format_spec.marker_variants["open"]
    opener = source.choice(variants)
    text = ctx.render(ctx.calls, style=Style(envelope={"open": opener})).text
    return Mutation(text, _faithful(ctx), f"{ctx.format_spec.envelope['open']} written {opener!r}")


@mutator("mistral_tag_error", anomaly_class="envelope_error", formats=named("mistral"))
def mistral_tag_error(source: Any, ctx: MutationContext) -> Mutation:
    """`[TOOL_CALLS]` missing, misspelled or doubled before the list of calls."""
    return _marker_error(source, ctx)


@mutator("llama3_tag_error", anomaly_class="envelope_error", formats=named("llama3"))
def llama3_tag_error(source: Any, ctx: MutationContext) -> Mutation:
    """`<|python_tag|>` missing, misspelled or doubled."""
    return _marker_error(source, ctx)


def _object_arguments(fmt: Format) -> bool:
    """Call objects whose arguments are an object, or payloads that are bare arguments objects."""
    return (fmt.call_object is not None and not fmt.call_object.arguments_as_string) or \
        (fmt.bare_arguments and fmt.json_payload)


@mutator("double_encoded_arguments", anomaly_class="envelope_error", formats=_object_arguments)
def double_encoded_arguments(source: Any, ctx: MutationContext) -> Mutation:
    """Arguments written as a JSON string holding the object (`"arguments": "{\\"city\\": ...}"`)."""
    compact = source.boolean(0.3)
    separators = (",", ":") if compact else (", ", ": ")
    shape = ctx.format_spec.call_object

    def encode(arguments: Any) -> str:
        return json.dumps(arguments, ensure_ascii=False, separators=separators)

    if shape is None:  # the payload is the arguments object itself
        def dump(document: Any) -> str:
            return json.dumps(encode(document), ensure_ascii=False)

        style = Style(dump=dump)
    else:
        key = shape.arguments_key

        def stringify(obj: dict) -> dict:
            return dict(obj, **{key: encode(obj[key])}) if isinstance(obj.get(key), dict) else obj

        style = Style(call=stringify)
    text = ctx.render(ctx.calls, style=style).text
    return Mutation(text, _faithful(ctx), f"{shape.arguments_key if shape else 'arguments'} double-encoded "
                    "as a JSON string")


def _string_arguments(fmt: Format) -> bool:
    return fmt.call_object is not None and fmt.call_object.arguments_as_string


@mutator("openai_arguments_object", anomaly_class="envelope_error", formats=_string_arguments)
def openai_arguments_object(source: Any, ctx: MutationContext) -> Mutation:
    """OpenAI `function.arguments` written as an object instead of the JSON string the API sends."""
    key = ctx.format_spec.call_object.arguments_key

    def decode(obj: dict) -> dict:
        return dict(obj, **{key: json.loads(obj[key])}) if isinstance(obj.get(key), str) else obj

    text = ctx.render(ctx.calls, style=Style(call=decode)).text
    return Mutation(text, _faithful(ctx), "function.arguments as an object")


_REACT_INPUTS = ("same line", "fence", "fence without language", "backticks", "quoted")


@mutator("react_action_input_layout", anomaly_class="envelope_error", formats=named("react"))
def react_action_input_layout(source: Any, ctx: MutationContext) -> Mutation:
    """`Action Input` on the Action line, or its JSON in a code fence, backticks or quotes."""
    layout = source.choice(_REACT_INPUTS)
    rendered = ctx.render(ctx.calls)
    pieces = list(rendered.pieces)
    marker = ctx.format_spec.envelope["input"]
    inputs = [i for i, p in enumerate(pieces) if p.role == "envelope" and marker in p.text
              and i + 1 < len(pieces) and pieces[i + 1].json]
    if not inputs:
        raise NotApplicable
    texts = [p.text for p in pieces]
    for i in inputs:
        if layout == "same line":
            texts[i] = texts[i].replace("\n" + marker, " " + marker)
        elif layout.startswith("fence"):
            lang = "" if layout.endswith("language") else "json"
            texts[i] = texts[i].rstrip(" ") + "\n```" + lang + "\n"
            texts[i + 1] = texts[i + 1] + "\n```"
        elif layout == "backticks":
            texts[i + 1] = "`" + texts[i + 1] + "`"
        else:
            texts[i + 1] = "'" + texts[i + 1] + "'"
    return Mutation("".join(texts), _faithful(ctx), f"Action Input: {layout}")


_REACT_SPELLINGS = (("Action:", "Action input:"), ("Action:", "ActionInput:"), ("Action:", "Action_Input:"),
                    ("action:", "action input:"), ("Action :", "Action Input :"), ("**Action:**", "**Action Input:**"))


@mutator("react_keyword_variant", anomaly_class="envelope_error", formats=named("react"))
def react_keyword_variant(source: Any, ctx: MutationContext) -> Mutation:
    """`Action:` / `Action Input:` in another case, spacing or Markdown bold."""
    action, action_input = source.choice(_REACT_SPELLINGS)
    text = ctx.render(ctx.calls, style=Style(envelope={"action": action, "input": action_input})).text
    return Mutation(text, _faithful(ctx), f"keywords written {action!r} / {action_input!r}")


# --------------------------------------------------------------------------- encoding_error


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


_CONTROLS = ("\n", "\t", "\r", "\x00", "\x1b", "\x0b", "\x0c", "\x01")


@mutator("raw_control_char", anomaly_class="encoding_error", applies=_may_have_strings)
def raw_control_char(source: Any, ctx: MutationContext) -> Mutation:
    """A raw (unescaped) newline, tab or control character inside a string value; the value holds it."""
    char = source.choice(_CONTROLS)
    text, truth, path = _inject_in_string(source, ctx, char, char)
    return Mutation(text, truth, f"raw {char!r} in {_path(path)}")


_SURROGATES = ("\\ud83d", "\\ud800", "\\udbff", "\\ude00", "\\udc00")


@mutator("lone_surrogate", anomaly_class="encoding_error", applies=_may_have_strings)
def lone_surrogate(source: Any, ctx: MutationContext) -> Mutation:
    """A lone UTF-16 surrogate escape (`\\ud83d`, half an emoji) in a string value; the value holds it."""
    escape = source.choice(_SURROGATES)
    char = chr(int(escape[2:], 16))
    leaves = _leaves(ctx.calls, _is_str)
    if any(any("\ud800" <= c <= "\udfff" for c in v) for _, _, v in leaves):
        raise NotApplicable  # an adjacent surrogate could pair with the escape
    text, truth, path = _inject_in_string(source, ctx, escape, char)
    return Mutation(text, truth, f"{escape} in {_path(path)}")


_BAD_ESCAPES = ("\\x41", "\\q", "\\U0001F600", "\\u00G1", "\\e")


@mutator("invalid_escape", anomaly_class="encoding_error", formats=json_payload, applies=_may_have_strings)
def invalid_escape(source: Any, ctx: MutationContext) -> Mutation:
    """An escape JSON does not have (`\\x41`, `\\q`, `\\U0001F600`) inside a string value."""
    escape = source.choice(_BAD_ESCAPES)
    text, _, path = _inject_in_string(source, ctx, escape, None)
    return Mutation(text, None, f"{escape} in {_path(path)}")


# --------------------------------------------------------------------------- oversized_input


_FILLERS = ("a", "lorem ipsum ", "0123456789", "\u00e9", "ab ")


@mutator("huge_string", anomaly_class="oversized_input", applies=_may_have_strings)
def huge_string(source: Any, ctx: MutationContext) -> Mutation:
    """A string value of 64 KB to 1 MB (the value holds it)."""
    size = source.integer(64_000, 1_000_000)
    unit = source.choice(_FILLERS)
    filler = unit * (size // len(unit))
    text, truth, path = _inject_in_string(source, ctx, filler, filler)
    return Mutation(text, truth, f"{len(filler)} chars of {unit!r} in {_path(path)}")


_NESTINGS = (("[", "]", ""), ("{\"a\": ", "}", "1"), ("[", "", ""))


@mutator("deep_nesting", anomaly_class="oversized_input", formats=json_payload, applies=_may_have_arguments)
def deep_nesting(source: Any, ctx: MutationContext) -> Mutation:
    """An argument value nested 5,000 to 50,000 levels deep (`[[[[...]]]]`)."""
    depth = source.integer(5_000, 50_000)
    opener, closer, core = source.choice(_NESTINGS)
    nested = opener * depth + core + closer * depth
    text, path, _ = _replace_value(source, ctx, _any, lambda old: nested)
    balance = "balanced" if closer else "unclosed"
    return Mutation(text, None, f"{_path(path)} -> {depth} levels of {opener.strip()!r} ({balance})")


#: Numbers that overflow a double (never underflows: 1e-400 reads as 0.0, which is a faithful reading).
_HUGE_NUMBERS = ("1e400", "-1e400", "1.5E+999", "9" * 20 + "e99999", "1" + "0" * 400 + ".5")


@mutator("number_out_of_range", anomaly_class="oversized_input", formats=json_payload,
         applies=_may_have_arguments)
def number_out_of_range(source: Any, ctx: MutationContext) -> Mutation:
    """A number beyond double range (`1e400`) in place of a number or string value."""
    number = source.choice(_HUGE_NUMBERS)

    def accept(value: Any) -> bool:
        return isinstance(value, (int, float, str)) and not isinstance(value, bool)

    text, path, old = _replace_value(source, ctx, accept, lambda old: number)
    return Mutation(text, None, f"{_path(path)} {old!r} -> {number}")


_PROSE_FRAGMENTS = ("{", "`", "```", "[", "{\"", "\\")


@mutator("prose_fragment_run", anomaly_class="oversized_input")
def prose_fragment_run(source: Any, ctx: MutationContext) -> Mutation:
    """5,000 to 100,000 braces, backticks or fences in the prose before the real call."""
    fragment = source.choice(_PROSE_FRAGMENTS)
    count = source.integer(5_000, 100_000)
    text = fragment * count + "\n\n" + ctx.render(ctx.calls).text
    return Mutation(text, _faithful(ctx), f"{count} x {fragment!r} before the output")


@mutator("envelope_token_run", anomaly_class="oversized_input")
def envelope_token_run(source: Any, ctx: MutationContext) -> Mutation:
    """5,000 to 100,000 envelope tokens (`<tool_call>`, `Action:`, `[TOOL_CALLS]`...) before the real call.

    The format's own tokens come first (the simplest choice), then the other formats' tokens.
    """
    own = ctx.format_spec.fragments
    others = tuple(f for name, fmt in FORMATS.items() if name != ctx.format for f in fmt.fragments)
    fragment = source.choice(own + others).replace("{tool}", ctx.tool.name)
    count = source.integer(5_000, 100_000)
    sep = source.choice((" ", "\n", ""))
    text = (fragment + sep) * count + "\n\n" + ctx.render(ctx.calls).text
    return Mutation(text, _faithful(ctx), f"{count} x {fragment!r} before the output")
