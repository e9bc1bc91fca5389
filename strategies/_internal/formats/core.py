"""What every format shares: the registry, the capabilities a format declares, and :func:`render`.

API CONTRACT (shared with the mutation operators, the build step and the engine; keep it):

* ``FORMATS`` — a :class:`~strategies.registry.Registry` of formats by name. A format registered with
  :func:`output_format` declares its capabilities, and every operator whose requirements they meet
  applies to it: nothing else lists formats by name.
* ``Format.envelope``: the default envelope tokens of the format (e.g. hermes ``{"open": "<tool_call>",
  "close": "</tool_call>"}``); a :class:`Style` may override any of them.
* Capabilities: ``json_payload`` (the payload is JSON text), ``call_object`` (JSON call objects and the
  keys of their name and arguments), ``bare_arguments`` (a JSON payload is one call's arguments object),
  ``tags`` / ``tag_variants`` (XML-like tag pairs and their common misspellings), ``fence`` (the
  envelope tokens of a code fence), ``marker_variants`` (misspellings of single markers), ``fragments``
  (structural tokens a model may repeat), ``fake_call`` (how a call looks in this format, for a fake
  one inside a string), ``writes_name`` (which tool names it can write), ``empty_forms`` (its own
  envelopes that hold no call), ``layouts`` (the layout dimensions that apply, see
  :mod:`.layouts`), ``prose_inside`` (prose is part of the payload: a text block, a channel),
  ``raw_strings`` (string values are raw text, so escapes and edge whitespace mean something else).
* ``render(format, calls, source, *, chatter, style=None, layout=None) -> Rendered`` renders ``calls``
  deterministically given the choices drawn from ``source`` (layout, ids, chatter text...).
* :class:`Rendered` holds ``pieces``; ``text`` is their concatenation. A payload piece whose ``json``
  flag is set is exactly one JSON document. ``args_end`` is an offset in a payload piece such that
  cutting the piece before it leaves a call of the piece incomplete (part of its arguments or its
  name is lost): such a cut denotes no faithful call. Only whitespace, commas and closing brackets
  follow it in the piece, and members a call object writes after its name and arguments (Mistral's
  v3 call ``"id"``).

Calls a format cannot write faithfully (a pythonic name that is no Python identifier) raise
:class:`Unrepresentable`; :func:`supports_name` answers that ahead of time for names.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, Callable, Optional

from strategies._internal.formats.layouts import LAYOUTS, USUAL, Layout, draw_layout, json_dumper, resolve_layout
from strategies._internal.once import computed_once
from strategies._internal.source import ReplaySource, Source
from strategies.errors import ToolfuzzError, UnknownName
from strategies.registry import Registry


@dataclass(frozen=True, init=False)
class Piece:
    """One piece of a rendering: prose (``chatter``), envelope tokens, or a payload (see the contract)."""

    text: str
    role: str  # "chatter" | "envelope" | "payload" | "reasoning"
    json: bool = False
    args_end: Optional[int] = None
    call_index: Optional[int] = None  # payload of a single call, or None when it holds several

    def __init__(self, text: str, role: str, json: bool = False, args_end: Optional[int] = None,
                 call_index: Optional[int] = None):
        # A frozen dataclass's own __init__ sets each field through object.__setattr__: a
        # rendering makes several pieces, and that was a tenth of what rendering cost.
        self.__dict__.update(text=text, role=role, json=json, args_end=args_end, call_index=call_index)


@dataclass(frozen=True, init=False)
class Rendered:
    """Calls rendered in a format: the pieces of the text (``text`` is their concatenation), the calls
    the text denotes, exactly, and the layout it was written in."""

    format: str
    calls: list
    pieces: tuple
    chatter: bool
    layout: Layout = field(default=USUAL, compare=False)

    def __init__(self, format: str, calls: list, pieces: tuple, chatter: bool, layout: Layout = USUAL):
        self.__dict__.update(format=format, calls=calls, pieces=pieces, chatter=chatter, layout=layout)

    @computed_once
    def text(self) -> str:
        return "".join(p.text for p in self.pieces)

    @property
    def content(self) -> Optional[str]:
        """The prose of the output beside its calls (its ``chatter`` pieces, stripped and joined by a
        space), None when it has none: what a parser returns as the message's content."""
        parts = [p.text.strip() for p in self.pieces if p.role == "chatter" and p.text.strip()]
        return " ".join(parts) if parts else None

    @property
    def reasoning(self) -> Optional[str]:
        """The reasoning the output starts with (its ``reasoning`` pieces), None when it has none."""
        parts = [p.text.strip() for p in self.pieces if p.role == "reasoning" and p.text.strip()]
        return " ".join(parts) if parts else None


