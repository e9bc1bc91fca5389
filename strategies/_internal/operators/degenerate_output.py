"""Operators of the ``degenerate_output`` class: outputs that hold no call at all.

What models really emit when they do not call: nothing, blank text, prose, ``null`` / ``{}`` / a bare
string or number where the call object goes, the format's envelope with nothing in it (an OpenAI
message whose ``content`` is null or whose ``tool_calls`` is empty, ``[TOOL_CALLS][]``, an empty
``<tool_call>`` tag), or only reasoning — even reasoning that spells the call it considered.

Truth: no call (``[]``) for every operator here. A parser may return no call or reject; returning a
call is a corruption (it invented one, or read one out of the model's reasoning).
"""

from __future__ import annotations

import json
from typing import Any

from strategies._internal.formats import CHATTER_AFTER, CHATTER_BEFORE, Format, Style, render, sentences
from strategies._internal.mutator import Mutation, MutationContext, NotApplicable, mutator, tagged_reasoning
from strategies._internal.operators.envelope_error import think_block, with_reasoning

#: Blank outputs, the empty one first.
_BLANKS = ("", " ", "\n", "\n\n", "\t", "\r\n", "   \n  ")


@mutator("empty_output", anomaly_class="degenerate_output")
def empty_output(source: Any, ctx: MutationContext) -> Mutation:
    """Empty or blank text (a model that stopped at once). Truth: no call."""
    text = source.choice(_BLANKS)
    return Mutation(text, [], f"blank output {text!r}")


@mutator("prose_without_call", anomaly_class="degenerate_output")
def prose_without_call(source: Any, ctx: MutationContext) -> Mutation:
    """Prose and no call (a text-only message where prose is part of the format). Truth: no call."""
    if ctx.format_spec.prose_inside:
        text = render(ctx.format, [], source, chatter=True).text
    else:
        text = sentences(source, CHATTER_BEFORE)
        if source.boolean(0.5):
            text += " " + sentences(source, CHATTER_AFTER)
    return Mutation(text, [], "prose only")


def _has_empty_forms(fmt: Format) -> bool:
    return bool(fmt.empty_forms)


@mutator("empty_envelope", anomaly_class="degenerate_output", formats=_has_empty_forms)
def empty_envelope(source: Any, ctx: MutationContext) -> Mutation:
    """The format's envelope with no call in it (`{"tool_calls": []}`, `<tool_call></tool_call>`).

    Each format declares its own (``Format.empty_forms``): an OpenAI message whose content is null,
    `[TOOL_CALLS][]`... Truth: no call."""
    form = source.choice(ctx.format_spec.empty_forms)
    prose = "" if ctx.format_spec.prose_inside or not source.boolean(0.3) else sentences(source, CHATTER_BEFORE) + "\n"
    return Mutation(prose + form, [], f"empty envelope {form[:40]!r}")


def _call_documents(fmt: Format) -> bool:
    """JSON payload documents that hold calls (for bare-arguments formats ``{}`` would be valid)."""
    return fmt.json_payload and not fmt.bare_arguments


#: JSON values that are no call, written where the call object goes.
_NON_CALLS = ("null", "{}", "[{}]", '""', "0", "true", "[null]", '"{tool}"', '{"name": null}')


@mutator("json_non_call", anomaly_class="degenerate_output", formats=_call_documents)
def json_non_call(source: Any, ctx: MutationContext) -> Mutation:
    """`null`, `{}`, a bare string or number where the call object goes. Truth: no call."""
    value = source.choice(_NON_CALLS).replace("{tool}", ctx.tool.name)
    text = ctx.render(ctx.calls, style=Style(dump=lambda document: value)).text
    return Mutation(text, [], f"{value} where the call goes")


@mutator("reasoning_only", anomaly_class="degenerate_output")
def reasoning_only(source: Any, ctx: MutationContext) -> Mutation:
    """Only reasoning, which spells the call the model considered (`<think>I will call ...</think>`).

    Also an OpenAI `reasoning_content` or a harmony analysis message. Truth: no call — the call was
    never made. A family with reasoning tags of its own (`<think>` for Qwen3, GLM, Kimi, DeepSeek;
    `[THINK]` for Magistral) writes them: its models never write `<thinking>`, and its serving
    engines' reasoning parsers take such a block for content, so a call in it would be a call."""
    name = ctx.format
    if name == "harmony":
        arguments = json.dumps(ctx.calls[0]["arguments"], ensure_ascii=False)
        if "<|" in arguments:
            raise NotApplicable("the arguments hold a harmony token")
        text = (f"<|channel|>analysis<|message|>I will call {ctx.calls[0]['name']} with {arguments}."
                "<|end|>")
        return Mutation(text, [], "an analysis message that spells the call")
    considered = ctx.render(ctx.calls).text
    reasoning = "I will call the tool like this: " + considered
    if name in ("openai", "anthropic"):
        text = with_reasoning(ctx, source, reasoning, [])
    else:
        text = think_block(source, reasoning)  # drawn for every format, so old recipes replay the same choices
        if tagged_reasoning(ctx.format_spec):
            style = ctx.format_spec.reasoning
            text = style.open + style.after_open + reasoning + style.before_close + style.close
        if source.boolean(0.3):
            text += "\n\n" + sentences(source, CHATTER_AFTER)
    return Mutation(text, [], "reasoning that spells the call, and no call")


@mutator("unterminated_reasoning", anomaly_class="degenerate_output", formats=tagged_reasoning)
def unterminated_reasoning(source: Any, ctx: MutationContext) -> Mutation:
    """A reasoning block that is never closed, with the call after it inside the reasoning.

    Truth: no call — everything after an unclosed `<think>` is reasoning (the model stopped
    thinking mid-way, or the closing token was cut)."""
    from strategies._internal.formats.reasoning import reasoning_text

    style = ctx.format_spec.reasoning
    # rendered without the sample's own reasoning block: its closer would close this one
    calls = render(ctx.format, ctx.calls, source, chatter=ctx.chatter).text
    text = style.open + style.after_open + reasoning_text(source) + style.before_close + calls
    return Mutation(text, [], "reasoning never closed before the call")
