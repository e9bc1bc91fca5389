"""Small parsers with one known behaviour each, for the campaign's probing and engine tests."""

from __future__ import annotations

import json
import re

from fuzzer.targets.reference import parse as _reference

_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def hermes_only(text):
    """Understands only ``<tool_call>`` tags (correctly); everything else is a clean rejection."""
    if "<tool_call>" not in text:
        raise ValueError("no <tool_call> tag")
    return _reference(text)


def json_alone(text):
    """Bare JSON only when it stands alone (``json.loads`` of the whole text), fenced JSON, and the
    reference for every other format; JSON with prose around it is cleanly rejected. Many real
    parsers make this support choice; it is not a bug."""
    from fuzzer.targets.reference import _first_marker  # noqa: F401 - only to fail loudly if renamed

    stripped = text.strip()
    if stripped[:1] in ("{", "[") and not stripped.startswith("[TOOL_CALLS]"):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(str(exc)) from None
        if not isinstance(value, (dict, list)):
            raise ValueError("not an object or a list")
        return _reference(text)
    if _looks_like_prose_json(text):
        raise ValueError("bare JSON inside prose is not supported")
    return _reference(text)


def _looks_like_prose_json(text: str) -> bool:
    """Text with a JSON object in it but no envelope marker the reference knows."""
    markers = ("<tool_call>", "```", "[TOOL_CALLS]", "<|python_tag|>", "Action:", "(")
    return "{" in text and not any(m in text for m in markers)


_COUNTER = [0]


def flaky(text):
    """Answers differently on re-runs: every third call in this process returns no call at all.
    The counter is module state, so it survives between inputs of one worker."""
    _COUNTER[0] += 1
    if _COUNTER[0] % 3 == 0:
        return []
    return _reference(text)
