"""Operators of the ``duplicate_call`` class (semantic: the truth is the calls as written). The same call emitted more than once.
"""

from __future__ import annotations

from typing import Any

from strategies._internal.mutator import Mutation, MutationContext, NotApplicable, mutator
from strategies._internal.schemainfo import json_equal, schema_info
from strategies.json_values import copy_json
from strategies._internal.operators.calls import _emit


@mutator("duplicate_call_adjacent", anomaly_class="duplicate_call")
def duplicate_call_adjacent(source: Any, ctx: MutationContext) -> Mutation:
    """The same call emitted two or three times in a row."""
    if not ctx.calls:
        raise NotApplicable("no call")
    ci = source.integer(0, len(ctx.calls) - 1)
    copies = source.integer(1, 2)
    new_calls = copy_json(ctx.calls)
    for _ in range(copies):
        new_calls.insert(ci + 1, copy_json(ctx.calls[ci]))
    return _emit(ctx, new_calls, f"call {ci} ({ctx.calls[ci]['name']}) emitted {copies + 1} times")


@mutator("duplicate_call_separated", anomaly_class="duplicate_call")
def duplicate_call_separated(source: Any, ctx: MutationContext) -> Mutation:
    """The same call emitted again after another call (a model that forgets it already asked)."""
    if not ctx.calls:
        raise NotApplicable("no call")
    new_calls = copy_json(ctx.calls)
    if len(new_calls) == 1:
        # draw one more valid call to stand between the two copies
        from strategies._internal.schema import compile_tool
        from strategies.errors import ToolfuzzError

        try:  # the sample's own tool: its schema is known to compile
            between = {"name": ctx.tool.name, "arguments": compile_tool(ctx.tool).generate(source)}
        except ToolfuzzError as exc:
            raise NotApplicable(f"cannot draw a call to separate the copies: {exc}") from None
        if json_equal(between, new_calls[0]):
            raise NotApplicable("the call drawn to separate the copies is the same call")
        new_calls.append(between)
    ci = source.integer(0, len(ctx.calls) - 1)
    # a position not adjacent to the original: after the call that follows it, or before the one before it
    positions = [p for p in range(len(new_calls) + 1) if p < ci or p > ci + 1]
    position = source.choice(sorted(positions, key=lambda p: (p < ci, p)))  # after the original first
    new_calls.insert(position, copy_json(ctx.calls[ci]))
    return _emit(ctx, new_calls, f"call {ci} ({ctx.calls[ci]['name']}) repeated at position {position}")


@mutator("duplicate_call_reordered", anomaly_class="duplicate_call",
         applies=lambda tool: len(schema_info(tool).properties) >= 2)
def duplicate_call_reordered(source: Any, ctx: MutationContext) -> Mutation:
    """The same call repeated with its arguments in another order (equal as JSON, different as text)."""
    indices = [i for i, c in enumerate(ctx.calls) if isinstance(c.get("arguments"), dict)
               and len(c["arguments"]) >= 2]
    if not indices:
        raise NotApplicable("no call with two arguments to reorder")
    ci = source.choice(indices)
    original = ctx.calls[ci]
    keys = list(original["arguments"])
    shift = source.integer(0, len(keys) - 1)
    order = keys[::-1] if shift == 0 else keys[shift:] + keys[:shift]
    again = {"name": original["name"],
             "arguments": {k: copy_json(original["arguments"][k]) for k in order}}
    new_calls = copy_json(ctx.calls)
    new_calls.insert(ci + 1, again)
    return _emit(ctx, new_calls, f"call {ci} ({original['name']}) repeated with arguments reordered")
