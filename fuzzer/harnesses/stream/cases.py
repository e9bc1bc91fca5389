"""What the stream harness generates: model outputs with their truth, content and markers, and
the splits each is streamed under (for accumulators: chunk plans).

Why apart from the job: this is the harness's "what it generates" (the Harness protocol's first
piece); the generic engine will call it as the job does now. Outputs come from the strategies
(:func:`strategies._internal.build.build_sample`) in any registered format, so a new format family
streams as soon as it is registered; its markers come from its declared envelope.

Which outputs are judged against what:

* valid outputs and semantic anomalies: the calls as written, and the content (the prose pieces
  of a valid rendering, or the whole text of a prose-only output);
* truncated outputs: the calls complete before the cut (found by rendering the same choices
  uncut), and no complete-looking call after them;
* degenerate outputs: no call;
* every other anomaly (malformed JSON, envelope errors, ...): no truth, judged for robustness and
  split invariance only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from fuzzer.harnesses.stream.checks import StreamCase
from fuzzer.harnesses.stream.splits import draw_split, marker_heads, markers_of, standard_splits

#: Operators drawn for parsers, with their weights (None: a valid output).
PARSER_MIX = ((None, 40), ("truncated_output", 14), ("invalid_argument_type", 6), ("injection_payload", 8),
              ("constraint_violation", 3), ("duplicate_call", 4), ("missing_argument", 2),
              ("unknown_function", 2), ("degenerate_output", 4), ("malformed_json", 6), ("envelope_error", 6),
              ("encoding_error", 3))
#: Classes whose truth is judged (the others: robustness and split invariance).
JUDGED = {None, "truncated_output", "invalid_argument_type", "injection_payload", "constraint_violation",
          "duplicate_call", "missing_argument", "unknown_function", "unexpected_argument", "degenerate_output"}
#: Outputs longer than this are not streamed (oversized outputs cost a parser's time, which the
#: cost probe measures on purpose; here they would only slow the search).
MAX_OUTPUT = 3000
#: Drawn splits per output, besides the whole output and one character per delta.
DRAWN_SPLITS = 6
#: Outputs longer than this are not also streamed one character per delta (a parser that is
#: quadratic would spend the budget on a few of them; the cost probe measures that instead).
CHAR_SPLIT_MAX = 600


def _operators_by_class() -> dict:
    from strategies._internal.mutations import OPERATORS

    out: dict = {}
    for name, op in OPERATORS.items():
        out.setdefault(op.anomaly_class, []).append(name)
    return out


def draw_operator(source: Any, tool: Any, fmt: str) -> Optional[str]:
    """An operator name (None: valid) from :data:`PARSER_MIX`, one that applies to ``tool`` in ``fmt``."""
    from strategies._internal.mutations import OPERATORS

    classes = [c for c, _w in PARSER_MIX]
    cls = classes[source.weighted([w for _c, w in PARSER_MIX])]
    if cls is None:
        return None
    names = [n for n in _operators_by_class().get(cls, ()) if OPERATORS[n].applies(tool, fmt)]
    return names[source.integer(0, len(names) - 1)] if names else None


def case_of(sample: Any, registry: Any) -> StreamCase:
    """The stream case (without cuts) of one generated sample."""
    cls = sample.anomaly_class
    markers = markers_of(sample.format)
    base = StreamCase(text=sample.text, format=sample.format, markers=markers, anomaly_class=cls,
                      operator=sample.operator, tool=sample.tool, truth_known=cls in JUDGED and sample.truth_known,
                      recipe=sample.recipe.to_json() if sample.recipe is not None else None)
    if not base.truth_known:
        return base
    content = None
    if cls is None:
        # the prose exactly as streamed (the sample's own ``content`` is stripped and joined by spaces)
        rendered = sample.rendered or _uncut(sample, registry)
        content = "".join(p.text for p in rendered.pieces if p.role == "chatter") if rendered is not None else None
    if content is None and sample.calls == [] and sample.operator == "prose_without_call":
        content = sample.text
    truth = sample.calls
    if cls == "truncated_output":
        rendered = _uncut(sample, registry)
        if rendered is None or not rendered.text.startswith(sample.text):
            return replace(base, truth_known=False)
        truth = complete_before(rendered, len(sample.text))
    if truth is None and cls != "truncated_output":
        return replace(base, truth_known=False)
    return replace(base, truth=truth, content=content)


def _uncut(sample: Any, registry: Any) -> Any:
    """The valid rendering the same choices give (what a truncation operator cut): the calls and
    the rendering are the first things a sample's choices decide."""
    from strategies._internal.build import CHATTER_PROBABILITY, draw_calls
    from strategies._internal.formats import render
    from strategies._internal.source import ReplaySource

    recipe = sample.recipe
    if recipe is None:
        return None
    source = ReplaySource(recipe.choices)
    try:
        chatter = source.boolean(CHATTER_PROBABILITY) if recipe.chatter is None else recipe.chatter
        calls = draw_calls(source, registry, registry[recipe.tool], multi=recipe.multi)
        return render(recipe.format, calls, source, chatter=chatter, layout=recipe.layout)
    except Exception:  # noqa: BLE001 - not a rendering this can redo: the output is judged without truth
        return None


