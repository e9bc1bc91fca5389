"""Small parsers with one known behaviour each, for the campaign's probing and engine tests."""

from __future__ import annotations

import json
import re

from fuzzer.targets.reference import parse as _reference

_BEFORE_TAG = re.compile(r'^[^{\["]*<tool_call>')


def hermes_only(text):
    """Understands only ``<tool_call>`` tags (correctly); everything else is a clean rejection.
    The tag must come before any JSON, so a ``<tool_call>`` inside a string value of another
    format does not count."""
    if not _BEFORE_TAG.search(text):
        raise ValueError("no <tool_call> tag")
    return _reference(text)


_ENVELOPE = re.compile(r"<tool_call>|```|\[TOOL_CALLS\]|<\|python_tag\|>|Action:|\[\s*[A-Za-z_][\w.]*\(|<function=|"
                       r"<\|channel\|>|<｜tool▁calls▁begin｜>")


def json_alone(text):
    """Bare JSON only when it stands alone (``json.loads`` of the whole text); every envelope with a
    marker (tags, fences, pythonic calls...) goes to the reference parser. JSON with prose around
    it is cleanly rejected: many real parsers make this support choice, and it is not a bug."""
    brace = text.find("{")
    if brace < 0:
        return _reference(text)
    head = text[:brace].strip()
    if head in ("", "["):
        try:
            json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"not a JSON document: {exc}") from None
        return _reference(text)
    if _ENVELOPE.search(head):
        return _reference(text)
    raise ValueError("bare JSON inside prose is not supported")


def json_prose_wrong(text):
    """Like :func:`json_alone`, but JSON inside prose gets a wrong answer instead of a rejection:
    that is a bug the probe must report, not a support choice."""
    try:
        return json_alone(text)
    except ValueError as exc:
        if "inside prose" in str(exc):
            return [{"name": "get_weather", "arguments": {}}]
        raise


_COUNTER = [0]


def flaky(text):
    """Answers differently on re-runs: every third call in this process returns no call at all.
    The counter is module state, so it survives between inputs of one worker."""
    _COUNTER[0] += 1
    if _COUNTER[0] % 3 == 0:
        return []
    return _reference(text)


def _without_empty(arguments):
    return {k: v for k, v in arguments.items() if v not in ([], None, "")}


def two_drop_paths(text):
    """Two bugs that lose arguments, on two paths: the ``parameters`` envelope spelling is not
    read (every argument is lost), and empty strings and lists are dropped by a helper."""
    calls = _reference(text)
    if '"parameters"' in text:
        return [{"name": c["name"], "arguments": {}} for c in calls]
    return [{"name": c["name"], "arguments": _without_empty(c["arguments"])} for c in calls]


def _skip_spaces(text, index):
    while index < len(text) and text[index] in " \n\t":
        index += 1
    return index


def stuck_scanner(text):
    """One hang: a scan for tool-call bodies that never moves past an empty one. The stuck loop
    spends its time in the helper it calls, so a stack dump catches it in either function."""
    from fuzzer.targets.reference import parse

    position = text.find("<tool_call>")
    while position >= 0:
        body = _skip_spaces(text, position + len("<tool_call>"))
        if text.startswith("</tool_call>", body):
            continue  # the bug: position never advances past an empty body
        position = text.find("<tool_call>", body)
    return parse(text)


def hang_on_bracket_text(text):
    """Hangs on every output that ends in a comma (a max_tokens cut between two values: a share of
    the truncation sweep), and raises KeyError for a JSON object without "arguments"; otherwise
    the reference parser. A campaign must still search the rest of what it draws."""
    if text.rstrip().endswith(","):
        while True:
            pass
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and "name" in data:
            return [{"name": data["name"], "arguments": data["arguments"]}]
    return _reference(text)


_MODEL: list = []


