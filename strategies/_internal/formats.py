"""Output formats (envelopes): how calls appear in raw model text.

API CONTRACT (shared with the mutation operators and the build step; keep it):

* ``FORMATS: dict[str, Format]`` — registered formats by name: json, openai, fenced, hermes, pythonic,
  mistral, llama3, react.
* ``Format.envelope``: the default envelope tokens of the format (e.g. hermes ``{"open": "<tool_call>",
  "close": "</tool_call>"}``); a :class:`Style` may override any of them.
* ``Format.json_payload``: True when the calls' payload is JSON text (every format but pythonic).
* ``render(format, calls, source, *, chatter: bool, style: Style | None = None) -> Rendered``: renders
  ``calls`` (list of ``{"name", "arguments"}``) deterministically given the choices drawn from
  ``source`` (whitespace/indent, chatter text, ids...).
* :class:`Rendered` holds ``pieces``; ``text`` is their concatenation. A payload piece whose ``json``
  flag is set is exactly one JSON document; ``args_end`` is the offset in that piece after which the
  arguments of every call in the piece are complete (cutting before it loses argument content).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional


@dataclass(frozen=True)
class Piece:
    text: str
    role: str  # "chatter" | "envelope" | "payload"
    json: bool = False
    args_end: Optional[int] = None
    call_index: Optional[int] = None  # payload of a single call, or None when it holds several


@dataclass(frozen=True)
class Rendered:
    format: str
    calls: list
    pieces: tuple
    chatter: bool

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.pieces)


@dataclass(frozen=True)
class Style:
    """How to render: the JSON dumper for payload values and envelope token overrides."""

    dump: Optional[Callable[[Any], str]] = None  # None = the format's normal JSON
    envelope: Mapping[str, str] = field(default_factory=dict)