def complete_before(rendered: Any, cut: int) -> list:
    """The calls of ``rendered`` whose payload ends at or before offset ``cut``."""
    at, done = 0, []
    for piece in rendered.pieces:
        at += len(piece.text)
        if piece.role == "payload" and piece.call_index is not None and at <= cut:
            done.append(piece.call_index)
    return [rendered.calls[i] for i in sorted(set(done)) if i < len(rendered.calls)]


def draw_output(source: Any, registry: Any, tools: list, formats: list) -> Optional[Any]:
    """One sample of a drawn tool, format and operator; None when the operator found nothing to
    mutate."""
    from strategies._internal.build import Unbuildable, build_sample

    tool = registry[tools[source.integer(0, len(tools) - 1)]]
    fmt = formats[source.integer(0, len(formats) - 1)]
    operator = draw_operator(source, tool, fmt)
    try:
        sample = build_sample(source, registry=registry, tool=tool, format=fmt, operator=operator,
                              keep_rendered=operator is None)
    except Unbuildable:
        return None
    return sample if len(sample.text) <= MAX_OUTPUT else None


def splits_for(source: Any, text: str, markers: tuple, interesting: list, count: int = DRAWN_SPLITS) -> list:
    """(family, cuts) of every split one output is run under: whole, one character per delta and
    the first marker cut after its first character (``<`` then ``think>...``: where a parser that
    sends what cannot be a marker yet loses one), then ``count`` drawn ones (the same split drawn
    twice is run once)."""
    out = list(standard_splits(text)) if len(text) <= CHAR_SPLIT_MAX else [("whole", ())]
    heads = marker_heads(text, markers)
    if heads:
        out.append(("marker_heads", heads))
    seen = {cuts for _f, cuts in out}
    for _ in range(count):
        family, cuts = draw_split(source, text, markers, interesting=interesting)
        if cuts not in seen:
            seen.add(cuts)
            out.append((family, cuts))
    return out


def consumer_output(source: Any, registry: Any, tools: list) -> StreamCase:
    """A chunk plan (:mod:`.chunks`) as a case without cuts: calls drawn from the tools' schemas,
    prose before them half the time, and an anomaly a third of the time."""
    from fuzzer.harnesses.stream.chunks import ANOMALIES, CUT, expected_calls, plan_text
    from strategies._internal.build import draw_calls
    from strategies._internal.formats.core import CHATTER_BEFORE

    tool = registry[tools[source.integer(0, len(tools) - 1)]]
    content = source.choice(("",) + CHATTER_BEFORE) if source.boolean(0.5) else ""
    calls = draw_calls(source, registry, tool, multi=source.boolean(0.4))
    anomaly = source.choice(ANOMALIES) if source.boolean(0.35) else None
    truth = expected_calls(calls, anomaly)
    return StreamCase(text=plan_text(calls, content, anomaly), format="chunks", truth=truth,
                      anomaly_class="truncated_output" if anomaly in CUT else None, operator=anomaly,
                      tool=tool.name)


def consumer_splits(source: Any, case: StreamCase, shape: str, count: int = 3) -> list:
    """Where a chunk stream's arguments (``openai``, ``anthropic``) or bytes (``sse``) are cut:
    one piece each, one character (byte) each, and ``count`` random groupings."""
    from fuzzer.harnesses.stream.splits import groupings

    size = len(case.text) * 3 + 600 if shape == "sse" else max(2, len(case.text))
    most = 16 if shape == "sse" else 6
    out = [("whole", ()), ("char", tuple(range(1, size)))]
    for _ in range(count):
        out.append(("random", tuple(groupings(source, size, 1, most))))
    return out


__all__ = ["DRAWN_SPLITS", "JUDGED", "PARSER_MIX", "case_of", "complete_before", "consumer_output", "consumer_splits", "draw_operator", "draw_output",
           "splits_for"]