def lazy_model_drops_unit(text):
    """Builds its "model" on the first call of each process (reading marshal data, as compiled
    validators do: an unsafe action, once), and drops the ``unit`` argument of every call."""
    if not _MODEL:
        import marshal

        _MODEL.append(marshal.loads(marshal.dumps({"built": True})))
    calls = _reference(text)
    return [{"name": c["name"], "arguments": {k: v for k, v in c["arguments"].items() if k != "unit"}}
            for c in calls]


_BY_LENGTH: dict = {}
_TAG = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def cached_by_length(text):
    """A ``<tool_call>`` regex parser (bugs one input shows: a ``</tool_call>`` inside a string,
    NaN accepted) behind a cache keyed by the text's length (a bug that depends on what ran
    before: two outputs of one length get one answer)."""
    hit = _BY_LENGTH.get(len(text))
    if hit is not None:
        return json.loads(hit)
    calls = []
    for match in _TAG.finditer(text):
        try:
            call = json.loads(match.group(1))
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError("not a call")
        calls.append({"name": call["name"], "arguments": call.get("arguments", {})})
    _BY_LENGTH[len(text)] = json.dumps(calls)
    return calls


def no_argument():
    """A parser written without its parameter: a usage error before any run, not 40,000 crashes."""
    return []


def iterates_any(text):
    """Crashes at one place with a message naming the value: ``[None]`` and ``[0]`` are one bug
    whose words differ, so a report could show one input's traceback beside another's exception."""
    value = json.loads(text)
    out = []
    for call in value if isinstance(value, list) else [value]:
        out.append({"name": call["name"], "arguments": call.get("arguments", {})})
    return out


_GREEDY = re.compile(r"<tool_call>(.*)</tool_call>", re.DOTALL)


def greedy_hermes(text):
    """Hermes with a greedy regex: one call reads fine, several calls are one broken JSON document
    (everything between the first <tool_call> and the last </tool_call>). A supported format whose
    several-calls variant fails: a false_reject keyed by that variant, never "unsupported"."""
    match = _GREEDY.search(text)
    if match is None:
        raise ValueError("no <tool_call>")
    call = json.loads(match.group(1))
    return [{"name": call["name"], "arguments": call["arguments"]}]


_ANCHORED = re.compile(r"^\s*<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


def qwen3_anchored(text):
    """Qwen3 hermes calls read with a regex anchored at the start of the output: a reasoning block
    before the call (the commonest answer of a reasoning model) is rejected."""
    calls = []
    rest = text
    match = _ANCHORED.match(rest)
    if match is None:
        raise ValueError("the output does not start with <tool_call>")
    while match is not None:
        call = json.loads(match.group(1))
        calls.append({"name": call["name"], "arguments": call["arguments"]})
        rest = rest[match.end():]
        match = _ANCHORED.match(rest)
    if rest.strip():
        raise ValueError("text after the calls")
    return calls


def calls_in_thoughts(text):
    """Runs every <tool_call> it finds, including one the model only wrote inside its <think>
    reasoning (a call it considered, not a call it made): a corruption."""
    calls = []
    for body in _TAG.findall(text):
        call = json.loads(body)
        calls.append({"name": call["name"], "arguments": call["arguments"]})
    return calls


def strips_and_checks_required(text):
    """Strips the spaces around every string argument (the bug), and rejects a call missing a
    required argument of send_email (a check a user adds later, which must not hide the bug)."""
    import json

    from fuzzer.targets.reference import parse

    calls = parse(text)
    for call in calls:
        if call["name"] == "get_weather" and "city" not in call["arguments"]:
            raise ValueError("city is required")
        call["arguments"] = {k: v.strip() if isinstance(v, str) else v for k, v in call["arguments"].items()}
    json.dumps(calls)
    return calls


def drops_at_random(text):
    """Drops the arguments of a call at random, one time in three (no state: a coin)."""
    import random

    calls = _reference(text)
    return [dict(c, arguments={}) if random.random() < 1 / 3 else c for c in calls]