@dataclass(frozen=True)
class Style:
    """How to render: the JSON dumper for payload values, envelope token overrides, and a rewrite of
    every JSON call object (``call(obj) -> obj``, given the object the format would write, e.g.
    ``{"name": ..., "arguments": {...}}``; see :class:`CallObject` for its keys)."""

    dump: Optional[Callable[[Any], str]] = None  # None = the format's normal JSON
    envelope: Mapping[str, str] = field(default_factory=dict)
    call: Optional[Callable[[dict], dict]] = None


class Unrepresentable(ToolfuzzError, ValueError):
    """These calls cannot be written faithfully in this format.

    Raised, for example, for a pythonic call whose tool name is not a Python identifier, or a react
    call whose name holds a line break: any text we produced would denote different calls, and a
    sample's truth must be exact. The builder should draw other calls (like ``NotApplicable``).
    """


#: Prose a model writes around a tool call. Never contains ``{ } [ ] ( ) < >``, backticks, ``=`` or an
#: envelope keyword (``Action``, ``Thought``, ``tool_call``, ``TOOL_CALLS``, ``python_tag``), so no parser
#: can honestly mistake it for part of a call. Index 0 is the most common opener.
CHATTER_BEFORE = (
    "Sure! Let me check that for you.",
    "I'll look that up.",
    "Let me call the right tool for this.",
    "Okay, one moment while I fetch that.",
    "Here is the tool call:",
    "Good question. I will use a tool to answer it.",
    "Happy to help with that!",
)
CHATTER_AFTER = (
    "Let me know if you need anything else.",
    "I'll share the results as soon as they come back.",
    "This should give us what we need.",
    "Once I have the answer, I will summarize it.",
)
#: The thoughts of the react format (the text after ``Thought:``); the same restrictions as chatter.
THOUGHTS = (
    "I need to use a tool to answer this.",
    "I should look this up.",
    "The user wants information that a tool can provide.",
    "I have what I need to make the call.",
)


@dataclass(frozen=True)
class CallObject:
    """Where a format's JSON call object keeps the tool name and the arguments.

    ``arguments_as_string``: the arguments are a JSON *string* holding the object (OpenAI).
    """

    name_key: str = "name"
    arguments_key: str = "arguments"
    arguments_as_string: bool = False


def _any_name(name: str) -> bool:
    return True


