"""Parsers of the made-up syntax of tests/fixtures/chat_templates/made_up_calls.jinja, a format
toolfuzz knows only through that template: ``parse`` is careful, ``parse_buggy`` has one planted bug
(it takes a call the model only wrote inside its reasoning for a call it made)."""

import json
import math

_END_OF_TURN = "<|end|>"
_REASONING = (("<think>", "</think>"), ("<thinking>", "</thinking>"), ("<reasoning>", "</reasoning>"))
_DECODER = json.JSONDecoder(parse_float=lambda text: _finite(text), parse_constant=lambda name: _no_constant(name))


def _finite(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _body(text):
    body = text.removeprefix("\ufeff").rstrip()
    if body.endswith(_END_OF_TURN):
        body = body[:-len(_END_OF_TURN)].rstrip()
    return body


def _calls_from(body, start):
    calls, i = [], start
    while True:
        if not body.startswith("@@call ", i):
            raise ValueError(f"expected @@call at {i}")
        line_end = body.find("\n", i)
        name = body[i + len("@@call "):line_end] if line_end >= 0 else ""
        if not name or name != name.strip():
            raise ValueError("a call needs its name on the @@call line")
        try:
            arguments, end = _DECODER.raw_decode(body, line_end + 1)
        except RecursionError:
            raise ValueError("arguments nested too deeply") from None
        if not isinstance(arguments, dict):
            raise ValueError("arguments must be a JSON object")
        if not body.startswith("\n@@end", end):
            raise ValueError("a call must end with @@end on its line")
        calls.append({"name": name, "arguments": arguments})
        i = end + len("\n@@end")
        if i == len(body):
            return calls
        if not body.startswith("\n@@call ", i):
            raise ValueError(f"unexpected text after a call at {i}")
        i += 1


def parse(text):
    body = _body(text)
    for opener, closer in _REASONING:
        if body.startswith(opener):
            close = body.find(closer)
            if close < 0:
                return []  # still thinking: no call was made
            body = body[close + len(closer):]
            break
    start = body.find("@@call ")
    if start < 0:
        return []
    return _calls_from(body, start)


def parse_buggy(text):
    """The planted bug: reasoning is not skipped, so a call the model only considered is made."""
    body = _body(text)
    start = body.find("@@call ")
    if start < 0:
        return []
    return _calls_from(body, start)
