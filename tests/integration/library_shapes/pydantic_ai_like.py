"""A loop shaped like pydantic-ai's ``Agent.run_sync`` on a real ``openai.OpenAI`` client (here
answered by toolfuzz's transport): a validation error or an unknown tool goes back to the model
as a retry prompt under the call's id, a response cut off mid-call raises ``IncompleteToolCall``
(a subclass of ``UnexpectedModelBehavior``), an empty response ``UnexpectedModelBehavior``, and
``UsageLimitExceeded`` past the request limit. Its first run in a process builds the tool schemas
and the provider — 3 s here, past the 2 s --timeout, as a heavy framework's cold start on a loaded
machine; later runs take milliseconds."""

from __future__ import annotations

import json
import time

from jsonschema import Draft202012Validator, FormatChecker

from fuzzer.harnesses.agent.transport import openai_client

REQUEST_LIMIT = 10
COLD_START_S = 3.0
_built: list = []


class AgentRunError(RuntimeError):
    pass


class UnexpectedModelBehavior(AgentRunError):
    pass


class IncompleteToolCall(UnexpectedModelBehavior):
    """The model's response stopped at the token limit in the middle of a tool call."""


class UsageLimitExceeded(AgentRunError):
    pass


def _build_once() -> None:
    if not _built:
        time.sleep(COLD_START_S)  # schemas, provider, imports: once per process
        _built.append(True)


def run(model, tools, user_input):
    _build_once()
    client = openai_client(model)
    messages = [{"role": "user", "content": user_input}]
    for _request in range(REQUEST_LIMIT):
        response = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools.openai())
        choice = response.choices[0]
        message = choice.message
        if choice.finish_reason == "length" and message.tool_calls:
            raise IncompleteToolCall("Model token limit exceeded while generating a tool call")
        if not message.tool_calls:
            if not message.content:
                raise UnexpectedModelBehavior("Received empty model response")
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            name = call.function.name
            if name not in tools:
                answer = f"Unknown tool name: {name!r}. Available tools: {', '.join(tools)}. Fix the errors and try again."
            else:
                try:
                    arguments = json.loads(call.function.arguments or "{}")
                    problem = next(iter(Draft202012Validator(tools[name].parameters, format_checker=FormatChecker())
                                        .iter_errors(arguments)), None)
                except ValueError as exc:
                    arguments, problem = None, exc
                if problem is not None:
                    answer = f"Validation error: {getattr(problem, 'message', problem)}. Fix the errors and try again."
                else:
                    answer = json.dumps(tools[name](**arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})
    raise UsageLimitExceeded(f"The next request would exceed the request_limit of {REQUEST_LIMIT}")
