"""Finding out, once when a template is loaded, how it writes an assistant's calls.

A template is code we did not write: rather than read it, it is rendered on a few known messages
and what it wrote is compared with what it was given. Found: the end of its assistant turn; how it
takes arguments (a mapping, a JSON string, or written in its own syntax); whether it writes prose
beside calls, several calls, and a reasoning block (and that block's delimiters); the markers around
a call (for the truncation operators) and a call with empty arguments (for the operators that
plant one). A file whose template cannot be used is :class:`TemplateFileError`, one line naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from strategies._internal.formats.chat_template.files import TemplateFileError
from strategies._internal.formats.chat_template.output import ChatTemplate, PromptMismatch, RenderError, find_json
from strategies._internal.formats.reasoning import ReasoningStyle

#: The calls a template is probed with (a nested object, non-ASCII, every JSON type).
PROBE_CALLS = [{"name": "get_weather", "arguments": {"city": "Zürich", "when": {"day": 1, "hour": 9},
                                                     "units": ["c", "f"], "exact": True, "note": None}},
               {"name": "get_time", "arguments": {"zone": "CET"}}]
_IDS = ["a1b2c3d4e"]
_SENTINEL = "tfzQ7templateX3"
_MARKER = re.compile(r"<\|[^|<>\s]{1,40}\|>|<[/A-Za-z_][^<>\s]{0,40}>|\[/?[A-Z_]{2,30}\]|<｜[^｜]{1,40}｜>")


@dataclass(frozen=True)
class Written:
    """What a template writes beside one bare call (what its format declares)."""

    prose: bool
    several: bool
    reasoning: Optional[ReasoningStyle]
    fragments: tuple  # the markers around a call, e.g. ("<tool_call>", "</tool_call>")
    fake_call: str  # a call with empty arguments, its name as "{tool}" ("" without JSON arguments)


def probe(template: ChatTemplate) -> Written:
    """Probe ``template``: set how it takes arguments and where its turn ends (what rendering a
    sample needs) and return what it writes."""
    path = template.source.path
    try:
        template.prompt(False)
        template.prompt(True)
    except RenderError as exc:
        raise TemplateFileError(f"{path}: rendering a user turn and the generation prompt raised {exc}") from None
    try:
        template.end = _end_of_turn(template)
    except RenderError as exc:
        raise TemplateFileError(_failed(path, "rendering an assistant message", exc)) from None
    one = PROBE_CALLS[:1]
    try:
        plain = template.generated(template.message(one, _IDS, None, None, False), thinking=False)
    except RenderError as exc:
        raise TemplateFileError(_failed(path, "rendering an assistant message with a tool call", exc)) from None
    if one[0]["name"] not in plain:
        raise TemplateFileError(f"{path}: the template does not write an assistant message's tool_calls "
                                f"(what follows the generation prompt: {plain[:80]!r})")
    if find_json(plain, one[0]["arguments"], 0) is None:
        _arguments_not_as_given(template, one)
    base = _try(lambda: template.output(one, _IDS))
    if base is None:
        raise TemplateFileError(f"{path}: the template's tool call cannot be located in what it writes")
    said = _try(lambda: template.output(one, _IDS, content=_SENTINEL))
    fragments = tuple(dict.fromkeys(m.group(0) for m in _MARKER.finditer(
        "".join(p.text for p in base.pieces() if p.role == "envelope"))))
    fake_call = ""
    if template.json_arguments:
        start, end = base.spans[0][:2]
        fake_call = (base.text[:start] + "{}" + base.text[end:]).replace(one[0]["name"], "{tool}")
    return Written(prose=said is not None and _SENTINEL in said.text,
                   several=_try(lambda: template.output(PROBE_CALLS, _IDS * 2)) is not None,
                   reasoning=_reasoning_style(template, one, base.text), fragments=fragments, fake_call=fake_call)


def _arguments_not_as_given(template: ChatTemplate, one: list) -> None:
    """The arguments, given as a mapping, are not in what the template wrote as JSON: it writes
    them as it gets them (then they are handed over as a JSON string), or in its own syntax."""
    written = _try(lambda: template.generated(template.message(one, _IDS, None, None, True), thinking=False))
    if written is not None and find_json(written, one[0]["arguments"], 0) is not None:
        template.arguments_as_string = True
        return
    template.json_arguments = False
    marked = _try(lambda: template.generated(
        template.message([{"name": "get_weather", "arguments": {"city": _SENTINEL}}], _IDS, None, None, False),
        thinking=False))
    if marked is None or _SENTINEL not in marked:
        raise TemplateFileError(f"{template.source.path}: the template does not write the arguments of a tool call")


def _end_of_turn(template: ChatTemplate) -> str:
    """Whatever follows a content-only assistant message's content."""
    said = template.generated(template.message([], [], _SENTINEL, None), thinking=False)
    at = said.find(_SENTINEL)
    return said[at + len(_SENTINEL):] if at >= 0 else ""


def _reasoning_style(template: ChatTemplate, calls: list, plain: str) -> Optional[ReasoningStyle]:
    """The reasoning block the template writes before the calls, when it writes one."""
    thought = _try(lambda: template.output(calls, _IDS, reasoning=_SENTINEL))
    if thought is None or _SENTINEL not in thought.text or not thought.text.endswith(plain):
        return None
    block = thought.text[:len(thought.text) - len(plain)]
    at = block.find(_SENTINEL)
    before, after = block[:at], block[at + len(_SENTINEL):]
    open_, close = before.rstrip(), after.strip()
    can_be_open = False
    if not open_.strip():  # the generation prompt opened it: the output starts inside
        prompt = template.prompt(True).rstrip()
        opener = next((o for o in ("<think>", "[THINK]") if prompt.endswith(o)), "")
        open_, can_be_open = opener, bool(opener)
    if not close:
        return None
    return ReasoningStyle(open=open_, close=close, after_open=before[len(before.rstrip()):],
                          before_close=after[:len(after) - len(after.lstrip())],
                          after_close=after[len(after.rstrip()):], can_be_open=can_be_open, by_renderer=True)


def _try(make: Any) -> Any:
    try:
        return make()
    except RenderError:
        return None


def _failed(path: str, what: str, exc: RenderError) -> str:
    if isinstance(exc, PromptMismatch):
        return (f"{path}: {exc} (it rewrites earlier turns once an assistant message follows), so what the model "
                "generates cannot be told apart from the prompt")
    return f"{path}: {what} raised {exc}"


__all__ = ["PROBE_CALLS", "Written", "probe"]
