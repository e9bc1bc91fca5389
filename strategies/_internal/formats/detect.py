"""Which format a real model output is in: the family, its version, and the variants it shows.

``fuzz formats detect`` and ``fuzz campaign --format-from`` read real outputs (text files, JSON
lines, recorded production traffic) and ask this module what each one is, so a user learns the
``--format`` values of the model they serve instead of guessing them.

Detection reads markers only a family writes (the DSML token, ``<|tool_calls_section_begin|>``,
``[ARGS]`` after a name ...), then tells versions apart by what follows the shared markers
(``[TOOL_CALLS][`` is tokenizer v3, ``[TOOL_CALLS]name`` v11; ``<tool_call>{`` hermes, ``<tool_call>
<function=`` Qwen3-Coder, ``<tool_call>name`` GLM). JSON outputs are told apart by their keys. Every
scan is ``str.find`` or one pass, so a huge output costs linear time. An output that matches no
family is reported with the first token that looks like a marker (``<|tool▁call|>``, ``[TOOL_REQUEST]``),
the thing a user would grep their logs for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from strategies._internal.formats.reasoning import CLOSERS, OPENERS

_WS = " \t\r\n"
_END_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "</s>", "<｜end▁of▁sentence｜>", "<|observation|>",
               "<|user|>", "<turn|>")


@dataclass(frozen=True)
class Detection:
    """What one output is: its format (a registered name, None when no family matched), whether it
    shows reasoning, prose and several calls, and for an unknown output its first marker-like token."""

    format: Optional[str]
    reasoning: bool = False
    prose: bool = False
    several: bool = False
    marker: Optional[str] = None

    @property
    def label(self) -> str:
        from strategies._internal.formats.core import FORMATS

        if self.format is None:
            return "unknown" + (f" (first marker {self.marker!r})" if self.marker else " (no marker)")
        return FORMATS[self.format].full_name


def _strip_reasoning(text: str) -> tuple[str, bool]:
    body = text.lstrip(_WS)
    for opener, closer in zip(OPENERS, CLOSERS):
        if body.startswith(opener):
            close = body.find(closer)
            return (body[close + len(closer):], True) if close >= 0 else ("", True)
    for closer in CLOSERS:
        close = text.find(closer)
        if close >= 0:
            return text[close + len(closer):], True
    return text, False


def _strip_end(text: str) -> str:
    body = text.rstrip(_WS)
    for token in _END_TOKENS:
        if body.endswith(token):
            return body[:-len(token)]
    return text


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


#: Markers with one meaning, checked in this order (the first found decides). Each maps to a
#: function of (text, offset) -> format name.
def _deepseek(text: str, i: int) -> str:
    call = text.find("<｜tool▁call▁begin｜>", i)
    if call < 0:
        return "deepseek"
    after = call + len("<｜tool▁call▁begin｜>")
    head = "function<｜tool▁sep｜>"
    if text.startswith(head, after) and not text.startswith("{", after + len(head)):
        return "deepseek"
    return "deepseek:v3.1"


def _mistral(text: str, i: int) -> str:
    return "mistral" if text.startswith("[", _skip(text, i + len("[TOOL_CALLS]"))) else "mistral:v11"


def _tool_call(text: str, i: int) -> str:
    inside = _skip(text, i + len("<tool_call>"))
    if text.startswith("{", inside):
        return "hermes"
    if text.startswith("<function=", inside):
        return "qwen3_xml"
    close = text.find("</tool_call>", inside)
    body = text[inside:close if close >= 0 else len(text)]
    if "<arg_key>" in body:
        key = body.find("<arg_key>")
        return "glm:4.5" if body[:key].endswith("\n") else "glm:4.7"
    if body.endswith("\n"):
        return "glm:4.5"
    return "glm:4.7" if body and "{" not in body else "hermes"


_MARKERS = (
    ("<｜DSML｜function_calls>", lambda text, i: "deepseek:v3.2"),
    ("<｜DSML｜invoke", lambda text, i: "deepseek:v3.2"),
    ("<｜tool▁calls▁begin｜>", _deepseek),
    ("<｜tool▁call▁begin｜>", _deepseek),
    ("<|tool_calls_section_begin|>", lambda text, i: "kimi:k2"),
    ("<|tool_call_begin|>", lambda text, i: "kimi:k2"),
    ("<|tool_call>", lambda text, i: "gemma:4"),
    ("[TOOL_CALLS]", _mistral),
    ("<|channel|>", lambda text, i: "harmony"),
    (" to=functions.", lambda text, i: "harmony"),
    ("<tool_call>", _tool_call),
    ("<function=", lambda text, i: "llama_function"),
    ("<|python_tag|>", lambda text, i: "llama3"),
    ("Action:", lambda text, i: "react"),
    ("```", lambda text, i: "fenced"),
)


def _json_kind(value: Any) -> Optional[str]:
    """The JSON format a decoded document is in, by its keys."""
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    first = items[0]
    keys = set(first)
    if isinstance(value, dict) and "tool_calls" in value:
        return "openai"
    if isinstance(value, dict) and set(value) >= {"role", "content"} and isinstance(value["content"], list):
        return "anthropic"
    if first.get("type") in ("tool_use", "text") and ("input" in keys or "text" in keys):
        return "anthropic"
    if "jsonrpc" in keys:
        return "mcp"
    if first.get("type") == "function" and "parameters" in keys:
        return "llama_json"
    if keys == {"name", "parameters"}:
        return "llama3:json"
    if "name" in keys and "arguments" in keys:
        return "json"
    return None


def _first_json(text: str) -> tuple[Optional[str], int]:
    decoder = json.JSONDecoder()
    starts = [k for k in (text.find("{"), text.find("[")) if k >= 0]
    if not starts:
        return None, -1
    i = min(starts)
    try:
        value, _ = decoder.raw_decode(text, i)
    except (ValueError, RecursionError):
        return None, i
    return _json_kind(value), i


def _pythonic(text: str) -> Optional[int]:
    i = text.find("[")
    if i < 0:
        return None
    j = _skip(text, i + 1)
    k = j
    while k < len(text) and (text[k].isalnum() or text[k] in "_."):
        k += 1
    return i if k > j and text.startswith("(", k) else None


def first_marker(text: str) -> Optional[str]:
    """The first token that looks like a marker: ``<...>``, ``<|...|>`` or ``[UPPER_CASE]`` up to 40
    characters with no whitespace inside (None when there is none)."""
    n = len(text)
    i = 0
    while i < n:
        c = text[i]
        if c in "<[":
            close = ">" if c == "<" else "]"
            j = i + 1
            while j < n and j - i <= 40 and text[j] != close and text[j] not in " \t\r\n<[":
                j += 1
            if j < n and text[j] == close and j > i + 1:
                token = text[i:j + 1]
                inner = token[1:-1]
                if c == "<" or (inner.replace("_", "").isalpha() and inner.upper() == inner):
                    return token
        i += 1
    return None


def detect(text: str) -> Detection:
    """The format of one real output (see the module docstring)."""
    body, reasoning = _strip_reasoning(text)
    body = _strip_end(body)
    best: Optional[tuple] = None
    for marker, kind in _MARKERS:
        at = body.find(marker)
        if at >= 0 and (best is None or at < best[0]):
            best = (at, marker, kind)
    if best is not None:
        at, marker, kind = best
        name = kind(body, at)
        return Detection(name, reasoning=reasoning, prose=bool(body[:at].strip(_WS)),
                         several=_count_calls(name, body) > 1)
    kind, at = _first_json(body)
    if kind is not None:
        return Detection(kind, reasoning=reasoning, prose=bool(body[:at].strip(_WS)), several=_count_calls(kind, body) > 1)
    at = _pythonic(body)
    if at is not None:
        return Detection("pythonic", reasoning=reasoning, prose=bool(body[:at].strip(_WS)), several="), " in body)
    return Detection(None, reasoning=reasoning, marker=first_marker(text))


#: A token that appears once per call, by format (several calls: it appears twice).
_PER_CALL = {"hermes": "<tool_call>", "qwen3_xml": "<function=", "glm:4.5": "<tool_call>", "glm:4.7": "<tool_call>",
             "mistral:v11": "[TOOL_CALLS]", "deepseek": "<｜tool▁call▁begin｜>", "deepseek:v3.1": "<｜tool▁call▁begin｜>",
             "deepseek:v3.2": "invoke name=", "kimi:k2": "<|tool_call_begin|>", "gemma:4": "<|tool_call>",
             "harmony": "to=functions.", "llama_function": "<function=", "react": "Action Input:",
             "llama3": '"parameters"', "llama3:json": '"parameters"', "llama_json": '"parameters"',
             "json": '"arguments"', "mistral": '"arguments"', "fenced": '"arguments"', "openai": '"function"',
             "anthropic": '"tool_use"', "mcp": '"tools/call"'}


def _count_calls(name: str, body: str) -> int:
    token = _PER_CALL.get(name)
    return body.count(token) if token else 1


@dataclass
class Summary:
    """What a set of outputs showed, per format: how many, and how many with each variant."""

    counts: dict = field(default_factory=dict)  # format -> outputs
    variants: dict = field(default_factory=dict)  # format -> {"reasoning": n, "prose": n, "several": n}
    unknown: list = field(default_factory=list)  # (index, first marker or None)

    def add(self, index: int, found: Detection) -> None:
        if found.format is None:
            self.unknown.append((index, found.marker))
            return
        self.counts[found.format] = self.counts.get(found.format, 0) + 1
        seen = self.variants.setdefault(found.format, {"reasoning": 0, "prose": 0, "several": 0})
        for variant in seen:
            seen[variant] += bool(getattr(found, variant))

    def format_options(self) -> list[str]:
        """The ``--format`` values to fuzz these outputs' formats: each found format by its
        ``family:version`` name, most common first."""
        from strategies._internal.formats.core import FORMATS

        return [FORMATS[name].full_name for name, _ in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def summarize(texts: Iterable[str]) -> tuple[list, Summary]:
    """Detect every text; returns the detections in order and their :class:`Summary`."""
    found, summary = [], Summary()
    for index, text in enumerate(texts):
        detection = detect(text)
        found.append(detection)
        summary.add(index, detection)
    return found, summary


#: The public name (``strategies.detect_format``).
detect_format = detect

__all__ = ["Detection", "Summary", "detect", "detect_format", "first_marker", "summarize"]
