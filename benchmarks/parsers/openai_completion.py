"""A reader for OpenAI chat-completion responses, written the way SDK users write it.

It takes a whole response (``{"choices": [{"message": ...}]}``) or just the message, and walks it
as the SDK's objects are walked: ``message.content`` for text, ``for tc in message.tool_calls``.

The planted bug: ``message.get("tool_calls", [])`` — the default covers a *missing* key, but the
API and every OpenAI-compatible server send ``"tool_calls": null`` when the model answered in
text, and iterating ``None`` (or any other non-list) raises ``TypeError``. (With the SDK's objects it is the same bug:
``message.tool_calls`` is ``None``.) Only a degenerate message reaches it — generated calls always
have a list. The fix treats null as no calls and rejects
any other non-list.
"""

from __future__ import annotations

from benchmarks.parsers._common import ParseError, make_call
from benchmarks.parsers.openai_message import decoded_arguments, message_of

BUG = {
    "verdict": "crash",
    "level": "parse",
    "formats": ["openai"],
    "description": "'tool_calls': null (a text-only answer) is iterated: TypeError",
    "match": {"verdict": "crash", "text": r"TypeError"},
}
TRIGGER = '{"role": "assistant", "content": "It is sunny in Paris.", "tool_calls": null}'


def _message(text: str):
    response = message_of(text)
    if response is None:
        return None
    if "choices" in response:  # a whole chat.completion
        choices = response["choices"]
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
                or not isinstance(choices[0].get("message"), dict):
            raise ParseError("a chat.completion needs choices[0].message")
        return choices[0]["message"]
    return response


def _read(text: str, checked: bool) -> list:
    message = _message(text)
    if message is None:
        return []
    tool_calls = message.get("tool_calls", [])
    if checked:
        if tool_calls is None:
            tool_calls = []
        if not isinstance(tool_calls, list):
            raise ParseError("tool_calls must be a list")
    calls = []
    for tool_call in tool_calls:  # the bug: None is not iterable
        function = tool_call.get("function") if isinstance(tool_call, dict) else None
        if not isinstance(function, dict):
            raise ParseError("a tool call must hold a function object")
        calls.append(make_call(function.get("name"), decoded_arguments(function.get("arguments"))))
    return calls


def parse(text: str) -> list:
    return _read(text, checked=False)


def parse_fixed(text: str) -> list:
    return _read(text, checked=True)
