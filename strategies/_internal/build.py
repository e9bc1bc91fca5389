"""Building samples: generate valid calls, render them in a format, apply an operator.

:func:`build_sample` is the one place where the pieces meet. It is a pure function of its arguments
and the choices drawn from ``source``; with a recording source the returned sample carries the
:class:`Recipe` that regenerates it, and replaying a (shrunk) recipe recomputes the ground truth.
"""

from __future__ import annotations

from typing import Any, Optional

from strategies._internal.formats import FORMATS, LAYOUTS, Unrepresentable, render
from strategies._internal.mutations import MutationContext, NotApplicable, get_operator
from strategies._internal.sample import Recipe, Sample
from strategies._internal.schema import compile_tool
from strategies._internal.schema.compiler import generatable
from strategies._internal.source import RandomSource, ReplaySource, Source
from strategies.json_values import copy_json, json_equal

#: How often a sample holds several calls / prose around the envelope when not forced.
MULTI_PROBABILITY = 0.15
CHATTER_PROBABILITY = 0.3
#: Attempts at drawing a call the operator can mutate before giving up on this sample.
MAX_ATTEMPTS = 6


class Unbuildable(Exception):
    """The operator found nothing to mutate in any of the drawn calls."""


def draw_calls(source: Source, registry: Any, tool: Any, *, multi: Optional[bool]) -> list:
    """One call of ``tool``, or (multi) two or three distinct calls, the first always of ``tool``.

    A further call that repeats an earlier one (identical calls are a duplicate_call anomaly) is drawn
    again once from another tool, so even the simplest choices give several calls when asked for.
    """
    if multi is None:
        multi = source.boolean(MULTI_PROBABILITY)
    calls = [{"name": tool.name, "arguments": compile_tool(tool).generate(source)}]
    if multi:
        others = [t for t in registry if t.name != tool.name and generatable(t)]
        for _ in range(source.integer(1, 2)):
            other = tool if not others or not source.boolean(0.5) else source.choice(others)
            call = {"name": other.name, "arguments": compile_tool(other).generate(source)}
            if any(json_equal(call, c) for c in calls) and others:
                other = source.choice(others)
                call = {"name": other.name, "arguments": compile_tool(other).generate(source)}
            if not any(json_equal(call, c) for c in calls):
                calls.append(call)
    return calls


def _schema_of(registry: Any, name: str) -> Any:
    """The arguments schema of tool ``name`` (None for a name the registry has not: a hallucinated
    one, looked up without the close-match hint an unknown name's error computes)."""
    return registry[name].schema if name in registry else None


def _typed_by_schema_alone(format: str, registry: Any, calls: Optional[list]) -> bool:
    """Whether ``calls`` hold a top-level value whose JSON type, in a format that writes strings
    raw and other values as JSON (GLM, Qwen3-Coder XML), only the schema tells: ``["a"]`` for an
    argument that allows a string, a number for an undeclared one or for a tool the registry does
    not have. The serving engines' parsers read such text by the schema
    (:func:`~strategies._internal.schemainfo.typed_by_schema`), so a truth that says otherwise
    would judge a correct parser by one reading of an ambiguous text: the sample is drawn again
    (an optional such argument is left out first: :func:`_schema_typed_calls`).
    Checked on the drawn calls and on an operator's truth (the operators leave most such values
    out already: ``operators.calls.reads_as_string``; a type-changing one is caught here)."""
    if not FORMATS[format].schema_typed:
        return False
    from strategies._internal.schemainfo import typed_by_schema

    for call in calls or ():
        arguments = call.get("arguments")
        if isinstance(arguments, dict):
            schema = _schema_of(registry, call["name"])
            if not all(typed_by_schema(schema, key, value) for key, value in arguments.items()):
                return True
    return False


