"""The reference target: a correct, strict, linear-time parser for every format toolfuzz renders.

Why it exists: it is the yardstick the engine is tested against. Run on valid samples it must return
exactly the truth (so any verdict against it is an engine bug); run on anomalies it may only reject
(``ValueError``) or return the faithful calls — it never repairs, never hangs, never raises anything
else. It is deliberately unforgiving: anything it does not understand exactly is a ``ValueError``.

How it stays linear and safe:

* The format is the one whose marker (``{``, ``[``, ``[TOOL_CALLS]``, ``<|python_tag|>``, ``<tool_call>``,
  ````` ``` `````, ``Action:``, ``<function=``, ``<|channel|>``, ``<｜tool▁calls▁begin｜>``) occurs first. Prose before it cannot hold a marker by construction, so
  the first marker is where the envelope starts; markers inside JSON strings later on are never seen
  because JSON is consumed with ``JSONDecoder.raw_decode`` and scanning resumes after it.
* No regular expressions; every scan is ``str.find`` or a single pass. Prose around the envelope must
  hold no structural character (``{}[]<>`` or a backtick), no BOM and no envelope keyword.
* JSON is strict: no NaN/Infinity, no float overflow to inf, no duplicate keys, no raw control
  characters. Deep nesting ends in ``RecursionError``, which (like every other failure) becomes
  ``ValueError``. Pythonic calls are read with ``ast`` (the tokenizer caps nesting at 200 levels) and
  a literal walker of our own that admits only JSON values, after a size guard.

``parse_validated`` is the ``--level validate`` variant against the built-in registry.

This module finds the first marker, checks the prose around the envelope and hands the envelope to
its family's reader (:mod:`fuzzer.targets.reference_families`: the JSON families, the pythonic list,
the tag families, the special-token families, and what they all read with).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from fuzzer.targets.reference_families.json_families import (
    parse_bracket, parse_fenced, parse_hermes, parse_json, parse_llama3, parse_mistral, parse_react,
)
from fuzzer.targets.reference_families.reading import WS, check_prose
from fuzzer.targets.reference_families.special_tokens import (
    parse_deepseek, parse_dsml, parse_gemma, parse_harmony, parse_kimi,
)
from fuzzer.targets.reference_families.xml_tags import parse_llama_function, parse_tool_call_tag

__all__ = ["parse", "parse_validated", "validated_parser"]

#: Envelope markers, longest first where two share a start (``[TOOL_CALLS]`` vs ``[``).
_MARKERS = ("[TOOL_CALLS]", "<|python_tag|>", "<tool_call>", "</tool_call>", "```", "Action Input:",
            "Action:", "<function=", "<|channel|>", "<｜tool▁calls▁begin｜>", "<｜DSML｜function_calls>",
            "<|tool_calls_section_begin|>", "<|tool_call>", "{", "[")
#: Reasoning delimiters: a block at the start of the output, or — the generation prompt opened it —
#: only its closer, before any call marker. Its text is never read for calls.
_REASONING = (("<think>", "</think>"), ("[THINK]", "[/THINK]"))
#: Fragments of special tokens and tags: text holding one but no marker is a misspelled envelope.
_TAG_LIKE = ("<|", "|>", "<｜", "｜>", "</", "<tool", "<function", "<arg_", "<param")
#: End-of-turn tokens an engine may leave after the output; one is dropped from the end.
_END_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "</s>", "<｜end▁of▁sentence｜>", "<|observation|>",
               "<|user|>", "<turn|>")
#: The reader of each marker's family: (text, offset of the marker) -> (calls, end of the envelope).
_PARSERS = {"[TOOL_CALLS]": parse_mistral, "<|python_tag|>": parse_llama3, "<tool_call>": parse_tool_call_tag,
            "</tool_call>": parse_hermes, "```": parse_fenced, "Action Input:": parse_react,
            "Action:": parse_react, "<function=": parse_llama_function, "<|channel|>": parse_harmony,
            "<｜tool▁calls▁begin｜>": parse_deepseek, "<｜DSML｜function_calls>": parse_dsml,
            "<|tool_calls_section_begin|>": parse_kimi, "<|tool_call>": parse_gemma,
            "{": parse_json, "[": parse_bracket}


def _looks_like_bare_call(text: str) -> bool:
    """``name(`` anywhere: a call without list brackets, which we neither accept nor call prose."""
    i = text.find("(")
    while i >= 0:
        if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
            return True
        i = text.find("(", i + 1)
    return False


def _first_marker(text: str) -> tuple:
    best: tuple = (-1, None)
    for marker in _MARKERS:
        i = text.find(marker)
        if i >= 0 and (best[0] < 0 or i < best[0]):
            best = (i, marker)
    return best


def _skip_reasoning(text: str) -> str:
    """The text after a leading reasoning block (or after the closer of one the generation prompt
    opened, when it comes before every call marker), else the text itself."""
    body = text.lstrip(WS)
    for opener, closer in _REASONING:
        if body.startswith(opener):
            close = body.find(closer, len(opener))
            if close < 0:
                raise ValueError(f"{opener} is never closed")
            if opener in body[len(opener):close]:
                raise ValueError(f"{opener} inside reasoning")
            return body[close + len(closer):]
    for opener, closer in _REASONING:
        close = text.find(closer)
        if close >= 0:
            marker_at, _ = _first_marker(text[:close])
            if marker_at < 0 and opener not in text[:close]:
                return text[close + len(closer):]
    return text


def _drop_end_token(text: str) -> str:
    body = text.rstrip(WS)
    for token in _END_TOKENS:
        if body.endswith(token):
            return body[:-len(token)]
    return text


def _parse(text: str) -> list:
    if not isinstance(text, str):
        raise ValueError(f"expected str, got {type(text).__name__}")
    text = _drop_end_token(_skip_reasoning(text))
    start, marker = _first_marker(text)
    if marker is None:
        if "\ufeff" in text or _looks_like_bare_call(text) or any(t in text for t in _TAG_LIKE):
            raise ValueError("text looks like a call but is in no known format")
        return []
    before = text[:start]
    if marker == "<|channel|>" and before.strip().startswith("to=functions.") and len(before.split()) == 1:
        # the recipient before the channel, right after the generation prompt's <|start|>assistant
        text, start, before = " " + before.strip() + text[start:], 0, ""
    check_prose(before, react=marker.startswith("Action"))
    calls, end = _PARSERS[marker](text, start)
    check_prose(text[end:], react=marker.startswith("Action"))
    return calls


def _guarded(function: Any, text: str) -> list:
    """Run ``function(text)``; every failure leaves as ``ValueError`` (the target contract)."""
    try:
        return function(text)
    except ValueError:
        raise
    except RecursionError:
        raise ValueError("input nested too deeply") from None
    except MemoryError:
        raise ValueError("input too large") from None
    except Exception as exc:  # nothing but ValueError may ever escape
        raise ValueError(f"unparseable input ({type(exc).__name__}: {exc})") from None


def parse(text: str) -> list:
    """The calls ``text`` denotes, ``[]`` for plain prose; ``ValueError`` for anything else.

    >>> parse('<tool_call>\\n{"name": "f", "arguments": {"x": 1}}\\n</tool_call>')
    [{'name': 'f', 'arguments': {'x': 1}}]
    """
    return _guarded(_parse, text)


def validated_parser(registry: Any) -> Callable[[str], list]:
    """A ``--level validate`` parser for ``registry`` (any mapping-like set of tools with ``.schema``).

    It parses like :func:`parse`, then every call must name a tool of ``registry`` and satisfy its
    JSON Schema (the schema's own draft, ``format`` checked), and no two calls may be identical as
    JSON values; otherwise ``ValueError``. The validators are built here, once: a malformed schema
    raises ``jsonschema.SchemaError`` now instead of hiding later as a rejected input.
    """
    from strategies._internal.schema import tool_validator
    from strategies.json_values import canonical

    validators: dict = {}
    for tool in registry:
        validator = tool_validator(tool)
        type(validator).check_schema(tool.schema if isinstance(tool.schema, bool) else dict(tool.schema))
        validators[tool.name] = validator

    def validate(text: str) -> list:
        calls = _parse(text)
        seen: set = set()
        for call in calls:
            name = call["name"]
            validator = validators.get(name)
            if validator is None:
                raise ValueError(f"unknown tool {name!r:.80}")
            error = next(iter(validator.iter_errors(call["arguments"])), None)
            if error is not None:
                raise ValueError(f"{name}: arguments do not match the schema: {error.message:.200}")
            key = (name, canonical(call["arguments"]))
            if key in seen:
                raise ValueError(f"duplicate call of {name!r:.80}")
            seen.add(key)
        return calls

    def parse_validated_in_registry(text: str) -> list:
        return _guarded(validate, text)

    parse_validated_in_registry.__doc__ = validated_parser.__doc__
    return parse_validated_in_registry


_BUILTIN: Optional[Callable[[str], list]] = None
#: Environment variable naming the tools file the validate-level reference checks against; the
#: CLI sets it to its ``--tools`` so the bundled reference validates the registry being fuzzed.
TOOLS_ENV = "TOOLFUZZ_TOOLS"


def parse_validated(text: str) -> list:
    """:func:`parse`, then the ``--level validate`` promise against the registry being fuzzed
    (``$TOOLFUZZ_TOOLS``, set by the CLI from ``--tools``; the built-in registry otherwise).

    The registry is loaded on first use, outside the ``ValueError`` guard: a broken installation
    surfaces as itself, never as a rejected input.
    """
    global _BUILTIN
    if _BUILTIN is None:
        import os

        from strategies._internal.tools import load_registry

        _BUILTIN = validated_parser(load_registry(os.environ.get(TOOLS_ENV) or None))
    return _BUILTIN(text)
