"""What the text-level operators share: the documents of a rendering, sentinels, argument leaves,
and static checks of what a schema may produce.

See :mod:`strategies._internal.operators` for the techniques (token edits, sentinels, string
multiplication) and the truth rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Optional

from strategies._internal.jsontext import Analysis, analyze, decode_string, string_encoder
from strategies._internal.mutator import MutationContext, NotApplicable
from strategies.json_values import copy_json, json_equal


SENTINEL = "tfzQ7sentinelX3"


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


#: Keywords whose value is a subschema (or a list of them), and those whose value maps names to
#: subschemas: where a ``true`` stands for "any value" (elsewhere it is a flag: ``uniqueItems``).
_SCHEMA_KEYS = frozenset({"items", "prefixItems", "additionalItems", "additionalProperties", "contains",
                          "propertyNames", "not", "if", "then", "else", "unevaluatedProperties",
                          "unevaluatedItems", "anyOf", "oneOf", "allOf"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
                          "dependencies"})


def _schema_walk(schema: Any):
    """Every subschema dict of ``schema`` (iterative, cycle-safe), and ``True`` for each boolean
    ``true`` subschema met: it allows any value, so it may hold anything the callers ask about
    (``false`` allows nothing and is skipped). Values that are data, not schemas (``enum``,
    ``default``, ``examples``, a flag such as ``uniqueItems: true``), are not walked.
    Applicability only: a walk that says "may" too often costs an operator a draw that finds
    nothing; one that says "never" wrongly hides an operator."""
    stack, seen = [(schema, "schema")], set()
    while stack:
        node, role = stack.pop()
        if node is True:
            if role == "schema":
                yield True
            continue
        if not isinstance(node, (dict, list)) or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, list):
            stack.extend((v, role) for v in node)
        elif role == "map":
            stack.extend((v, "schema") for v in node.values())
        elif role == "schema":
            yield node
            stack.extend((v, "map" if k in _SCHEMA_MAPS else "schema" if k in _SCHEMA_KEYS else "data")
                         for k, v in node.items())


def _tool_schema(tool: Any) -> Any:
    """The tool's argument schema, ``{}`` when it has none."""
    schema = getattr(tool, "schema", {})
    return {} if schema is None else schema


def _may_have_strings(tool: Any) -> bool:
    """False only when the schema surely holds no string value (every typed node excludes string)."""
    for node in _schema_walk(_tool_schema(tool)):
        if node is True:
            return True
        types = node.get("type")
        if types == "string" or (isinstance(types, list) and "string" in types):
            return True
        if any(isinstance(v, str) for v in node.get("enum", ()) or ()) or isinstance(node.get("const"), str):
            return True
        if "$ref" in node or "pattern" in node or "format" in node:
            return True
    return False


def _may_have_arguments(tool: Any) -> bool:
    """Whether a call of the tool may hold any argument: declared properties, allowed extra keys, a
    combinator, or a schema that leaves the object free-form (``true``, or no ``properties`` and no
    ``additionalProperties``, whose generated calls get a few keys of their own)."""
    schema = _tool_schema(tool)
    if schema is True:
        return True
    if not isinstance(schema, dict):
        return False
    if "properties" not in schema and "additionalProperties" not in schema:
        return True
    return bool(schema.get("properties")) or schema.get("additionalProperties") not in (None, False) \
        or any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref", "patternProperties"))


def _may_have(tool: Any, types: tuple, values: Callable[[Any], bool]) -> bool:
    """Whether the schema may produce a value of one of ``types`` (or an enum/const value accepted by
    ``values``); ``$ref``, untyped combinators and ``true`` subschemas are assumed to."""
    for node in _schema_walk(_tool_schema(tool)):
        if node is True:
            return True
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
