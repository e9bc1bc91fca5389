"""Operators of the ``envelope_error`` class: the wrapper around the calls is wrong — unclosed or
misspelled tags, broken fences, misspelled markers, the envelope spellings models use instead of
``name`` / ``arguments`` (``parameters``, ``args``, ``function``, ``tool_name``, extra ``id`` /
``type`` / ``index`` keys, a wrapper object), arguments missing, null or of the wrong type,
double-encoded arguments, reasoning before the call, and each format's own header errors.

Truth rule of each operator, in its docstring: *faithful* unless stated otherwise (the text still
denotes exactly the calls; a careful parser may repair it or reject it). ``arguments_missing`` is
*as written* (the calls with no arguments: at ``--level validate`` a missing_argument for a tool that
requires some), ``arguments_wrong_type`` is *none* (no faithful call).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from strategies._internal.formats import THOUGHTS, Format, Style, call_id
from strategies._internal.mutator import (
    Mutation, MutationContext, NotApplicable, call_objects, family, mutator, named, restyler, tagged_reasoning,
)
from strategies._internal.operators.textual import _faithful, _join


def _envelope_pieces(rendered: Any, token: str) -> list:
    return [i for i, p in enumerate(rendered.pieces) if p.role == "envelope" and token in p.text]


def _has_tags(fmt: Format) -> bool:
    return bool(fmt.tags)


@mutator("unclosed_tag", anomaly_class="envelope_error", formats=_has_tags)
def unclosed_tag(source: Any, ctx: MutationContext) -> Mutation:
    """The closing tag (`</tool_call>`) missing: the last one, or every one."""
    fmt = ctx.format_spec
    close_token = fmt.tags[source.integer(0, len(fmt.tags) - 1)][1]
    every = source.boolean(0.3)
    if every:
        text = ctx.render(ctx.calls, style=Style(envelope={close_token: ""})).text
        return Mutation(text, _faithful(ctx), "every closing tag dropped")
    rendered = ctx.render(ctx.calls)
    close = fmt.envelope[close_token]
    found = _envelope_pieces(rendered, close)
    if not found:
        raise NotApplicable
    i = found[-1]
    text = _join(rendered.pieces, i, rendered.pieces[i].text.replace(close, ""))
    return Mutation(text, _faithful(ctx), f"last {close!r} dropped")


def _has_tag_variants(fmt: Format) -> bool:
    return bool(fmt.tags and fmt.tag_variants)


@restyler("misspelled_tag", anomaly_class="envelope_error", formats=_has_tag_variants)
def misspelled_tag(source: Any, ctx: MutationContext) -> tuple:
    """A misspelled or mismatched tag (`<toolcall>`, `<tool-call>`, `<function_call>`, `</tool_calls>`)."""
    fmt = ctx.format_spec
    open_token, close_token = fmt.tags[0]
    open_tag, close_tag = source.choice(fmt.tag_variants)
    return Style(envelope={open_token: open_tag, close_token: close_tag}), f"tags written {open_tag}…{close_tag}"


#: Fence openings models write instead of ```json (```JSON is a valid layout, not an anomaly).
_FENCE_OPENS = ("```", "```javascript", "```tool_code", "``` json", "```jsonc", "```python", "```js")


def _fenced(fmt: Format) -> bool:
    return fmt.fence is not None


@restyler("fence_language", anomaly_class="envelope_error", formats=_fenced)
def fence_language(source: Any, ctx: MutationContext) -> tuple:
    """A fence without its `json` language tag, or with another one (```` ``` ````, ```` ```python ````)."""
    opener = source.choice(_FENCE_OPENS)
    return Style(envelope={ctx.format_spec.fence[0]: opener}), f"fence opened with {opener!r}"


@restyler("unclosed_fence", anomaly_class="envelope_error", formats=_fenced)
def unclosed_fence(source: Any, ctx: MutationContext) -> tuple:
    """The closing ```` ``` ```` of the fence missing (or only two backticks)."""
    close = source.choice(("", "``", "`"))
    return Style(envelope={ctx.format_spec.fence[1]: close}), (f"fence closed with {close!r}" if close
                                                              else "fence never closed")