@dataclass
class Context:
    """What a renderer sees: the calls, the source, the merged envelope tokens, the dumpers, the layout."""

    calls: list
    source: Source
    tokens: Mapping[str, str]
    dump: Optional[Callable[[Any], str]]  # payload JSON dumper (Style.dump or the layout's)
    normal_dump: Optional[Callable[[Any], str]]  # the layout's one-line dumper (OpenAI argument strings)
    layout: Layout
    chatter: bool = False
    shape: Optional[CallObject] = None
    rewrite: Optional[Callable[[dict], dict]] = None  # Style.call
    #: The output starts with reasoning (for a format whose renderer writes it: ``ReasoningStyle.by_renderer``).
    reasoning: bool = False
    #: ``Style.dump`` when one was given: a renderer that does not serialize its payload itself (a
    #: chat template) splices the documents it makes into the text.
    style_dump: Optional[Callable[[Any], str]] = None

    @property
    def nl(self) -> str:
        """The layout's line end."""
        return self.layout.newline

    def gap(self, usual: str) -> str:
        """The whitespace between an envelope token and the payload: the layout's, or the format's usual
        (newlines in it become the layout's line ends)."""
        gap = self.layout.gap
        text = usual if gap is None else gap
        return text.replace("\n", self.layout.newline) if self.layout.newline != "\n" else text

    def call_object(self, call: Mapping[str, Any], arguments: Any = None, *, before: Mapping = None) -> dict:
        """The JSON call object of ``call`` in this format's keys (``arguments`` replaces the arguments
        value, e.g. by their JSON string; ``before`` are members the format writes first, e.g. a type),
        in the layout's key order, passed through ``Style.call``."""
        shape = self.shape
        value = call["arguments"] if arguments is None else arguments
        obj = dict(before) if before else {}
        if self.layout.arguments_first:
            obj[shape.arguments_key] = value
            obj[shape.name_key] = call["name"]
        else:
            obj[shape.name_key] = call["name"]
            obj[shape.arguments_key] = value
        return self.rewrite(obj) if self.rewrite is not None else obj

    def sentences(self, bank: tuple) -> str:
        """One or two sentences of prose from ``bank``."""
        return sentences(self.source, bank)


@dataclass(frozen=True)
class Format:
    """An output format: its envelope tokens, its capabilities and the renderer that writes calls in it.

    ``renderer(ctx) -> list[Piece]`` draws its own variation from ``ctx.source``; chatter around the
    envelope is added by :func:`render`, before and/or after (``chatter_after=False``: before only),
    unless ``prose_inside``: then the renderer writes it (a text block, an analysis channel).
    The capability fields are what operators select formats by (see the module docstring).
    """

    name: str
    description: str
    envelope: Mapping[str, str]
    json_payload: bool
    renderer: Callable[[Context], list]
    chatter_after: bool = True
    prose_inside: bool = False
    call_object: Optional[CallObject] = None
    bare_arguments: bool = False
    tags: tuple = ()  # ((open token name, close token name), ...)
    tag_variants: tuple = ()  # ((open text, close text), ...) misspellings of tags[0] models write
    fence: Optional[tuple] = None  # (open token name, close token name) of a code fence
    marker_variants: Mapping[str, tuple] = field(default_factory=dict)  # token name -> misspellings
    fragments: tuple = ()  # structural fragments, "{tool}" = a tool name
    fake_call: str = ""  # one call to "{tool}" with no arguments, as this format writes it
    writes_name: Callable[[str], bool] = _any_name
    empty_forms: tuple = ()  # envelopes of this format that hold no call
    layouts: frozenset = frozenset()  # layout dimensions that apply (see layouts.DIMENSIONS)
    raw_strings: bool = False  # string values are written as raw text (no quotes, no escapes)
    #: The text of a top-level value does not say its JSON type: strings raw, other values as
    #: JSON, nothing else between them (GLM, Qwen3-Coder XML; DeepSeek V3.2 says ``string="..."``
    #: and Gemma 4 quotes strings). Real parsers read such a value by the tool's schema.
    schema_typed: bool = False
    #: The model family and the version of its syntax (``mistral`` / ``v11``); see :mod:`.versions`.
    family: str = ""
    version: str = ""
    #: Other names of this format (``mistral:v3`` for ``mistral``), accepted wherever a name is.
    aliases: tuple = ()
    #: How the family writes reasoning before its calls (None: it has no reasoning syntax).
    reasoning: Any = None  # a reasoning.ReasoningStyle
    #: End-of-turn tokens an engine may leave after the output (``<|im_end|>``), drawn by the
    #: ``end_token`` layout dimension.
    end_tokens: tuple = ()
    #: Tokens that only this format writes, strongest first: how ``detect`` tells it from the others.
    markers: tuple = ()
    #: Operators that need only the text apply; the rest need the structure (a template format).
    text_only: bool = False
    #: The variants beside a bare single call this format can write (names of
    #: ``versions.VARIANTS``: prose, several, reasoning); None: every one it has the syntax for.
    #: A chat template that raises on several calls, or drops an assistant message's content
    #: beside its calls, cannot.
    variants: Optional[frozenset] = None
    #: The whitespace a model writes between prose and the envelope (None: a line end, or for
    #: formats with prose after the call also a space or a blank line).
    chatter_gaps: Optional[tuple] = None

    def supports_name(self, name: str) -> bool:
        """Can this format write a call to the tool ``name`` faithfully? (Argument keys always can.)"""
        return self.writes_name(name)

    @property
    def full_name(self) -> str:
        """``family:version`` (the registered name when the format has no version)."""
        return f"{self.family}:{self.version}" if self.family and self.version else self.name


