"""Output formats: the registry, exact simplest renderings, replay, pieces, styles, layouts and literals.

Round trips through the reference parser live in test_reference_target.py; here every check is made
with independent readers (``json.loads``, ``ast``, regular expressions) so a bug shared by renderer
and parser cannot hide.
"""

from __future__ import annotations

import ast
import json
import re

import pytest
from hypothesis import assume, given, settings, strategies as st

from strategies._internal.formats import (CHATTER_AFTER, CHATTER_BEFORE, FORMATS, LAYOUTS, THOUGHTS, USUAL, Layout,
                                          Style, Unrepresentable, layouts_for, payload_spans, render)
from strategies._internal.formats.layouts import DIMENSIONS, draw_layout
from strategies._internal.source import HypothesisSource, RandomSource, ReplaySource
from strategies.errors import ToolfuzzError, UnknownName

WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
EMAIL = {"name": "send_email", "arguments": {"to": "a@example.com", "from": "me", "body": "it's \"ok\"\nbye"}}

SIMPLEST = {
    "json": '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
    "openai": '{"tool_calls": [{"id": "call_%s", "type": "function", "function": {"name": "get_weather", '
              '"arguments": "{\\"city\\": \\"Paris\\", \\"unit\\": \\"celsius\\"}"}}]}',
    "fenced": '```json\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n```',
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>',
    "pythonic": '[get_weather(city="Paris", unit="celsius")]',
    "mistral": '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}]',
    "llama3": '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}',
    "react": 'Thought: %s\nAction: get_weather\nAction Input: {"city": "Paris", "unit": "celsius"}' % THOUGHTS[0],
    "llama_json": '{"type": "function", "name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}',
    "anthropic": '[{"type": "tool_use", "id": "toolu_01%s", "name": "get_weather", "input": {"city": "Paris", '
                 '"unit": "celsius"}}]',
    "mcp": '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_weather", "arguments": '
           '{"city": "Paris", "unit": "celsius"}}}',
    "llama_function": '<function=get_weather>{"city": "Paris", "unit": "celsius"}</function>',
    "qwen3_xml": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=unit>\n"
                 "celsius\n</parameter>\n</function>\n</tool_call>",
    "harmony": '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris", '
               '"unit": "celsius"}<|call|>',
    "deepseek": '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n'
                '{"city": "Paris", "unit": "celsius"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    "mistral:v11": '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "unit": "celsius"}',
    "deepseek:v3.1": '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris", '
                     '"unit": "celsius"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    "deepseek:v3.2": '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" '
                     'string="true">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name="unit" string="true">celsius'
                     '</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
    "glm:4.5": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>unit</arg_key>\n"
               "<arg_value>celsius</arg_value>\n</tool_call>",
    "glm:4.7": "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>unit</arg_key>"
               "<arg_value>celsius</arg_value></tool_call>",
    "kimi:k2": '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>'
               '{"city": "Paris", "unit": "celsius"}<|tool_call_end|><|tool_calls_section_end|>',
    "gemma:4": '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>',
    "llama3:json": '{"name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}',
}

#: How many closing brackets follow the last call's content inside one JSON payload piece (one call,
#: several calls); anthropic: (bare content list, in a message).
CLOSERS = {"json": (1, 2), "fenced": (1, 2), "hermes": (1, 1), "mistral": (2, 2), "llama3": (1, 1),
           "react": (0, 0), "openai": (4, 4), "llama_json": (1, 2), "mcp": (2, 3), "anthropic": None,
           "llama_function": (0, 0), "harmony": (0, 0), "deepseek": (0, 0), "mistral:v11": (0, 0),
           "deepseek:v3.1": (0, 0), "kimi:k2": (0, 0), "llama3:json": (1, 1)}
#: Formats whose values are not JSON text (raw strings between tags, Python or Gemma literals).
NOT_JSON = {"pythonic", "qwen3_xml", "glm:4.5", "glm:4.7", "deepseek:v3.2", "gemma:4"}
FORBIDDEN_IN_PROSE = "{}[]()<>`=\ufeff"
KEYWORDS = ("Action", "Thought", "tool_call", "TOOL_CALLS", "python_tag")

names = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True).filter(lambda n: n not in
                                                                       {"if", "in", "is", "or", "as", "and",
                                                                        "def", "del", "for", "not", "try"})
