"""Operators of the ``oversized_input`` class. Huge inputs: megabyte strings, deep nesting, numbers beyond double range, long runs of structural
fragments before the real call.

Truth rules are stated per operator (see :mod:`strategies._internal.operators`).
"""

from __future__ import annotations

from typing import Any

from strategies._internal.formats import FORMATS
from strategies._internal.mutator import Mutation, MutationContext, escaped_strings, json_payload, mutator
from strategies._internal.operators.textual import (
    _any, _faithful, _inject_in_string, _may_have_arguments, _may_have_strings, _path, _replace_value,
)


_FILLERS = ("a", "lorem ipsum ", "0123456789", "\u00e9", "ab ")


@mutator("huge_string", anomaly_class="oversized_input", formats=escaped_strings, applies=_may_have_strings,
         truth="as_written")
def huge_string(source: Any, ctx: MutationContext) -> Mutation:
    """A string value of 64 KB to 1 MB (the value holds it)."""
    size = source.integer(64_000, 1_000_000)
    unit = source.choice(_FILLERS)
    filler = unit * (size // len(unit))
    text, truth, path = _inject_in_string(source, ctx, filler, filler)
    return Mutation(text, truth, f"{len(filler)} chars of {unit!r} in {_path(path)}")


_NESTINGS = (("[", "]", ""), ("{\"a\": ", "}", "1"), ("[", "", ""))


@mutator("deep_nesting", anomaly_class="oversized_input", formats=json_payload, applies=_may_have_arguments,
         truth="none")
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
         applies=_may_have_arguments, truth="none")
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
