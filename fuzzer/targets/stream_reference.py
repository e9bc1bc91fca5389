"""A clean incremental Hermes parser: a scanner that reads each character once, whatever the split.

``fuzz stream --parser fuzzer.targets.stream_reference:make_parser`` finds nothing in it (Hermes
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, with prose around and between). Its
shape is the one a correct streaming parser needs (the shape vLLM's declarative streaming parser
engine moves to: a token scanner and an incremental lexer):

* ``<think>...</think>`` (and ``<thinking>``, ``<reasoning>``) is reasoning (a call written there
  is not a call);
* outside a call, text goes out as content at once, except a tail that could still become
  ``<tool_call>`` (at most its length) and a run of whitespace, sent once prose follows it
  (whitespace alone between two calls is the envelope's layout, not content);
* inside a call, a small JSON lexer tracks strings, escapes and depth, so ``</tool_call>`` inside
  an argument is text; the call starts (index, id, name) once its name is complete (the body's
  first ``"name"``: what follows the object is not read as another), and the
  arguments are streamed as their raw text, so what was sent is always a prefix of what follows;
* ``finish()`` releases the held-back text (whitespace that ends the output is layout); a call that never closed is left as it is (its
  arguments incomplete: no complete-looking call out of a cut stream).

Events are toolfuzz's typed events (:mod:`fuzzer.harnesses.stream.contract`).
"""

from __future__ import annotations

import json
from typing import Optional

from fuzzer.harnesses.stream.contract import ArgumentsDelta, CallEnd, CallStart, Reasoning, Text

OPEN, CLOSE = "<tool_call>", "</tool_call>"
#: Reasoning openers and their closers.
THINKING = {"<think>": "</think>", "<thinking>": "</thinking>", "<reasoning>": "</reasoning>"}