nasty_text = st.one_of(
    st.text(max_size=12),
    st.lists(st.sampled_from(["'", '"', "\\", "\n", "\t", "\x00", "\u2028", "\ud800", "é", "😀", "</tool_call>",
                              "```", "Action:", "[TOOL_CALLS]", "a, }", "{", "]"]), max_size=6).map("".join),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | nasty_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(nasty_text, inner, max_size=3),
    max_leaves=8)
arguments = st.dictionaries(nasty_text, json_values, max_size=4)
calls_lists = st.lists(st.builds(lambda n, a: {"name": n, "arguments": a}, names, arguments), min_size=1, max_size=3)


def test_registry_holds_the_fifteen_formats_and_the_new_versions():
    assert set(FORMATS) == {"json", "openai", "fenced", "hermes", "pythonic", "mistral", "llama3", "react",
                            "llama_json", "anthropic", "mcp", "llama_function", "qwen3_xml", "harmony", "deepseek",
                            "mistral:v11", "deepseek:v3.1", "deepseek:v3.2", "glm:4.5", "glm:4.7", "kimi:k2",
                            "gemma:4", "llama3:json"}
    assert {name for name, fmt in FORMATS.items() if not fmt.json_payload} == NOT_JSON
    assert set(SIMPLEST) == set(FORMATS) and set(CLOSERS) | NOT_JSON == set(FORMATS)
    for fmt in FORMATS.values():
        assert fmt.layouts <= DIMENSIONS and fmt.fragments and fmt.fake_call, fmt.name
    assert FORMATS["hermes"].envelope == {"open": "<tool_call>", "close": "</tool_call>"}


@pytest.mark.parametrize("name", sorted(SIMPLEST))
def test_all_zero_choices_give_the_most_common_rendering(name):
    rendered = render(name, [WEATHER], ReplaySource([]), chatter=False)
    expected = SIMPLEST[name]
    if name == "openai":
        call_id = json.loads(rendered.text)["tool_calls"][0]["id"][len("call_"):]
        assert len(call_id) == 24 and call_id.isalnum()
        expected = expected % call_id
    if name == "anthropic":
        block_id = json.loads(rendered.text)[0]["id"][len("toolu_01"):]
        assert len(block_id) == 22 and block_id.isalnum()
        expected = expected % block_id
    assert rendered.layout == USUAL
    assert rendered.text == expected
    assert rendered.calls == [WEATHER] and rendered.format == name and not rendered.chatter


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_recording_replays_to_the_same_rendering(name):
    for seed in range(30):
        recorder = RandomSource(seed)
        first = render(name, [WEATHER, EMAIL], recorder, chatter=seed % 2 == 0)
        again = render(name, [WEATHER, EMAIL], ReplaySource(recorder.choices), chatter=seed % 2 == 0)
        assert again.pieces == first.pieces and again.layout == first.layout


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_variation_is_drawn(name):
    """Prose goes before and after the envelope (react: before), and the envelope itself varies:
    JSON formats write both spaced and compact JSON, pythonic both quote styles."""
    fmt = FORMATS[name]
    renderings = [render(name, [WEATHER, EMAIL], RandomSource(seed), chatter=True) for seed in range(60)]
    if not fmt.prose_inside:
        before = {r.pieces[0].role == "chatter" and r.pieces[0].text.strip() not in THOUGHTS for r in renderings}
        after = {_without_trailing_newline(r.pieces)[-1].role == "chatter" for r in renderings}
        assert before == ({True, False} if fmt.chatter_after else {True})  # before only: always there
        assert after == ({True, False} if fmt.chatter_after else {False})
    envelopes = {"".join(p.text for p in r.pieces if p.role != "chatter") for r in renderings}
    assert len(envelopes) >= 2
    payloads = "".join(p.text for r in renderings for p in r.pieces if p.role == "payload")
    if fmt.json_payload:
        assert '", "' in payloads and '","' in payloads, "spaced and compact JSON"
    if name == "pythonic":
        assert '="Paris"' in payloads and "='Paris'" in payloads, "both quote styles"
    if "newline" in fmt.layouts:
        assert any("\r\n" in r.text for r in renderings) and any("\r" not in r.text for r in renderings)


