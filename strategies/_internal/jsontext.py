"""A small lenient tokenizer for JSON-like payload text, and the text encoders the syntax operators share.

Why not ``json.loads``: syntax operators edit the *text* at structural positions (after a ``{``, inside a
key, right before a closer) and must keep every other byte as the format rendered it, so a parse and
re-serialization would lose the rendering's own whitespace and quoting. They must also find positions in
text that is only JSON-like (pythonic calls use ``(``, ``=`` and single quotes). One regex pass gives
tokens with offsets, one linear pass over them gives roles (object key or value) and the spans of
members and containers. Both are linear and never recurse, so a payload of any depth is safe.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

#: One token, leading whitespace skipped. Groups: 1 punctuation (its own kind); 2 string (either quote;
#: an unterminated string falls through to 5); 3 number; 4 bare word (literals, identifiers); 5 anything else.
_TOKEN = re.compile(r"""[ \t\n\r]*(?:
     ([{}\[\]():,=])
    |("[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*')
    |(-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    |([A-Za-z_$][A-Za-z0-9_$.]*)
    |(.))""", re.S | re.X)
_KINDS = (None, None, "s", "n", "w", "o")

OPENERS = {"{": "}", "[": "]", "(": ")"}
CLOSERS = {"}", "]", ")"}
LITERALS = frozenset({"true", "false", "null", "True", "False", "None", "NaN", "Infinity"})
IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")


class Token:
    """One token: ``kind`` is the punctuation character itself, or ``s`` string, ``n`` number, ``w`` bare
    word, ``o`` other; ``key`` marks a string/word in key position (followed by ``:`` or ``=``)."""

    __slots__ = ("kind", "start", "end", "key")

    def __init__(self, kind: str, start: int, end: int):
        self.kind, self.start, self.end, self.key = kind, start, end, False

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.start}, {self.end}{', key' if self.key else ''})"


@dataclass
class Container:
    open: int  # offset of the opener
    close: int  # offset of the closer
    kind: str  # "{", "[" or "("
    last_value_end: int  # end offset of the last member/element, -1 when empty


@dataclass
class Analysis:
    """Tokens of one payload and the structure found in them (offsets into ``text``)."""

    text: str
    tokens: list = field(default_factory=list)
    containers: list = field(default_factory=list)  # closed containers, in closing order
    members: list = field(default_factory=list)  # (key start, value end) of object members / keyword args

    def of_kind(self, *kinds: str) -> list:
        return [t for t in self.tokens if t.kind in kinds]

    def keys(self) -> list:
        return [t for t in self.tokens if t.key]

    def values(self, kind: str) -> list:
        """Scalar value tokens of ``kind`` (not keys)."""
        return [t for t in self.tokens if t.kind == kind and not t.key]


def tokenize(text: str) -> list:
    """Every token of ``text`` with its offsets; never fails (unknown characters are ``o`` tokens)."""
    tokens = []
    append = tokens.append
    kinds = _KINDS
    for m in _TOKEN.finditer(text):
        group = m.lastindex
        if group is None:  # trailing whitespace only
            continue
        start, end = m.span(group)
        append(Token(text[start] if group == 1 else kinds[group], start, end))
    return tokens


def analyze(text: str) -> Analysis:
    """Tokenize and find keys, object members and containers in one pass (no recursion)."""
    tokens = tokenize(text)
    result = Analysis(text, tokens)
    # a frame: [opener token, last value end, start of the pending member's key or -1]
    stack: list = []
    n = len(tokens)

    def complete(end: int) -> None:
        if stack:
            frame = stack[-1]
            frame[1] = end
            if frame[2] >= 0:
                result.members.append((frame[2], end))
                frame[2] = -1

    for i, tok in enumerate(tokens):
        kind = tok.kind
        if kind in OPENERS:
            stack.append([tok, -1, -1])
        elif kind in CLOSERS:
            if stack and OPENERS[stack[-1][0].kind] == kind:
                opener, last, _ = stack.pop()
                result.containers.append(Container(opener.start, tok.start, opener.kind, last))
                complete(tok.end)
        elif kind in ("s", "w", "n"):
            nxt = tokens[i + 1].kind if i + 1 < n else ""
            if kind != "n" and nxt in (":", "="):
                tok.key = True
                if stack:
                    stack[-1][2] = tok.start
            elif kind == "w" and nxt == "(":
                pass  # a pythonic function name: the call container is the value
            else:
                complete(tok.end)
    return result


def splice(text: str, edits) -> str:
    """Apply non-overlapping ``(start, end, replacement)`` edits to ``text``."""
    out = []
    pos = 0
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1])):
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


_SINGLE_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_NEEDS_ESCAPE = re.compile(r"[\\'\x00-\x1f\ud800-\udfff]")


def _escape_single(m: re.Match) -> str:
    c = m.group()
    return _SINGLE_ESCAPES.get(c) or "\\u%04x" % ord(c)


def single_quoted(value: str) -> str:
    """``value`` as a single-quoted literal, escaped the way Python's repr does (``O'Brien`` ->
    ``'O\\'Brien'``), using only escapes that Python, JSON5 and JavaScript all read the same way."""
    return "'" + _NEEDS_ESCAPE.sub(_escape_single, value) + "'"


def decode_string(token_text: str):
    """The value of a double-quoted JSON string token, or None when it is not one."""
    if not token_text.startswith('"'):
        return None
    try:
        return json.loads(token_text)
    except ValueError:
        return None


def string_encoder(token_text: str, value: str):
    """The ``json.dumps`` variant that renders ``value`` exactly as ``token_text``, or None.

    Lets an operator edit a JSON document that a format embeds as a JSON *string* (OpenAI's
    ``"arguments": "{...}"``) and re-embed it with the same escaping the format used.
    """
    for ascii_only in (True, False):
        if json.dumps(value, ensure_ascii=ascii_only) == token_text:
            return lambda s, _a=ascii_only: json.dumps(s, ensure_ascii=_a)
    return None
