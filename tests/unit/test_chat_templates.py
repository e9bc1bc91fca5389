"""Chat templates as formats (``--chat-template``): models' published templates render, token for
token, what the family renderers render for the same calls; the sandbox is transformers'; a bad
file is one line naming it; samples replay from their recipes; workers can register the format.

The templates are in tests/fixtures/chat_templates/ (README.md there names each one's source).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from fuzzer.targets.reference import parse as reference_parse
from strategies._internal.build import Unbuildable, build_sample, draw_calls, replay_recipe
from strategies._internal.formats import FORMATS, USUAL, Layout, payload_spans, render
from strategies._internal.formats.chat_template import (
    FIXED_NOW, SOURCES, TemplateFileError, ensure, read_source, register_template, unregister,
)
from strategies._internal.mutations import OPERATORS
from strategies._internal.sample import Recipe
from strategies._internal.source import HypothesisSource, RandomSource, ReplaySource
from strategies._internal.tools import builtin_registry
from strategies.json_values import json_equal

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chat_templates"
QWEN3 = FIXTURES / "Qwen-Qwen3-0.6B.jinja"
LLAMA31 = FIXTURES / "tool_chat_template_llama3.1_json.jinja"
MISTRAL = FIXTURES / "tool_chat_template_mistral_official.jinja"
MADE_UP = FIXTURES / "made_up_calls.jinja"
REGISTRY = builtin_registry()
WEATHER = {"name": "get_weather", "arguments": {"city": "Zürich", "days": 3, "alerts": True, "hours": [9, 12]}}
TIME = {"name": "get_time", "arguments": {"zone": "CET"}}


@pytest.fixture
def load():
    """``load(path)`` registers a chat template format for the test and forgets it afterwards."""
    names: list = []

    def register(path) -> str:
        name = register_template(str(path))
        names.append(name)
        return name

    yield register
    for name in names:
        unregister(name)


# ----------------------------------------------------------------------------------------------------
# must-show 5: each model's template renders what its family renders (exact strings)

#: (template, family format, the family's layout that the template writes, the family's own choices:
#: Mistral's v3 template writes each call's id, which the family writes when its first choice says so)
FAMILY_OF = [(QWEN3, "hermes", USUAL, ()), (LLAMA31, "llama3:json", USUAL, ()), (MISTRAL, "mistral", Layout(gap=" "), (1,))]


@pytest.fixture(scope="module")
def models():
    """The models' templates, registered once for the property tests."""
    names = {path: register_template(str(path)) for path, *_ in FAMILY_OF}
    yield names
    for name in names.values():
        unregister(name)