FORMATS: Registry[Format] = Registry("format")


def output_format(name: str, *, description: str, envelope: Optional[Mapping[str, str]] = None,
                  json_payload: bool = True, **capabilities: Any) -> Callable:
    """Register a renderer as the format ``name`` with its capabilities (the fields of :class:`Format`).

    A name registered twice raises :class:`~strategies.registry.DuplicateName` naming both modules.
    """

    def register(renderer: Callable[[Context], list]) -> Callable[[Context], list]:
        capabilities.setdefault("family", name.split(":", 1)[0])
        if ":" in name:
            capabilities.setdefault("version", name.split(":", 1)[1])
        FORMATS.register(name, Format(name=name, description=description, envelope=dict(envelope or {}),
                                      json_payload=json_payload, renderer=renderer, **capabilities),
                         module=renderer.__module__)
        return renderer

    return register


def get_format(name: Any) -> Format:
    """The format ``name`` or one of its aliases (a :class:`Format` is returned as is);
    ``UnknownName`` with close matches."""
    if isinstance(name, Format):
        return name
    if name not in FORMATS and isinstance(name, str):
        for fmt in FORMATS.values():
            if name in fmt.aliases:
                return fmt
    return FORMATS[name]


def supports_name(format: Any, name: str) -> bool:
    """Can ``format`` write a call to the tool ``name`` faithfully? (Argument keys always can.)

    False, for example, for pythonic names that are not dotted Python identifiers and for react names
    that do not fit on one ``Action:`` line; :func:`render` raises :class:`Unrepresentable` for those.
    Lets a scheduler skip (tool, format) pairs statically.
    """
    return get_format(format).supports_name(name)


