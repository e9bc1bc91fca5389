"""The bundled targets: the strict reference parser (round trips, rejections, robustness, validate level)
and the naive blog-post parser (its real, documented weaknesses)."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings, strategies as st

from benchmarks.reference import BIG_VALUE, HOSTILE_INPUTS, PROSE, _nesting, large_valid_outputs
from fuzzer.targets import naive, reference
from strategies._internal.formats import FORMATS, Unrepresentable, layouts_for, render, supports_name
from strategies._internal.source import RandomSource
from strategies._internal.tools import Registry, Tool

from tests.unit.test_formats import calls_lists, json_values, names, nasty_text


def same_json(a, b) -> bool:
    """JSON equality that keeps types: 1 is not True, "2" is not 2; key order ignored."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


# ----------------------------------------------------------------------------------------------------
# round trips


def _render(name, calls, source, **kwargs):
    """A rendering, or a rejected example when the format cannot write these calls (qwen3_xml strings)."""
    try:
        return render(name, calls, source, **kwargs)
    except Unrepresentable:
        assume(False)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(FORMATS)), calls=calls_lists, seed=st.integers(0, 2**32), chatter=st.booleans())
def test_reference_parses_every_rendering_exactly(name, calls, seed, chatter):
    rendered = _render(name, calls, RandomSource(seed), chatter=chatter)
    assert same_json(reference.parse(rendered.text), calls), rendered.text


LAYOUT_PAIRS = [(name, layout) for name in sorted(FORMATS) for layout in layouts_for(name)]


@pytest.mark.parametrize("name, layout", LAYOUT_PAIRS, ids=[f"{n}-{lay}" for n, lay in LAYOUT_PAIRS])
def test_reference_reads_every_named_layout_of_every_format(name, layout):
    """Every valid rendering, in every layout, with and without prose and several calls."""
    calls = [{"name": "get_weather", "arguments": {"city": "Zürich", "when": {"day": 1, "hours": [9, 12]},
                                                   "note": "it's \"fine\""}},
             {"name": "send_email", "arguments": {"to": ["a@x.io"], "urgent": True, "cc": None}}]
    for seed in range(4):
        for subset in (calls[:1], calls):
            text = render(name, subset, RandomSource(seed), chatter=seed % 2 == 1, layout=layout).text
            assert same_json(reference.parse(text), subset), text


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(sorted(FORMATS)), tool=nasty_text.filter(bool), seed=st.integers(0, 2**32))
def test_reference_round_trips_any_name_a_format_can_write(name, tool, seed):
    calls = [{"name": tool, "arguments": {"x": tool}}, {"name": tool + ".b", "arguments": {}}]
    assume(supports_name(name, tool) and supports_name(name, tool + ".b"))
    text = _render(name, calls, RandomSource(seed), chatter=True).text
    assert reference.parse(text) == calls, text


NASTY = [
    {"q": "it's \"quoted\" \\ back\\slash \\\" mixed \n new\r\nline \t tab"},
    {"u": "Zürich 東京 😀 \u2028 \u200b \x7f", "esc": "\\u0041 is not A", "nul": "\x00\x1f"},
    {"markers": "</tool_call> <tool_call> ``` [TOOL_CALLS] <|python_tag|> Action: Action Input: Thought:"},
    {"brackets": "a, } b, ] {[(", "eq": "x=1", "call": "get_weather(city='Paris')"},
    {"nested": {"a": [1, [2, [3, {"b": None}]]], "": {"": ""}}, "from": True, "class": False},
    {"nums": [0, -0.0, 1.5e-300, 1.7976931348623157e308, -(10**30), 10**30, 2.5]},
    {"empty": [], "obj": {}, "s": ""},
]


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize("arguments", NASTY, ids=range(len(NASTY)))
def test_reference_round_trips_nasty_values(name, arguments):
    calls = [{"name": "get_weather", "arguments": arguments}, {"name": "book_hotel", "arguments": {"n": 1}}]
    for seed in range(8):
        for subset in (calls[:1], calls):
            try:
                text = render(name, subset, RandomSource(seed), chatter=seed % 2 == 1).text
            except Unrepresentable:
                assert FORMATS[name].raw_strings
                continue
            assert same_json(reference.parse(text), subset), text


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_no_calls_and_plain_prose_give_an_empty_list(name):
    for seed in range(5):
        assert reference.parse(render(name, [], RandomSource(seed), chatter=True).text) == []


