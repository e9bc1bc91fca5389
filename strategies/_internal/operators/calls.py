"""What the call-level (semantic) operators share: choosing a call and an argument site, checking
the new value really breaks the rule, and rendering the calls as written.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Iterable, Optional

from strategies._internal.formats import Unrepresentable
from strategies._internal.mutator import Mutation, MutationContext, NotApplicable, mutator
from strategies._internal.schemainfo import (
    FieldInfo, format_path, get_at, json_equal, locate, schema_info, set_at, typed_by_schema,
)
from strategies.json_values import copy_json


def _short(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tool_call_indices(ctx: MutationContext) -> list:
    """Indices of the calls of the sample's own tool (the ones whose schema we know applies)."""
    return [i for i, c in enumerate(ctx.calls) if c.get("name") == ctx.tool.name
            and isinstance(c.get("arguments"), dict)]


def _emit(ctx: MutationContext, new_calls: list, description: str) -> Mutation:
    try:
        rendered = ctx.render(new_calls)
    except Unrepresentable as exc:  # e.g. a pythonic name that is not a Python name
        raise NotApplicable(str(exc)) from None
    return Mutation(text=rendered.text, calls=new_calls, description=description)


def _representable(ctx: MutationContext, name: str) -> bool:
    """Whether the format can write a call named ``name`` (its declared name support)."""
    return ctx.format_spec.supports_name(name)


def reads_as_string(ctx: MutationContext, path: tuple, value: Any) -> bool:
    """Whether ``value``, written as argument ``path`` of this sample's tool, is text whose JSON type
    only the schema tells: a format that writes strings raw and other values as JSON (GLM,
    Qwen3-Coder XML) writes ``["a"]`` alike for the array and the string, and the serving engines'
    parsers read it by the property's ``type``
    (:func:`~strategies._internal.schemainfo.typed_by_schema`). Such a value's truth is not in
    the text; an operator leaves it out rather than judge a correct parser by one reading. Only a
    top-level argument is written raw: a nested one is inside a JSON value and keeps its type."""
    return ctx.format_spec.schema_typed and len(path) == 1 and not typed_by_schema(ctx.tool.schema, path[0], value)


Candidates = Callable[[FieldInfo, Any, MutationContext], list]


def _pick_site(source: Any, ctx: MutationContext, fields: list,
               options_at: Callable[[FieldInfo, Any, tuple], list], empty: str) -> tuple:
    """Choose an argument site of ``fields`` in the sample's own calls, then one of its options.

    ``options_at(field, arguments, concrete_path)`` lists a site's options; sites without options are
    skipped, so a choice never lands on a dead end (``NotApplicable(empty)`` when no site has one).
    Returns ``(call_index, concrete_path, option)``.
    """
    sites = []
    for ci in _tool_call_indices(ctx):
        arguments = ctx.calls[ci]["arguments"]
        for f in fields:
            for concrete in locate(arguments, f.path):
                options = options_at(f, arguments, concrete)
                if options:
                    sites.append((ci, concrete, options))
    if not sites:
        raise NotApplicable(empty)
    ci, concrete, options = source.choice(sites)
    return ci, concrete, source.choice(options)


def _value_mutation(source: Any, ctx: MutationContext, wanted: Callable[[FieldInfo], bool],
                    candidates: Candidates, label: str) -> Mutation:
    """Replace one argument value (at any depth) by one of its candidates.

    ``wanted`` filters fields statically; ``candidates(field, value, ctx)`` returns ``(new_value,
    note)`` pairs, already checked to produce the violation (see :func:`_pick_site`).
    """
    fields = [f for f in schema_info(ctx.tool).fields if wanted(f)]
    ci, concrete, (new_value, note) = _pick_site(
        source, ctx, fields, lambda f, arguments, concrete: candidates(f, get_at(arguments, concrete), ctx),
        f"{label}: no argument to mutate")
    new_calls = copy_json(ctx.calls)
    old = get_at(new_calls[ci]["arguments"], concrete)
    set_at(new_calls[ci]["arguments"], concrete, new_value)
    detail = f" ({note})" if note else ""
    return _emit(ctx, new_calls, f"{format_path(concrete)}: {_short(old)} -> {_short(new_value)}{detail}")


def _has_field(predicate: Callable[[FieldInfo], bool]) -> Callable[[Any], bool]:
    return lambda tool: any(predicate(f) for f in schema_info(tool).fields)


def _value_operator(name: str, *, anomaly_class: str, wanted: Callable[[FieldInfo], bool],
                    applies: Optional[Callable[[FieldInfo], bool]] = None) -> Callable:
    """Register operator ``name``: :func:`_value_mutation` over the fields ``wanted`` selects, with the
    decorated ``candidates(field, value, ctx)`` (whose docstring is the operator's description).

    The operator applies to a tool with a field that ``applies`` accepts (by default ``wanted``).
    Returns the candidates function, as :func:`~strategies._internal.mutator.restyler` returns its.
    """
    def register(candidates: Candidates) -> Candidates:
        def operator(source: Any, ctx: MutationContext) -> Mutation:
            return _value_mutation(source, ctx, wanted, candidates, name)

        operator.__doc__, operator.__name__ = candidates.__doc__, candidates.__name__
        operator.__module__, operator.__qualname__ = candidates.__module__, candidates.__qualname__
        mutator(name, anomaly_class=anomaly_class, applies=_has_field(applies or wanted))(operator)
        return candidates

    return register


def _unique(values: Iterable[Any]) -> list:
    out: list = []
    for v in values:
        if not any(json_equal(v, o) and type(v) is type(o) for o in out):
            out.append(v)
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
