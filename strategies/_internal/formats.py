"""Output formats (envelopes): how calls appear in raw model text.

API CONTRACT (shared with the mutation operators and the build step; keep it):

* ``FORMATS`` — a :class:`~strategies.registry.Registry` of formats by name: json, openai, fenced,
  hermes, pythonic, mistral, llama3, react. A format registered with :func:`output_format` declares
  its capabilities (below), and every operator whose requirements they meet applies to it: nothing
  else lists formats by name.
* ``Format.envelope``: the default envelope tokens of the format (e.g. hermes ``{"open": "<tool_call>",
  "close": "</tool_call>"}``); a :class:`Style` may override any of them.
* Capabilities: ``json_payload`` (the payload is JSON text), ``call_object`` (JSON call objects and the
  keys of their name and arguments), ``bare_arguments`` (a JSON payload is one call's arguments object),
  ``tags`` / ``tag_variants`` (XML-like tag pairs and their common misspellings), ``fence`` (the
  envelope tokens of a code fence), ``marker_variants`` (misspellings of single markers), ``fragments``
  (structural tokens a model may repeat), ``fake_call`` (how a call looks in this format, for a fake
  one inside a string), ``writes_name`` (which tool names it can write).
* ``render(format, calls, source, *, chatter: bool, style: Style | None = None) -> Rendered``: renders
  ``calls`` (list of ``{"name", "arguments"}``) deterministically given the choices drawn from
  ``source`` (whitespace/indent, chatter text, ids...).
* :class:`Rendered` holds ``pieces``; ``text`` is their concatenation. A payload piece whose ``json``
  flag is set is exactly one JSON document; ``args_end`` is the offset in that piece after which the
  arguments of every call in the piece are complete (cutting before it loses argument content).

Pieces per format (what operators can rely on):

* json / fenced / mistral / openai: one JSON payload piece for all calls (``call_index`` set when it
  holds one call); fenced adds envelope pieces ``"```json\\n"`` and ``"\\n```"``.
* hermes / llama3: one JSON payload piece per call, envelope pieces around and between them.
* react: per call an ``Action:`` envelope, the name as a non-JSON payload piece, an ``Action Input:``
  envelope and the arguments object as a JSON payload piece (``args_end`` = its end); thoughts are
  ``chatter`` pieces even when ``chatter=False`` (the format always has them).
* pythonic: one non-JSON payload piece per call, ``name(k=v, ...)``, with ``args_end`` right before
  the closing parenthesis.
* chatter pieces carry their own separating whitespace.

Calls a format cannot write faithfully (a pythonic name that is no Python identifier) raise
:class:`Unrepresentable`; :func:`supports_name` answers that ahead of time.
"""

from __future__ import annotations

import functools

import hashlib
import json
import keyword
import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from strategies._internal.source import Source
from strategies.errors import ToolfuzzError, UnknownName
from strategies.registry import Registry


@dataclass(frozen=True)
class Piece:
    """One piece of a rendering: prose (``chatter``), envelope tokens, or a payload (see the contract)."""

    text: str
    role: str  # "chatter" | "envelope" | "payload"
    json: bool = False
    args_end: Optional[int] = None
    call_index: Optional[int] = None  # payload of a single call, or None when it holds several


@dataclass(frozen=True)
class Rendered:
    """Calls rendered in a format: the pieces of the text (``text`` is their concatenation) and the
    calls the text denotes, exactly."""

    format: str
    calls: list
    pieces: tuple
    chatter: bool

    @functools.cached_property
    def text(self) -> str:
        return "".join(p.text for p in self.pieces)


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

#: JSON layouts, most common first: ``{"a": 1}``, ``{"a":1}``, and 2-space indentation.
_LAYOUTS = ((", ", ": "), (",", ":"), None)
_LAYOUT_WEIGHTS = (6, 3, 1)
_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _json_dumper(source: Source) -> Callable[[Any], str]:
    """Draw a JSON layout and ASCII escaping; returns the format's normal dumper.

    Raw (non-ASCII) output is the common case; strings holding lone surrogates are always escaped
    (``ensure_ascii``) so the text stays encodable as UTF-8. ``allow_nan=False`` makes rendering a
    non-JSON value fail loudly instead of producing a text whose truth is not the calls.
    """
    layout = source.weighted(_LAYOUT_WEIGHTS)
    ascii_only = source.boolean(0.15)
    separators = _LAYOUTS[layout]
    indent = 2 if separators is None else None

    def dump(value: Any) -> str:
        text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=False, indent=indent,
                          separators=separators)
        if not ascii_only:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: escape them
                text = json.dumps(value, ensure_ascii=True, allow_nan=False, indent=indent,
                                  separators=separators)
        return text

    return dump