def _without_trailing_newline(pieces: tuple) -> tuple:
    return pieces[:-1] if pieces and pieces[-1].role == "envelope" and not pieces[-1].text.strip() else pieces


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_chatter_is_prose_from_the_bank_and_only_when_asked(name):
    inside = FORMATS[name].prose_inside
    for seed in range(40):
        quiet = render(name, [WEATHER], RandomSource(seed), chatter=False)
        assert not any(p.role == "chatter" for p in quiet.pieces) or name == "react"
        chatty = render(name, [WEATHER], RandomSource(seed), chatter=True)
        pieces = _without_trailing_newline(chatty.pieces)
        if name == "anthropic":  # prose is a text block of the message
            document = json.loads(chatty.text)
            blocks = document["content"] if isinstance(document, dict) else document
            assert blocks[0]["type"] == "text" and blocks[0]["text"] in CHATTER_BEFORE + tuple(
                f"{a} {b}" for a in CHATTER_BEFORE for b in CHATTER_BEFORE)
            continue
        if inside:  # harmony: an analysis-channel message
            assert chatty.text.startswith("<|channel|>analysis<|message|>") and pieces[1].role == "chatter"
        else:
            assert any(p.role == "chatter" for p in (pieces[0], pieces[-1]))
        if name == "react":
            assert pieces[-1].role != "chatter" and chatty.text.split("\n")[1].startswith("Thought: ")
        for piece in chatty.pieces:
            if piece.role == "chatter":
                assert piece.text.strip() and not any(c in piece.text for c in FORBIDDEN_IN_PROSE)
                assert not any(word in piece.text for word in KEYWORDS)


def test_the_sentence_banks_are_safe_prose():
    for sentence in CHATTER_BEFORE + CHATTER_AFTER + THOUGHTS:
        assert not any(c in sentence for c in FORBIDDEN_IN_PROSE), sentence
        assert not any(word in sentence for word in KEYWORDS), sentence


BARE_ARGUMENTS = {"react", "llama_function", "harmony", "deepseek", "mistral:v11", "deepseek:v3.1", "kimi:k2"}


def _denoted_by_piece(name: str, document):
    """The calls one JSON payload piece denotes, read with json.loads only (bare-arguments formats:
    the arguments object)."""
    if name in BARE_ARGUMENTS:
        return document
    if name == "openai":
        return [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                for c in document["tool_calls"]]
    items = document if isinstance(document, list) else [document]
    if name == "anthropic":
        blocks = document["content"] if isinstance(document, dict) else document
        return [{"name": b["name"], "arguments": b["input"]} for b in blocks if b["type"] == "tool_use"]
    if name == "mcp":
        assert all(r["jsonrpc"] == "2.0" and r["method"] == "tools/call" for r in items)
        return [r["params"] for r in items]
    if name == "mistral":  # Mistral's v3 chat template ends each call object with a 9-character id
        assert all(re.fullmatch(r"[A-Za-z0-9]{9}", c.pop("id", "a" * 9)) for c in items)
    if name in ("llama3", "llama_json", "llama3:json"):
        assert name != "llama_json" or all(c.pop("type") == "function" for c in items)
        return [{"name": c["name"], "arguments": c["parameters"]} for c in items]
    return items


def _closers(name: str, document, denoted: list) -> int:
    if name == "anthropic":
        return 3 if isinstance(document, dict) else 2
    single, several = CLOSERS[name]
    return single if len(denoted) == 1 or name in BARE_ARGUMENTS else several


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(CLOSERS)), calls=calls_lists, seed=st.integers(0, 2**32), chatter=st.booleans())
def test_json_pieces_are_documents_and_args_end_is_exact(name, calls, seed, chatter):
    """Every JSON payload piece is one document denoting its calls, and after ``args_end`` come only
    whitespace, commas and the document's closing brackets (so any cut before it loses call content)."""
    try:
        rendered = render(name, calls, RandomSource(seed), chatter=chatter)
    except Unrepresentable:
        assume(False)
    assert rendered.text == "".join(p.text for p in rendered.pieces)
    rendered.text.encode("utf-8")  # lone surrogates are escaped, never raw
    seen = []
    for piece in rendered.pieces:
        if not piece.json:
            continue
        assert piece.role == "payload"
        document = json.loads(piece.text)
        denoted = _denoted_by_piece(name, json.loads(piece.text))
        if name in BARE_ARGUMENTS:
            assert denoted == calls[piece.call_index]["arguments"]
            seen.append(calls[piece.call_index])
        else:
            if piece.call_index is not None:
                assert denoted == [calls[piece.call_index]] or (len(calls) == 1 and denoted == calls)
            seen += denoted
        tail = piece.text[piece.args_end:]
        if name == "mistral":  # only the last call's id follows its arguments
            tail = re.sub(r'^,\s*"id":\s*"[A-Za-z0-9]{9}"', "", tail)
        assert set(tail) <= set(" \r\n,}]")
        assert sum(tail.count(c) for c in "}]") == _closers(name, document, denoted)
        assert piece.text[:piece.args_end][-1:] in ('"', "}", "]", "e", "l") or piece.text[:piece.args_end][-1].isdigit()
    assert seen == calls


