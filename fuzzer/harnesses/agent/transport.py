"""The scripted model behind a real SDK client: an HTTP transport toolfuzz answers.

A loop written with a framework (openai-agents, pydantic-ai, smolagents, LangGraph ...) does not
call ``client.chat.completions.create`` on an object it is handed: it builds an ``openai``
client, or is given one, and the framework talks HTTP through it. To fuzz such a loop unchanged,
give that client an HTTP transport that toolfuzz answers — every ``POST .../chat/completions``
(or Anthropic ``.../messages``, for a client built on this httpx) is played by the episode's
scripted model, from the request body the SDK serialized, and answered with the JSON the API
would send::

    from fuzzer.harnesses.agent.transport import openai_client

    def run(model, tools, user_input):          # run with --model-shape openai
        client = openai_client(model)           # openai.OpenAI (async_=True: AsyncOpenAI)
        agent = MyFrameworkAgent(client=client, tools=...)
        return agent.run(user_input)

The SDK parses, validates and retries exactly as it does against the real service (retries off:
a scripted turn is played once). Nothing listens on a socket: the transport is an
``httpx.MockTransport`` in the episode's process.
"""

from __future__ import annotations

import json
from typing import Any

#: The base URL the clients are given (nothing resolves it: the transport answers first).
BASE_URL = "http://toolfuzz.invalid/v1"


def _handler(model: Any) -> Any:
    import httpx

    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        try:
            body = json.loads(request.content or b"{}")
        except ValueError:
            return _error(400, "the request body is not JSON")
        if request.method != "POST" or not isinstance(body, dict):
            return _error(404, f"toolfuzz's model answers POST requests only ({request.method} {path})")
        if body.get("stream"):
            return _error(400, "toolfuzz's scripted model does not stream: call it with stream=False")
        if path.endswith("/chat/completions") and hasattr(model, "chat"):
            response = model.chat.completions.create(**body)
        elif path.endswith("/messages") and hasattr(model, "messages"):
            response = model.messages.create(**body)
        else:
            return _error(404, f"toolfuzz's {type(model).__name__} does not answer {path}")
        return httpx.Response(200, json=response.to_dict())

    return handle


def _error(status: int, message: str) -> Any:
    import httpx

    return httpx.Response(status, json={"error": {"message": message, "type": "invalid_request_error"}})


def transport(model: Any) -> Any:
    """An ``httpx.MockTransport`` (sync and async) whose requests the scripted ``model`` answers."""
    import httpx

    return httpx.MockTransport(_handler(model))


def openai_client(model: Any, *, async_: bool = False) -> Any:
    """A real ``openai.OpenAI`` (``AsyncOpenAI``) client whose requests ``model`` (the episode's
    scripted model, ``--model-shape openai``) answers."""
    import httpx
    import openai

    if async_:
        return openai.AsyncOpenAI(api_key="toolfuzz", base_url=BASE_URL, max_retries=0,
                                  http_client=httpx.AsyncClient(transport=transport(model)))
    return openai.OpenAI(api_key="toolfuzz", base_url=BASE_URL, max_retries=0,
                         http_client=httpx.Client(transport=transport(model)))


__all__ = ["BASE_URL", "openai_client", "transport"]