def render(format: Any, calls: list, source: Source, *, chatter: bool, style: Optional[Style] = None,
           layout: Any = None, reasoning: bool = False) -> Rendered:
    """Render ``calls`` in ``format`` (a name or a :class:`Format`), every variation drawn from ``source``.

    The result is exact: ``Rendered.calls`` is what the text denotes. Choices, in order: the layout
    (unless ``layout`` — a :class:`Layout` or a name in ``LAYOUTS`` — forces one), the format's own
    variation (ids, quotes, thoughts...), then — when ``chatter`` — where prose goes and which
    sentences. All-zero choices give the most common rendering, e.g.
    ``{"name": "get_weather", "arguments": {"city": "Paris"}}`` for ``json``.

    ``style.dump`` replaces the JSON serializer of every payload document (for ``openai`` the outer
    message document; the ``arguments`` strings inside it stay the layout's output, so a custom
    dumper changes the envelope JSON and never double-encodes arguments). ``style.envelope`` overrides
    envelope tokens by name (see each format's ``envelope``); ``style.call`` rewrites call objects.
    Zero calls render as the format's empty form (``[]`` for list formats, nothing for tag formats),
    whose truth is ``[]``.

    ``reasoning``: the output starts with a reasoning block in the family's own syntax (``<think>``...
    ``</think>``, ``[THINK]``, an analysis message), drawn after everything else; sometimes left
    open by the generation prompt (only its closing token appears). A format with no reasoning
    syntax raises :class:`Unrepresentable`. A drawn ``end_token`` layout appends one of the
    format's end-of-turn tokens (an engine that left it in).
    """
    fmt = get_format(format)
    calls = [_check_call(call, fmt.name) for call in calls]
    tokens = dict(fmt.envelope)
    if style is not None and style.envelope:
        unknown = set(style.envelope) - set(tokens)
        if unknown:
            raise UnknownName(f"format {fmt.name!r} has no envelope token {sorted(unknown)[0]!r}; "
                              f"known: {', '.join(tokens) or 'none'}")
        tokens.update(style.envelope)
    lay = resolve_layout(layout)
    if lay is None:
        lay = draw_layout(source, fmt.layouts)
    normal = json_dumper(lay, indent=False)
    dump = style.dump if style is not None and style.dump is not None else (
        json_dumper(lay) if fmt.json_payload else None)
    ctx = Context(calls=calls, source=source, tokens=tokens, dump=dump, normal_dump=normal, layout=lay,
                  chatter=chatter, shape=fmt.call_object, rewrite=style.call if style is not None else None,
                  reasoning=reasoning, style_dump=style.dump if style is not None else None)
    if reasoning and fmt.reasoning is None:
        raise Unrepresentable(f"format {fmt.name!r} has no reasoning syntax")
    pieces = fmt.renderer(ctx)
    if chatter and not fmt.prose_inside:
        nl = lay.newline
        where = source.integer(0, 2) if fmt.chatter_after else 0  # 0 before, 1 after, 2 both
        if where in (0, 2):
            if fmt.chatter_gaps is not None:
                sep = source.choice(fmt.chatter_gaps).replace("\n", nl)
            else:
                sep = nl if not fmt.chatter_after else source.choice((nl, " ", nl + nl))
            pieces.insert(0, Piece(sentences(source, CHATTER_BEFORE) + sep, "chatter"))
        if where in (1, 2):
            pieces.append(Piece(source.choice((nl, nl + nl, " ")) + sentences(source, CHATTER_AFTER), "chatter"))
    if lay.end_token and fmt.end_tokens:
        pieces.append(Piece(fmt.end_tokens[source.integer(0, len(fmt.end_tokens) - 1)], "envelope"))
    if reasoning and not fmt.reasoning.by_renderer:
        pieces[0:0] = fmt.reasoning.pieces(source, lay)
    if lay.trailing_newline:
        pieces.append(Piece(lay.newline, "envelope"))
    return Rendered(format=fmt.name, calls=calls, pieces=tuple(pieces), chatter=chatter, layout=lay)


#: The call :func:`layouts_for` renders to see which layouts change a format's text.
_PROBE_CALLS = [{"name": "get_weather", "arguments": {"city": "Zürich", "when": {"day": 1, "hour": 9}}},
                {"name": "get_time", "arguments": {"zone": "CET"}}]
_LAYOUTS_OF: dict = {}


def layouts_for(format: Any) -> list[str]:
    """The named layouts (``LAYOUTS``) in which ``format`` writes a different text than in the usual
    one, ``usual`` first: the layouts probing should try (``build_sample(..., layout=name)``)."""
    fmt = get_format(format)
    hit = _LAYOUTS_OF.get(fmt.name)
    if hit is None or hit[0] is not fmt:
        calls = _PROBE_CALLS
        try:
            usual = render(fmt, calls, ReplaySource(()), chatter=False, layout=USUAL).text
        except Unrepresentable:  # a format that writes one call only (a chat template may)
            calls = _PROBE_CALLS[:1]
            usual = render(fmt, calls, ReplaySource(()), chatter=False, layout=USUAL).text
        names = ["usual"]
        for name, named in LAYOUTS.items():
            if name == "usual" or (named.dimension is not None and named.dimension not in fmt.layouts):
                continue
            if render(fmt, calls, ReplaySource(()), chatter=False, layout=named.layout).text != usual:
                names.append(name)
        hit = _LAYOUTS_OF[fmt.name] = (fmt, names)
    return list(hit[1])


