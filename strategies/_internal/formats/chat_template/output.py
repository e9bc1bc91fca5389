"""A chat template as a writer of samples, and reading each sample back into pieces.

**What a sample is.** The template renders a conversation; the model generated what follows the
generation prompt. So a sample is the rendering of ``[user, assistant-with-calls]`` minus the
rendering of ``[user]`` with ``add_generation_prompt=True`` (the first must start with the second:
a template that rewrites earlier turns once an assistant message follows is refused,
:class:`PromptMismatch`), minus the end-of-turn text the template writes after an assistant message.
The assistant message is OpenAI-shaped: ``content`` (the prose beside the calls, or ``""``),
``tool_calls`` of ``{"id", "type": "function", "function": {"name", "arguments"}}`` and, for the
reasoning variant, ``reasoning_content``. ``arguments`` is a mapping, or a JSON string for templates
that write it as they get it. Samples without reasoning are rendered with ``enable_thinking=False``,
the reasoning variant with ``enable_thinking=True`` (the ``chat_template_kwargs`` convention of
Qwen3 and others; templates that do not read it ignore it).

**Reading it back.** Each call's arguments are found in the text as the JSON document they denote
(decoded, it equals the arguments): a JSON payload piece, so the JSON operators and truncation work
on it, and an operator's ``Style.dump`` (arguments double-encoded, say) is spliced in its place. A
template that writes arguments in its own syntax has no payload piece. The prose and the reasoning
the template wrote are ``chatter`` and ``reasoning`` pieces; the rest is envelope.

How a template takes arguments and where its turn ends are found once by
:func:`~strategies._internal.formats.chat_template.probe.probe`; the prompt is rendered once per
thinking mode, and each sample costs one rendering (the last few are kept).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from strategies._internal.formats.chat_template.files import TemplateFileError, TemplateSource
from strategies._internal.formats.chat_template.sandbox import compile_template
from strategies._internal.formats.core import Piece
from strategies.json_values import json_equal

#: The user turn every sample answers (it only has to exist: the sample is what follows it).
USER_MESSAGE = {"role": "user", "content": "What is the weather in Paris right now?"}
#: Renderings a template keeps (by calls, ids, prose and reasoning).
OUTPUTS_KEPT = 256


class RenderError(Exception):
    """The template raised, or its output cannot be cut into prompt and sample."""


class PromptMismatch(RenderError):
    """The conversation ending with the assistant's message does not start with the prompt before it."""


@dataclass
class Output:
    """One sample: its text and the spans of it that are not envelope, ``(start, end, role, call)``."""

    text: str
    spans: list = field(default_factory=list)

    def pieces(self, calls: list = (), dump: Any = None) -> list:
        """The sample's pieces; ``dump`` (a ``Style.dump``) rewrites each call's arguments document."""
        pieces, at = [], 0
        for start, end, role, index in sorted(self.spans):
            if start < at:
                raise RenderError("overlapping pieces")
            if start > at:
                pieces.append(Piece(self.text[at:start], "envelope"))
            piece = self.text[start:end]
            if role == "payload":
                if dump is not None:
                    piece = dump(calls[index]["arguments"])
                pieces.append(Piece(piece, "payload", json=True, args_end=len(piece.rstrip(" \t\r\n,")),
                                    call_index=index))
            else:
                pieces.append(Piece(piece, role))
            at = end
        if at < len(self.text):
            pieces.append(Piece(self.text[at:], "envelope"))
        return pieces


