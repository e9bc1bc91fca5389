"""Layouts: the many ways a model writes the same valid calls in the same format.

Whitespace between tags, fences and JSON (none, a newline, a blank line, a tab, CRLF line ends), JSON
indentation (none, 0, 2, 4), no space after ``:``, a trailing newline, the fence language's case,
``\\u`` escapes or raw Unicode, the key order of the call object: every one of them is a *valid*
rendering, with exactly the same truth, and a parser that supports the format must read them all.

A layout is a recorded choice like any other: :func:`draw_layout` draws it first thing in every
rendering, and the all-zero choice is :data:`USUAL` (the commonest layout), so a shrunk sample
converges to it. A format declares which layout dimensions apply to it (``Format.layouts``).

:data:`LAYOUTS` names one variant per dimension ("compact", "crlf", "arguments_first" ...): probing
builds a valid sample of a format in each named layout that changes its text
(``core.layouts_for(format)``, then ``build_sample(..., layout=name)``), so an unsupported layout is
reported as such (a false_reject) instead of hiding the format's support.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

from strategies._internal.once import computed_once
from strategies._internal.source import Source
from strategies.registry import Registry

__all__ = ["DIMENSIONS", "LAYOUTS", "Layout", "NamedLayout", "USUAL", "draw_layout", "json_dumper", "resolve_layout"]

#: The layout dimensions a format may declare: JSON text, call-object key order, the whitespace
#: between envelope tokens and payload, line ends, the fence's language tag.
DIMENSIONS = frozenset({"json", "key_order", "gap", "newline", "fence_tag", "end_token"})

SPACED, COMPACT, NO_SPACE = (", ", ": "), (",", ":"), (", ", ":")


@dataclass(frozen=True)
class Layout:
    """How a valid rendering is laid out. The defaults are the commonest layout."""

    separators: tuple = SPACED  # JSON item and key separators
    indent: Optional[int] = None  # JSON indentation: None (one line), 0, 2, 4
    ascii: bool = False  # \\u escapes instead of raw non-ASCII characters
    arguments_first: bool = False  # the arguments member before the name in call objects
    gap: Optional[str] = None  # whitespace between envelope tokens and payload; None = the format's usual
    newline: str = "\n"  # line ends: "\n" or "\r\n"
    trailing_newline: bool = False
    fence_tag: str = "json"  # the code fence's language tag
    end_token: bool = False  # one of the format's end-of-turn tokens after the output

    def label(self) -> str:
        """A short description of what differs from the usual layout (``usual`` when nothing does)."""
        return self._label

    def __getstate__(self) -> dict:
        """The fields only: the cached dumpers are closures, and a pickled layout is rebuilt."""
        return {name: value for name, value in self.__dict__.items() if not name.startswith("_")}

    @computed_once
    def _dumpers(self) -> dict:
        """This layout's JSON dumpers, by ``indent`` (see :func:`json_dumper`)."""
        return {}

    @computed_once
    def _label(self) -> str:
        parts = []
        if self.separators != SPACED:
            parts.append({COMPACT: "compact JSON", NO_SPACE: "no space after ':'"}.get(self.separators, "separators"))
        if self.indent is not None:
            parts.append(f"indent {self.indent}")
        if self.ascii:
            parts.append("ascii escapes")
        if self.arguments_first:
            parts.append("arguments first")
        if self.gap is not None:
            parts.append({"": "no gap", " ": "space gap", "\t": "tab gap", "\n\n": "blank-line gap",
                          "\n": "newline gap"}.get(self.gap, repr(self.gap)))
        if self.newline != "\n":
            parts.append("CRLF")
        if self.trailing_newline:
            parts.append("trailing newline")
        if self.fence_tag != "json":
            parts.append(f"```{self.fence_tag}")
        if self.end_token:
            parts.append("end token left in")
        return ", ".join(parts) or "usual"


USUAL = Layout()

#: Probability that a valid rendering is laid out in something else than the usual layout.
UNUSUAL_P = 0.5
_SEPARATORS = (SPACED, COMPACT, NO_SPACE)
_SEPARATOR_WEIGHTS = (5, 3, 2)
_INDENTS = (None, 0, 2, 4)
_INDENT_WEIGHTS = (6, 1, 2, 1)
_GAPS = (None, "", " ", "\t", "\n\n", "\n")
_GAP_WEIGHTS = (4, 3, 1, 1, 1, 1)
_FENCE_TAGS = ("json", "JSON", "Json")


