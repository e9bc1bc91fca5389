"""Operators of the ``unknown_function`` class (semantic: the truth is the calls as written). A function name not in the registry: hallucinated siblings, typos, case changes, namespaces.
"""

from __future__ import annotations

from typing import Any, Callable

from strategies._internal.mutator import Mutation, MutationContext, NotApplicable, mutator
from strategies.json_values import copy_json
from strategies._internal.operators.calls import _emit, _representable, _tool_call_indices
from strategies._internal.operators.words import case_changed_names, hallucinated_names, typo_names


_NAMESPACES = ("functions.", "tools.", "default_api.", "api.", "functions/", "mcp__tools__")


def _rename_call(source: Any, ctx: MutationContext, names: Callable[[str], list], kind: str) -> Mutation:
    indices = _tool_call_indices(ctx)
    if not indices:
        raise NotApplicable("no call of the tool")
    ci = source.choice(indices)
    old = ctx.calls[ci]["name"]
    options = [n for n in names(old) if n not in ctx.registry and _representable(ctx, n)]
    if not options:
        raise NotApplicable(f"no {kind} of {old!r} outside the registry")
    new = source.choice(options)
    new_calls = copy_json(ctx.calls)
    new_calls[ci]["name"] = new
    return _emit(ctx, new_calls, f"{kind}: name {old!r} -> {new!r}")


@mutator("hallucinated_function", anomaly_class="unknown_function")
def hallucinated_function(source: Any, ctx: MutationContext) -> Mutation:
    """A plausible sibling tool that does not exist (get_weather -> fetch_weather / get_forecast)."""
    return _rename_call(source, ctx, hallucinated_names, "hallucinated")


@mutator("function_name_typo", anomaly_class="unknown_function")
def function_name_typo(source: Any, ctx: MutationContext) -> Mutation:
    """The tool name with a one-keystroke typo: a letter dropped, swapped or doubled."""
    def names(name: str) -> list:
        words = typo_names(name)
        kind = source.integer(0, 2)  # drop / swap / double: keep the kind choice explicit
        buckets = [[n for n in words if len(n) < len(name)],
                   [n for n in words if len(n) == len(name)],
                   [n for n in words if len(n) > len(name)]]
        return buckets[kind] or words

    return _rename_call(source, ctx, names, "typo")


@mutator("function_name_case", anomaly_class="unknown_function")
def function_name_case(source: Any, ctx: MutationContext) -> Mutation:
    """The tool name in another case convention (GetWeather, getWeather, GET_WEATHER)."""
    return _rename_call(source, ctx, case_changed_names, "case changed")


@mutator("function_namespace_prefix", anomaly_class="unknown_function")
def function_namespace_prefix(source: Any, ctx: MutationContext) -> Mutation:
    """The tool name behind a namespace prefix (functions.get_weather, default_api.get_weather)."""
    return _rename_call(source, ctx, lambda name: [p + name for p in _NAMESPACES], "namespaced")