@pytest.mark.parametrize("path, family, layout, choices", FAMILY_OF, ids=["qwen3", "llama3.1", "mistral"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_models_template_renders_its_familys_rendering_of_the_same_calls(models, path, family, layout, choices,
                                                                          data):
    name = models[path]
    several = "several" in FORMATS[name].variants
    tool = REGISTRY[data.draw(st.sampled_from(["get_weather", "search_flights", "book_hotel", "send_email"]))]
    calls = draw_calls(HypothesisSource(data.draw), REGISTRY, tool, multi=several and data.draw(st.booleans()))
    templated = render(name, calls, ReplaySource(()), chatter=False, layout=USUAL)
    familys = render(family, calls, ReplaySource(choices), chatter=False, layout=layout)
    assert templated.text == familys.text
    assert json_equal(templated.calls, calls)
    assert json_equal(reference_parse(templated.text), calls)


def test_qwen3s_template_writes_reasoning_and_prose_as_the_hermes_family_does(load):
    name = load(QWEN3)
    fmt = FORMATS[name]
    assert fmt.variants == {"prose", "several", "reasoning"}
    assert (fmt.reasoning.open, fmt.reasoning.after_open, fmt.reasoning.before_close, fmt.reasoning.close,
            fmt.reasoning.after_close) == ("<think>", "\n", "\n", "</think>", "\n\n")
    for chatter, reasoning in ((True, False), (False, True), (True, True)):
        templated = render(name, [WEATHER, TIME], ReplaySource(()), chatter=chatter, reasoning=reasoning, layout=USUAL)
        hermes = render("hermes", [WEATHER, TIME], ReplaySource(()), chatter=chatter, reasoning=reasoning, layout=USUAL)
        assert templated.text == hermes.text, (chatter, reasoning)
        assert (templated.content, templated.reasoning) == (hermes.content, hermes.reasoning)
    # an engine that leaves the end-of-turn token in: <|im_end|>, as hermes writes it
    ended = render(name, [WEATHER], ReplaySource(()), chatter=False, layout=Layout(end_token=True))
    assert ended.text == render("hermes", [WEATHER], ReplaySource(()), chatter=False, layout=Layout(end_token=True)).text
    assert ended.text.endswith("</tool_call><|im_end|>")


def test_qwen3s_sample_is_exactly_what_follows_the_generation_prompt(load):
    name = load(QWEN3)
    text = render(name, [WEATHER], ReplaySource(()), chatter=False, reasoning=True, layout=USUAL).text
    assert text == ('<think>\nThe user wants current information, so I should use a tool.\n</think>\n\n<tool_call>\n'
                    '{"name": "get_weather", "arguments": {"city": "Zürich", "days": 3, "alerts": true, '
                    '"hours": [9, 12]}}\n</tool_call>')


def test_llama31s_template_writes_one_call_and_no_prose(load):
    name = load(LLAMA31)
    fmt = FORMATS[name]
    assert fmt.variants == frozenset() and fmt.reasoning is None and fmt.end_tokens == ("<|eot_id|>",)
    from strategies._internal.formats import Unrepresentable

    with pytest.raises(Unrepresentable, match="only supports single tool-calls"):
        render(name, [WEATHER, TIME], ReplaySource(()), chatter=False)


def test_mistrals_template_writes_call_ids_which_the_mistral_family_renders_too(load):
    """The finding of must-show 5: Mistral's v3 template ends each call object with its id and puts a
    space after [TOOL_CALLS]; the family renderer now writes both (ids sometimes, the space as the
    gap layout it already had)."""
    name = load(MISTRAL)
    text = render(name, [WEATHER], ReplaySource(()), chatter=False, layout=USUAL).text
    assert text == ('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Zürich", "days": 3, "alerts": true, '
                    '"hours": [9, 12]}, "id": "hmkDERz5G"}]')
    source = RandomSource(7)
    ids = sum('"id": "' in render("mistral", [WEATHER], source, chatter=False).text for _ in range(200))
    assert 0 < ids < 200  # some renderings carry ids, most do not


# ----------------------------------------------------------------------------------------------------
# files: tokenizer_config.json and .jinja, and the one-line errors


def test_a_tokenizer_config_gives_the_template_and_its_special_tokens(load, tmp_path):
    model = tmp_path / "Mistral-7B-Instruct-v0.3"
    model.mkdir()
    config = {"chat_template": MISTRAL.read_text(encoding="utf-8"), "bos_token": "<s>",
              "eos_token": {"content": "</s>", "lstrip": False}}
    (model / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    name = load(model / "tokenizer_config.json")
    assert name == "template:Mistral-7B-Instruct-v0.3"
    fmt = FORMATS[name]
    assert fmt.end_tokens == ("</s>",)  # the template's eos_token, stripped from the sample
    assert render(name, [WEATHER], ReplaySource(()), chatter=False, layout=USUAL).text.endswith('"}]')
    assert SOURCES[name].origin == {"chat_template": str(model / "tokenizer_config.json"),
                                    "sha256": read_source(str(model / "tokenizer_config.json")).sha256}


def test_a_list_of_templates_takes_tool_use_else_default(load, tmp_path):
    text = QWEN3.read_text(encoding="utf-8")
    listed = tmp_path / "listed" / "tokenizer_config.json"
    listed.parent.mkdir()
    listed.write_text(json.dumps({"chat_template": [{"name": "default", "template": "{{ nothing }}"},
                                                    {"name": "tool_use", "template": text}]}), encoding="utf-8")
    assert read_source(str(listed)).text == text
    listed.write_text(json.dumps({"chat_template": [{"name": "default", "template": text}]}), encoding="utf-8")
    assert read_source(str(listed)).text == text


def test_a_jinja_file_takes_the_special_tokens_of_the_tokenizer_config_beside_it(load, tmp_path):
    shutil.copy(MISTRAL, tmp_path / "chat_template.jinja")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>"}), encoding="utf-8")
    assert FORMATS[load(tmp_path / "chat_template.jinja")].end_tokens == ("</s>",)


BAD_FILES = [
    ("missing.jinja", None, "missing.jinja: cannot read the chat template"),
    ("tokenizer_config.json", '{"eos_token": "</s>"}', "tokenizer_config.json: no chat_template field"),
    ("tokenizer_config.json", "{not json", "tokenizer_config.json: not JSON"),
    ("tokenizer_config.json", '{"chat_template": [{"name": "rag", "template": "x"}]}',
     "chat_template lists no template named tool_use or default (names: rag)"),
    ("tokenizer_config.json", '{"chat_template": 3}', "chat_template must be a string or a list"),
    ("broken.jinja", "{% for m in messages %}{{ m.content }}", "broken.jinja:1: not a Jinja template"),
    ("raises.jinja", "{{ raise_exception('This template needs a system message!') }}",
     "raises.jinja: rendering a user turn and the generation prompt raised TemplateError: This template needs a "
     "system message!"),
    ("content.jinja", "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
     "content.jinja: the template does not write an assistant message's tool_calls"),
    ("mutates.jinja", "{{ messages.append(1) }}", "mutates.jinja: rendering a user turn and the generation prompt "
                                                  "raised SecurityError"),
    ("rewrites.jinja", "{% for m in messages %}{% if loop.last %}[LAST]{% endif %}{{ m.content }}"
                       "{% for c in m.tool_calls or [] %}{{ c.function.arguments | tojson }}{% endfor %}{% endfor %}",
     "rewrites.jinja: the conversation ending with the assistant's message does not start with the conversation "
     "before it and its generation prompt"),
]


@pytest.mark.parametrize("file, text, message", BAD_FILES, ids=[f"{b[0]}:{b[2][:30]}" for b in BAD_FILES])
def test_a_file_that_is_no_usable_chat_template_is_one_line_naming_it(tmp_path, file, text, message):
    if text is not None:
        (tmp_path / file).write_text(text, encoding="utf-8")
    with pytest.raises(TemplateFileError) as caught:
        register_template(str(tmp_path / file))
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert not any(name.startswith("template:") for name in FORMATS)


@pytest.mark.parametrize("file, text, message", BAD_FILES[:2] + BAD_FILES[5:7], ids=["missing", "no-field", "syntax",
                                                                                        "raises"])
def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path, monkeypatch, file, text, message):
    from fuzzer.cli import main

    monkeypatch.chdir(tmp_path)
    if text is not None:
        (tmp_path / file).write_text(text, encoding="utf-8")
    for command in (["campaign", "--target", "fuzzer.targets.reference:parse"], ["gate", "--corpus", "c"],
                    ["samples", "--tool", "get_weather"]):
        result = CliRunner().invoke(main, command + ["--chat-template", file])
        assert result.exit_code == 2, (command, result.output)
        assert result.output.strip().splitlines()[-1].startswith("Error: --chat-template: ")
        assert message in result.output and "Traceback" not in result.output


# ----------------------------------------------------------------------------------------------------
# the sandbox is transformers'


def test_the_sandbox_has_transformers_helpers_and_a_fixed_clock(load, tmp_path):
    template = ("{% for m in messages %}{% if m.role == 'user' %}{{ m.content }}\n{% else %}>>"
                "{% generation %}{% for c in m.tool_calls %}{% if loop.index > 5 %}{% break %}{% endif %}"
                "CALL {{ c.function.name }} {{ c.function.arguments | tojson(indent=2) }}\n{% endfor %}"
                "{% endgeneration %}on {{ strftime_now('%d %b %Y') }}{% endif %}{% endfor %}"
                "{% if add_generation_prompt %}>>{% endif %}")
    (tmp_path / "helpers.jinja").write_text(template, encoding="utf-8")
    name = load(tmp_path / "helpers.jinja")
    rendered = render(name, [WEATHER], ReplaySource(()), chatter=False, layout=USUAL)
    # trim_blocks: no newline after a block tag; tojson keeps non-ASCII (ensure_ascii=False) and indents;
    # loop controls and the {% generation %} tag work; the date is the fixed one
    arguments = json.dumps(WEATHER["arguments"], ensure_ascii=False, indent=2)
    assert rendered.text == "CALL get_weather " + arguments + "\non " + FIXED_NOW.strftime("%d %b %Y")
    assert [p.text for p in rendered.pieces if p.role == "payload"] == [arguments]


def test_arguments_written_as_they_are_given_are_passed_as_a_json_string(load, tmp_path):
    (tmp_path / "raw.jinja").write_text(
        "{% for m in messages %}{% for c in m.tool_calls or [] %}<call>{{ c.function.name }} {{ c.function.arguments }}"
        "</call>{% endfor %}{% endfor %}", encoding="utf-8")
    name = load(tmp_path / "raw.jinja")
    assert render(name, [WEATHER], ReplaySource(()), chatter=False, layout=USUAL).text == \
        "<call>get_weather " + json.dumps(WEATHER["arguments"], ensure_ascii=False) + "</call>"


def test_a_template_with_its_own_argument_syntax_has_no_json_payload(load, tmp_path):
    (tmp_path / "xml.jinja").write_text(
        "{% for m in messages %}{% for c in m.tool_calls or [] %}<function={{ c.function.name }}>"
        "{% for k, v in c.function.arguments.items() %}<parameter={{ k }}>{{ v }}</parameter>{% endfor %}"
        "</function>{% endfor %}{% endfor %}", encoding="utf-8")
    name = load(tmp_path / "xml.jinja")
    fmt = FORMATS[name]
    assert not fmt.json_payload
    assert not OPERATORS["trailing_comma"].applies_to_format(name)
    assert OPERATORS["truncate_anywhere"].applies_to_format(name) and OPERATORS["utf8_bom"].applies_to_format(name)
    assert render(name, [{"name": "get_weather", "arguments": {"city": "Paris"}}], ReplaySource(()),
                  chatter=False).text == "<function=get_weather><parameter=city>Paris</parameter></function>"


def test_operators_that_need_only_the_text_apply_to_a_template_and_cut_inside_its_markers(load):
    name = load(QWEN3)
    assert OPERATORS["truncate_in_marker"].applies_to_format(name)
    for seed in range(20):
        sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=REGISTRY["get_weather"], format=name,
                              operator="truncate_in_marker", chatter=False, multi=False)
        valid = build_sample(RandomSource(seed), registry=REGISTRY, tool=REGISTRY["get_weather"], format=name,
                             chatter=False, multi=False, keep_rendered=True)
        whole = valid.rendered
        (arguments_at, _), = payload_spans(whole)
        # cut inside the envelope the template wrote before the arguments: no call is complete
        assert sample.calls is None and whole.text.startswith(sample.text) and 0 < len(sample.text) < arguments_at
    assert not OPERATORS["truncate_in_marker"].applies_to_format(load(LLAMA31))  # no marker before its arguments


def test_names_a_template_would_paste_unescaped_are_not_written(load):
    name = load(QWEN3)
    assert FORMATS[name].supports_name("get_weather") and FORMATS[name].supports_name("ns.tool-v2:run")
    assert not FORMATS[name].supports_name('get"weather') and not FORMATS[name].supports_name("get weather")


# ----------------------------------------------------------------------------------------------------
# operators, recipes, workers


def test_json_operators_edit_the_arguments_the_template_wrote(load):
    name = load(MADE_UP)
    weather = REGISTRY["get_weather"]
    plain = build_sample(RandomSource(3), registry=REGISTRY, tool=weather, format=name, chatter=False, multi=False)
    edited = build_sample(RandomSource(3), registry=REGISTRY, tool=weather, format=name, operator="trailing_comma",
                          chatter=False, multi=False)
    head, line, tail = edited.text.split("\n")
    assert (head, tail) == ("@@call get_weather", "@@end") and json_equal(edited.calls, plain.calls)
    assert line != plain.text.split("\n")[1]
    assert json_equal(json.loads(re.sub(r",\s*([}\]])", r"\1", line)), plain.calls[0]["arguments"])
    doubled = build_sample(RandomSource(3), registry=REGISTRY, tool=weather, format=name,
                           operator="double_encoded_arguments", chatter=False, multi=False)
    encoded = doubled.text.split("\n")[1]
    assert json_equal(json.loads(json.loads(encoded)), doubled.calls[0]["arguments"])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), operator=st.sampled_from([None, "truncate_anywhere", "hallucinated_function",
                                                              "trailing_comma", "call_in_reasoning", "huge_string"]))