def _schema_typed_calls(format: str, registry: Any, calls: list) -> list:
    """``calls`` as a format typed by the schema alone writes them unambiguously: an optional
    top-level argument whose value's type only the schema tells (an integer where the schema
    allows an integer or a string: vLLM's parsers return ``"5"``) is left out, so the call stays
    valid and its truth is in the text. A required one stays, and so does one the schema needs in
    another way (a ``oneOf`` branch's own ``required``): the calls are then drawn again
    (:func:`_typed_by_schema_alone`). Other formats' calls are returned as they are. It draws
    nothing, so a recipe replays the same."""
    if not FORMATS[format].schema_typed:
        return calls
    from strategies._internal.schema import tool_validator
    from strategies._internal.schemainfo import typed_by_schema

    out = []
    for call in calls:
        schema, arguments = _schema_of(registry, call["name"]), call.get("arguments")
        if isinstance(schema, dict) and isinstance(arguments, dict):
            required = set(schema.get("required") or ())
            kept = {k: v for k, v in arguments.items() if k in required or typed_by_schema(schema, k, v)}
            if len(kept) != len(arguments) and tool_validator(registry[call["name"]]).is_valid(kept):
                call = {**call, "arguments": kept}  # (a oneOf or dependency may need the one left out)
        out.append(call)
    return out


def build_sample(source: Source, *, registry: Any, tool: Any, format: str, operator: Optional[str] = None,
                 chatter: Optional[bool] = None, multi: Optional[bool] = None,
                 layout: Optional[str] = None, reasoning: Optional[bool] = None, calls: Optional[list] = None,
                 keep_rendered: bool = False, drawn: Optional[list] = None) -> Sample:
    """Generate one sample of ``tool`` in ``format``; valid when ``operator`` is None.

    ``chatter``/``multi`` force a variation (prose around the envelope, several calls) or, when None,
    are drawn; ``layout`` (a name in ``LAYOUTS``, see ``layouts_for(format)``) forces the layout of
    the rendering, e.g. to probe whether a target reads a format in every layout; ``reasoning``
    starts the output with the family's reasoning block (never drawn: None is no reasoning). Raises
    :class:`Unbuildable` when the operator cannot apply to the drawn calls.

    ``calls``: these calls instead of the drawn ones (valid calls of the registry's tools). The
    choices that would have drawn calls are drawn all the same and thrown away, so the rest of a
    recipe (layout, prose, the operator's choices) replays as it did: shrinking edits a sample's
    values this way and re-renders it (:mod:`fuzzer.harnesses.parser.shrink_values`). The recipe records them.
    ``keep_rendered``: the sample carries its valid rendering (``Sample.rendered``, with its layout).
    ``drawn``: a list that receives the valid calls the sample was made from (its truth, for a
    valid sample; what the operator mutated, for an anomaly).
    """
    FORMATS[format]  # UnknownName with close matches
    if layout is not None:
        LAYOUTS[layout]
    op = get_operator(operator) if operator is not None else None
    start = len(getattr(source, "choices", ()))
    use_chatter = source.boolean(CHATTER_PROBABILITY) if chatter is None else chatter
    made: list = []

    def render_in_format(calls: list, style: Any = None) -> Any:
        rendered = render(format, calls, source, chatter=use_chatter, style=style, layout=layout,
                          reasoning=bool(reasoning))
        made.append(rendered)
        return rendered

    forced = calls
    for _ in range(MAX_ATTEMPTS):
        calls = draw_calls(source, registry, tool, multi=multi)
        if forced is not None:
            calls = copy_json(forced)
        calls = _schema_typed_calls(format, registry, calls)
        if _typed_by_schema_alone(format, registry, calls):
            continue
        if op is None:
            try:
                text, truth, description = render_in_format(calls).text, calls, ""
            except Unrepresentable:  # e.g. a tool name pythonic cannot write
                continue
            anomaly_class = None
        else:
            ctx = MutationContext(registry=registry, tool=tool, format=format, calls=calls,
                                  chatter=use_chatter, render=render_in_format, reasoning=bool(reasoning))
            try:
                mutation = op(source, ctx)
            except (NotApplicable, Unrepresentable):
                continue
            if _typed_by_schema_alone(format, registry, mutation.calls):
                continue
            text, truth, description = mutation.text, mutation.calls, mutation.description
            anomaly_class = op.anomaly_class
        if drawn is not None:
            drawn.append(calls)
        recipe = None
        if isinstance(source, (RandomSource, ReplaySource)):
            recipe = Recipe(tool=tool.name, format=format, operator=operator,
                            choices=tuple(source.choices[start:]), chatter=chatter, multi=multi, layout=layout,
                            reasoning=reasoning, calls=forced)
        valid = op is None and made
        return Sample(text=text, format=format, anomaly_class=anomaly_class, operator=operator,
                      calls=truth, tool=tool.name, recipe=recipe, description=description,
                      layout=made[-1].layout.label() if valid else "",
                      content=made[-1].content if valid else None, reasoning=made[-1].reasoning if valid else None,
                      rendered=made[-1] if keep_rendered and made else None)
    if op is None:
        raise Unbuildable(f"format {format!r} cannot write calls of {tool.name!r}")
    raise Unbuildable(f"operator {operator!r} found nothing to mutate in {tool.name!r} calls")


