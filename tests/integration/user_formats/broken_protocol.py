"""A user's format with a bug of its own: its renderer fails (TypeError) on a call holding an
argument get_weather does not declare, which only a mutation operator (extra_argument) writes, in
the workers. The valid probes render, so the campaign starts; its workers then meet the bug."""

from strategies import Piece, Unrepresentable, output_format


@output_format("broken_protocol", description="<<NAME>> {json}, with a renderer that fails on extra arguments",
               envelope={"open": "<<", "close": ">>"}, bare_arguments=True, chatter_after=False, markers=("<<",))
def render(ctx):
    if len(ctx.calls) != 1:
        raise Unrepresentable("this protocol holds one call")
    call = ctx.calls[0]
    if not call["name"].isidentifier():
        raise Unrepresentable("the name must be an identifier")
    if set(call["arguments"]) - {"city", "date", "unit"}:
        raise TypeError("the plugin's own bug")
    arguments = ctx.dump(call["arguments"])
    return [Piece(ctx.tokens["open"], "envelope"), Piece(call["name"], "payload", call_index=0),
            Piece(ctx.tokens["close"] + " ", "envelope"),
            Piece(arguments, "payload", json=True, args_end=len(arguments), call_index=0)]
