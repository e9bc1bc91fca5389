"""Text and file helpers every output shares: one-line JSON, bounded previews, atomic writes."""

from __future__ import annotations

import json
import re
import os
from typing import Any


def write_json_atomic(path: str, data: Any) -> None:
    """Write JSON so that a crash mid-write never leaves a half file (temp file + rename)."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=True) + "\n")


def write_text_atomic(path: str, text: str) -> None:
    """Write a text file atomically (see :func:`corpus.store.atomic_write`)."""
    from pathlib import Path

    from corpus.store import atomic_write

    atomic_write(Path(os.path.abspath(path)), text.encode("utf-8", "surrogateescape"))


def preview(text: str, limit: int = 160) -> str:
    """A one-line, escaped, bounded rendering of a model output. One too long to show whole is
    shown as its Python expression when that fits (``'```j' + '\n' * 512``: a slow finding's
    minimized input is a fence and a run, which cut after 160 characters looked unminimized)."""
    shown = json_line(text)
    if len(shown) > min(limit, 160):
        from fuzzer.harnesses.parser.reproduce import python_literal

        literal = python_literal(text)
        # past a line's width, a run is shown as one (``fuzz minimize`` printed 1,140 brackets
        # where its campaign showed ``'[' * 1112``), even where the whole would fit
        if len(literal) <= limit - 20 and (len(shown) > limit or 4 * len(literal) <= len(shown)):
            return f"{literal} ({len(text):,} chars)"
    if len(shown) > limit:
        shown = f"{shown[:limit - 20]}…\" ({len(text)} chars)"
    return shown


def _plain(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def compact(value: Any, limit: int = 200) -> str:
    shown = json_line(value) if _plain(value) else repr(value)
    return shown if len(shown) <= limit else f"{shown[:limit - 20]}… ({len(shown)} chars)"


def json_line(value: Any) -> str:
    """One line of JSON, readable (non-ASCII kept) unless it holds lone surrogates, which must be
    escaped to stay valid UTF-8."""
    line = json.dumps(value, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True)
    # Characters that do not show can only sit inside JSON strings here: escaped, the same value
    # (JSON reads \u00a0 as the character). Line breaks keep the output one sample per line for
    # every reader; an expected and a returned call that differ by a no-break space must not
    # print alike.
    if not line.isascii():
        line = _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
    return line


#: Non-ASCII characters that do not show: C1 controls (U+0085 a line break), no-break and other
#: spaces, zero-width and direction marks, the line and paragraph separators, fillers, the BOM.
_INVISIBLE = re.compile("[\x80-\xa0\xad\u034f\u061c\u115f\u1160\u1680\u180e\u2000-\u200f\u2028-\u202f"
                        "\u205f-\u206f\u3000\u3164\ufeff\ufff9-\ufffb]")
