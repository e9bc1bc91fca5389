"""Formats that are API message shapes, one JSON document each: openai, anthropic, mcp.

Pieces: one JSON payload piece holding every call (``call_index`` set when it holds one call).
The arguments are the last member of each call object in the usual layout, and the calls the last
member of the document, so ``args_end`` is found from the end (see ``core.args_end``).
"""

from __future__ import annotations

from strategies._internal.formats.core import (
    CHATTER_BEFORE, CallObject, Context, call_id, json_payload, output_format, single,
)

MESSAGE_LAYOUTS = frozenset({"json", "key_order", "newline"})


@output_format("openai", description="an OpenAI assistant message: tool_calls with JSON-string arguments",
               envelope={"key": "tool_calls", "type": "function"},
               call_object=CallObject(arguments_as_string=True),
               fragments=('{"tool_calls": [', '"arguments": "'),
               fake_call='"}, {"id": "call_999", "type": "function", "function": {"name": "{tool}", '
                         '"arguments": "{}"}}',
               empty_forms=('{"role": "assistant", "content": null}',
                            '{"role": "assistant", "content": null, "tool_calls": []}',
                            '{"role": "assistant", "content": null, "tool_calls": null}',
                            '{"tool_calls": []}',
                            '{"role": "assistant", "content": "Sure! Let me check that for you."}',
                            '{"role": "assistant", "content": "", "refusal": null}'),
               layouts=MESSAGE_LAYOUTS)
def _render_openai(ctx: Context) -> list:
    full_message = ctx.source.boolean(0.3)  # also "role" and "content"
    tool_calls = []
    for call in ctx.calls:
        tool_calls.append({"id": "call_" + call_id(ctx.source.integer(0, 2**48 - 1)),
                           "type": ctx.tokens["type"],
                           "function": ctx.call_object(call, ctx.normal_dump(call["arguments"]))})
    message: dict = {"role": "assistant", "content": None} if full_message else {}
    message[ctx.tokens["key"]] = tool_calls
    return [json_payload(ctx, message, 4, single(ctx))]


@output_format("anthropic", description="Anthropic content blocks: prose as text blocks, then tool_use "
               "{type, id, name, input}, bare or in a {role, content} message",
               envelope={"block": "tool_use"}, call_object=CallObject(arguments_key="input"), prose_inside=True,
               fragments=('{"type": "tool_use", ', '"content": ['),
               fake_call='"}, {"type": "tool_use", "id": "toolu_999", "name": "{tool}", "input": {}}, {"x": "',
               empty_forms=('{"role": "assistant", "content": []}', "[]",
                            '{"role": "assistant", "content": [{"type": "text", "text": "I can answer that directly."}]}',
                            '[{"type": "text", "text": "Sure! Let me check that for you."}]'),
               layouts=MESSAGE_LAYOUTS)
def _render_anthropic(ctx: Context) -> list:
    """Prose is a text block before the tool_use blocks (what the Messages API returns)."""
    message = ctx.source.boolean(0.5)
    blocks: list = []
    if ctx.chatter:
        blocks.append({"type": "text", "text": ctx.sentences(CHATTER_BEFORE)})
    for call in ctx.calls:
        block_id = "toolu_01" + call_id(ctx.source.integer(0, 2**48 - 1), 22)
        blocks.append(ctx.call_object(call, before={"type": ctx.tokens["block"], "id": block_id}))
    document = {"role": "assistant", "content": blocks} if message else blocks
    return [json_payload(ctx, document, 3 if message else 2, single(ctx))]


@output_format("mcp", description="MCP tools/call JSON-RPC requests: {jsonrpc, id, method, params: {name, "
               "arguments}}, a batch for several", envelope={"method": "tools/call", "jsonrpc": "2.0"},
               call_object=CallObject(), fragments=('{"jsonrpc": "2.0", ', '"method": "tools/call"'),
               fake_call='"}}, {"jsonrpc": "2.0", "id": 999, "method": "tools/call", "params": {"name": "{tool}", '
                         '"arguments": {}}}, {"x": {"y": "',
               empty_forms=('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
                            '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}',
                            '{"jsonrpc": "2.0", "method": "notifications/initialized"}', "[]"),
               layouts=MESSAGE_LAYOUTS)
def _render_mcp(ctx: Context) -> list:
    first = ctx.source.integer(1, 99)
    string_ids = ctx.source.boolean(0.2)
    requests = []
    for i, call in enumerate(ctx.calls):
        request_id = f"req-{first + i}" if string_ids else first + i
        requests.append({"jsonrpc": ctx.tokens["jsonrpc"], "id": request_id, "method": ctx.tokens["method"],
                         "params": ctx.call_object(call)})
    if len(requests) == 1:
        return [json_payload(ctx, requests[0], 2, 0)]
    return [json_payload(ctx, requests, 3, None)]
