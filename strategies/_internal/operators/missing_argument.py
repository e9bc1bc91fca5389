"""Operators of the ``missing_argument`` class (semantic: the truth is the calls as written). A required argument is absent.
"""

from __future__ import annotations

from typing import Any

from strategies._internal.mutator import Mutation, MutationContext, NotApplicable, mutator
from strategies._internal.schemainfo import format_path, get_at, locate, schema_info
from strategies.json_values import copy_json
from strategies._internal.operators.calls import _emit, _tool_call_indices


@mutator("drop_required_argument", anomaly_class="missing_argument",
         applies=lambda tool: any(o.required for o in schema_info(tool).objects))
def drop_required_argument(source: Any, ctx: MutationContext) -> Mutation:
    """One required argument left out (at any depth)."""
    info = schema_info(ctx.tool)
    sites = []
    for ci in _tool_call_indices(ctx):
        arguments = ctx.calls[ci]["arguments"]
        for f in info.fields:
            if f.required:
                sites += [(ci, c) for c in locate(arguments, f.path)]
    if not sites:
        raise NotApplicable("no required argument present")
    ci, concrete = source.choice(sites)
    new_calls = copy_json(ctx.calls)
    del get_at(new_calls[ci]["arguments"], concrete[:-1])[concrete[-1]]
    return _emit(ctx, new_calls, f"required argument {format_path(concrete)} dropped")


@mutator("drop_all_arguments", anomaly_class="missing_argument",
         applies=lambda tool: bool(schema_info(tool).required))
def drop_all_arguments(source: Any, ctx: MutationContext) -> Mutation:
    """The call with an empty arguments object, though some are required."""
    indices = [i for i in _tool_call_indices(ctx) if ctx.calls[i]["arguments"]]
    if not indices or not schema_info(ctx.tool).required:
        raise NotApplicable("no arguments to drop")
    ci = source.choice(indices)
    new_calls = copy_json(ctx.calls)
    new_calls[ci]["arguments"] = {}
    return _emit(ctx, new_calls, f"all {len(ctx.calls[ci]['arguments'])} arguments dropped")