def build_family(source: RandomSource, *, registry: Any, tool: Any, format: str, operators: list,
                 chatter: Optional[bool] = None, multi: Optional[bool] = None,
                 reasoning: Optional[bool] = None) -> list:
    """Several samples of the same drawn calls: one per entry of ``operators`` (None = valid).

    Each sample is exactly what :func:`build_sample` would build from its recipe — the recipe is the
    shared prefix (chatter, calls) followed by that sample's own choices — but the calls are drawn
    once and the unmodified calls are rendered once: a rendering requested again replays the
    choices it consumed the first time instead of drawing new ones. That is what makes the
    campaign's cheap operators cheap. Operators that find nothing to mutate in these calls are
    skipped (returned as None in their slot).
    """
    FORMATS[format]  # UnknownName with close matches
    start = len(source.choices)
    use_chatter = source.boolean(CHATTER_PROBABILITY) if chatter is None else chatter
    calls = _schema_typed_calls(format, registry, draw_calls(source, registry, tool, multi=multi))
    if _typed_by_schema_alone(format, registry, calls):
        source.choices = []
        return [None] * len(operators)  # as build_sample, which would draw these calls again
    prefix = source.choices[start:]
    cached: list = []

    def render_in_format(these: list, style: Any = None) -> Any:
        if these is calls and style is None:
            if cached:
                rendered, consumed = cached[0]
                source.choices.extend(consumed)
                return rendered
            before = len(source.choices)
            rendered = render(format, calls, source, chatter=use_chatter, reasoning=bool(reasoning))
            cached.append((rendered, source.choices[before:]))
            return rendered
        return render(format, these, source, chatter=use_chatter, style=style, reasoning=bool(reasoning))

    samples: list = []
    ctx = MutationContext(registry=registry, tool=tool, format=format, calls=calls, chatter=use_chatter,
                          render=render_in_format, reasoning=bool(reasoning))
    for operator in operators:
        source.choices = list(prefix)
        op = get_operator(operator) if operator is not None else None
        try:
            rendered = None
            if op is None:
                rendered = render_in_format(calls)
                text, truth, description, anomaly_class = rendered.text, calls, "", None
            else:
                mutation = op(source, ctx)
                if _typed_by_schema_alone(format, registry, mutation.calls):
                    raise NotApplicable("a value whose type only the schema tells")
                text, truth, description = mutation.text, mutation.calls, mutation.description
                anomaly_class = op.anomaly_class
        except (NotApplicable, Unrepresentable):
            samples.append(None)
            continue
        recipe = Recipe(tool=tool.name, format=format, operator=operator, choices=tuple(source.choices),
                        chatter=chatter, multi=multi, reasoning=reasoning)
        samples.append(Sample(text=text, format=format, anomaly_class=anomaly_class, operator=operator,
                              calls=truth, tool=tool.name, recipe=recipe, description=description,
                              rendered=rendered, layout=rendered.layout.label() if rendered is not None else "",
                              content=rendered.content if rendered is not None else None,
                              reasoning=rendered.reasoning if rendered is not None else None))
    source.choices = []
    return samples


def replay_recipe(recipe: Recipe, registry: Any, *, keep_rendered: bool = False, calls: Optional[list] = None,
                  drawn: Optional[list] = None) -> Sample:
    """Regenerate the sample a recipe describes (shrinking replays edited recipes through this);
    ``calls``: with these calls instead of the recipe's (see :func:`build_sample`)."""
    return build_sample(ReplaySource(recipe.choices), registry=registry, tool=registry[recipe.tool],
                        format=recipe.format, operator=recipe.operator, chatter=recipe.chatter,
                        multi=recipe.multi, layout=recipe.layout, reasoning=recipe.reasoning,
                        calls=calls if calls is not None else recipe.calls, keep_rendered=keep_rendered, drawn=drawn)