def draw_layout(source: Source, dims: frozenset) -> Layout:
    """Draw a layout over the dimensions ``dims`` of a format; the all-zero choices give :data:`USUAL`.

    One choice when the usual layout is drawn, a few more otherwise, each simplest-first.
    """
    if not source.boolean(UNUSUAL_P):
        return USUAL
    fields: dict = {}
    if "json" in dims:
        fields["separators"] = _SEPARATORS[source.weighted(_SEPARATOR_WEIGHTS)]
        fields["indent"] = _INDENTS[source.weighted(_INDENT_WEIGHTS)]
        fields["ascii"] = source.boolean(0.3)
    if "key_order" in dims:
        fields["arguments_first"] = source.boolean(0.3)
    if "gap" in dims:
        fields["gap"] = _GAPS[source.weighted(_GAP_WEIGHTS)]
    if "newline" in dims:
        fields["newline"] = "\r\n" if source.boolean(0.25) else "\n"
    fields["trailing_newline"] = source.boolean(0.3)
    if "fence_tag" in dims:
        fields["fence_tag"] = _FENCE_TAGS[source.weighted((3, 2, 1))]
    if "end_token" in dims:
        fields["end_token"] = source.boolean(0.3)
    key = tuple(fields.items())
    layout = _DRAWN.get(key)
    if layout is None:  # drawn once: equal draws share one object, and with it its dumpers
        layout = _DRAWN[key] = Layout(**fields)
    return layout


#: Layouts drawn so far, by their drawn fields (at most a few thousand combinations).
_DRAWN: dict = {}


def json_dumper(layout: Layout, *, indent: bool = True) -> Callable[[Any], str]:
    """The JSON serializer of a layout (``indent=False``: always one line, e.g. OpenAI argument strings).

    Strings holding lone surrogates are always escaped so the text stays encodable as UTF-8;
    ``allow_nan=False`` makes rendering a non-JSON value fail loudly instead of producing a text whose
    truth is not the calls. Indented JSON takes the layout's line ends (raw newlines never occur
    inside JSON strings, so the replacement is exact). Made once per layout object and ``indent``:
    every rendering asks for two.
    """
    dumpers = layout._dumpers
    dump = dumpers.get(indent)
    if dump is None:
        dump = dumpers[indent] = _make_dumper(layout, indent)
    return dump


def _make_dumper(layout: Layout, indent: bool) -> Callable[[Any], str]:
    ascii_only = layout.ascii
    level = layout.indent if indent else None
    item, key = layout.separators
    separators = (item.rstrip(), key) if level is not None else (item, key)
    newline = layout.newline
    encode, escaped = _encoder(ascii_only, level, separators), _encoder(True, level, separators)

    def dump(value: Any) -> str:
        text = encode(value)
        if not ascii_only and not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: escape them
                text = escaped(value)
        if level is not None and newline != "\n":
            text = text.replace("\n", newline)
        return text

    return dump


_ENCODERS: dict = {}


def _encoder(ascii_only: bool, indent: Optional[int], separators: tuple) -> Callable[[Any], str]:
    """``json.dumps`` with these options, made once (see :func:`one_shot_encoder`). check_circular=False:
    the values are drawn trees, and the cycle check calls id() for every container, which raises
    an audit event each (a worker's audit hook then runs for nothing)."""
    key = (ascii_only, indent, separators)
    encode = _ENCODERS.get(key)
    if encode is None:
        encode = _ENCODERS[key] = one_shot_encoder(json.JSONEncoder(
            ensure_ascii=ascii_only, allow_nan=False, indent=indent, separators=separators, check_circular=False))
    return encode


