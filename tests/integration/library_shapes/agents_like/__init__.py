"""A loop shaped like openai-agents' ``Runner.run``: async, on a real ``AsyncOpenAI`` client (here
answered by toolfuzz's transport), tool results fed back under their call ids, a failing tool
reported to the model, and ``ModelBehaviorError`` / ``MaxTurnsExceeded`` raised — classes defined
in ``agents_like.exceptions`` and re-exported here, as ``agents`` does, so a policy names them
``agents_like.AgentsException``."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator, FormatChecker

from fuzzer.harnesses.agent.transport import openai_client

from .exceptions import AgentsException, MaxTurnsExceeded, ModelBehaviorError

MAX_TURNS = 10


async def run(model, tools, user_input):
    client = openai_client(model, async_=True)
    messages = [{"role": "system", "content": "You are a helpful agent."}, {"role": "user", "content": user_input}]
    for _turn in range(MAX_TURNS):
        response = await client.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools.openai())
        message = response.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            tool = tools[call.function.name] if call.function.name in tools else None
            if tool is None:
                raise ModelBehaviorError(f"Tool {call.function.name} not found in agent")
            try:
                arguments = json.loads(call.function.arguments or "{}")
            except ValueError as exc:
                raise ModelBehaviorError(f"Invalid JSON input for tool {call.function.name}: {exc}") from exc
            problem = next(iter(Draft202012Validator(tool.parameters, format_checker=FormatChecker())
                                .iter_errors(arguments)), None)
            if problem is not None:
                raise ModelBehaviorError(f"Invalid JSON input for tool {call.function.name}: {problem.message}")
            try:
                output = json.dumps(tool(**arguments))
            except Exception as exc:  # the SDK's default tool error function: the model is told
                output = f"An error occurred while running the tool. Please try again. Error: {exc}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
    raise MaxTurnsExceeded(f"Max turns ({MAX_TURNS}) exceeded")


__all__ = ["AgentsException", "MaxTurnsExceeded", "ModelBehaviorError", "run"]