def _marker_error(source: Any, ctx: MutationContext) -> tuple:
    """One of the format's declared misspellings of its opening marker (missing, misspelled, doubled)."""
    variants = ctx.format_spec.marker_variants["open"]
    opener = source.choice(variants)
    return Style(envelope={"open": opener}), f"{ctx.format_spec.envelope['open']} written {opener!r}"


@restyler("mistral_tag_error", anomaly_class="envelope_error", formats=family("mistral"))
def mistral_tag_error(source: Any, ctx: MutationContext) -> tuple:
    """`[TOOL_CALLS]` missing, misspelled or doubled before the list of calls."""
    return _marker_error(source, ctx)


@restyler("llama3_tag_error", anomaly_class="envelope_error",
          formats=lambda fmt: fmt.family == "llama3" and "open" in fmt.marker_variants)
def llama3_tag_error(source: Any, ctx: MutationContext) -> tuple:
    """`<|python_tag|>` missing, misspelled or doubled."""
    return _marker_error(source, ctx)


def _object_arguments(fmt: Format) -> bool:
    """Call objects whose arguments are an object, or payloads that are bare arguments objects."""
    return (fmt.call_object is not None and not fmt.call_object.arguments_as_string) or \
        (fmt.bare_arguments and fmt.json_payload)


@restyler("double_encoded_arguments", anomaly_class="envelope_error", formats=_object_arguments)
def double_encoded_arguments(source: Any, ctx: MutationContext) -> tuple:
    """Arguments written as a JSON string holding the object (`"arguments": "{\\"city\\": ...}"`)."""
    compact = source.boolean(0.3)
    separators = (",", ":") if compact else (", ", ": ")
    shape = ctx.format_spec.call_object

    def encode(arguments: Any) -> str:
        return json.dumps(arguments, ensure_ascii=False, separators=separators)

    if shape is None:  # the payload is the arguments object itself
        def dump(document: Any) -> str:
            return json.dumps(encode(document), ensure_ascii=False)

        style = Style(dump=dump)
    else:
        key = shape.arguments_key

        def stringify(obj: dict) -> dict:
            return dict(obj, **{key: encode(obj[key])}) if isinstance(obj.get(key), dict) else obj

        style = Style(call=stringify)
    return style, f"{shape.arguments_key if shape else 'arguments'} double-encoded as a JSON string"


def _string_arguments(fmt: Format) -> bool:
    return fmt.call_object is not None and fmt.call_object.arguments_as_string


@restyler("openai_arguments_object", anomaly_class="envelope_error", formats=_string_arguments)
def openai_arguments_object(source: Any, ctx: MutationContext) -> tuple:
    """OpenAI `function.arguments` written as an object instead of the JSON string the API sends."""
    key = ctx.format_spec.call_object.arguments_key

    def decode(obj: dict) -> dict:
        return dict(obj, **{key: json.loads(obj[key])}) if isinstance(obj.get(key), str) else obj

    return Style(call=decode), "function.arguments as an object"


_REACT_INPUTS = ("same line", "fence", "fence without language", "backticks", "quoted")


