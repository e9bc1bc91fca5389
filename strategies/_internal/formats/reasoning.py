"""Reasoning as part of a valid output: how each family writes the thinking that precedes its calls.

A reasoning model's commonest answer is reasoning, then the call: ``<think>…</think>`` then
``<tool_call>`` (Qwen3, QwQ, DeepSeek-R1, GLM, Kimi), ``[THINK]…[/THINK]`` (Magistral), an
``analysis`` message before a ``commentary`` call (harmony). A parser that cannot read it fails on
the model's normal output, so reasoning belongs to valid samples, not only to anomalies.

Many chat templates put the opening tag in the generation prompt (``<｜Assistant｜><think>``,
Qwen3-Thinking's ``<think>\\n``): the output then starts *inside* the reasoning and only the closing
tag appears. :class:`ReasoningStyle` says whether a family does (``can_be_open``), and rendering
draws it.

What the reasoning says is drawn from :data:`REASONING` (sentences without markers, brackets or
envelope words, like chatter), so a call written inside reasoning — the model *thinking about* a
call, which is not a call — is only ever made on purpose, by an operator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from strategies._internal.formats.core import Piece

#: What a model thinks before calling a tool. The same restrictions as chatter: no ``{ } [ ] ( ) < >``,
#: backticks, ``=`` or envelope words.
REASONING = (
    "The user wants current information, so I should use a tool.",
    "I need to look this up before I can answer.",
    "A tool can answer this more reliably than I can from memory.",
    "Let me work out which tool fits and what it needs.",
    "I have all the details the tool needs, so I can make the call now.",
    "The request is clear. I will call the tool with the details given.",
)


@dataclass(frozen=True)
class ReasoningStyle:
    """The delimiters of a family's reasoning block and the whitespace its template writes around it.

    The block is ``open + after_open + TEXT + before_close + close + after_close``; when the
    generation prompt already holds ``open`` (``can_be_open``) the output may start at ``TEXT``.
    ``by_renderer``: the format's renderer writes the block itself (a chat template renders the
    reasoning of the message it is given), so :func:`~strategies._internal.formats.core.render`
    does not prepend one; the delimiters still tell operators how the block looks.
    """

    open: str
    close: str
    after_open: str = ""
    before_close: str = ""
    after_close: str = ""
    can_be_open: bool = False
    by_renderer: bool = False

    def pieces(self, source: Any, layout: Any) -> list:
        """The pieces of a reasoning block in this style (:func:`reasoning_pieces`): what rendering
        asks a format's style for, so the renderer needs no import of this module."""
        return reasoning_pieces(self, source, layout)


#: ``<think>`` as Qwen3's template writes it: ``<think>\\nTEXT\\n</think>\\n\\n``; its thinking models
#: (and DeepSeek-R1) put ``<think>\\n`` in the generation prompt.
THINK_NEWLINES = ReasoningStyle("<think>", "</think>", "\n", "\n", "\n\n", can_be_open=True)
#: ``<think>TEXT</think>`` with no whitespace (DeepSeek V3.1+/V3.2, whose thinking mode ends the
#: prompt with ``<think>``; Kimi K2 thinking).
THINK_TIGHT = ReasoningStyle("<think>", "</think>", can_be_open=True)
#: GLM-4.5: ``<think>TEXT</think>\\n`` then the content.
THINK_GLM = ReasoningStyle("<think>", "</think>", after_close="\n", can_be_open=True)
#: Magistral (Mistral's reasoning models): ``[THINK]TEXT[/THINK]``.
THINK_MISTRAL = ReasoningStyle("[THINK]", "[/THINK]")
#: harmony: an analysis-channel message before the calls.
HARMONY_ANALYSIS = ReasoningStyle("<|channel|>analysis<|message|>", "<|end|>", after_close="<|start|>assistant")

#: Every reasoning closer any family writes, for parsers and detection.
CLOSERS = ("</think>", "[/THINK]")
OPENERS = ("<think>", "[THINK]")


def reasoning_text(source: Any) -> str:
    """One to three sentences of reasoning (the simplest choice: one)."""
    count = 1 + source.weighted((6, 3, 1))
    return " ".join(source.choice(REASONING) for _ in range(count))


def reasoning_pieces(style: ReasoningStyle, source: Any, layout: Any) -> list:
    """The pieces of a reasoning block in ``style``: opened in the output, or (sometimes, when the
    family's generation prompt holds the opener) only closed."""
    left_open = style.can_be_open and source.boolean(0.3)
    text = reasoning_text(source)
    nl = layout.newline

    def lines(ws: str) -> str:
        return ws.replace("\n", nl) if nl != "\n" else ws

    pieces = [] if left_open else [Piece(style.open + lines(style.after_open), "envelope")]
    pieces.append(Piece(text, "reasoning"))
    pieces.append(Piece(lines(style.before_close) + style.close + lines(style.after_close), "envelope"))
    return pieces


__all__ = ["CLOSERS", "HARMONY_ANALYSIS", "OPENERS", "REASONING", "ReasoningStyle", "THINK_GLM", "THINK_MISTRAL",
           "THINK_NEWLINES", "THINK_TIGHT", "reasoning_pieces", "reasoning_text"]
