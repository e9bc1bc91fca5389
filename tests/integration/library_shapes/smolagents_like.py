"""A loop shaped like smolagents' ``ToolCallingAgent`` on a real ``openai.OpenAI`` client (here
answered by toolfuzz's transport): it reads the calls from the response's ``tool_calls`` but keeps
them in its memory as text — an assistant message "Calling tools: [...]" — and each result as a
user message "Observation: ..." (its tool-response role is sent as ``user``); a failing tool, an
unknown one or invalid arguments become an error observation."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator, FormatChecker

from fuzzer.harnesses.agent.transport import openai_client

MAX_STEPS = 10


def run(model, tools, user_input):
    client = openai_client(model)
    messages = [{"role": "system", "content": [{"type": "text", "text": "You are an expert assistant."}]},
                {"role": "user", "content": [{"type": "text", "text": f"New task:\n{user_input}"}]}]
    for _step in range(MAX_STEPS):
        response = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools.openai())
        message = response.choices[0].message
        if not message.tool_calls:
            return message.content
        shown = [{"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
                 for c in message.tool_calls]
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"Calling tools:\n{shown}"}]})
        observations = []
        for call in message.tool_calls:
            name = call.function.name
            try:
                arguments = json.loads(call.function.arguments or "{}")
                if name not in tools:
                    raise KeyError(f"Unknown tool {name}, should be one of: {', '.join(tools)}.")
                problem = next(iter(Draft202012Validator(tools[name].parameters, format_checker=FormatChecker())
                                    .iter_errors(arguments)), None)
                if problem is not None:
                    raise ValueError(problem.message)
                observations.append(str(tools[name](**arguments)))
            except Exception as exc:
                observations.append(f"Error executing tool '{name}': {type(exc).__name__}: {exc}")
        messages.append({"role": "user", "content": [{"type": "text", "text": "Observation:\n" + "\n".join(observations)}]})
    return None