@mutator("react_action_input_layout", anomaly_class="envelope_error", formats=named("react"))
def react_action_input_layout(source: Any, ctx: MutationContext) -> Mutation:
    """`Action Input` on the Action line, or its JSON in a code fence, backticks or quotes."""
    layout = source.choice(_REACT_INPUTS)
    rendered = ctx.render(ctx.calls)
    pieces = list(rendered.pieces)
    marker = ctx.format_spec.envelope["input"]
    inputs = [i for i, p in enumerate(pieces) if p.role == "envelope" and marker in p.text
              and i + 1 < len(pieces) and pieces[i + 1].json]
    if not inputs:
        raise NotApplicable
    texts = [p.text for p in pieces]
    nl = rendered.layout.newline
    for i in inputs:
        if layout == "same line":
            texts[i] = texts[i].replace(nl + marker, " " + marker)
        elif layout.startswith("fence"):
            lang = "" if layout.endswith("language") else "json"
            texts[i] = texts[i].rstrip(" ") + "\n```" + lang + "\n"
            texts[i + 1] = texts[i + 1] + "\n```"
        elif layout == "backticks":
            texts[i + 1] = "`" + texts[i + 1] + "`"
        else:
            texts[i + 1] = "'" + texts[i + 1] + "'"
    return Mutation("".join(texts), _faithful(ctx), f"Action Input: {layout}")


_REACT_SPELLINGS = (("Action:", "Action input:"), ("Action:", "ActionInput:"), ("Action:", "Action_Input:"),
                    ("action:", "action input:"), ("Action :", "Action Input :"), ("**Action:**", "**Action Input:**"))


@restyler("react_keyword_variant", anomaly_class="envelope_error", formats=named("react"))
def react_keyword_variant(source: Any, ctx: MutationContext) -> tuple:
    """`Action:` / `Action Input:` in another case, spacing or Markdown bold."""
    action, action_input = source.choice(_REACT_SPELLINGS)
    return Style(envelope={"action": action, "input": action_input}), f"keywords written {action!r} / {action_input!r}"


# --------------------------------------------------------------------------- envelope spellings


def _renamed(old: str, new: str) -> Callable[[dict], dict]:
    """A call-object rewrite: member ``old`` under the key ``new``, in its place."""
    def rename(obj: dict) -> dict:
        return {(new if k == old else k): v for k, v in obj.items()} if old in obj else obj
    return rename


#: Keys models use for the arguments, and for the tool name.
_ARGUMENT_KEYS = ("parameters", "args", "input", "arguments", "params", "kwargs")
_NAME_KEYS = ("function", "tool", "tool_name", "function_name", "name")


@restyler("arguments_key_renamed", anomaly_class="envelope_error", formats=call_objects)
def arguments_key_renamed(source: Any, ctx: MutationContext) -> tuple:
    """The arguments under another key than the format's (`"parameters"`, `"args"`, `"input"`)."""
    key = ctx.format_spec.call_object.arguments_key
    new = source.choice([k for k in _ARGUMENT_KEYS if k != key])
    return Style(call=_renamed(key, new)), f"{key!r} written {new!r}"


@restyler("name_key_renamed", anomaly_class="envelope_error", formats=call_objects)
def name_key_renamed(source: Any, ctx: MutationContext) -> tuple:
    """The tool name under another key (`"function"`, `"tool"`, `"tool_name"`)."""
    shape = ctx.format_spec.call_object
    new = source.choice([k for k in _NAME_KEYS if k not in (shape.name_key, shape.arguments_key)])
    return Style(call=_renamed(shape.name_key, new)), f"{shape.name_key!r} written {new!r}"


def _object_call_objects(fmt: Format) -> bool:
    return fmt.call_object is not None and not fmt.call_object.arguments_as_string


_WRAPPERS = ("function", "function_call", "tool_call", "call")


@restyler("call_object_wrapped", anomaly_class="envelope_error", formats=_object_call_objects)
def call_object_wrapped(source: Any, ctx: MutationContext) -> tuple:
    """Each call object wrapped once more (`{"function": {...}}`, `{"type": "function", "function": {...}}`)."""
    wrapper = source.choice(_WRAPPERS)
    typed = source.boolean(0.3)

    def wrap(obj: dict) -> dict:
        return {"type": "function", wrapper: obj} if typed else {wrapper: obj}

    return Style(call=wrap), f"call objects wrapped in {wrapper!r}" + (" with a type" if typed else "")