def _read_pythonic(text: str) -> list:
    """An independent reader: ast + literal_eval, ** dicts merged."""
    tree = ast.parse(text, mode="eval")
    calls = []
    for node in tree.body.elts:
        arguments = {}
        for kw in node.keywords:
            value = ast.literal_eval(kw.value)
            arguments.update(value if kw.arg is None else {kw.arg: value})
        calls.append({"name": ast.unparse(node.func), "arguments": arguments})
    return calls


@settings(max_examples=150, deadline=None)
@given(calls=calls_lists, seed=st.integers(0, 2**32))
def test_pythonic_values_read_back_exactly_with_literal_eval(calls, seed):
    rendered = render("pythonic", calls, RandomSource(seed), chatter=False)
    assert json.dumps(_read_pythonic(rendered.text), sort_keys=True) == json.dumps(calls, sort_keys=True)
    for piece in rendered.pieces:
        if piece.role == "payload":
            assert piece.text[piece.args_end:] == ")" and piece.text.startswith(calls[piece.call_index]["name"])


def test_pythonic_keeps_types_and_routes_awkward_keys_through_double_star():
    call = {"name": "tools.lookup", "arguments": {"from": "x", "two words": [True, None, 1.5, -3], "ok": {"k": False}}}
    text = render("pythonic", [call], ReplaySource([]), chatter=False).text
    assert text == '[tools.lookup(ok={"k": False}, **{"from": "x", "two words": [True, None, 1.5, -3]})]'
    assert _read_pythonic(text) == [call]


@pytest.mark.parametrize("name, fmt", [("2fast", "pythonic"), ("get-weather", "pythonic"), ("class", "pythonic"),
                                       ("ﬁnd", "pythonic"), ("", "react"), ("a\nb", "react"), (" pad", "react")])
def test_names_a_format_cannot_write_are_refused(name, fmt):
    with pytest.raises(Unrepresentable):
        render(fmt, [{"name": name, "arguments": {}}], ReplaySource([]), chatter=False)


def test_non_json_values_are_refused():
    with pytest.raises((ValueError, ToolfuzzError)):
        render("json", [{"name": "f", "arguments": {"x": float("nan")}}], ReplaySource([]), chatter=False)
    with pytest.raises(ToolfuzzError):
        render("pythonic", [{"name": "f", "arguments": {"x": float("inf")}}], ReplaySource([]), chatter=False)
    with pytest.raises(ToolfuzzError):
        render("json", [{"name": "f", "arguments": "{}"}], ReplaySource([]), chatter=False)


def test_unknown_format_and_unknown_envelope_token_are_named():
    with pytest.raises(UnknownName, match="hermes"):
        render("hermse", [WEATHER], ReplaySource([]), chatter=False)
    with pytest.raises(UnknownName, match="open"):
        render("hermes", [WEATHER], ReplaySource([]), chatter=False, style=Style(envelope={"opne": "<x>"}))


def test_style_overrides_envelope_tokens():
    text = render("hermes", [WEATHER], ReplaySource([]), chatter=False,
                  style=Style(envelope={"close": "</tool_cal>"})).text
    assert text.startswith("<tool_call>\n") and text.endswith("\n</tool_cal>")
    text = render("openai", [WEATHER], ReplaySource([]), chatter=False, style=Style(envelope={"key": "tool_call"})).text
    assert list(json.loads(text)) == ["tool_call"]