class ReferenceHermesParser:
    def __init__(self) -> None:
        self.pending = ""  # received, not consumed
        self.in_call = False
        self.thinking: Optional[str] = None  # the closer of the reasoning being read (a call there is no call)
        self.index = 0
        self.segment_text = False  # the text segment being read has had prose
        self.held_ws = ""
        self._call_reset()

    def _call_reset(self) -> None:
        self.body = ""
        self.pos = 0  # next character of body to lex
        self.depth = 0
        self.in_string = False
        self.escape = False
        self.string_start = -1
        self.last_string: Optional[str] = None  # raw text of the last string closed at depth 1
        self.key: Optional[str] = None
        self.expect_value = False
        self.value_key: Optional[str] = None
        self.args_start = -1
        self.args_end = -1
        self.args_sent = 0
        self.name: Optional[str] = None
        self.started = False

    # -- content ---------------------------------------------------------------------------------
    def _content(self, text: str, out: list) -> None:
        """Send ``text`` as content; a run of whitespace waits for the next character of prose."""
        for ch in text:
            if ch.isspace():
                self.held_ws += ch
                continue
            self.segment_text = True
            out.append(Text(self.held_ws + ch))
            self.held_ws = ""

    def _segment_end(self, out: list) -> None:
        """The text between two calls (or the ends) is over: its trailing whitespace is content
        when the segment had prose, else it was only the envelope's layout."""
        if self.held_ws and self.segment_text:
            out.append(Text(self.held_ws))
        self.held_ws, self.segment_text = "", False

    def _text_mode(self, out: list) -> None:
        """Consume ``pending`` up to the next marker (``<tool_call>``, ``<think>``; ``</think>``
        while thinking), keeping back a tail that may still become one."""
        markers = (self.thinking,) if self.thinking else (OPEN, *THINKING)
        found = [(self.pending.find(m), m) for m in markers]
        found = [(at, m) for at, m in found if at >= 0]
        if found:
            at, marker = min(found)
            self._plain(self.pending[:at], out)
            self.pending = self.pending[at + len(marker):]
            if marker == OPEN:
                self._segment_end(out)
                self.in_call = True
                self._call_reset()
            else:
                self.thinking = THINKING.get(marker)
            return
        keep = 0
        for k in range(min(max(map(len, markers)) - 1, len(self.pending)), 0, -1):
            if any(m.startswith(self.pending[-k:]) for m in markers):
                keep = k
                break
        self._plain(self.pending[:len(self.pending) - keep], out)
        self.pending = self.pending[len(self.pending) - keep:]

    def _plain(self, text: str, out: list) -> None:
        if not text:
            return
        if self.thinking:
            out.append(Reasoning(text))
        else:
            self._content(text, out)

    # -- calls -----------------------------------------------------------------------------------
    def _call_mode(self, out: list) -> bool:
        """Lex the call body; True when the call closed (the rest is back in ``pending``)."""
        self.body += self.pending
        self.pending = ""
        body = self.body
        i = self.pos
        while i < len(body):
            ch = body[i]
            if self.in_string:
                if self.escape:
                    self.escape = False
                elif ch == "\\":
                    self.escape = True
                elif ch == '"':
                    self.in_string = False
                    if self.depth == 1:
                        raw = body[self.string_start:i + 1]
                        if self.expect_value and self.value_key == "name" and self.name is None:
                            self.name = _decode(raw)
                            self.expect_value = False
                        else:
                            self.last_string = raw
                i += 1
                continue
            if self.depth == 0 and ch == "<":
                if body.startswith(CLOSE, i):
                    self._close(out)
                    self.pending = body[i + len(CLOSE):]
                    return True
                if len(body) - i < len(CLOSE) and CLOSE.startswith(body[i:]):
                    break  # may be the closing tag: wait for more
            if ch == '"':
                self.in_string, self.string_start = True, i
            elif ch in "{[":
                if self.depth == 1 and self.expect_value and self.value_key == "arguments" and self.args_start < 0:
                    self.args_start = i
                    self.expect_value = False
                self.depth += 1
            elif ch in "}]":
                self.depth -= 1
                if self.depth == 1 and self.args_start >= 0 and self.args_end < 0:
                    self.args_end = i + 1
            elif ch == ":" and self.depth == 1:
                self.value_key = _decode(self.last_string) if self.last_string else None
                self.expect_value = True
            elif ch == "," and self.depth == 1:
                self.expect_value = False
            i += 1
        self.pos = i
        self._stream(out)
        return False

    def _stream(self, out: list) -> None:
        if not self.name:
            return  # no call without a name (the first "name" of the body; an empty one names nothing)
        if not self.started:
            out.append(CallStart(index=self.index, name=self.name, id=f"call_{self.index}"))
            self.started = True
        if self.args_start < 0:
            return
        end = self.args_end if self.args_end >= 0 else self.pos
        if end > self.args_start + self.args_sent:
            out.append(ArgumentsDelta(self.index, self.body[self.args_start + self.args_sent:end]))
            self.args_sent = end - self.args_start

    def _close(self, out: list) -> None:
        self._stream(out)
        if self.started:
            out.append(CallEnd(self.index))
            self.index += 1
        self.in_call = False
        self.held_ws, self.segment_text = "", False

    # -- the contract ----------------------------------------------------------------------------
    def feed(self, delta: str) -> list:
        out: list = []
        self.pending += delta
        while self.pending:
            if self.in_call:
                if not self._call_mode(out):
                    break
            else:
                before = (self.pending, self.in_call, self.thinking)
                self._text_mode(out)
                if (self.pending, self.in_call, self.thinking) == before:
                    break
        return out

    def finish(self) -> list:
        out: list = []
        if not self.in_call:
            self._plain(self.pending, out)
            self.pending = ""
            self.held_ws = ""  # whitespace that ends the output is layout, not content
        return out


def _decode(raw: Optional[str]) -> Optional[str]:
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def make_parser() -> ReferenceHermesParser:
    return ReferenceHermesParser()
