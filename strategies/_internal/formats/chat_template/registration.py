"""A probed chat template registered as the format ``template:<stem>``, in this process or another.

Formats are registered by name; a worker process forked after registration inherits them, and
:func:`ensure` registers one from its :class:`TemplateSource` where it was not (a spawned worker:
Ray, macOS). Where each template came from (its path and hash) is kept with the recipes of its
samples (:data:`~strategies._internal.sample.FORMAT_ORIGINS`), so a corpus entry finds it again.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from strategies._internal.formats.chat_template.files import TemplateFileError, TemplateSource, read_source
from strategies._internal.formats.chat_template.output import ChatTemplate, RenderError
from strategies._internal.formats.chat_template.probe import probe
from strategies._internal.formats.core import CHATTER_BEFORE, FORMATS, Context, Format, Unrepresentable, call_id, sentences
from strategies._internal.formats.reasoning import reasoning_text
from strategies._internal.sample import FORMAT_ORIGINS

#: Sources of the chat template formats registered in this process, by format name.
SOURCES: dict = {}
_NAME = re.compile(r"[A-Za-z0-9_.:\-]+")


def plain_name(name: str) -> bool:
    """A tool name a template can paste into its text unescaped: letters, digits and ``_ - . :``
    (a template pastes a name into its text as it is, so another name could break the text around it)."""
    return bool(_NAME.fullmatch(name))


def _renderer(template: ChatTemplate, prose: bool) -> Any:
    """The format's renderer: the assistant message for ``ctx.calls`` (ids drawn, prose when the
    template writes it, reasoning when asked), rendered and read back into pieces."""
    def render(ctx: Context) -> list:
        if ctx.rewrite is not None:
            raise Unrepresentable("a chat template writes its own call objects")
        for call in ctx.calls:
            if not plain_name(call["name"]):
                raise Unrepresentable(f"{template.source.name} cannot write the tool name {call['name']!r}")
        ids = [call_id(ctx.source.integer(0, 2**48 - 1), 9) for _ in ctx.calls]
        content = sentences(ctx.source, CHATTER_BEFORE) if ctx.chatter and prose else None
        reasoning = reasoning_text(ctx.source) if ctx.reasoning else None
        try:
            return template.output(ctx.calls, ids, content, reasoning).pieces(ctx.calls, ctx.style_dump)
        except RenderError as exc:
            raise Unrepresentable(f"{template.source.name}: {exc}") from None

    return render


def build_format(source: TemplateSource) -> Format:
    """Probe the template and make its :class:`Format` (not registered). Operators that need only the
    text apply to it (``text_only``); the JSON operators too where it writes arguments as JSON."""
    template = ChatTemplate(source)
    try:
        written = probe(template)
    except RecursionError:
        raise TemplateFileError(f"{source.path}: the template recurses without end") from None
    variants = frozenset(v for v, on in (("prose", written.prose), ("several", written.several),
                                         ("reasoning", written.reasoning is not None)) if on)
    end = template.end.strip()
    return Format(name=source.name, description=f"the chat template {source.path}", envelope={},
                  json_payload=template.json_arguments, renderer=_renderer(template, written.prose),
                  chatter_after=False, prose_inside=True, bare_arguments=True, writes_name=plain_name,
                  fragments=written.fragments, fake_call=written.fake_call, family="template",
                  version=source.name.split(":", 1)[1], reasoning=written.reasoning,
                  end_tokens=(end,) if end else (), layouts=frozenset({"end_token"}) if end else frozenset(),
                  text_only=True, variants=variants)


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
    FORMAT_ORIGINS[source.name] = source.origin
    return source.name


def register_template(path: str) -> str:
    """Read, probe and register the chat template at ``path``; its format name."""
    return ensure(read_source(path))


def unregister(name: str) -> None:
    """Forget a registered chat template format (tests)."""
    if name in SOURCES:
        SOURCES.pop(name)
        FORMAT_ORIGINS.pop(name, None)
        FORMATS.unregister(name)


def sources(names: Any) -> tuple:
    """The sources of the chat template formats among ``names`` (what a worker must register)."""
    return tuple(SOURCES[name] for name in names if name in SOURCES)


def origin_of(format_name: str) -> Optional[dict]:
    """Where the chat template format ``format_name`` came from (stored with recipes), or None."""
    source = SOURCES.get(format_name)
    return source.origin if source is not None else None


__all__ = ["SOURCES", "build_format", "ensure", "origin_of", "plain_name", "register_template", "sources",
           "unregister"]