def _trailing_commas(value) -> str:
    """A dumper the way a sloppy model writes JSON: a trailing comma in every non-empty container."""
    if isinstance(value, dict):
        return "{" + "".join(f"{json.dumps(k)}: {_trailing_commas(v)}," for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + "".join(f"{_trailing_commas(v)}," for v in value) + "]"
    return json.dumps(value)


@pytest.mark.parametrize("name", sorted(n for n in CLOSERS if n != "anthropic"))
def test_style_dump_replaces_the_payload_serializer(name):
    rendered = render(name, [WEATHER, EMAIL], RandomSource(1), chatter=False, style=Style(dump=_trailing_commas))
    payloads = [p for p in rendered.pieces if p.json]
    assert payloads and all(",}" in p.text for p in payloads)
    for piece in payloads:
        assert piece.text[:piece.args_end][-1] in '"}'
        # after the last call's name and arguments: closers, and the call id Mistral's v3 template writes
        assert re.sub(r'"id": "[A-Za-z0-9]{9}"', "", piece.text[piece.args_end:]).strip(",}] \n") == ""
    if name == "openai":  # the arguments strings keep the normal dumper: not double-mangled
        inner = payloads[0].text.split('"arguments": ')[1].split(',}')[0]
        assert json.loads(json.loads(inner)) == WEATHER["arguments"]


def test_style_dump_is_ignored_by_pythonic():
    plain = render("pythonic", [WEATHER], ReplaySource([]), chatter=False).text
    styled = render("pythonic", [WEATHER], ReplaySource([]), chatter=False, style=Style(dump=_trailing_commas)).text
    assert plain == styled


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_zero_calls_render_the_empty_form(name):
    text = render(name, [], ReplaySource([]), chatter=False).text
    assert text in ("", "[]", "```json\n[]\n```", "[TOOL_CALLS][]", '{"tool_calls": []}')
    assert all(form for form in FORMATS[name].empty_forms)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(FORMATS)), calls=calls_lists)
def test_renders_through_hypothesis_draws(data, name, calls):
    try:
        rendered = render(name, calls, HypothesisSource(data.draw), chatter=data.draw(st.booleans()))
    except Unrepresentable:
        assume(False)
    assert rendered.calls == calls and rendered.text


def test_lone_surrogates_are_escaped_so_the_text_encodes():
    call = {"name": "f", "arguments": {"s": "a\ud800b", "é": "é"}}
    for seed in range(20):
        for name in FORMATS:
            if not FORMATS[name].raw_strings:  # raw text cannot escape; qwen3_xml writes it raw
                render(name, [call], RandomSource(seed), chatter=True).text.encode("utf-8")


# --------------------------------------------------------------------------- layouts


def test_the_all_zero_layout_is_the_usual_one_and_every_dimension_varies():
    assert draw_layout(ReplaySource([]), DIMENSIONS) == USUAL == Layout()
    drawn = [draw_layout(RandomSource(seed), DIMENSIONS) for seed in range(400)]
    assert sum(layout == USUAL for layout in drawn) > 100  # the commonest layout stays the commonest
    for field, values in (("separators", 3), ("indent", 4), ("ascii", 2), ("arguments_first", 2), ("gap", 6),
                          ("newline", 2), ("trailing_newline", 2), ("fence_tag", 3)):
        assert len({getattr(layout, field) for layout in drawn}) == values, field
    assert draw_layout(ReplaySource([1] + [0] * 20), frozenset()) == Layout()  # no dimension, nothing drawn


LAYOUT_CALLS = [{"name": "get_weather", "arguments": {"city": "Zürich", "unit": "celsius"}}, EMAIL]


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_named_layout_of_a_format_changes_its_text_and_keeps_its_calls(name):
    usual = render(name, LAYOUT_CALLS, RandomSource(3), chatter=False, layout="usual")
    texts = {"usual": usual.text}
    for layout in layouts_for(name):
        rendered = render(name, LAYOUT_CALLS, RandomSource(3), chatter=False, layout=layout)
        assert rendered.calls == LAYOUT_CALLS and rendered.layout == LAYOUTS[layout].layout
        texts[layout] = rendered.text
        if layout != "usual":
            assert rendered.text != usual.text, layout
        if layout == "crlf":  # raw string values keep their own line breaks
            assert "\r\n" in rendered.text
            assert "\n" not in rendered.text.replace("\r\n", "") or FORMATS[name].raw_strings
        if layout == "trailing_newline":
            assert rendered.text == usual.text + "\n"
    assert len(set(texts.values())) == len(texts)  # every layout is its own text
    with pytest.raises(UnknownName, match="did you mean"):
        render(name, [WEATHER], RandomSource(0), chatter=False, layout="compcat")