@restyler("extra_envelope_keys", anomaly_class="envelope_error", formats=call_objects)
def extra_envelope_keys(source: Any, ctx: MutationContext) -> tuple:
    """Envelope keys the format does not have beside the call (`"id"`, `"type"`, `"index"`)."""
    first = source.boolean(0.4)  # before the call's own members, else after them
    extra = {"id": "call_" + call_id(source.integer(0, 2**48 - 1), 9), "index": 0, "type": "function"}
    names = [k for k in extra if source.boolean(0.6)] or ["id"]
    counter = iter(range(10 ** 6))

    def add(obj: dict) -> dict:
        wanted = [k for k in names if k not in obj] or [k for k in extra if k not in obj][:1]
        added = {k: (next(counter) if k == "index" else extra[k]) for k in wanted}
        return {**added, **obj} if first else {**obj, **added}

    return Style(call=add), f"extra envelope keys {', '.join(names)}"


def _arguments_rewrite(ctx: MutationContext, replacement: Callable[[Any], Any], *, drop: bool = False) -> Style:
    key = ctx.format_spec.call_object.arguments_key

    def rewrite(obj: dict) -> dict:
        if key not in obj:
            return obj
        if drop:
            return {k: v for k, v in obj.items() if k != key}
        return {k: (replacement(v) if k == key else v) for k, v in obj.items()}

    return Style(call=rewrite)


@mutator("arguments_missing", anomaly_class="envelope_error", formats=call_objects, truth="as_written")
def arguments_missing(source: Any, ctx: MutationContext) -> Mutation:
    """The arguments member absent or null (`{"name": "get_weather"}`).

    Truth: the calls as written, with no arguments — at the validate level a missing_argument when the
    tool requires some."""
    drop = source.boolean(0.5)
    style = _arguments_rewrite(ctx, lambda value: None, drop=drop)
    truth = [{"name": call["name"], "arguments": {}} for call in ctx.calls]
    text = ctx.render(ctx.calls, style=style).text
    return Mutation(text, truth, "arguments " + ("absent" if drop else "null"))


def _not_json(arguments: dict) -> str:
    """How a model writes arguments as text that is no JSON: ``city=Paris, unit=celsius``."""
    return ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in arguments.items())


_WRONG_TYPES = ("list", "text", "first value")


@mutator("arguments_wrong_type", anomaly_class="envelope_error", formats=call_objects, truth="none")
def arguments_wrong_type(source: Any, ctx: MutationContext) -> Mutation:
    """The arguments a list of their values, or text that is not JSON (`"city=Paris"`).

    Truth: none (no faithful call)."""
    if not all(call["arguments"] for call in ctx.calls):
        raise NotApplicable("a call without arguments has no wrong-typed spelling of them")
    kind = source.choice(_WRONG_TYPES)
    as_string = ctx.format_spec.call_object.arguments_as_string
    by_text = {json.dumps(call["arguments"], ensure_ascii=False, separators=(",", ":")): call["arguments"]
               for call in ctx.calls}

    def replacement(value: Any) -> Any:
        arguments = by_text.get(value) if isinstance(value, str) else value
        if not isinstance(arguments, dict):
            arguments = json.loads(value) if isinstance(value, str) else {}
        if kind == "list":
            wrong: Any = list(arguments.values())
            return json.dumps(wrong, ensure_ascii=False) if as_string else wrong
        if kind == "text":
            return _not_json(arguments)
        first = next(iter(arguments.values()))
        return first if isinstance(first, str) and _is_not_json(first) else _not_json(arguments)

    text = ctx.render(ctx.calls, style=_arguments_rewrite(ctx, replacement)).text
    return Mutation(text, None, f"arguments written as {kind}")


def _is_not_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


# --------------------------------------------------------------------------- reasoning before the call

_THINK_TAGS = (("<think>", "</think>"), ("<thinking>", "</thinking>"), ("<reasoning>", "</reasoning>"))


