"""The naive agent loop: the ``while True`` tool-use loop from the quick-start guides.

It exists so the agent harness has a realistic victim (README, benchmarks, tests). Written for
an OpenAI-compatible client, the hurried way:

* it asks the model until the model stops calling tools — a model that never stops makes it run
  forever, and a tool that keeps answering the same thing does not stop it either;
* it runs every call it is given: again when the model repeats itself, unvalidated when the
  arguments break the schema, and whatever ``finish_reason`` says;
* ``json.loads`` on the arguments and ``tools[name]`` on the name raise on broken JSON and on a
  hallucinated tool.

Do not fix it: its value is in being typical.
"""

from __future__ import annotations

import json


def run(client, tools, user_input):
    """Answer ``user_input``, calling tools as the model asks."""
    messages = [{"role": "user", "content": user_input}]
    while True:
        response = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools.openai())
        message = response.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append({"role": "assistant", "content": message.content,
                         "tool_calls": [{"id": c.id, "type": "function",
                                         "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                        for c in message.tool_calls]})
        for call in message.tool_calls:
            arguments = json.loads(call.function.arguments)
            result = tools[call.function.name](**arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