def test_a_recipe_replays_to_the_same_text_and_names_where_the_template_is(seed, operator):
    name = register_template(str(QWEN3))
    try:
        weather = REGISTRY["get_weather"]
        try:
            sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=weather, format=name, operator=operator)
        except Unbuildable:  # an operator with nothing to mutate in these calls
            return
        stored = json.loads(json.dumps(sample.recipe.to_json()))
        assert stored["format_origin"] == {"chat_template": str(QWEN3), "sha256": read_source(str(QWEN3)).sha256}
        again = replay_recipe(Recipe.from_json(stored), REGISTRY)
        assert again.text == sample.text and json_equal(again.calls, sample.calls)
    finally:
        unregister(name)


def test_a_worker_without_the_format_registers_it_from_the_visit(load):
    """A spawned worker (Ray, macOS) inherits nothing: the visit carries the template source."""
    import pickle

    from fuzzer.harnesses.parser import orders

    name = load(QWEN3)
    source = SOURCES[name]
    expected = render(name, [WEATHER], ReplaySource(()), chatter=False).text
    visit = orders.Visit(registry=REGISTRY, tool="get_weather", operators=[None], level="parse", formats=(source,))
    unregister(name)
    assert name not in FORMATS
    order = orders.FuzzOrder("visit-key-template", pickle.dumps(visit), [], 1, 1, 0)
    try:
        orders._state_for(order, None)
        assert name in FORMATS
        assert render(name, [WEATHER], ReplaySource(()), chatter=False).text == expected
        ensure(source)  # the same template again: nothing to do
    finally:
        orders._STATES.pop("visit-key-template", None)


def test_a_different_template_under_a_taken_name_is_refused(load, tmp_path):
    load(MADE_UP)
    other = tmp_path / "made_up_calls.jinja"
    other.write_text(MADE_UP.read_text(encoding="utf-8").replace("@@end", "@@stop"), encoding="utf-8")
    with pytest.raises(TemplateFileError, match="template:made_up_calls is already the chat template"):
        register_template(str(other))