def _reasoning_formats(fmt: Format) -> bool:
    return not fmt.prose_inside or fmt.name == "anthropic"


def think_block(source: Any, content: str, nl: str = "\n") -> str:
    """A reasoning block as models write it before (or instead of) their answer."""
    open_tag, close_tag = source.choice(_THINK_TAGS)
    return f"{open_tag}{nl}{content}{nl}{close_tag}"


def _message_reasoning(fmt: Format) -> bool:
    """Formats whose output is one message document that carries reasoning as a member or a block."""
    return fmt.name in ("openai", "anthropic")


def reasoning_style(ctx: MutationContext, source: Any, reasoning: str) -> Style:
    """A style writing ``reasoning`` into the message: OpenAI ``reasoning_content``, an Anthropic
    thinking block first (``\\u`` escapes: always encodable)."""
    if ctx.format == "openai":
        def dump(message: Any) -> str:
            return json.dumps({"reasoning_content": reasoning, **message})
    else:
        block = {"type": "thinking", "thinking": reasoning, "signature": "sig_" + call_id(source.integer(0, 2**48 - 1))}

        def dump(document: Any) -> str:
            if isinstance(document, dict):
                return json.dumps(dict(document, content=[block] + list(document["content"])))
            return json.dumps([block] + list(document))
    return Style(dump=dump)


def with_reasoning(ctx: MutationContext, source: Any, reasoning: str, calls: list) -> str:
    """``calls`` rendered with ``reasoning`` before them: a reasoning member or block of the message,
    or a think block before the text."""
    if _message_reasoning(ctx.format_spec):
        return ctx.render(calls, style=reasoning_style(ctx, source, reasoning)).text
    return think_block(source, reasoning) + "\n\n" + ctx.render(calls).text


@mutator("reasoning_before_call", anomaly_class="envelope_error", formats=_reasoning_formats)
def reasoning_before_call(source: Any, ctx: MutationContext) -> Mutation:
    """Reasoning before the call (a `<think>` block, `reasoning_content`, an Anthropic thinking block).

    Truth: the call the text holds."""
    reasoning = " ".join(source.choice(THOUGHTS) for _ in range(source.integer(1, 2)))
    return Mutation(with_reasoning(ctx, source, reasoning, ctx.calls), _faithful(ctx), "reasoning before the call")


# --------------------------------------------------------------------------- formats' own headers


_HARMONY_HEADERS = (("recipient", " to="), ("recipient", " to=tools."), ("commentary", "analysis"),
                    ("constrain", "<|constraint|>json"), ("channel", "<|chanel|>"), ("commentary", "Commentary"),
                    ("channel", ""))


@restyler("harmony_header_error", anomaly_class="envelope_error", formats=named("harmony"))
def harmony_header_error(source: Any, ctx: MutationContext) -> tuple:
    """A harmony header written wrong (`to=get_weather`, the analysis channel, `<|constraint|>`).

    Also a misspelled or missing `<|channel|>`."""
    token, text = source.choice(_HARMONY_HEADERS)
    return Style(envelope={token: text}), f"harmony {token} written {text!r}"


def _argument_tag_written_wrong(source: Any, ctx: MutationContext, spellings: tuple, nothing: str) -> tuple:
    """One of the tags a family writes each argument with, written as in ``spellings`` ((envelope
    token, text) pairs); calls without arguments have no such tag (``nothing`` says so)."""
    if not any(call["arguments"] for call in ctx.calls):
        raise NotApplicable(nothing)
    token, text = source.choice(spellings)
    return Style(envelope={token: text}), f"{ctx.format_spec.envelope[token]!r} written {text!r}"


_QWEN_PARAMETERS = (("parameter", "<param="), ("parameter", "<parameter name="), ("parameter_close", "</param>"),
                    ("function", "<function name="), ("name_end", " >"))