def _args_end(text: str, closers: int) -> Optional[int]:
    """Offset in ``text`` right after the last call's arguments, given how many closing brackets follow them.

    Every JSON payload puts the arguments last in each call object (and the call list / openai
    ``tool_calls`` last in its parent), so only whitespace, commas and exactly ``closers`` closing
    brackets follow the last arguments. This holds for the normal dumper and for any ``Style.dump``
    that keeps key order (e.g. trailing commas, odd whitespace); ``None`` when a custom dumper
    broke that assumption and the offset is unknown.
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


@dataclass
class _Context:
    """What a renderer sees: the calls, the source, the merged envelope tokens and the dumpers."""

    calls: list
    source: Source
    tokens: Mapping[str, str]
    dump: Optional[Callable[[Any], str]]  # payload JSON dumper (Style.dump or the normal one)
    normal_dump: Optional[Callable[[Any], str]]  # the format's normal dumper
    shape: Optional["CallObject"] = None
    rewrite: Optional[Callable[[dict], dict]] = None  # Style.call

    def call_object(self, call: Mapping[str, Any], arguments: Any = None) -> dict:
        """The JSON call object of ``call`` in this format's keys (``arguments`` replaces the
        arguments value, e.g. by their JSON string), passed through ``Style.call``."""
        shape = self.shape
        obj = {shape.name_key: call["name"],
               shape.arguments_key: call["arguments"] if arguments is None else arguments}
        return self.rewrite(obj) if self.rewrite is not None else obj


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


@dataclass(frozen=True)
class Format:
    """An output format: its envelope tokens, its capabilities and the renderer that writes calls in it.

    ``renderer(ctx) -> list[Piece]`` draws its own variation from ``ctx.source``; chatter around the
    envelope is added by :func:`render`, before and/or after (``chatter_after=False``: before only).
    The capability fields are what operators select formats by (see the module docstring).
    """

    name: str
    description: str
    envelope: Mapping[str, str]
    json_payload: bool
    renderer: Callable[[_Context], list]
    chatter_after: bool = True
    call_object: Optional[CallObject] = None
    bare_arguments: bool = False
    tags: tuple = ()  # ((open token name, close token name), ...)
    tag_variants: tuple = ()  # ((open text, close text), ...) misspellings models write
    fence: Optional[tuple] = None  # (open token name, close token name) of a code fence
    marker_variants: Mapping[str, tuple] = field(default_factory=dict)  # token name -> misspellings
    fragments: tuple = ()  # structural fragments, "{tool}" = a tool name
    fake_call: str = ""  # one call to "{tool}" with no arguments, as this format writes it
    writes_name: Callable[[str], bool] = _any_name

    def supports_name(self, name: str) -> bool:
        """Can this format write a call to the tool ``name`` faithfully? (Argument keys always can.)"""
        return self.writes_name(name)


FORMATS: Registry[Format] = Registry("format")


def output_format(name: str, *, description: str, envelope: Optional[Mapping[str, str]] = None,
                  json_payload: bool = True, **capabilities: Any) -> Callable:
    """Register a renderer as the format ``name`` with its capabilities (the fields of :class:`Format`).

    A name registered twice raises :class:`~strategies.registry.DuplicateName` naming both modules.
    """

    def register(renderer: Callable[[_Context], list]) -> Callable[[_Context], list]:
        FORMATS.register(name, Format(name=name, description=description, envelope=dict(envelope or {}),
                                      json_payload=json_payload, renderer=renderer, **capabilities),
                         module=renderer.__module__)
        return renderer

    return register


def get_format(name: Any) -> Format:
    """The format ``name`` (a :class:`Format` is returned as is); ``UnknownName`` with close matches."""
    return name if isinstance(name, Format) else FORMATS[name]


def supports_name(format: Any, name: str) -> bool:
    """Can ``format`` write a call to the tool ``name`` faithfully? (Argument keys always can.)

    False, for example, for pythonic names that are not dotted Python identifiers and for react names
    that do not fit on one ``Action:`` line; :func:`render` raises :class:`Unrepresentable` for those.
    Lets a scheduler skip (tool, format) pairs statically.
    """
    return get_format(format).supports_name(name)


def _pythonic_name(name: str) -> bool:
    return all(_is_keyword_name(part) for part in name.split("."))


def _one_line_name(name: str) -> bool:
    return bool(name) and name == name.strip() and "\n" not in name and "\r" not in name


def render(format: Any, calls: list, source: Source, *, chatter: bool, style: Optional[Style] = None) -> Rendered:
    """Render ``calls`` in ``format`` (a name or a :class:`Format`), every variation drawn from ``source``.

    The result is exact: ``Rendered.calls`` is what the text denotes. Choices, in order: the JSON
    layout (JSON formats), the format's own variation (ids, quotes, thoughts...), then — when
    ``chatter`` — where prose goes and which sentences. All-zero choices give the most common rendering,
    e.g. ``{"name": "get_weather", "arguments": {"city": "Paris"}}`` for ``json``.

    ``style.dump`` replaces the JSON serializer of every payload document (for ``openai`` the outer
    message document; the ``arguments`` strings inside it stay the normal dumper's output, so a custom
    dumper changes the envelope JSON and never double-encodes arguments). ``style.envelope`` overrides
    envelope tokens by name (see each format's ``envelope``). Zero calls render as the format's empty
    form (``[]`` for list formats, nothing for tag formats), whose truth is ``[]``.
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
    normal = _json_dumper(source) if fmt.json_payload else None
    dump = style.dump if style is not None and style.dump is not None else normal
    rewrite = style.call if style is not None else None
    pieces = fmt.renderer(_Context(calls=calls, source=source, tokens=tokens, dump=dump, normal_dump=normal,
                                   shape=fmt.call_object, rewrite=rewrite))
    if chatter:
        where = source.integer(0, 2) if fmt.chatter_after else 0  # 0 before, 1 after, 2 both
        if where in (0, 2):
            sep = "\n" if not fmt.chatter_after else source.choice(("\n", " ", "\n\n"))
            pieces.insert(0, Piece(_sentences(source, CHATTER_BEFORE) + sep, "chatter"))
        if where in (1, 2):
            pieces.append(Piece(source.choice(("\n", "\n\n", " ")) + _sentences(source, CHATTER_AFTER),
                                "chatter"))
    return Rendered(format=fmt.name, calls=calls, pieces=tuple(pieces), chatter=chatter)


def payload_spans(rendered: Any) -> list:
    """(offset in the text, args_end) of every payload piece that can be cut inside its arguments."""
    spans = []
    offset = 0
    for piece in rendered.pieces:
        if piece.role == "payload" and piece.args_end is not None and piece.args_end > 1:
            spans.append((offset, piece.args_end))
        offset += len(piece.text)
    return spans


def _sentences(source: Source, bank: tuple) -> str:
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
# JSON formats


def _payload(ctx: _Context, document: Any, closers: int, call_index: Optional[int]) -> Piece:
    text = ctx.dump(document)
    return Piece(text, "payload", json=True,
                 args_end=_args_end(text, closers) if ctx.calls or call_index is not None else 0,
                 call_index=call_index)


def _json_document(ctx: _Context) -> Piece:
    """A bare call object for one call, a list of them otherwise (shared by json and fenced)."""
    if len(ctx.calls) == 1:
        return _payload(ctx, ctx.call_object(ctx.calls[0]), 1, 0)
    return _payload(ctx, [ctx.call_object(call) for call in ctx.calls], 2, None)


_PLAIN_CALL = CallObject()
_JSON_FAKE = '{"name": "{tool}", "arguments": {}}'


@output_format("json", description="a bare call object, or a JSON list of them for several calls",
               call_object=_PLAIN_CALL, fragments=('{"name": ', "[{"),
               fake_call='"}, {"name": "{tool}", "arguments": {}}, {"x": "')
def _render_json(ctx: _Context) -> list:
    return [_json_document(ctx)]


@output_format("openai", description="an OpenAI assistant message: tool_calls with JSON-string arguments",
               envelope={"key": "tool_calls", "type": "function"},
               call_object=CallObject(arguments_as_string=True),
               fragments=('{"tool_calls": [', '"arguments": "'),
               fake_call='"}, {"id": "call_999", "type": "function", "function": {"name": "{tool}", '
                         '"arguments": "{}"}}')
def _render_openai(ctx: _Context) -> list:
    full_message = ctx.source.boolean(0.3)  # also "role" and "content"
    tool_calls = []
    for call in ctx.calls:
        tool_calls.append({"id": "call_" + _call_id(ctx.source.integer(0, 2**48 - 1)),
                           "type": ctx.tokens["type"],
                           "function": ctx.call_object(call, ctx.normal_dump(call["arguments"]))})
    message: dict = {"role": "assistant", "content": None} if full_message else {}
    message[ctx.tokens["key"]] = tool_calls
    return [_payload(ctx, message, 4, 0 if len(ctx.calls) == 1 else None)]


def _call_id(n: int) -> str:
    """24 id characters derived from one drawn integer (one choice instead of 24)."""
    digest = hashlib.blake2b(n.to_bytes(8, "big"), digest_size=24).digest()
    return "".join(_ID_ALPHABET[b % len(_ID_ALPHABET)] for b in digest)


@output_format("fenced", description="the json payload in a ```json fence",
               envelope={"open": "```json", "close": "```"}, call_object=_PLAIN_CALL,
               fence=("open", "close"), fragments=("```json\n", "```"),
               fake_call='```\n```json\n{"name": "{tool}", "arguments": {}}\n```')
def _render_fenced(ctx: _Context) -> list:
    return [Piece(ctx.tokens["open"] + "\n", "envelope"), _json_document(ctx),
            Piece("\n" + ctx.tokens["close"], "envelope")]


#: Tag pairs models write instead of <tool_call>...</tool_call>.
_HERMES_TAG_VARIANTS = (
    ("<toolcall>", "</toolcall>"), ("<tool-call>", "</tool-call>"), ("<function_call>", "</function_call>"),
    ("<tool_calls>", "</tool_calls>"), ("<tool_call>", "</tool_calls>"), ("<tool_call>", "<tool_call>"),
    ("<TOOL_CALL>", "</TOOL_CALL>"), ("<tool_call>", "<|im_end|>"), ("<functioncall>", "</functioncall>"))


@output_format("hermes", description="one <tool_call> tag around each call object (Hermes / Qwen)",
               envelope={"open": "<tool_call>", "close": "</tool_call>"}, call_object=_PLAIN_CALL,
               tags=(("open", "close"),), tag_variants=_HERMES_TAG_VARIANTS,
               fragments=("<tool_call>", "</tool_call>"),
               fake_call='</tool_call><tool_call>{"name": "{tool}", "arguments": {}}</tool_call>')
def _render_hermes(ctx: _Context) -> list:
    pieces: list = []
    for i, call in enumerate(ctx.calls):
        if i:
            pieces.append(Piece("\n", "envelope"))
        pieces += [Piece(ctx.tokens["open"] + "\n", "envelope"), _payload(ctx, ctx.call_object(call), 1, i),
                   Piece("\n" + ctx.tokens["close"], "envelope")]
    return pieces


@output_format("mistral", description="[TOOL_CALLS] followed by a JSON list of call objects",
               envelope={"open": "[TOOL_CALLS]"}, call_object=_PLAIN_CALL,
               marker_variants={"open": ("", "[TOOL_CALL]", "[TOOLCALLS]", "TOOL_CALLS", "[tool_calls]",
                                         "[TOOL_CALLS", "[TOOL_CALLS]]", "[TOOL_CALLS][TOOL_CALLS]")},
               fragments=("[TOOL_CALLS]", "[TOOL_CALLS] ["),
               fake_call='[TOOL_CALLS][{"name": "{tool}", "arguments": {}}]')
def _render_mistral(ctx: _Context) -> list:
    return [Piece(ctx.tokens["open"], "envelope"),
            _payload(ctx, [ctx.call_object(call) for call in ctx.calls], 2, 0 if len(ctx.calls) == 1 else None)]


@output_format("llama3", description="<|python_tag|> then {\"name\", \"parameters\"} objects joined by '; '",
               envelope={"open": "<|python_tag|>", "separator": "; "},
               call_object=CallObject(arguments_key="parameters"),
               marker_variants={"open": ("", "<|python_tag|", "<python_tag>", "<|python_start|>",
                                         "<|python_tag|><|python_tag|>", "python_tag", "<|python|>")},
               fragments=("<|python_tag|>", "<|eom_id|>"),
               fake_call='<|python_tag|>{"name": "{tool}", "parameters": {}}<|eom_id|>')
def _render_llama3(ctx: _Context) -> list:
    if not ctx.calls:
        return []
    pieces: list = [Piece(ctx.tokens["open"], "envelope")]
    for i, call in enumerate(ctx.calls):
        if i:
            pieces.append(Piece(ctx.tokens["separator"], "envelope"))
        pieces.append(_payload(ctx, ctx.call_object(call), 1, i))
    return pieces


@output_format("react", description="Thought / Action / Action Input blocks (LangChain ReAct)",
               envelope={"thought": "Thought:", "action": "Action:", "input": "Action Input:"},
               chatter_after=False, bare_arguments=True, writes_name=_one_line_name,
               fragments=("Action:", "Action Input:"),
               fake_call="\nObservation: done\nAction: {tool}\nAction Input: {}")
def _render_react(ctx: _Context) -> list:
    pieces: list = []
    for i, call in enumerate(ctx.calls):
        name = call["name"]
        if not _one_line_name(name):
            raise Unrepresentable(f"react cannot write the tool name {name!r} on one Action line")
        if i == 0 or ctx.source.boolean(0.3):  # a thought before each further action, sometimes
            if i:
                pieces.append(Piece("\n", "envelope"))
            pieces += [Piece(ctx.tokens["thought"] + " ", "envelope"), Piece(ctx.source.choice(THOUGHTS), "chatter")]
        pieces += [Piece("\n" + ctx.tokens["action"] + " ", "envelope"), Piece(name, "payload", call_index=i),
                   Piece("\n" + ctx.tokens["input"] + " ", "envelope"), _payload(ctx, call["arguments"], 0, i)]
    return pieces


# ----------------------------------------------------------------------------------------------------
# pythonic


@output_format("pythonic", description="a Python list of calls: [get_weather(city=\"Paris\")]",
               envelope={"open": "[", "close": "]"}, json_payload=False, writes_name=_pythonic_name,
               fragments=("[{tool}(", "("), fake_call='"), {tool}(), print("')
def _render_pythonic(ctx: _Context) -> list:
    """Values are Python literals (True/False/None, escaped strings); keys that cannot be keyword
    arguments (``"from"``, ``"two words"``) go in a trailing ``**{...}``, which Python reads the same."""
    single = ctx.source.boolean(0.25)  # repr-style single quotes instead of the common double quotes
    pieces: list = [Piece(ctx.tokens["open"], "envelope")]
    for i, call in enumerate(ctx.calls):
        if i:
            pieces.append(Piece(", ", "envelope"))
        name = call["name"]
        if not _pythonic_name(name):
            raise Unrepresentable(f"pythonic cannot write the tool name {name!r} as a Python name")
        plain, extra = [], {}
        for key, value in call["arguments"].items():
            if _is_keyword_name(key):
                plain.append(f"{key}={_py(value, single)}")
            else:
                extra[key] = value
        if extra:
            plain.append("**" + _py(extra, single))
        body = f"{name}({', '.join(plain)}"
        pieces.append(Piece(body + ")", "payload", args_end=len(body), call_index=i))
    pieces.append(Piece(ctx.tokens["close"], "envelope"))
    return pieces


def _is_keyword_name(name: str) -> bool:
    """A name Python keeps as written: an identifier, NFKC-normal (Python normalizes identifiers), not a keyword."""
    return (name.isidentifier() and not keyword.iskeyword(name) and name != "__debug__"
            and unicodedata.normalize("NFKC", name) == name)


def _py(value: Any, single: bool) -> str:
    """A Python literal that ``ast.literal_eval`` reads back as exactly ``value``."""
    if value is None or value is True or value is False:
        return repr(value)
    if isinstance(value, str):
        return _py_str(value, single)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ToolfuzzError(f"{value!r} is not a JSON value")
        return repr(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_py_str(k, single)}: {_py(v, single)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_py(v, single) for v in value) + "]"
    raise ToolfuzzError(f"{value!r:.100} is not a JSON value")


def _py_str(value: str, single: bool) -> str:
    literal = repr(value)
    if single or literal[0] == '"':
        return literal
    # repr chose single quotes: re-quote with double quotes, keeping repr's escapes for everything else.
    out, body, i = ['"'], literal[1:-1], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            nxt = body[i + 1]
            out.append("'" if nxt == "'" else c + nxt)
            i += 2
            continue
        out.append('\\"' if c == '"' else c)
        i += 1
    out.append('"')
    return "".join(out)