class ChatTemplate:
    """A compiled chat template writing samples. ``arguments_as_string`` (arguments handed over as a
    JSON string), ``json_arguments`` (False: written in the template's own syntax) and ``end`` (the
    end of its assistant turn, cut from each sample) are set by probing."""

    def __init__(self, source: TemplateSource):
        self.source = source
        try:
            self.compiled = compile_template(source.text)
        except Exception as exc:  # noqa: BLE001 - jinja2's syntax errors, and what else its parser raises
            line = getattr(exc, "lineno", None)
            raise TemplateFileError(f"{source.path}{f':{line}' if line else ''}: not a Jinja template "
                                    f"({type(exc).__name__}: {exc})") from None
        self.tokens = dict(source.tokens)
        self._prompts: dict = {}
        self._outputs: dict = {}
        self.arguments_as_string = False
        self.json_arguments = True
        self.end = ""

    def _render(self, messages: list, *, generation_prompt: bool, thinking: bool) -> str:
        try:
            return self.compiled.render(messages=messages, tools=None, documents=None,
                                        add_generation_prompt=generation_prompt, enable_thinking=thinking,
                                        **self.tokens)
        except Exception as exc:  # noqa: BLE001 - a template raises whatever its code raises
            raise RenderError(f"{type(exc).__name__}: {exc}") from None

    def prompt(self, thinking: bool) -> str:
        """The user turn and the generation prompt (rendered once per thinking mode)."""
        found = self._prompts.get(thinking)
        if found is None:
            found = self._prompts[thinking] = self._render([USER_MESSAGE], generation_prompt=True, thinking=thinking)
        return found

    def generated(self, message: dict, thinking: bool) -> str:
        """What the model generated to produce ``message``: the conversation ending with it, minus the
        prompt before it, minus the end of the assistant turn."""
        prompt = self.prompt(thinking)
        full = self._render([USER_MESSAGE, message], generation_prompt=False, thinking=thinking)
        if not full.startswith(prompt):
            raise PromptMismatch("the conversation ending with the assistant's message does not start with the "
                                 "conversation before it and its generation prompt")
        text = full[len(prompt):]
        if self.end and text.endswith(self.end):
            text = text[:-len(self.end)]
        return text

    def message(self, calls: list, ids: list, content: Optional[str], reasoning: Optional[str],
                string_arguments: Optional[bool] = None) -> dict:
        """The OpenAI-shaped assistant message carrying ``calls``."""
        as_string = self.arguments_as_string if string_arguments is None else string_arguments
        message: dict = {"role": "assistant", "content": content or ""}
        if calls:
            message["tool_calls"] = [
                {"id": ident, "type": "function",
                 "function": {"name": call["name"],
                              "arguments": json.dumps(call["arguments"], ensure_ascii=False) if as_string
                              else call["arguments"]}}
                for call, ident in zip(calls, ids)]
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        return message

    def output(self, calls: list, ids: list, content: Optional[str] = None, reasoning: Optional[str] = None,
               string_arguments: Optional[bool] = None) -> Output:
        """The sample for these calls, with its pieces located. Raises :class:`RenderError` when the
        template raises or the calls cannot be found in what it wrote. The last few are kept: an
        operator's variants and a shrink render the same calls again and again."""
        try:
            key = json.dumps((calls, ids, content, reasoning, string_arguments), ensure_ascii=False)
        except (TypeError, ValueError):
            key = None
        found = self._outputs.get(key) if key is not None else None
        if found is None:
            found = self._output(calls, ids, content, reasoning, string_arguments)
            if key is not None:
                if len(self._outputs) >= OUTPUTS_KEPT:
                    self._outputs.clear()
                self._outputs[key] = found
        return found

    def _output(self, calls: list, ids: list, content: Optional[str], reasoning: Optional[str],
                string_arguments: Optional[bool]) -> Output:
        message = self.message(calls, ids, content, reasoning, string_arguments)
        text = self.generated(message, thinking=reasoning is not None)
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise RenderError("the template wrote text that is not UTF-8 (a lone surrogate)") from None
        out = Output(text)
        at = 0
        for index, call in enumerate(calls):
            if text.find(call["name"], 0) < 0:
                raise RenderError(f"the call of {call['name']!r} is not in what the template wrote")
            if self.json_arguments:
                found = find_json(text, call["arguments"], at)
                if found is None:
                    raise RenderError(f"the arguments of {call['name']!r} are not in what the template wrote")
                out.spans.append((found[0], found[1], "payload", index))
                at = found[1]
        for value, role in ((content, "chatter"), (reasoning, "reasoning")):
            if value:
                start = text.find(value)
                if start >= 0 and not any(s < start + len(value) and start < e for s, e, _, _ in out.spans):
                    out.spans.append((start, start + len(value), role, None))
        return out


def find_json(text: str, value: Any, start: int) -> Optional[tuple]:
    """(start, end) of the first JSON document in ``text`` at or after ``start`` that decodes to
    ``value`` (as JSON compares: key order ignored, types kept), or None."""
    for candidate in (json.dumps(value, ensure_ascii=False), json.dumps(value)):
        at = text.find(candidate, start)
        if at >= 0:
            return at, at + len(candidate)
    decoder = json.JSONDecoder()
    opener = "{" if isinstance(value, dict) else "["
    at = text.find(opener, start)
    while at >= 0:
        try:
            document, end = decoder.raw_decode(text, at)
        except ValueError:
            pass
        else:
            if json_equal(document, value):
                return at, end
        at = text.find(opener, at + 1)
    return None


__all__ = ["OUTPUTS_KEPT", "USER_MESSAGE", "ChatTemplate", "Output", "PromptMismatch", "RenderError", "find_json"]