def test_layout_labels_say_what_differs():
    assert USUAL.label() == "usual"
    assert LAYOUTS["crlf"].layout.label() == "indent 2, CRLF"
    assert Layout(separators=(",", ":"), arguments_first=True, fence_tag="JSON").label() == \
        "compact JSON, arguments first, ```JSON"
    for named in LAYOUTS.values():
        assert named.description and (named.name == "usual") == (named.layout == USUAL)


@pytest.mark.parametrize("name", ["json", "hermes", "openai", "anthropic", "mcp", "llama_json"])
def test_arguments_first_puts_the_arguments_before_the_name(name):
    text = render(name, [WEATHER], ReplaySource([]), chatter=False, layout="arguments_first").text
    key = {"anthropic": '"input"', "llama_json": '"parameters"'}.get(name, '"arguments"')
    assert text.index(key) < text.index('"name"')


# --------------------------------------------------------------------------- the special-token formats, read
# with regular expressions and json.loads only

_QWEN = re.compile(r"<tool_call>(?:\r?\n)<function=([^>\n]+)>(?:\r?\n)((?:<parameter=[^>\n]+>.*?</parameter>(?:\r?\n))*)"
                   r"</function>(?:\r?\n)</tool_call>", re.S)
_QWEN_PARAMETER = re.compile(r"<parameter=([^>\n]+)>(?:\r?\n)?(.*?)(?:\r?\n)?</parameter>", re.S)


def _json_or_raw(raw: str):
    """A raw-string format's value as its reader takes it: JSON when it is, else the text."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _read_qwen(text: str) -> list:
    calls = []
    for name, body in _QWEN.findall(text):
        arguments = {}
        for key, raw in _QWEN_PARAMETER.findall(body):
            arguments[key] = _json_or_raw(raw)
        calls.append({"name": name, "arguments": arguments})
    return calls


_SPECIAL = {
    "llama_function": re.compile(r"<function=([^>]+)>\s*(\{.*?\})\s*</function>", re.S),
    "harmony": re.compile(r"<\|channel\|>commentary to=functions\.([^ <]+)(?: <\|constrain\|>json| json)?"
                          r"<\|message\|>(\{.*?\})(?=<\|call\|>|<\|start\|>|$)", re.S),
    "deepseek": re.compile(r"<｜tool▁call▁begin｜>function<｜tool▁sep｜>([^\r\n]+)\r?\n```(?:json|JSON|Json)\r?\n(.*?)\r?\n"
                           r"```<｜tool▁call▁end｜>", re.S),
}


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(["qwen3_xml", *_SPECIAL]), calls=calls_lists, seed=st.integers(0, 2**32),
       chatter=st.booleans())
def test_special_token_formats_read_back_exactly(name, calls, seed, chatter):
    try:
        rendered = render(name, calls, RandomSource(seed), chatter=chatter)
    except Unrepresentable:
        assume(False)
    if name == "qwen3_xml":
        assert _read_qwen(rendered.text) == calls
    else:
        # harmony may write the recipient before the channel: read it in the other order
        text = re.sub(r"<\|start\|>assistant to=functions\.([^<]+)<\|channel\|>commentary",
                      r"<|start|>assistant<|channel|>commentary to=functions.\1", rendered.text)
        assert [{"name": n, "arguments": json.loads(a)} for n, a in _SPECIAL[name].findall(text)] == calls


_SERVING_QWEN_PARAMETER = re.compile(r"<parameter=(.*?)</parameter>", re.S)


def _read_qwen_as_served(text: str) -> list:
    """Qwen3-Coder's calls read the way vLLM's and SGLang's qwen3_coder parsers read them: one ``\\n``
    taken off each side of a value (nothing else), then JSON where it parses."""
    calls = []
    for body in re.findall(r"<function=(.*?)</function>", text, re.S):
        name, params = body.split(">", 1)
        arguments = {}
        for match in _SERVING_QWEN_PARAMETER.findall(params):
            key, raw = match.split(">", 1)
            raw = raw[1:] if raw.startswith("\n") else raw
            raw = raw[:-1] if raw.endswith("\n") else raw
            arguments[key] = _json_or_raw(raw)
        calls.append({"name": name, "arguments": arguments})
    return calls


@settings(max_examples=150, deadline=None)
@given(calls=calls_lists, seed=st.integers(0, 2**32), chatter=st.booleans(),
       layout=st.sampled_from([None, *layouts_for("qwen3_xml")]))
def test_qwen3_xml_values_read_back_the_way_serving_engines_strip_them(calls, seed, chatter, layout):
    """Every valid layout writes what Qwen3-Coder writes: a CRLF layout left a ``\\r`` on each side of
    every value, which a faithful serving parser keeps (a false corruption on a correct parser)."""
    try:
        rendered = render("qwen3_xml", calls, RandomSource(seed), chatter=chatter, layout=layout)
    except Unrepresentable:
        assume(False)
    assert "\r" not in rendered.text
    assert _read_qwen_as_served(rendered.text) == calls


def test_qwen3_refuses_strings_it_cannot_write_unambiguously():
    for value in ("5", "true", "null", '"quoted"', "[1]", " padded", "ends\n", "</parameter>", "a\rb", "\ud800"):
        with pytest.raises(Unrepresentable):
            render("qwen3_xml", [{"name": "f", "arguments": {"s": value}}], ReplaySource([]), chatter=False)
    text = render("qwen3_xml", [{"name": "f", "arguments": {"s": "it's 5 o'clock", "n": 5, "b": True, "o": {"a": [1]}}}],
                  ReplaySource([]), chatter=False).text
    assert "\nit's 5 o'clock\n" in text and "\n5\n" in text and "\ntrue\n" in text and '\n{"a": [1]}\n' in text


@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize("indent", [None, 0, 2, 4])
@pytest.mark.parametrize("separators", [(", ", ": "), (",", ":"), (", ", ":")])
@settings(max_examples=40, deadline=None)
@given(value=json_values | arguments | st.floats())
def test_one_shot_encoders_write_what_json_dumps_writes(ascii_only, indent, separators, value):
    """The renderers' encoders are built once (layouts.one_shot_encoder); they must still write
    exactly json.dumps's text for the same options, and refuse NaN and infinities as it does."""
    from strategies._internal.formats.layouts import _encoder

    if indent is not None:
        separators = (separators[0].rstrip(), separators[1])
    encode = _encoder(ascii_only, indent, separators)
    assert not hasattr(encode, "__self__")  # the fast path, not JSONEncoder.encode itself
    try:
        expected = json.dumps(value, ensure_ascii=ascii_only, indent=indent, separators=separators,
                              allow_nan=False)
    except ValueError:
        with pytest.raises(ValueError):
            encode(value)
        return
    assert encode(value) == expected


