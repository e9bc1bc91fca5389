"""Output formats: the registry, exact simplest renderings, replay, pieces, styles and pythonic literals.

Round trips through the reference parser live in test_reference_target.py; here every check is made
with independent readers (``json.loads``, ``ast``) so a bug shared by renderer and parser cannot hide.
"""

from __future__ import annotations

import ast
import json

import pytest
from hypothesis import given, settings, strategies as st

from strategies._internal.formats import (CHATTER_AFTER, CHATTER_BEFORE, FORMATS, THOUGHTS, Style,
                                          Unrepresentable, render)
from strategies._internal.source import HypothesisSource, RandomSource, ReplaySource
from strategies.errors import ToolfuzzError, UnknownName

WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
EMAIL = {"name": "send_email", "arguments": {"to": "a@example.com", "from": "me", "body": "it's \"ok\"\n"}}

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
}

#: How many closing brackets follow the last arguments inside one JSON payload piece.
CLOSERS = {"json": (1, 2), "fenced": (1, 2), "hermes": (1, 1), "mistral": (2, 2), "llama3": (1, 1),
           "react": (0, 0), "openai": (4, 4)}
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


def test_registry_holds_the_eight_formats():
    assert set(FORMATS) == {"json", "openai", "fenced", "hermes", "pythonic", "mistral", "llama3", "react"}
    assert [name for name, fmt in FORMATS.items() if not fmt.json_payload] == ["pythonic"]
    assert FORMATS["hermes"].envelope == {"open": "<tool_call>", "close": "</tool_call>"}


@pytest.mark.parametrize("name", sorted(SIMPLEST))
def test_all_zero_choices_give_the_most_common_rendering(name):
    rendered = render(name, [WEATHER], ReplaySource([]), chatter=False)
    expected = SIMPLEST[name]
    if name == "openai":
        call_id = json.loads(rendered.text)["tool_calls"][0]["id"][len("call_"):]
        assert len(call_id) == 24 and call_id.isalnum()
        expected = expected % call_id
    assert rendered.text == expected
    assert rendered.calls == [WEATHER] and rendered.format == name and not rendered.chatter


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_recording_replays_to_the_same_rendering(name):
    for seed in range(30):
        recorder = RandomSource(seed)
        first = render(name, [WEATHER, EMAIL], recorder, chatter=seed % 2 == 0)
        again = render(name, [WEATHER, EMAIL], ReplaySource(recorder.choices), chatter=seed % 2 == 0)
        assert again.pieces == first.pieces


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_variation_is_drawn(name):
    """Prose goes before and after the envelope (react: before), and the envelope itself varies:
    JSON formats write both spaced and compact JSON, pythonic both quote styles."""
    renderings = [render(name, [WEATHER, EMAIL], RandomSource(seed), chatter=True) for seed in range(60)]
    before = {r.pieces[0].role == "chatter" and r.pieces[0].text.strip() not in THOUGHTS for r in renderings}
    after = {r.pieces[-1].role == "chatter" for r in renderings}
    assert before == {True, False} or name == "react"
    assert after == ({False} if name == "react" else {True, False})
    envelopes = {"".join(p.text for p in r.pieces if p.role != "chatter") for r in renderings}
    assert len(envelopes) >= 2
    payloads = "".join(p.text for r in renderings for p in r.pieces if p.role == "payload")
    if FORMATS[name].json_payload:
        assert '", "' in payloads and '","' in payloads, "spaced and compact JSON"
    else:
        assert '="Paris"' in payloads and "='Paris'" in payloads, "both quote styles"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_chatter_is_prose_from_the_bank_and_only_when_asked(name):
    for seed in range(40):
        quiet = render(name, [WEATHER], RandomSource(seed), chatter=False)
        assert quiet.pieces[0].role != "chatter" or name == "react"
        assert quiet.pieces[-1].role != "chatter"
        chatty = render(name, [WEATHER], RandomSource(seed), chatter=True)
        ends = [chatty.pieces[0], chatty.pieces[-1]]
        assert any(p.role == "chatter" for p in ends)
        if name == "react":
            assert chatty.pieces[-1].role != "chatter" and chatty.text.split("\n")[1].startswith("Thought: ")
        for piece in chatty.pieces:
            if piece.role == "chatter":
                assert piece.text.strip() and not any(c in piece.text for c in FORBIDDEN_IN_PROSE)
                assert not any(word in piece.text for word in KEYWORDS)


def test_the_sentence_banks_are_safe_prose():
    for sentence in CHATTER_BEFORE + CHATTER_AFTER + THOUGHTS:
        assert not any(c in sentence for c in FORBIDDEN_IN_PROSE), sentence
        assert not any(word in sentence for word in KEYWORDS), sentence


def _denoted_by_piece(name: str, document):
    """The calls one JSON payload piece denotes, read with json.loads only."""
    if name == "openai":
        return [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                for c in document["tool_calls"]]
    if name == "llama3":
        return [{"name": document["name"], "arguments": document["parameters"]}]
    if name == "react":
        return document
    return document if isinstance(document, list) else [document]


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(CLOSERS)), calls=calls_lists, seed=st.integers(0, 2**32), chatter=st.booleans())
def test_json_pieces_are_documents_and_args_end_is_exact(name, calls, seed, chatter):
    rendered = render(name, calls, RandomSource(seed), chatter=chatter)
    assert rendered.text == "".join(p.text for p in rendered.pieces)
    rendered.text.encode("utf-8")  # lone surrogates are escaped, never raw
    seen = []
    for piece in rendered.pieces:
        if not piece.json:
            continue
        assert piece.role == "payload"
        document = json.loads(piece.text)
        denoted = _denoted_by_piece(name, document)
        if name == "react":
            assert denoted == calls[piece.call_index]["arguments"]
            seen.append(calls[piece.call_index])
        else:
            if piece.call_index is not None:
                assert denoted == [calls[piece.call_index]] or (name in ("mistral", "openai") and denoted == calls)
            seen += denoted
        tail = piece.text[piece.args_end:]
        single, several = CLOSERS[name]
        expected = single if len(denoted) == 1 or name == "react" else several
        assert set(tail) <= set(" \n,}]")
        assert sum(tail.count(c) for c in "}]") == expected
        assert piece.text[:piece.args_end].endswith('"' if name == "openai" else "}")
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


@pytest.mark.parametrize("name", sorted(CLOSERS))
def test_style_dump_replaces_the_payload_serializer(name):
    rendered = render(name, [WEATHER, EMAIL], RandomSource(1), chatter=False, style=Style(dump=_trailing_commas))
    payloads = [p for p in rendered.pieces if p.json]
    assert payloads and all(",}" in p.text for p in payloads)
    for piece in payloads:
        assert piece.text[:piece.args_end].endswith('"' if name == "openai" else "}")
        assert piece.text[piece.args_end:].strip(",}] \n") == ""
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


@settings(max_examples=60, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(FORMATS)), calls=calls_lists)
def test_renders_through_hypothesis_draws(data, name, calls):
    rendered = render(name, calls, HypothesisSource(data.draw), chatter=data.draw(st.booleans()))
    assert rendered.calls == calls and rendered.text


def test_lone_surrogates_are_escaped_so_the_text_encodes():
    call = {"name": "f", "arguments": {"s": "a\ud800b", "é": "é"}}
    for seed in range(20):
        for name in FORMATS:
            render(name, [call], RandomSource(seed), chatter=True).text.encode("utf-8")