@pytest.mark.parametrize("text", [
    "", "Hello.", "The answer is 42.", "x > 3 and y < 4 (see above)", "Thought: I can answer directly.",
    "Use `ls` for that.", "It's “fine”, really.",
])
def test_plain_prose_is_no_call(text):
    assert reference.parse(text) == []


def test_lone_surrogate_escapes_are_valid_json():
    text = '{"name": "f", "arguments": {"s": "\\ud800"}}'
    assert reference.parse(text) == [{"name": "f", "arguments": {"s": "\ud800"}}] == [json.loads(text)]


def test_markers_inside_strings_do_not_change_the_format():
    text = '{"name": "f", "arguments": {"s": "<tool_call> ``` Action: [TOOL_CALLS]"}}\nDone.'
    assert reference.parse(text) == [{"name": "f", "arguments": {"s": "<tool_call> ``` Action: [TOOL_CALLS]"}}]


def test_several_fences_and_thoughts_between_react_actions():
    one = '{"name": "a", "arguments": {}}'
    assert len(reference.parse(f"```json\n{one}\n```\n```\n{one}\n```")) == 2
    react = ('Thought: go.\nAction: a\nAction Input: {"x": 1}\nThought: again.\nAction: b\nAction Input: {}\n'
             'Observation: pending')
    assert reference.parse(react) == [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]


# ----------------------------------------------------------------------------------------------------
# rejections: the reference never repairs

CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'

