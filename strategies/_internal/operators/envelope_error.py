"""Operators of the ``envelope_error`` class. The wrapper around the calls is wrong: unclosed or misspelled tags, broken fences, misspelled
markers, double-encoded arguments, ReAct keyword variants.

Truth rules are stated per operator (see :mod:`strategies._internal.operators`).
"""

from __future__ import annotations

import json
from typing import Any

from strategies._internal.formats import Format, Style
from strategies._internal.mutations import Mutation, MutationContext, NotApplicable, mutator, named
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


@mutator("misspelled_tag", anomaly_class="envelope_error", formats=_has_tag_variants)
def misspelled_tag(source: Any, ctx: MutationContext) -> Mutation:
    """A misspelled or mismatched tag (`<toolcall>`, `<tool-call>`, `<function_call>`, `</tool_calls>`)."""
    fmt = ctx.format_spec
    open_token, close_token = fmt.tags[0]
    open_tag, close_tag = source.choice(fmt.tag_variants)
    text = ctx.render(ctx.calls, style=Style(envelope={open_token: open_tag, close_token: close_tag})).text
    return Mutation(text, _faithful(ctx), f"tags written {open_tag}…{close_tag}")


_FENCE_OPENS = ("```", "```JSON", "```javascript", "```tool_code", "``` json", "```jsonc", "```python")


def _fenced(fmt: Format) -> bool:
    return fmt.fence is not None


@mutator("fence_language", anomaly_class="envelope_error", formats=_fenced)
def fence_language(source: Any, ctx: MutationContext) -> Mutation:
    """A fence without its `json` language tag, or with another one (```` ``` ````, ```` ```python ````)."""
    opener = source.choice(_FENCE_OPENS)
    text = ctx.render(ctx.calls, style=Style(envelope={ctx.format_spec.fence[0]: opener})).text
    return Mutation(text, _faithful(ctx), f"fence opened with {opener!r}")


@mutator("unclosed_fence", anomaly_class="envelope_error", formats=_fenced)
def unclosed_fence(source: Any, ctx: MutationContext) -> Mutation:
    """The closing ```` ``` ```` of the fence missing (or only two backticks)."""
    close = source.choice(("", "``", "`"))
    text = ctx.render(ctx.calls, style=Style(envelope={ctx.format_spec.fence[1]: close})).text
    return Mutation(text, _faithful(ctx), f"fence closed with {close!r}" if close else "fence never closed")


def _marker_error(source: Any, ctx: MutationContext) -> Mutation:
    """One of the format's declared misspellings of its opening marker (missing, misspelled, doubled)."""
    variants = ctx.format_spec.marker_variants["open"]
    opener = source.choice(variants)
    text = ctx.render(ctx.calls, style=Style(envelope={"open": opener})).text
    return Mutation(text, _faithful(ctx), f"{ctx.format_spec.envelope['open']} written {opener!r}")


@mutator("mistral_tag_error", anomaly_class="envelope_error", formats=named("mistral"))
def mistral_tag_error(source: Any, ctx: MutationContext) -> Mutation:
    """`[TOOL_CALLS]` missing, misspelled or doubled before the list of calls."""
    return _marker_error(source, ctx)


@mutator("llama3_tag_error", anomaly_class="envelope_error", formats=named("llama3"))
def llama3_tag_error(source: Any, ctx: MutationContext) -> Mutation:
    """`<|python_tag|>` missing, misspelled or doubled."""
    return _marker_error(source, ctx)


def _object_arguments(fmt: Format) -> bool:
    """Call objects whose arguments are an object, or payloads that are bare arguments objects."""
    return (fmt.call_object is not None and not fmt.call_object.arguments_as_string) or \
        (fmt.bare_arguments and fmt.json_payload)


@mutator("double_encoded_arguments", anomaly_class="envelope_error", formats=_object_arguments)
def double_encoded_arguments(source: Any, ctx: MutationContext) -> Mutation:
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
    text = ctx.render(ctx.calls, style=style).text
    return Mutation(text, _faithful(ctx), f"{shape.arguments_key if shape else 'arguments'} double-encoded "
                    "as a JSON string")


def _string_arguments(fmt: Format) -> bool:
    return fmt.call_object is not None and fmt.call_object.arguments_as_string


@mutator("openai_arguments_object", anomaly_class="envelope_error", formats=_string_arguments)
def openai_arguments_object(source: Any, ctx: MutationContext) -> Mutation:
    """OpenAI `function.arguments` written as an object instead of the JSON string the API sends."""
    key = ctx.format_spec.call_object.arguments_key

    def decode(obj: dict) -> dict:
        return dict(obj, **{key: json.loads(obj[key])}) if isinstance(obj.get(key), str) else obj

    text = ctx.render(ctx.calls, style=Style(call=decode)).text
    return Mutation(text, _faithful(ctx), "function.arguments as an object")


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
    for i in inputs:
        if layout == "same line":
            texts[i] = texts[i].replace("\n" + marker, " " + marker)
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


@mutator("react_keyword_variant", anomaly_class="envelope_error", formats=named("react"))
def react_keyword_variant(source: Any, ctx: MutationContext) -> Mutation:
    """`Action:` / `Action Input:` in another case, spacing or Markdown bold."""
    action, action_input = source.choice(_REACT_SPELLINGS)
    text = ctx.render(ctx.calls, style=Style(envelope={"action": action, "input": action_input})).text
    return Mutation(text, _faithful(ctx), f"keywords written {action!r} / {action_input!r}")
