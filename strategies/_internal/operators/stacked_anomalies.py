"""Operators of the ``stacked_anomalies`` class: two or three anomalies on one output.

Real outputs rarely hold one mistake: a fence without its language *and* a trailing comma, then the
length limit. Each operator here composes registered operators, and the truth is their composition:

* a *noise* operator is a restyler (one :class:`Style` of the valid calls: a misspelled tag, a fence
  language, a renamed key — faithful by construction), so stacking it keeps the next operator's truth:
  faithful ∘ X = X;
* an *edit* is a malformed_json or encoding_error operator applied to the noisy rendering (its truth:
  faithful, as written or none); a *semantic* operator writes other calls in the noisy rendering (its
  truth: the calls as written);
* a *cut* ends the output strictly before the end of some call's content in the rendering it was
  made from — after the edit where the edit lies before that point — so the truth is none, whatever
  came before.

Every choice (which operators, their own choices, where to cut) is drawn from the source, so a stacked
sample replays and shrinks like any other (towards the first noise and edit operators).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from strategies._internal.formats import Format, Style, payload_spans
from strategies._internal.mutator import OPERATORS, Mutation, MutationContext, NotApplicable, mutator
from strategies._internal.sample import ANOMALY_CLASSES

#: The classes whose operators edit a rendering (and so can stand on a noisy one).
EDIT_CLASSES = ("malformed_json", "encoding_error")


def _components(kind: str, fmt: str, tool: Any) -> list:
    """The registered operators of one role (noise, edit, semantic) that apply to (tool, fmt)."""
    out = []
    for op in OPERATORS.values():
        if op.anomaly_class == "stacked_anomalies" or not op.applies(tool, fmt):
            continue
        if kind == "noise" and op.restyle is not None:
            out.append(op)
        elif kind == "edit" and op.restyle is None and op.anomaly_class in EDIT_CLASSES:
            out.append(op)
        elif kind == "semantic" and ANOMALY_CLASSES[op.anomaly_class].semantic:
            out.append(op)
    return out


_CACHE: dict = {}


def components(kind: str, fmt: str, tool: Any) -> list:
    key = (kind, fmt, tool.name, id(tool))
    hit = _CACHE.get(key)
    if hit is None or hit[0] is not tool:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        hit = _CACHE[key] = (tool, _components(kind, fmt, tool))
    return hit[1]


def _has(kind: str, fmt: Format) -> bool:
    """Some operator of that role applies to this format (for some tool)."""
    for op in OPERATORS.values():
        if op.anomaly_class == "stacked_anomalies" or not op.applies_to_format(fmt):
            continue
        if (kind == "noise" and op.restyle is not None) or (
                kind == "edit" and op.restyle is None and op.anomaly_class in EDIT_CLASSES) or (
                kind == "semantic" and ANOMALY_CLASSES[op.anomaly_class].semantic):
            return True
    return False


def merge_styles(first: Style, second: Optional[Style]) -> Style:
    """Both styles at once: envelope overrides of different tokens, at most one dumper, call rewrites
    composed (``first``'s, then ``second``'s). Conflicts make the stack NotApplicable."""
    if second is None:
        return first
    if set(first.envelope) & set(second.envelope):
        raise NotApplicable("the stacked operators rewrite the same envelope token")
    if first.dump is not None and second.dump is not None:
        raise NotApplicable("the stacked operators both replace the JSON dumper")
    return Style(dump=first.dump or second.dump, envelope={**first.envelope, **second.envelope},
                 call=_compose(first.call, second.call))


def _compose(a: Optional[Callable], b: Optional[Callable]) -> Optional[Callable]:
    if a is None or b is None:
        return a or b

    def both(obj: dict) -> dict:
        return b(a(obj))

    return both


def _noisy(source: Any, ctx: MutationContext) -> tuple:
    """Draw a noise operator; returns (a context rendering with its style, the renderings made, description)."""
    noises = components("noise", ctx.format, ctx.tool)
    if not noises:
        raise NotApplicable("no noise operator applies")
    noise = source.choice(noises)
    style, description = noise.restyle(source, ctx)
    made: list = []

    def render(calls: list, style_: Optional[Style] = None) -> Any:
        rendered = ctx.render(calls, style=merge_styles(style, style_))
        made.append(rendered)
        return rendered

    noisy = MutationContext(registry=ctx.registry, tool=ctx.tool, format=ctx.format, calls=ctx.calls,
                            chatter=ctx.chatter, render=render)
    return noisy, made, f"{noise.name} ({description})"


def _then(source: Any, noisy: MutationContext, kind: str) -> tuple:
    ops = components(kind, noisy.format, noisy.tool)
    if not ops:
        raise NotApplicable(f"no {kind} operator applies")
    op = source.choice(ops)
    mutation = op(source, noisy)
    return mutation, f"{op.name} ({mutation.description})"


@mutator("noise_and_syntax", anomaly_class="stacked_anomalies", formats=lambda f: _has("noise", f) and _has("edit", f))
def noise_and_syntax(source: Any, ctx: MutationContext) -> Mutation:
    """Envelope noise and a JSON-syntax or encoding error on top (a misspelled tag, a trailing comma).

    Truth: the edit's (faithful ∘ X = X)."""
    noisy, _, first = _noisy(source, ctx)
    mutation, second = _then(source, noisy, "edit")
    return Mutation(mutation.text, mutation.calls, f"{first}, then {second}")


