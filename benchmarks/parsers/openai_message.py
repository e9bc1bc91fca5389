"""An OpenAI chat-completions message reader: ``tool_calls[*].function.{name, arguments}``.

The serving stack returns an assistant message ``{"role": "assistant", "content": null,
"tool_calls": [{"id", "type": "function", "function": {"name", "arguments": "<JSON string>"}}]}``
and the client decodes each ``arguments`` string with ``json.loads`` — exactly what the OpenAI SDK
examples do.

The planted bug: ``json.loads(function["arguments"])`` assumes a string. Proxies, older SDK
versions and some open-weight servers send ``arguments`` as an already-decoded object, and then
``json.loads`` raises ``TypeError`` (not the ``ValueError`` of a clean rejection). The fix accepts
an object as it is and rejects anything else cleanly.
"""

from __future__ import annotations

from typing import Any, Callable

from benchmarks.parsers._common import ParseError, loads, make_call

BUG = {
    "verdict": "crash",
    "level": "parse",
    "formats": ["openai"],
    "description": "json.loads(arguments) raises TypeError when arguments is already an object",
    "match": {"verdict": "crash", "text": r"TypeError"},
}
TRIGGER = ('{"tool_calls": [{"id": "call_1", "type": "function", '
           '"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}')


def message_of(text: str) -> Any:
    """The JSON message in ``text`` (prose around it holds no braces); None when there is none."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0:
        return None
    if end < start:
        raise ParseError("unterminated JSON message")
    message = loads(text[start:end + 1])
    if not isinstance(message, dict):
        raise ParseError("an OpenAI message is a JSON object")
    return message


def decoded_arguments(arguments: Any) -> dict:
    """``function.arguments``: the JSON string the API sends, or an object a proxy already decoded."""
    if isinstance(arguments, str):
        arguments = loads(arguments)
    if not isinstance(arguments, dict):
        raise ParseError(f"arguments must be a JSON object, got {type(arguments).__name__}")
    return arguments


def tool_calls(message: Any, decode: Callable[[Any], Any] = decoded_arguments) -> list:
    """The calls of an assistant message, ``arguments`` read with ``decode``."""
    items = message.get("tool_calls")
    if not isinstance(items, list):
        raise ParseError("tool_calls must be a list")
    calls = []
    for item in items:
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict):
            raise ParseError("a tool call must hold a function object")
        calls.append(make_call(function.get("name"), decode(function.get("arguments"))))
    return calls


def read_calls(text: str, decode: Callable[[Any], Any] = decoded_arguments) -> list:
    """The calls of the message in ``text`` (``[]`` when it holds no JSON at all)."""
    message = message_of(text)
    return [] if message is None else tool_calls(message, decode)


def parse(text: str) -> list:
    return read_calls(text, loads)  # the bug: loads() of whatever "arguments" holds


def parse_fixed(text: str) -> list:
    return read_calls(text, decoded_arguments)
