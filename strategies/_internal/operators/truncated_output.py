"""Operators of the ``truncated_output`` class. The output stops mid-call: the length limit or a stop token cut it inside the arguments.

Truth rules are stated per operator (see :mod:`strategies._internal.operators`).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from strategies._internal.formats import Unrepresentable, payload_spans
from strategies._internal.jsontext import LITERALS
from strategies._internal.mutator import Mutation, MutationContext, NotApplicable, mutator
from strategies._internal.operators.textual import _Doc, _docs, _may_have_literals, _may_have_numbers, _pick


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
    # samples without calling the operator and records exactly these (see fuzzer.harnesses.parser.schedule.Cut).
    start, end = spans[source.integer(0, len(spans) - 1)]
    cut = start + source.integer(1, end - 1)
    text = rendered.text
    return Mutation(text[:cut], None, f"cut after {cut} of {len(text)} characters")


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
        from strategies._internal.schema.compiler import generatable

        others = [t for t in ctx.registry if t.name != ctx.tool.name and generatable(t)]
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


def _special_tokens(fmt: Any) -> bool:
    """Formats whose envelope holds special tokens or tags (``<|...|>``, ``<｜...｜>``, ``[TOOL_CALLS]``);
    for a chat template (``text_only``), the markers found in what it writes, when its arguments
    are a payload the cut can come before."""
    tokens = list(fmt.envelope.values()) + (list(fmt.fragments) if fmt.text_only and fmt.json_payload else [])
    return any(any(t in token for t in ("<|", "<｜", "[", "<")) and len(token) > 2 for token in tokens)


@mutator("truncate_in_marker", anomaly_class="truncated_output", formats=_special_tokens)
def truncate_in_marker(source: Any, ctx: MutationContext) -> Mutation:
    """Output stops inside a special token or tag before the last call's arguments (`<|tool_call_arg`).

    The cut a token limit makes between the tokens of a marker (`<｜tool▁ca`)."""
    rendered = ctx.render(ctx.calls)
    pieces = rendered.pieces
    last_payload = max((i for i, p in enumerate(pieces) if p.role == "payload" and p.args_end), default=-1)
    if last_payload < 0:
        raise NotApplicable("no payload with arguments")
    offsets, at = [], 0
    for i, piece in enumerate(pieces):
        if i < last_payload and piece.role == "envelope" and len(piece.text) > 2 \
                and any(c in piece.text for c in "<[|｜"):
            offsets.append((at, piece.text))
        at += len(piece.text)
    if not offsets:
        raise NotApplicable("no marker before the arguments")
    start, token = source.choice(offsets)
    cut = start + source.integer(1, len(token) - 1)
    return Mutation(rendered.text[:cut], None, f"cut inside {token!r}")