def one_shot_encoder(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode``, its chunk iterator built once instead of on every call.

    ``JSONEncoder.encode`` builds the C encoder (one line) or the pure-Python closures (indented)
    afresh for each value, which cost more than encoding a tool call does: a fifth of what
    rendering one cost. Without a cycle check neither keeps state between values, so one serves
    them all. Built from the ``json`` module's own pieces (the C ``c_make_encoder`` and
    ``_make_iterencode``, with the float formatting ``JSONEncoder.iterencode`` gives the latter);
    where an interpreter lacks them, or encodes a probe differently, ``encoder.encode`` itself.
    """
    if encoder.check_circular:
        return encoder.encode
    from json import encoder as stdlib

    strings = stdlib.encode_basestring_ascii if encoder.ensure_ascii else stdlib.encode_basestring
    allow_nan = encoder.allow_nan
    chunks: Any = None
    try:
        if encoder.indent is None and stdlib.c_make_encoder is not None:
            chunks = stdlib.c_make_encoder(None, encoder.default, strings, None, encoder.key_separator,
                                           encoder.item_separator, encoder.sort_keys, encoder.skipkeys, allow_nan)
        else:
            def floatstr(value: float, _repr: Any = float.__repr__) -> str:
                if value != value or value in (_INFINITY, -_INFINITY):
                    if not allow_nan:
                        raise ValueError("Out of range float values are not JSON compliant: " + repr(value))
                    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
                return _repr(value)

            chunks = stdlib._make_iterencode(None, encoder.default, strings, encoder.indent, floatstr,
                                             encoder.key_separator, encoder.item_separator, encoder.sort_keys,
                                             encoder.skipkeys, True)
    except (AttributeError, TypeError):
        return encoder.encode
    join = "".join

    def encode(value: Any) -> str:
        return join(chunks(value, 0))

    try:
        same = all(encode(probe) == encoder.encode(probe) for probe in _PROBES)
    except Exception:  # noqa: BLE001 - any difference at all: the slow, sure way
        same = False
    return encode if same else encoder.encode


_INFINITY = float("inf")
#: Values a one-shot encoder must encode as its ``JSONEncoder`` does before it is used.
_PROBES = ("a\u00e9\"\n", 1, -2.5e-300, 1e16, True, None, [], {}, [1, [2, {"k": "v"}]],
           {"name": "f", "arguments": {"x": [1.5, "\u2028"], "y": {}, "z": None}})


@dataclass(frozen=True)
class NamedLayout:
    """A layout with a name (the word probing and ``model_outputs(layouts=...)`` use) and the dimension
    it varies (a format that does not declare the dimension does not have this layout)."""

    name: str
    description: str
    layout: Layout
    dimension: Optional[str] = None  # None: every format


LAYOUTS: Registry[NamedLayout] = Registry("layout")
for _named in (
    NamedLayout("usual", "the commonest layout", USUAL),
    NamedLayout("compact", "JSON without spaces: {\"a\":1,\"b\":2}", Layout(separators=COMPACT), "json"),
    NamedLayout("no_space_after_colon", "JSON with no space after ':': {\"a\":1, \"b\":2}",
                Layout(separators=NO_SPACE), "json"),
    NamedLayout("indent_0", "JSON broken over lines without indentation", Layout(indent=0), "json"),
    NamedLayout("indent_2", "JSON indented by 2 spaces", Layout(indent=2), "json"),
    NamedLayout("indent_4", "JSON indented by 4 spaces", Layout(indent=4), "json"),
    NamedLayout("ascii_escapes", "non-ASCII characters as \\u escapes", Layout(ascii=True), "json"),
    NamedLayout("arguments_first", "the arguments member before the name", Layout(arguments_first=True),
                "key_order"),
    NamedLayout("no_gap", "no whitespace between envelope tokens and the payload", Layout(gap=""), "gap"),
    NamedLayout("blank_line_gap", "a blank line between envelope tokens and the payload", Layout(gap="\n\n"), "gap"),
    NamedLayout("tab_gap", "a tab between envelope tokens and the payload", Layout(gap="\t"), "gap"),
    NamedLayout("crlf", "CRLF line ends", Layout(newline="\r\n", indent=2), "newline"),
    NamedLayout("trailing_newline", "a newline after the output", Layout(trailing_newline=True)),
    NamedLayout("fence_tag_upper", "```JSON as the fence's language tag", Layout(fence_tag="JSON"), "fence_tag"),
    NamedLayout("end_token", "an end-of-turn token an engine left after the output (<|im_end|>, </s>)",
                Layout(end_token=True), "end_token"),
):
    LAYOUTS.register(_named.name, _named, module=__name__)


def resolve_layout(layout: Any) -> Optional[Layout]:
    """A :class:`Layout` from a name in :data:`LAYOUTS`, a Layout, or None (drawn)."""
    if layout is None or isinstance(layout, Layout):
        return layout
    return LAYOUTS[layout].layout


def combine(base: Layout, **changes: Any) -> Layout:
    """``base`` with some fields changed (for operators and tests that need a particular layout)."""
    return replace(base, **changes)
