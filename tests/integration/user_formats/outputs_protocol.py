"""A user's own format, registered with toolfuzz's public decorator: a prompt protocol where the
model answers ``[[ ## tool ## ]]`` then the tool name on its line, then ``[[ ## arguments ## ]]`` and
the arguments as one JSON object (the shape of DSPy-style field markers)."""

from strategies import Piece, Unrepresentable, output_format


@output_format("outputs_protocol", description="[[ ## tool ## ]] NAME, then [[ ## arguments ## ]] {json}",
               envelope={"tool": "[[ ## tool ## ]]", "arguments": "[[ ## arguments ## ]]"}, bare_arguments=True,
               chatter_after=False, markers=("[[ ## tool ## ]]",))
def render(ctx):
    if len(ctx.calls) != 1:
        raise Unrepresentable("this protocol holds one call")
    call = ctx.calls[0]
    if "\n" in call["name"] or call["name"] != call["name"].strip() or not call["name"]:
        raise Unrepresentable("the name must fit on its line")
    arguments = ctx.dump(call["arguments"])
    return [Piece(ctx.tokens["tool"] + "\n", "envelope"), Piece(call["name"], "payload", call_index=0),
            Piece("\n" + ctx.tokens["arguments"] + "\n", "envelope"),
            Piece(arguments, "payload", json=True, args_end=len(arguments), call_index=0)]