REJECTED = {
    "trailing comma": '{"name": "get_weather", "arguments": {"city": "Paris",}}',
    "trailing comma in list": '[{"name": "f", "arguments": {}},]',
    "single quotes": "{'name': 'get_weather', 'arguments': {'city': 'Paris'}}",
    "python literal in json": '{"name": "f", "arguments": {"ok": True}}',
    "python None in json": '{"name": "f", "arguments": {"x": None}}',
    "line comment": '{"name": "f", // the tool\n "arguments": {}}',
    "block comment": '{"name": "f", /* x */ "arguments": {}}',
    "NaN": '{"name": "f", "arguments": {"x": NaN}}',
    "Infinity": '{"name": "f", "arguments": {"x": -Infinity}}',
    "float overflow": '{"name": "f", "arguments": {"x": 1e400}}',
    "duplicate key": '{"name": "f", "arguments": {"x": 1, "x": 2}}',
    "duplicate call key": '{"name": "f", "name": "g", "arguments": {}}',
    "raw newline in string": '{"name": "f", "arguments": {"x": "a\nb"}}',
    "raw control char": '{"name": "f", "arguments": {"x": "a\x01b"}}',
    "unclosed tag": f"<tool_call>\n{CALL}",
    "misspelled close tag": f"<tool_call>\n{CALL}\n</tool_cal>",
    "misspelled open tag": f"<tool_cal>\n{CALL}\n</tool_call>",
    "both tags misspelled": f"<toolcall>\n{CALL}\n</toolcall>",
    "close tag only": f"{CALL}\n</tool_call>",
    "unclosed fence": f"```json\n{CALL}\n",
    "fence with prose on the opening line": f"```json {CALL}\n```",
    "BOM": f"\ufeff{CALL}",
    "BOM inside the envelope": f"<tool_call>\n\ufeff{CALL}\n</tool_call>",
    "smart quotes": "{“name”: “get_weather”, “arguments”: {}}",
    "truncated": CALL[:-3],
    "truncated openai": '{"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "argu',
    "arguments is a string": '{"name": "f", "arguments": "{\\"x\\": 1}"}',
    "arguments is a list": '{"name": "f", "arguments": [1]}',
    "arguments is null": '{"name": "f", "arguments": null}',
    "arguments missing": '{"name": "f"}',
    "extra key": '{"name": "f", "arguments": {}, "id": 3}',
    "name not a string": '{"name": 7, "arguments": {}}',
    "empty name": '{"name": "", "arguments": {}}',
    "not a call": '{"city": "Paris"}',
    "scalar": "[1, 2]",
    "two bare objects": f"{CALL}\n{CALL}",
    "extra closing brace": CALL + "}",
    "openai arguments object": '{"tool_calls": [{"id": "c", "type": "function", "function": '
                               '{"name": "f", "arguments": {"x": 1}}}]}',
    "openai arguments not an object": '{"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "[1]"}}]}',
    "openai double encoded": '{"tool_calls": [{"type": "function", "function": {"name": "f", '
                             '"arguments": "\\"{\\\\\\"x\\\\\\": 1}\\""}}]}',
    "openai arguments trailing garbage": '{"tool_calls": [{"function": {"name": "f", "arguments": "{} x"}}]}',
    "openai wrong type": '{"tool_calls": [{"type": "fn", "function": {"name": "f", "arguments": "{}"}}]}',
    "pythonic positional": '[get_weather("Paris")]',
    "pythonic tuple": "[f(x=(1, 2))]",
    "pythonic set": "[f(x={1})]",
    "pythonic bytes": "[f(x=b'a')]",
    "pythonic name value": "[f(x=true)]",
    "pythonic expression": "[f(x=1+2)]",
    "pythonic nan": "[f(x=float('nan'))]",
    "pythonic overflow": "[f(x=1e400)]",
    "pythonic duplicate kwarg": "[f(x=1, x=2)]",
    "pythonic duplicate via star": "[f(x=1, **{'x': 2})]",
    "pythonic duplicate dict key": "[f(x={'a': 1, 'a': 2})]",
    "pythonic unclosed": '[get_weather(city="Paris")',
    "pythonic without brackets": 'get_weather(city="Paris")',
    "pythonic f-string": '[f(x=f"{y}")]',
    "pythonic subscript call": "[f[0](x=1)]",
    "mistral not a list": f"[TOOL_CALLS]{CALL}",
    "llama3 args key": '<|python_tag|>{"name": "f", "args": {}}',  # ("arguments" is read: Llama writes it, vLLM reads it)
    "llama3 bad separator": '<|python_tag|>{"name": "f", "parameters": {}}, {"name": "g", "parameters": {}}',
    "react plain input": "Action: search\nAction Input: weather in Paris",
    "react missing input": "Thought: hm.\nAction: search\n",
    "react input first": 'Action Input: {"x": 1}\nAction: search',
    "react empty name": 'Action: \nAction Input: {"x": 1}',
    "react list input": "Action: f\nAction Input: [1]",
    "json with react words after": f"{CALL}\nAction: more",
    "bracket prose": "[1] see the footnote",
    "llama json extra key": '{"type": "function", "name": "f", "parameters": {}, "id": 1}',
    "llama json wrong type": '{"type": "tool", "name": "f", "parameters": {}}',
    "mcp other method": '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"name": "f", "arguments": {}}}',
    "mcp old version": '{"jsonrpc": "1.0", "id": 1, "method": "tools/call", "params": {"name": "f", "arguments": {}}}',
    "mcp params extra": '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "f", "arguments": {}, "x": 1}}',
    "mcp boolean id": '{"jsonrpc": "2.0", "id": true, "method": "tools/call", "params": {"name": "f", "arguments": {}}}',
    "anthropic block without id": '[{"type": "tool_use", "name": "f", "input": {}}]',
    "anthropic input string": '[{"type": "tool_use", "id": "t", "name": "f", "input": "{}"}]',
    "anthropic user message": '{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}',
    "anthropic mixed list": '[{"type": "tool_use", "id": "t", "name": "f", "input": {}}, {"name": "g", "arguments": {}}]',
    "llama function unclosed": '<function=f>{"a": 1}',
    "llama function list arguments": "<function=f>[1]</function>",
    "llama function spaced name": '<function=get weather>{}</function>',
    "qwen unclosed parameter": "<tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</tool_call>",
    "qwen padded value": "<tool_call>\n<function=f>\n<parameter=a>\n  x \n</parameter>\n</function>\n</tool_call>",
    "qwen no closing tag": "<tool_call>\n<function=f>\n</function>",
    "qwen duplicate parameter": "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n"
                                "</parameter>\n</function>\n</tool_call>",
    "harmony without recipient namespace": '<|channel|>commentary to=f <|constrain|>json<|message|>{}<|call|>',
    "harmony analysis call": '<|channel|>analysis to=functions.f json<|message|>{}<|call|>',
    "harmony no message": "<|channel|>commentary to=functions.f json{}",
    "harmony text arguments": "<|channel|>commentary to=functions.f<|message|>city=Paris<|call|>",
    "harmony unterminated analysis": "<|channel|>analysis<|message|>thinking",
    "deepseek ascii bars": '<|tool▁calls▁begin|><|tool▁call▁begin|>function<|tool▁sep|>f\n```json\n{}\n```'
                           '<|tool▁call▁end|><|tool▁calls▁end|>',
    "deepseek unclosed": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```",
    "deepseek no fence": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n{}<｜tool▁call▁end｜>"
                         "<｜tool▁calls▁end｜>",
    "deep json": '{"name": "f", "arguments": {"x": ' + "[" * 50000 + "]" * 50000 + "}}",
}


@pytest.mark.parametrize("text", list(REJECTED.values()), ids=list(REJECTED))
def test_reference_rejects_without_repairing(text):
    with pytest.raises(ValueError):
        reference.parse(text)


@pytest.mark.parametrize("text", list(HOSTILE_INPUTS.values()), ids=list(HOSTILE_INPUTS))
def test_hostile_inputs_end_with_value_error(text):
    """How long they take is benchmarks/reference.py's job; here: a clean rejection, nothing else."""
    with pytest.raises(ValueError):
        reference.parse(text)


def test_long_prose_is_no_call():
    assert reference.parse(PROSE) == []


def test_a_large_valid_argument_is_accepted():
    for name, text in large_valid_outputs().items():
        assert reference.parse(text) == [{"name": "f", "arguments": {"body": BIG_VALUE}}], name
    # BIG_VALUE ends with a newline: formats that write strings raw cannot carry it
    assert set(large_valid_outputs()) == {name for name, fmt in FORMATS.items() if not fmt.raw_strings}


def _mutate(text: str, data) -> str:
    """Insert, delete or replace a few characters: most results are near-misses of a real format."""
    chars = list(text)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(chars)))
        op = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        ch = data.draw(st.sampled_from(list("{}[]()\"',:;=`<>\\\n \ufeffNaxT0") + ["```", "</tool_call>", "Action:"]))
        if op == "insert" or not chars:
            chars.insert(i, ch)
        elif op == "delete":
            del chars[min(i, len(chars) - 1)]
        else:
            chars[min(i, len(chars) - 1)] = ch
    return "".join(chars)


@settings(max_examples=250, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(FORMATS)), calls=calls_lists, seed=st.integers(0, 2**32))
def test_mutated_renderings_only_ever_raise_value_error(data, name, calls, seed):
    text = _mutate(_render(name, calls, RandomSource(seed), chatter=data.draw(st.booleans())).text, data)
    try:
        result = reference.parse(text)
    except ValueError:
        return
    assert isinstance(result, list)
    for call in result:
        assert isinstance(call["name"], str) and isinstance(call["arguments"], dict)
    assert reference.parse(text) == result  # deterministic


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_arbitrary_text_only_ever_raises_value_error(text):
    try:
        assert isinstance(reference.parse(text), list)
    except ValueError:
        pass


def test_non_string_input_is_a_value_error():
    with pytest.raises(ValueError):
        reference.parse(b'{"name": "f", "arguments": {}}')


# ----------------------------------------------------------------------------------------------------
# validate level

REGISTRY = Registry(tools={
    "get_weather": Tool("get_weather", {
        "type": "object", "additionalProperties": False, "required": ["city"],
        "properties": {"city": {"type": "string", "minLength": 1},
                       "unit": {"enum": ["celsius", "fahrenheit"]}}}),
    "send_email": Tool("send_email", {
        "type": "object", "required": ["to"], "properties": {"to": {"type": "string", "format": "email"},
                                                             "count": {"type": "integer"}}}),
}, source="test")
validate = reference.validated_parser(REGISTRY)


def _hermes(*calls) -> str:
    return "\n".join(f"<tool_call>\n{json.dumps(c)}\n</tool_call>" for c in calls)


def test_validate_level_accepts_valid_distinct_calls():
    calls = [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
             {"name": "get_weather", "arguments": {"city": "Lyon"}},
             {"name": "send_email", "arguments": {"to": "a@example.com", "count": 2}}]
    assert validate(_hermes(*calls)) == calls


@pytest.mark.parametrize("calls", [
    [{"name": "get_wether", "arguments": {"city": "Paris"}}],
    [{"name": "get_weather", "arguments": {}}],
    [{"name": "get_weather", "arguments": {"city": "Paris", "extra": 1}}],
    [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}],
    [{"name": "get_weather", "arguments": {"city": 3}}],
    [{"name": "send_email", "arguments": {"to": "not an email"}}],
    [{"name": "send_email", "arguments": {"to": "a@example.com", "count": "2"}}],
    [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
     {"name": "get_weather", "arguments": {"unit": "celsius", "city": "Paris"}}],
    [{"name": "send_email", "arguments": {"to": "a@example.com", "count": 2}},
     {"name": "send_email", "arguments": {"to": "a@example.com", "count": 2.0}}],
], ids=["unknown tool", "missing", "unexpected", "enum", "type", "format", "string for int", "duplicate",
        "duplicate 2 vs 2.0"])
def test_validate_level_rejects_semantic_anomalies(calls):
    assert reference.parse(_hermes(*calls)) == calls  # the parse level returns them as written
    with pytest.raises(ValueError):
        validate(_hermes(*calls))


def test_validate_level_keeps_bool_and_int_apart_for_duplicates():
    registry = Registry(tools={"f": Tool("f", {"type": "object"})})
    calls = [{"name": "f", "arguments": {"x": 1}}, {"name": "f", "arguments": {"x": True}}]
    assert reference.validated_parser(registry)(_hermes(*calls)) == calls


def test_validate_level_turns_deep_arguments_into_value_error():
    nested = {"$defs": {"a": {"type": "array", "items": {"$ref": "#/$defs/a"}}},
              "type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}}
    registry = Registry(tools={"f": Tool("f", nested)})
    assert reference.parse(_nesting(500))  # parses, but validating it recurses past the limit
    with pytest.raises(ValueError):
        reference.validated_parser(registry)(_nesting(500))


def test_parse_validated_accepts_valid_builtin_samples_and_rejects_unknown_tools():
    from strategies._internal.build import build_sample
    from strategies._internal.tools import builtin_registry

    registry = builtin_registry()
    for tool in registry:
        for i, name in enumerate(sorted(FORMATS)):
            sample = build_sample(RandomSource(i), registry=registry, tool=tool, format=name)
            assert reference.parse_validated(sample.text) == sample.calls, sample.text
    with pytest.raises(ValueError):
        reference.parse_validated('{"name": "no_such_tool_xyz", "arguments": {}}')
    assert reference.parse_validated("No tool needed.") == []


# ----------------------------------------------------------------------------------------------------
# the naive target: typical, not planted, weaknesses


def test_naive_handles_the_happy_paths():
    call = {"name": "get_weather", "arguments": {"city": "Paris"}}
    assert naive.parse(json.dumps(call)) == [call]
    assert naive.parse(f"Sure!\n```json\n{json.dumps([call, call])}\n```") == [call, call]
    assert naive.parse("{'name': 'get_weather', 'arguments': {'city': 'Paris'},}") == [call]


def test_naive_corrupts_apostrophes_and_commas_in_values():
    with pytest.raises(ValueError):  # "it's" becomes "it"s" after the quote swap
        naive.parse("```json\n{\"name\": \"f\", \"arguments\": {\"q\": \"it's\"}}\n```")
    text = '```json\n{"name": "f", "arguments": {"q": "a, }"}}\n```'
    assert reference.parse(text) == [{"name": "f", "arguments": {"q": "a, }"}}]
    assert naive.parse(text) == [{"name": "f", "arguments": {"q": "a}"}}]  # silently rewritten


def test_naive_accepts_nan_and_crashes_on_odd_json():
    assert naive.parse('{"name": "f", "arguments": {"x": NaN}}')[0]["arguments"]["x"] != 0
    with pytest.raises(TypeError):
        naive.parse("42")
    with pytest.raises(KeyError):
        naive.parse('{"city": "Paris"}')
    with pytest.raises(RecursionError):
        naive.parse("[" * 100_000 + "]" * 100_000)


@settings(max_examples=50, deadline=None)
@given(name=names, arguments=st.dictionaries(st.text(alphabet="abc xyz"), json_values, max_size=3))
def test_naive_agrees_with_the_reference_on_plain_json(name, arguments):
    call = {"name": name, "arguments": arguments}
    assert naive.parse(json.dumps(call)) == reference.parse(json.dumps(call))


WEATHER = [{"name": "get_weather", "arguments": {"city": "Paris"}}]


@pytest.mark.parametrize("text", [
    # what SGLang's router reads in its Llama test (tests/tool_parser_llama.rs), prose first
    'Here are some results: <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}',
    # what vLLM's llama3_json parser reads after the tag: "arguments" for "parameters", "type" first
    '<|python_tag|>{"name": "get_weather", "arguments": {"city": "Paris"}}<|eom_id|>',
    '<|python_tag|>{"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}',
])
def test_a_llama3_call_after_the_python_tag_is_read_in_each_spelling_llama_models_write(text):
    assert reference.parse(text) == WEATHER


@pytest.mark.parametrize("text", [
    # the recipient in the role header, right after the generation prompt's <|start|>assistant
    # (harmony's format docs: the recipient may be in the role or in the channel header)
    ' to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
    'to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}',
])
def test_a_harmony_call_whose_recipient_opens_the_output_is_read(text):
    assert reference.parse(text) == WEATHER


@pytest.mark.parametrize("text", [
    'Hello to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}',  # prose, then a header
    '<|python_tag|>{"type": "tool", "name": "get_weather", "parameters": {"city": "Paris"}}',
])
def test_lookalikes_of_those_spellings_stay_rejected(text):
    with pytest.raises(ValueError):
        reference.parse(text)


def test_a_mistral_v11_call_whose_arguments_are_quoted_is_rejected_not_read_with_a_quote_in_its_name():
    with pytest.raises(ValueError):
        reference.parse("[TOOL_CALLS]get_weather'{\"city\": \"a\"}'")
    assert reference.parse('[TOOL_CALLS]get_weather{"city": "a"}') == [{"name": "get_weather", "arguments": {"city": "a"}}]