@mutator("noise_and_semantic", anomaly_class="stacked_anomalies",
         formats=lambda f: _has("noise", f) and _has("semantic", f))
def noise_and_semantic(source: Any, ctx: MutationContext) -> Mutation:
    """Envelope noise around a semantically wrong call (a bare fence around a missing argument).

    Truth: the calls as written."""
    noisy, _, first = _noisy(source, ctx)
    mutation, second = _then(source, noisy, "semantic")
    return Mutation(mutation.text, mutation.calls, f"{first}, then {second}")


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n  # binary search on slices: C-speed comparisons
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def cut_ranges(rendered: Any, text: str) -> list:
    """Ranges ``[lo, hi)`` of offsets in ``text`` (a rendering, or an edit of ``rendered``) where cutting
    ends the output inside some call's content: after the edit when the edit lies before that content's
    end, before the edit otherwise."""
    original = rendered.text
    spans = payload_spans(rendered)
    if text == original:
        return [(start + 1, start + end) for start, end in spans]
    prefix = _common_prefix(original, text)
    limit = min(len(original), len(text)) - prefix
    suffix = _common_prefix(original[::-1][:limit], text[::-1][:limit])
    delta = len(text) - len(original)
    after, before = [], []
    tail = len(original) - suffix  # where the common suffix starts in the rendering
    for start, end in spans:
        stop = start + end
        if stop >= tail:
            lo = max(len(text) - suffix, start + delta + 1 if start >= tail else 0)
            if lo < stop + delta:
                after.append((lo, stop + delta))
        if stop <= prefix:
            before.append((start + 1, stop))
    return after or before


@mutator("noise_then_truncation", anomaly_class="stacked_anomalies", formats=lambda f: _has("noise", f))
def noise_then_truncation(source: Any, ctx: MutationContext) -> Mutation:
    """Envelope noise, sometimes a syntax error, then the output cut inside a call.

    A fence without its language, a trailing comma, then the length limit. Truth: none."""
    noisy, made, first = _noisy(source, ctx)
    steps = [first]
    if source.boolean(0.5) and components("edit", ctx.format, ctx.tool):
        mutation, second = _then(source, noisy, "edit")
        text, rendered = mutation.text, made[-1]
        steps.append(second)
    else:
        rendered = noisy.render(ctx.calls)
        text = rendered.text
    ranges = [(lo, hi) for lo, hi in cut_ranges(rendered, text) if lo < hi]
    if not ranges:
        raise NotApplicable("nothing to cut inside a call")
    lo, hi = ranges[source.integer(0, len(ranges) - 1)]
    cut = source.integer(lo, hi - 1)
    return Mutation(text[:cut], None, ", then ".join(steps) + f", then cut after {cut} of {len(text)} characters")
