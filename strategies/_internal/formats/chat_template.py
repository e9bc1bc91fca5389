"""A model's own chat template as a format: valid samples rendered by running the template itself.

Why: the families here are our reading of what models write. A model's chat template is what it was
trained to write, so a model with no family here — or a family version we lag behind — is still
covered exactly as it writes (``--chat-template FILE``).

**What a sample is.** The template renders a conversation; the model generated what follows the
generation prompt. So a sample is the rendering of ``[user, assistant-with-calls]`` minus the
rendering of ``[user]`` with ``add_generation_prompt=True`` (the first must start with the second:
a template that rewrites earlier turns once an assistant message follows is refused), minus the
end-of-turn text the template writes after an assistant message (found once, from a content-only
message: whatever follows its content). The assistant message is OpenAI-shaped: ``content`` (the
prose beside the calls, or ``""``), ``tool_calls`` of ``{"id", "type": "function", "function":
{"name", "arguments"}}`` and, for the reasoning variant, ``reasoning_content``. ``arguments`` is a
mapping, or a JSON string for templates that write it as they get it (found once by probing).
Samples without reasoning are rendered with ``enable_thinking=False``, the reasoning variant with
``enable_thinking=True`` (the ``chat_template_kwargs`` convention of Qwen3 and others; templates
that do not read it ignore it).

**The sandbox** is transformers' (``apply_chat_template``): ``ImmutableSandboxedEnvironment`` with
``trim_blocks``, ``lstrip_blocks``, the ``loopcontrols`` extension and the ``{% generation %}`` tag,
``raise_exception``, ``strftime_now`` and a ``tojson`` filter that is ``json.dumps`` with
``ensure_ascii=False`` (and ``indent``, ``separators``, ``sort_keys``; a string holding a lone
surrogate is escaped, as every format here writes it, so the text stays UTF-8). For
reproducibility: ``strftime_now`` formats one fixed moment (a sample is a pure function of its
recipe), and the special tokens (``bos_token``, ``eos_token``...) come from the
``tokenizer_config.json`` given, or the one beside the ``.jinja`` file given; without one they
render as nothing.

**Pieces.** Each call's arguments are found in the rendering as the JSON text they denote (the
document decoded equals the arguments): each is a JSON payload piece (``bare_arguments``), so the
JSON operators and truncation work on it, and an operator's ``Style.dump`` (arguments
double-encoded) is spliced in its place. A template that writes arguments in its own syntax has
no JSON payload (``json_payload=False``): only the operators that need nothing but the text apply.
The prose and the reasoning the template wrote are ``chatter`` and ``reasoning`` pieces; the rest
is envelope. Names are limited to letters, digits and ``_ - . :`` (a template pastes a name into its
text unescaped, so another name could break the text around it).

**Cost and processes.** A template is compiled once per process, the prompt and end-of-turn text
are rendered once; each sample costs one rendering. Formats are registered by name
(``template:<stem>``); a worker process forked after registration inherits them, and
:func:`ensure` registers one from its :class:`TemplateSource` where it was not (a spawned worker).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional

from strategies._internal.formats.core import (
    CHATTER_BEFORE, FORMATS, Context, Format, Piece, Unrepresentable, call_id, sentences,
)
from strategies._internal.formats.reasoning import ReasoningStyle, reasoning_text
from strategies.errors import ToolfuzzError
from strategies.json_values import json_equal

#: The user turn every sample answers (it only has to exist: the sample is what follows it).
USER_MESSAGE = {"role": "user", "content": "What is the weather in Paris right now?"}
#: The moment ``strftime_now`` formats (fixed: a sample must not depend on the day it is made).
FIXED_NOW = datetime(2025, 1, 15, 12, 0, 0)
#: Special-token keys of a tokenizer_config.json that transformers hands the template.
TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
#: The calls a template is probed with when it is loaded (a nested object, non-ASCII, every JSON type).
PROBE_CALLS = [{"name": "get_weather", "arguments": {"city": "Zürich", "when": {"day": 1, "hour": 9},
                                                     "units": ["c", "f"], "exact": True, "note": None}},
               {"name": "get_time", "arguments": {"zone": "CET"}}]
#: Renderings a template keeps (by calls, ids, prose and reasoning).
OUTPUTS_KEPT = 256
_SENTINEL = "tfzQ7templateX3"
_NAME = re.compile(r"[A-Za-z0-9_.:\-]+")
_MARKER = re.compile(r"<\|[^|<>\s]{1,40}\|>|<[/A-Za-z_][^<>\s]{0,40}>|\[/?[A-Z_]{2,30}\]|<｜[^｜]{1,40}｜>")


class TemplateFileError(ToolfuzzError):
    """A chat template file that cannot be used: the message names the file and says why."""


@dataclass(frozen=True)
class TemplateSource:
    """Everything a process needs to register a chat template format: its name, the template text,
    the special tokens it is rendered with, and where it came from (the absolute path of the file
    and the sha256 of its bytes, stored with corpus recipes so the template can be found again)."""

    name: str
    path: str
    sha256: str
    text: str
    tokens: tuple = ()  # ((key, value), ...) handed to the template as transformers does

    @property
    def origin(self) -> dict:
        return {"chat_template": self.path, "sha256": self.sha256}


#: Sources of the chat template formats registered in this process, by format name.
SOURCES: dict = {}


# ----------------------------------------------------------------------------------------------------
# reading the file


def read_source(path: str) -> TemplateSource:
    """A chat template file: a ``tokenizer_config.json`` (its ``chat_template``, a string or a list of
    ``{name, template}`` — ``tool_use`` if present, else ``default``) or a Jinja file."""
    absolute = os.path.abspath(path)
    try:
        with open(absolute, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise TemplateFileError(f"{path}: cannot read the chat template ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TemplateFileError(f"{path}: not UTF-8 text ({exc})") from None
    if absolute.endswith(".json"):
        text, tokens = _from_tokenizer_config(path, text)
    else:
        tokens = _sibling_tokens(absolute)
    if not text.strip():
        raise TemplateFileError(f"{path}: the chat template is empty")
    return TemplateSource(name=format_name(absolute), path=absolute, sha256=hashlib.sha256(raw).hexdigest(),
                          text=text, tokens=tokens)


def _from_tokenizer_config(path: str, text: str) -> tuple:
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise TemplateFileError(f"{path}: not JSON ({exc})") from None
    if not isinstance(config, dict):
        raise TemplateFileError(f"{path}: a tokenizer_config.json must be a JSON object")
    template = config.get("chat_template")
    if template is None:
        raise TemplateFileError(f"{path}: no chat_template field (give the model's tokenizer_config.json, "
                                "or its .jinja chat template)")
    if isinstance(template, list):
        named = {item.get("name"): item.get("template") for item in template if isinstance(item, dict)}
        template = named.get("tool_use", named.get("default"))
        if template is None:
            raise TemplateFileError(f"{path}: chat_template lists no template named tool_use or default "
                                    f"(names: {', '.join(str(n) for n in named) or 'none'})")
    if not isinstance(template, str):
        raise TemplateFileError(f"{path}: chat_template must be a string or a list of {{name, template}}")
    return template, _special_tokens(config)


def _sibling_tokens(path: str) -> tuple:
    """The special tokens of the tokenizer_config.json beside a Jinja file (models now publish their
    template as chat_template.jinja next to it); without one, each renders as nothing."""
    config: Any = None
    try:
        with open(os.path.join(os.path.dirname(path), "tokenizer_config.json"), encoding="utf-8") as fh:
            config = json.load(fh)
    except (OSError, ValueError):
        pass
    found = dict(_special_tokens(config)) if isinstance(config, dict) else {}
    return tuple((key, found.get(key, "")) for key in TOKEN_KEYS) + tuple(
        (key, value) for key, value in found.items() if key not in TOKEN_KEYS)


def _special_tokens(config: dict) -> tuple:
    tokens = []
    for key in TOKEN_KEYS:
        value = config.get(key)
        if isinstance(value, dict):  # a serialized AddedToken
            value = value.get("content")
        if isinstance(value, str):
            tokens.append((key, value))
    extra = config.get("additional_special_tokens")
    if isinstance(extra, list):
        tokens.append(("additional_special_tokens",
                       tuple(t.get("content") if isinstance(t, dict) else t for t in extra)))
    return tuple(tokens)


def format_name(path: str) -> str:
    """``template:<stem>``; a ``tokenizer_config.json`` is named by its directory (the model's)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "tokenizer_config":
        stem = os.path.basename(os.path.dirname(path)) or stem
    stem = re.sub(r"[^A-Za-z0-9_.\-]+", "-", stem).strip("-.") or "custom"
    return f"template:{stem}"


# ----------------------------------------------------------------------------------------------------
# the sandbox


_COMPILED: dict = {}


def compile_template(text: str) -> Any:
    """The template compiled in transformers' sandbox, once per process per text."""
    compiled = _COMPILED.get(text)
    if compiled is None:
        compiled = _COMPILED[text] = _environment().from_string(text)
    return compiled


_ENV: list = []


def _environment() -> Any:
    if _ENV:
        return _ENV[0]
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generation(jinja2.ext.Extension):
        """``{% generation %}…{% endgeneration %}``: transformers marks the assistant's tokens with
        it; here it renders its body."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> str:
            return caller()

    def raise_exception(message: Any) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
               sort_keys: bool = False) -> str:
        text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: escaped, as every format here writes them
                text = json.dumps(value, ensure_ascii=True, indent=indent, separators=separators, sort_keys=sort_keys)
        return text

    def strftime_now(fmt: str) -> str:
        return FIXED_NOW.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    _ENV.append(env)
    return env


class RenderError(Exception):
    """The template raised, or its output cannot be cut into prompt and sample."""


class PromptMismatch(RenderError):
    """The conversation ending with the assistant's message does not start with the prompt before it."""


# ----------------------------------------------------------------------------------------------------
# the template as a writer of samples


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
    """A compiled chat template and what probing it found: how it takes arguments, the end of its
    assistant turn, whether it writes prose, reasoning and several calls, and its reasoning block."""

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
        self.prose = self.several = False
        self.reasoning: Optional[ReasoningStyle] = None
        self.fragments: tuple = ()
        self.fake_call = ""

    # -- rendering -------------------------------------------------------------------------------
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

    # -- probing ---------------------------------------------------------------------------------
    def probe(self) -> None:
        """Find how this template writes calls (see the module docstring); :class:`TemplateFileError`
        naming the file when it cannot be used."""
        path = self.source.path
        try:
            self.prompt(False)
            self.prompt(True)
        except RenderError as exc:
            raise TemplateFileError(f"{path}: rendering a user turn and the generation prompt raised {exc}") from None
        try:
            self.end = self._end_of_turn()
        except RenderError as exc:
            raise TemplateFileError(_failed(path, "rendering an assistant message", exc)) from None
        one = PROBE_CALLS[:1]
        ids = ["a1b2c3d4e"]
        try:
            plain = self.generated(self.message(one, ids, None, None, False), thinking=False)
        except RenderError as exc:
            raise TemplateFileError(_failed(path, "rendering an assistant message with a tool call", exc)) from None
        if one[0]["name"] not in plain:
            raise TemplateFileError(f"{path}: the template does not write an assistant message's tool_calls "
                                    f"(what follows the generation prompt: {plain[:80]!r})")
        if find_json(plain, one[0]["arguments"], 0) is None:
            written = self._try(lambda: self.generated(self.message(one, ids, None, None, True), thinking=False))
            if written is not None and find_json(written, one[0]["arguments"], 0) is not None:
                self.arguments_as_string = True
            else:
                self.json_arguments = False
                marked = self._try(lambda: self.generated(
                    self.message([{"name": "get_weather", "arguments": {"city": _SENTINEL}}], ids, None, None, False),
                    thinking=False))
                if marked is None or _SENTINEL not in marked:
                    raise TemplateFileError(f"{path}: the template does not write the arguments of a tool call")
        base = self._try(lambda: self.output(one, ids))
        if base is None:
            raise TemplateFileError(f"{path}: the template's tool call cannot be located in what it writes")
        self.several = self._try(lambda: self.output(PROBE_CALLS, ids * 2)) is not None
        said = self._try(lambda: self.output(one, ids, content=_SENTINEL))
        self.prose = said is not None and _SENTINEL in said.text
        self.reasoning = self._reasoning_style(one, ids, base.text)
        self.fragments = tuple(dict.fromkeys(m.group(0) for m in _MARKER.finditer(
            "".join(p.text for p in base.pieces() if p.role == "envelope"))))
        if self.json_arguments:
            start, end = base.spans[0][:2]
            fake = base.text[:start] + "{}" + base.text[end:]
            self.fake_call = fake.replace(one[0]["name"], "{tool}")

    def _end_of_turn(self) -> str:
        said = self.generated(self.message([], [], _SENTINEL, None), thinking=False)
        at = said.find(_SENTINEL)
        return said[at + len(_SENTINEL):] if at >= 0 else ""

    def _reasoning_style(self, calls: list, ids: list, plain: str) -> Optional[ReasoningStyle]:
        """The reasoning block the template writes before the calls, when it writes one."""
        thought = self._try(lambda: self.output(calls, ids, reasoning=_SENTINEL))
        if thought is None or _SENTINEL not in thought.text or not thought.text.endswith(plain):
            return None
        block = thought.text[:len(thought.text) - len(plain)]
        at = block.find(_SENTINEL)
        before, after = block[:at], block[at + len(_SENTINEL):]
        open_, close = before.rstrip(), after.strip()
        can_be_open = False
        if not open_.strip():  # the generation prompt opened it: the output starts inside
            prompt = self.prompt(True).rstrip()
            opener = next((o for o in ("<think>", "[THINK]") if prompt.endswith(o)), "")
            open_, can_be_open = opener, bool(opener)
        if not close:
            return None
        return ReasoningStyle(open=open_, close=close, after_open=before[len(before.rstrip()):],
                              before_close=after[:len(after) - len(after.lstrip())],
                              after_close=after[len(after.rstrip()):], can_be_open=can_be_open, by_renderer=True)

    @staticmethod
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


def plain_name(name: str) -> bool:
    """A tool name a template can paste into its text unescaped."""
    return bool(_NAME.fullmatch(name))


# ----------------------------------------------------------------------------------------------------
# the format


def _renderer(template: ChatTemplate) -> Any:
    def render(ctx: Context) -> list:
        if ctx.rewrite is not None:
            raise Unrepresentable("a chat template writes its own call objects")
        for call in ctx.calls:
            if not plain_name(call["name"]):
                raise Unrepresentable(f"{template.source.name} cannot write the tool name {call['name']!r}")
        ids = [call_id(ctx.source.integer(0, 2**48 - 1), 9) for _ in ctx.calls]
        content = sentences(ctx.source, CHATTER_BEFORE) if ctx.chatter and template.prose else None
        reasoning = reasoning_text(ctx.source) if ctx.reasoning else None
        try:
            return template.output(ctx.calls, ids, content, reasoning).pieces(ctx.calls, ctx.style_dump)
        except RenderError as exc:
            raise Unrepresentable(f"{template.source.name}: {exc}") from None

    return render


def build_format(source: TemplateSource) -> Format:
    """Probe the template and make its :class:`Format` (not registered)."""
    template = ChatTemplate(source)
    try:
        template.probe()
    except RecursionError:
        raise TemplateFileError(f"{source.path}: the template recurses without end") from None
    variants = frozenset(v for v, on in (("prose", template.prose), ("several", template.several),
                                         ("reasoning", template.reasoning is not None)) if on)
    end = template.end.strip()
    return Format(name=source.name, description=f"the chat template {source.path}", envelope={},
                  json_payload=template.json_arguments, renderer=_renderer(template), chatter_after=False,
                  prose_inside=True, bare_arguments=True, writes_name=plain_name, fragments=template.fragments,
                  fake_call=template.fake_call, family="template", version=source.name.split(":", 1)[1],
                  reasoning=template.reasoning, end_tokens=(end,) if end else (),
                  layouts=frozenset({"end_token"}) if end else frozenset(), text_only=True, variants=variants)


def ensure(source: TemplateSource) -> str:
    """Register the format of ``source`` unless this process has it; its name. A different
    template under the same name is an error naming both files."""
    known = SOURCES.get(source.name)
    if known is not None and source.name in FORMATS:
        if known.sha256 == source.sha256 and known.text == source.text:
            return source.name
        raise TemplateFileError(f"{source.path}: {source.name} is already the chat template {known.path}; "
                                "give the files different names")
    if source.name in FORMATS:
        raise TemplateFileError(f"{source.path}: the format name {source.name} is taken by "
                                f"{FORMATS.module_of(source.name)}")
    fmt = build_format(source)
    FORMATS.register(source.name, fmt, module=__name__)
    SOURCES[source.name] = source
    return source.name


def register_template(path: str) -> str:
    """Read, probe and register the chat template at ``path`` (see :func:`read_source`); its format name."""
    return ensure(read_source(path))


def unregister(name: str) -> None:
    """Forget a registered chat template format (tests)."""
    if name in SOURCES:
        SOURCES.pop(name)
        FORMATS.unregister(name)


def sources(names: Any) -> tuple:
    """The sources of the chat template formats among ``names`` (what a worker must register)."""
    return tuple(SOURCES[name] for name in names if name in SOURCES)


def origin_of(format_name: str) -> Optional[dict]:
    """Where the chat template format ``format_name`` came from (stored with recipes), or None."""
    source = SOURCES.get(format_name)
    return source.origin if source is not None else None


__all__ = ["ChatTemplate", "FIXED_NOW", "Output", "RenderError", "SOURCES", "TemplateFileError", "TemplateSource",
           "build_format", "compile_template", "ensure", "find_json", "format_name", "origin_of", "plain_name",
           "read_source", "register_template", "sources", "unregister"]
