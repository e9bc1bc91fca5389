"""The text scan of a recorded output: one pass over every JSON-like region of it, noting what
lies outside string literals (trailing commas, single-quoted strings, Python literals, unquoted
keys, comments, NaN, unbalanced brackets) and inside them (invalid escapes, raw control characters,
lone surrogates), by offset; and :func:`repair`, the copy of a text those fixed (what the calls
detectors read when the parse failed). The text detectors (:mod:`fuzzer.records.detectors`) name
what the scan found."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


#: What the scan notes by offset; each kind is the evidence of one detector below. Invalid escapes,
#: raw controls and lone surrogates are seen inside string literals, the others outside them.
OFFSET_KINDS = ("trailing_commas", "single_quotes", "python_literals", "unquoted_keys", "comments", "nan_values",
                "invalid_escapes", "raw_controls", "lone_surrogates", "smart_quotes", "extra_closers",
                "huge_numbers")


@dataclass
class Scan:
    """What one pass over the JSON-like regions of a text found (positions are offsets)."""

    #: Where each of :data:`OFFSET_KINDS` was seen, in text order.
    offsets: dict[str, list[int]] = field(default_factory=lambda: {kind: [] for kind in OFFSET_KINDS})
    max_depth: int = 0
    open_at_end: str = ""  # the brackets still open when the text ends
    in_string_at_end: bool = False
    last: str = ""  # the last significant character
    incomplete_token: bool = False  # the text ends inside a number or a literal
    regions: int = 0
    pythonic: bool = False


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d*)?")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_VALID_ESCAPES = '"\\/bfnrtu'
_OPENERS = {"{": "}", "[": "]", "(": ")"}
_CLOSERS = {"}", "]", ")"}
_SMART = "\u201c\u201d"
_LITERALS = {"true", "false", "null"}
_PYTHON = {"True", "False", "None"}
_NANS = {"NaN", "Infinity", "nan", "inf"}


def scan(text: str) -> Scan:
    """One pass over ``text``: prose is skipped until a ``{`` or ``[`` opens a region, which ends
    when its brackets close. Linear time, no backtracking."""
    out = Scan()
    n = len(text)
    i = 0
    stack: list[str] = []
    last = ""
    while i < n:
        ch = text[i]
        if not stack:  # prose: look for the next region
            if ch in "{[":
                out.regions += 1
                if ch == "[" and re.match(r"\[\s*[A-Za-z_][\w.]*\(", text[i:i + 200]):
                    out.pythonic = True
                stack.append(ch)
                out.max_depth = max(out.max_depth, 1)
                last = ch
            elif ch in "}]" and last in "}]":
                out.offsets["extra_closers"].append(i)
            i += 1
            continue
        if ch in " \t\r\n":
            i += 1
            continue
        if ch == '"' or ch in _SMART:
            if ch in _SMART:
                out.offsets["smart_quotes"].append(i)
            i, closed = _dq_string(text, i + 1, out, smart=ch in _SMART)
            last = '"'
            if not closed:
                out.in_string_at_end = True
                break
            continue
        if ch == "'":
            if last in "{[,:(" or last == "":
                out.offsets["single_quotes"].append(i)
            end = _sq_end(text, i + 1)
            if end < 0:
                out.in_string_at_end = True
                last = "'"
                break
            i, last = end + 1, '"'
            continue
        if ch in _OPENERS:
            stack.append(ch)
            out.max_depth = max(out.max_depth, len(stack))
            last = ch
            i += 1
            continue
        if ch in _CLOSERS:
            if last == ",":
                out.offsets["trailing_commas"].append(i)
            stack.pop()
            last = ch
            i += 1
            continue
        if ch in ",:=":
            last = ch
            i += 1
            continue
        if ch == "/" and text.startswith(("//", "/*"), i):
            out.offsets["comments"].append(i)
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            i = n if end < 0 else end + (1 if text[i + 1] == "/" else 2)
            continue
        if ch == "#" and not out.pythonic:
            out.offsets["comments"].append(i)
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        word = _WORD.match(text, i)
        if word is not None:
            token = word.group(0)
            end = word.end()
            if token in _PYTHON and not out.pythonic:
                out.offsets["python_literals"].append(i)
            elif token in _NANS:
                out.offsets["nan_values"].append(i)
            elif token not in _LITERALS and last in "{," and stack and stack[-1] == "{":
                rest = text[end:end + 40].lstrip()
                if rest.startswith(":"):
                    out.offsets["unquoted_keys"].append(i)
            if end == n and any(lit.startswith(token) and lit != token for lit in _LITERALS | _PYTHON):
                out.incomplete_token = True
            last, i = "w", end
            continue
        number = _NUMBER.match(text, i)
        if number is not None and number.end() > i:
            token = number.group(0)
            digits = len(token.lstrip("-").split("e")[0].split("E")[0])
            exponent = re.search(r"[eE]([+-]?\d+)$", token)
            if digits > 300 or (exponent and abs(int(exponent.group(1))) > 308):
                out.offsets["huge_numbers"].append(i)
            if number.end() == n and (token[-1] in ".eE+-"):
                out.incomplete_token = True
            last, i = "0", number.end()
            continue
        last = ch
        i += 1
    out.open_at_end = "".join(stack)
    out.last = last
    return out


def _dq_string(text: str, i: int, out: Scan, *, smart: bool) -> tuple[int, bool]:
    """Past the closing quote of a double-quoted string starting at ``i`` (after the quote)."""
    n = len(text)
    closers = '"' + _SMART if smart else '"'
    while i < n:
        ch = text[i]
        if ch in closers:
            return i + 1, True
        if ch == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if not nxt:
                return n, False
            if nxt not in _VALID_ESCAPES:
                out.offsets["invalid_escapes"].append(i)
            elif nxt == "u":
                hexa = _HEX4.match(text, i + 2)
                if hexa is None:
                    out.offsets["invalid_escapes"].append(i)
                else:
                    code = int(hexa.group(0), 16)
                    if 0xD800 <= code <= 0xDBFF:
                        low = re.match(r"\\u([dD][c-fC-F][0-9a-fA-F]{2})", text[i + 6:i + 12])
                        if low is None:
                            out.offsets["lone_surrogates"].append(i)
                    elif 0xDC00 <= code <= 0xDFFF:
                        before = text[max(0, i - 6):i]
                        if not re.match(r"\\u[dD][89abAB][0-9a-fA-F]{2}$", before):
                            out.offsets["lone_surrogates"].append(i)
                    i += 4
            i += 2
            continue
        if ch < " ":
            out.offsets["raw_controls"].append(i)
        elif "\ud800" <= ch <= "\udfff":
            out.offsets["lone_surrogates"].append(i)
        i += 1
    return n, False


def _sq_end(text: str, i: int) -> int:
    """The offset of the quote closing a single-quoted string that starts at ``i``, or -1."""
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            return i
        i += 1
    return -1


def repair(text: str) -> str:
    """A best-effort repaired copy of a model output, for the calls detectors only (never
    stored, never judged): comments and trailing commas dropped, single quotes and smart quotes
    made double, Python literals and NaN made JSON, unquoted keys quoted, a BOM removed, open
    strings and brackets closed. Prose and envelopes are kept as they are."""
    out: list[str] = []
    n = len(text)
    i = 0
    stack: list[str] = []
    last_comma = -1
    while i < n:
        ch = text[i]
        if ch == "\ufeff":
            i += 1
            continue
        if not stack:
            if ch in "{[":
                stack.append(ch)
            out.append(ch)
            i += 1
            continue
        if ch == '"' or ch in _SMART:
            j, closed = _dq_string(text, i + 1, Scan(), smart=ch in _SMART)
            body = text[i + 1:j - 1] if closed else text[i + 1:]
            out.append('"' + _fix_escapes(body) + '"')
            i = j
            if not closed:
                break
            continue
        if ch == "'":
            end = _sq_end(text, i + 1)
            body = text[i + 1:end] if end >= 0 else text[i + 1:]
            out.append('"' + _fix_escapes(body.replace('\\"', '"').replace('"', '\\"')) + '"')
            if end < 0:
                break
            i = end + 1
            continue
        if ch in _OPENERS:
            stack.append(ch)
        elif ch in _CLOSERS:
            if last_comma >= 0 and not "".join(out[last_comma + 1:]).strip():
                del out[last_comma]
            last_comma = -1
            if stack:
                stack.pop()
        elif ch == ",":
            last_comma = len(out)
            out.append(ch)
            i += 1
            continue
        elif ch == "/" and text.startswith(("//", "/*"), i):
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            i = n if end < 0 else end + (1 if text[i + 1] == "/" else 2)
            continue
        else:
            word = _WORD.match(text, i)
            if word is not None:
                token = word.group(0)
                replacement = {"True": "true", "False": "false", "None": "null", "NaN": "null",
                               "Infinity": "null"}.get(token)
                rest = text[word.end():word.end() + 40].lstrip()
                if replacement is None and token not in _LITERALS and stack and stack[-1] == "{" \
                        and rest.startswith(":"):
                    replacement = f'"{token}"'
                out.append(replacement or token)
                i = word.end()
                continue
        out.append(ch)
        i += 1
    repaired = "".join(out).rstrip()
    while repaired.endswith((",", ":")):
        repaired = repaired[:-1].rstrip() + (" null" if repaired.endswith(":") else "")
    return repaired + "".join(_OPENERS[c] for c in reversed(stack))


def _fix_escapes(body: str) -> str:
    body = re.sub(r'\\(?![\\"/bfnrtu])', r"\\\\", body)
    return "".join(ch if ch >= " " else f"\\u{ord(ch):04x}" for ch in body)


__all__ = ["OFFSET_KINDS", "Scan", "repair", "scan"]