@restyler("xml_parameter_error", anomaly_class="envelope_error", formats=named("qwen3_xml"))
def xml_parameter_error(source: Any, ctx: MutationContext) -> tuple:
    """Qwen3-Coder parameter tags written wrong: `<param=...>`, `<parameter name=...>`, `</param>`."""
    return _argument_tag_written_wrong(source, ctx, _QWEN_PARAMETERS, "no parameters to misspell")


_JSONRPC = (("jsonrpc", "1.0"), ("jsonrpc", "2"), ("method", "tools.call"), ("method", "call_tool"),
            ("method", "tools/Call"))


@restyler("jsonrpc_envelope_error", anomaly_class="envelope_error", formats=named("mcp"))
def jsonrpc_envelope_error(source: Any, ctx: MutationContext) -> tuple:
    """An MCP request's JSON-RPC envelope written wrong (version `1.0`, method `tools.call`)."""
    token, text = source.choice(_JSONRPC)
    return Style(envelope={token: text}), f"{token} written {text!r}"


@restyler("anthropic_block_error", anomaly_class="envelope_error", formats=named("anthropic"))
def anthropic_block_error(source: Any, ctx: MutationContext) -> tuple:
    """Anthropic `tool_use` blocks with another type (`tool_call`, `function`, `tool-use`)."""
    kind = source.choice(("tool_call", "function", "tool-use", "tool"))
    return Style(envelope={"block": kind}), f"block type written {kind!r}"


# --------------------------------------------------------------------------- reasoning of the families


@mutator("call_in_reasoning", anomaly_class="envelope_error", formats=tagged_reasoning)
def call_in_reasoning(source: Any, ctx: MutationContext) -> Mutation:
    """The call written inside the reasoning too (the model *thinking about* it), then made.

    Truth: the calls after the reasoning only — a call inside reasoning is not a call, so a parser
    that returns it as well runs it twice."""
    from strategies._internal.formats import render
    from strategies._internal.formats.reasoning import reasoning_text

    style = ctx.format_spec.reasoning
    considered = render(ctx.format, ctx.calls, source, chatter=False).text
    made = render(ctx.format, ctx.calls, source, chatter=ctx.chatter).text
    thought = reasoning_text(source)
    text = (style.open + style.after_open + thought + " I could call it like this: " + considered
            + style.before_close + style.close + style.after_close + made)
    return Mutation(text, _faithful(ctx), "the call also written inside the reasoning")


_GLM_PAIRS = (("key_close", "</arg_value>"), ("value", "<arg_val>"), ("value_close", "</arg_key>"),
              ("key", "<arg_name>"), ("key_close", ""), ("value_close", "</value>"))


@restyler("arg_pair_error", anomaly_class="envelope_error", formats=family("glm"))
def arg_pair_error(source: Any, ctx: MutationContext) -> tuple:
    """A broken `<arg_key>`/`<arg_value>` pair: a closing tag swapped, misspelled or missing."""
    return _argument_tag_written_wrong(source, ctx, _GLM_PAIRS, "no arguments to break")


@mutator("dsml_string_false", anomaly_class="envelope_error", formats=named("deepseek:v3.2"), truth="none")
def dsml_string_false(source: Any, ctx: MutationContext) -> Mutation:
    """A DSML string value marked `string="false"`: read as JSON it is no value at all.

    Truth: none (no faithful call)."""
    rendered = ctx.render(ctx.calls)
    text = rendered.text
    marker, end = 'string="true">', "</｜DSML｜parameter>"
    sites = []
    at = text.find(marker)
    while at >= 0:
        close = text.find(end, at)
        value = text[at + len(marker):close]
        try:
            json.loads(value)
        except ValueError:
            sites.append(at)
        at = text.find(marker, at + 1)
    if not sites:
        raise NotApplicable("no string value that is not JSON")
    at = source.choice(sites)
    return Mutation(text[:at] + 'string="false">' + text[at + len(marker):], None, 'a string value marked string="false"')