def sentences(source: Source, bank: tuple) -> str:
    """One sentence of ``bank``, sometimes two."""
    first = source.choice(bank)
    if not first.endswith(":") and source.boolean(0.2):
        second = source.choice(bank)
        if second != first:
            return f"{first} {second}"
    return first


def _check_call(call: Any, format_name: str) -> dict:
    if not isinstance(call, Mapping) or not isinstance(call.get("name"), str) \
            or not isinstance(call.get("arguments"), Mapping):
        raise ToolfuzzError(f"format {format_name!r}: a call must be {{'name': str, 'arguments': dict}}, "
                            f"got {call!r:.200}")
    return {"name": call["name"], "arguments": call["arguments"]}


# ----------------------------------------------------------------------------------------------------
# helpers renderers share


def args_end(text: str, closers: int) -> Optional[int]:
    """Offset in ``text`` right after the last call's content, given how many closing brackets follow it.

    Every JSON payload puts its calls last in the document (the call list / ``tool_calls`` / content
    blocks last in their parents), so only whitespace, commas and exactly ``closers`` closing brackets
    follow the last call's last member. This holds for the layouts' dumpers and for any ``Style.dump``
    that keeps that shape (trailing commas, odd whitespace); ``None`` when a custom dumper broke it.
    """
    i = len(text)
    while True:
        while i > 0 and text[i - 1] in " \t\r\n,":
            i -= 1
        if closers == 0:
            return i
        if i == 0 or text[i - 1] not in "}]":
            return None
        i -= 1
        closers -= 1


def json_payload(ctx: Context, document: Any, closers: int, call_index: Optional[int]) -> Piece:
    """One JSON payload piece holding ``document`` (whose calls end ``closers`` brackets before its end)."""
    text = ctx.dump(document)
    return Piece(text, "payload", json=True,
                 args_end=args_end(text, closers) if ctx.calls or call_index is not None else 0,
                 call_index=call_index)


def single(ctx: Context) -> Optional[int]:
    """``call_index`` of a payload holding every call: 0 when there is exactly one, else None."""
    return 0 if len(ctx.calls) == 1 else None


_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def call_id(n: int, length: int = 24) -> str:
    """``length`` id characters derived from one drawn integer (one choice instead of ``length``)."""
    digest = hashlib.blake2b(n.to_bytes(8, "big"), digest_size=length).digest()
    return "".join(_ID_ALPHABET[b % len(_ID_ALPHABET)] for b in digest)


def payload_spans(rendered: Any) -> list:
    """(offset in the text, args_end) of every payload piece that can be cut inside its calls."""
    spans = []
    offset = 0
    for piece in rendered.pieces:
        if piece.role == "payload" and piece.args_end is not None and piece.args_end > 1:
            spans.append((offset, piece.args_end))
        offset += len(piece.text)
    return spans


def one_line_name(name: str) -> bool:
    """A name that fits on one line without surrounding whitespace (react, deepseek)."""
    return bool(name) and name == name.strip() and "\n" not in name and "\r" not in name


def tag_name(name: str) -> bool:
    """A name that fits in a tag or header: no whitespace, no ``<``, ``>`` or ``|`` (``<function=NAME>``;
    ``|`` is half of the ``<|...|>`` special tokens around harmony and DeepSeek headers)."""
    return bool(name) and not any(c.isspace() or c in "<>|" for c in name)