def test_layouts_keep_their_fields_through_pickling_after_their_dumpers_are_made():
    import pickle

    from strategies._internal.formats.layouts import json_dumper

    layout = Layout(indent=2, newline="\r\n", ascii=True)
    assert json_dumper(layout)({"a": "é"}) == '{\r\n  "a": "\\u00e9"\r\n}'
    copy = pickle.loads(pickle.dumps(layout))
    assert copy == layout and copy.label() == layout.label()
    assert json_dumper(copy)({"a": "é"}) == json_dumper(layout)({"a": "é"})


def test_equal_drawn_layouts_are_one_object():
    first = draw_layout(ReplaySource((1, 2, 1, 0, 0, 1)), frozenset({"json", "key_order"}))
    again = draw_layout(ReplaySource((1, 2, 1, 0, 0, 1)), frozenset({"json", "key_order"}))
    assert first is again and first != USUAL


def test_mistral_v3_call_ids_as_its_chat_template_writes_them_keep_args_end_inside_the_arguments():
    """Mistral's v3 chat template ends each call object with a 9-character id
    (tests/unit/test_chat_templates.py renders the template itself): cutting before ``args_end``
    still loses argument content, cutting after it only the id."""
    calls = [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"zone": "CET"}}]
    rendered = render("mistral", calls, ReplaySource((1,)), chatter=False, layout=USUAL)
    assert rendered.text == ('[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "hmkDERz5G"}, '
                             '{"name": "get_time", "arguments": {"zone": "CET"}, "id": "hmkDERz5G"}]')
    (start, args_end), = payload_spans(rendered)
    payload = rendered.text[start:]
    assert payload[:args_end].endswith('{"zone": "CET"}') and payload[args_end:] == ', "id": "hmkDERz5G"}]'
    assert render("mistral", calls, ReplaySource(()), chatter=False, layout=USUAL).text == \
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"zone": "CET"}}]'
