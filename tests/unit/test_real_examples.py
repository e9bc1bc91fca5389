"""Real outputs of every family and version, collected from public sources, held against toolfuzz.

Each example is quoted verbatim from where it was published (named beside it): an engine's parser
test fixture or a family's documented encoder. Three things must hold for every one:

* the family renderer writes the example's call envelope **token for token** for the same calls
  (some choice of its variations does: layout, ids, markers an engine drops);
* the reference parser reads the whole example (prose, reasoning and all) to its calls;
* ``detect`` names the example's family and version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pytest

from fuzzer.targets import reference
from strategies._internal.formats import FORMATS, Unrepresentable, get_format, render
from strategies._internal.formats.detect import detect
from strategies._internal.source import RandomSource


@dataclass(frozen=True)
class Example:
    format: str  # family:version
    source: str
    text: str  # the real output, verbatim
    calls: list
    envelope: Optional[str] = None  # the part a renderer writes (None: the whole text)
    reasoning: bool = False  # the envelope starts with a reasoning block
    #: False: the example is read and detected but not written token for token (see its comment)
    written: bool = True

    @property
    def id(self) -> str:
        return f"{self.format}:{self.source.split('::')[-1]}"


VLLM = "vllm-project/vllm tests/tool_parsers/"

EXAMPLES = [
    # The fixture writes "arguments":{ without the space json.dumps puts there; no layout of ours
    # mixes the two, so this v3 example is read and detected only.
    Example("mistral:v3", VLLM + "test_mistral_tool_parser.py::test_extract_tool_calls_pre_v11_tokenizer[multiple_tools]",
            '[TOOL_CALLS] [{"name": "add", "arguments": {"a": 3.5, "b": 4}}, {"name": "get_current_weather", '
            '"arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}}]',
            [{"name": "add", "arguments": {"a": 3.5, "b": 4}},
             {"name": "get_current_weather", "arguments": {"city": "San Francisco", "state": "CA", "unit": "celsius"}}],
            written=False),
    Example("mistral:v11", VLLM + "test_mistral_tool_parser.py::test_extract_tool_calls[multiple_tool_calls]",
            '[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}',
            [{"name": "add", "arguments": {"a": 3.5, "b": 4}}, {"name": "multiply", "arguments": {"a": 3, "b": 6}}]),
    Example("deepseek:v3", VLLM + "test_deepseekv3_tool_parser.py::parallel_tool_calls_output",
            '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Tokyo", '
            '"unit": "celsius"}\n```<｜tool▁call▁end｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search_hotels\n```json\n'
            '{"location": "Tokyo", "check_in": "2025-01-15"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
            [{"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "celsius"}},
             {"name": "search_hotels", "arguments": {"location": "Tokyo", "check_in": "2025-01-15"}}]),
    Example("deepseek:v3.1", VLLM + "test_deepseekv31_tool_parser.py::test_extract_tool_calls_with_multiple_tools",
            'some prefix text<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁call▁end｜>'
            '<｜tool▁call▁begin｜>bar<｜tool▁sep｜>{"y":2}<｜tool▁call▁end｜><｜tool▁calls▁end｜> some suffix text',
            [{"name": "foo", "arguments": {"x": 1}}, {"name": "bar", "arguments": {"y": 2}}],
            envelope='<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁call▁end｜>'
                     '<｜tool▁call▁begin｜>bar<｜tool▁sep｜>{"y":2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'),
    Example("deepseek:v3.2", VLLM + "test_deepseekv32_tool_parser.py::TestExtractToolCalls::test_multiple_tools",
            '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="location" '
            'string="true">SF</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name="get_weather">\n'
            '<｜DSML｜parameter name="location" string="true">NYC</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
            '</｜DSML｜function_calls>',
            [{"name": "get_weather", "arguments": {"location": "SF"}},
             {"name": "get_weather", "arguments": {"location": "NYC"}}]),
    Example("deepseek:v3.2", VLLM + "test_deepseekv32_tool_parser.py::TestExtractToolCalls::test_type_conversion_in_non_streaming",
            '<｜DSML｜function_calls>\n<｜DSML｜invoke name="toggle">\n<｜DSML｜parameter name="enabled" string="false">'
            'true</｜DSML｜parameter>\n<｜DSML｜parameter name="count" string="false">42</｜DSML｜parameter>\n'
            '</｜DSML｜invoke>\n</｜DSML｜function_calls>',
            [{"name": "toggle", "arguments": {"enabled": True, "count": 42}}]),
    Example("glm:4.5", VLLM + "test_glm4_moe_tool_parser.py::test_extract_tool_calls_with_thinking_tags",
            "<think>I want to get the weather.</think>\n\nI will help you get the weather.\n<tool_call>get_weather\n"
            "<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n"
            "<arg_value>2025-08-01</arg_value>\n</tool_call>",
            [{"name": "get_weather", "arguments": {"city": "Beijing", "date": "2025-08-01"}}],
            envelope="<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
                     "<arg_key>date</arg_key>\n<arg_value>2025-08-01</arg_value>\n</tool_call>"),
    Example("glm:4.7", VLLM + "test_glm47_moe_tool_parser.py::TestGlm47ExtractToolCalls::test_multiple",
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>"
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Shanghai</arg_value></tool_call>",
            [{"name": "get_weather", "arguments": {"city": "Beijing"}},
             {"name": "get_weather", "arguments": {"city": "Shanghai"}}]),
    Example("kimi:k2", VLLM + "test_kimi_k2_tool_parser.py::TestExtractToolCalls[parallel_tool_calls]",
            "Compare weather. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 "
            '<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_call_begin|>functions.get_weather:1 '
            '<|tool_call_argument_begin|>{"city": "Shanghai"}<|tool_call_end|><|tool_calls_section_end|>',
            [{"name": "get_weather", "arguments": {"city": "Beijing"}},
             {"name": "get_weather", "arguments": {"city": "Shanghai"}}],
            envelope="<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 "
                     '<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_call_begin|>'
                     'functions.get_weather:1 <|tool_call_argument_begin|>{"city": "Shanghai"}<|tool_call_end|>'
                     "<|tool_calls_section_end|>"),
    Example("kimi:k2", "sgl-project/sglang sgl-router tests/tool_parser_kimik2.rs::test_kimik2_complete_parsing",
            "Let me help you with that.\n<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.get_weather:0"
            '<|tool_call_argument_begin|>{"location": "Tokyo", "units": "celsius"}<|tool_call_end|>\n'
            "<|tool_calls_section_end|>",
            [{"name": "get_weather", "arguments": {"location": "Tokyo", "units": "celsius"}}],
            written=False),  # the line breaks inside the section are read, not written
    Example("gemma:4", VLLM + "test_gemma4_tool_parser.py::TestExtractToolCalls::test_multiple_arguments",
            '<|tool_call>call:get_weather{location:<|"|>San Francisco<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>',
            [{"name": "get_weather", "arguments": {"location": "San Francisco", "unit": "celsius"}}]),
    Example("gemma:4", VLLM + "test_gemma4_tool_parser.py::TestExtractToolCalls::test_tool_call_with_number_and_boolean",
            "<|tool_call>call:set_status{is_active:true,count:42,score:3.14}<tool_call|>",
            [{"name": "set_status", "arguments": {"is_active": True, "count": 42, "score": 3.14}}]),
    Example("llama3:json", VLLM + "test_llama3_json_tool_parser.py::test_extract_tool_calls_multiple_json",
            '{"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", '
            '"parameters": {}}; {"name": "searchTool", "parameters": {"query": "test2"}}',
            [{"name": "searchTool", "arguments": {"query": "test1"}},
             {"name": "getOpenIncidentsTool", "arguments": {}},
             {"name": "searchTool", "arguments": {"query": "test2"}}]),
    Example("qwen3:xml", VLLM + "test_step3p5_tool_parser.py::test_streaming_mtp_variable_chunks (chunks joined)",
            "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX"
            "\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
            [{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}]),
    Example("harmony", "openai/harmony docs/format.md (function calling: the model's call)",
            '<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>'
            '{"location":"San Francisco"}<|call|>',
            [{"name": "get_current_weather", "arguments": {"location": "San Francisco"}}]),
    Example("harmony", "openai/harmony docs (ja): function calling, an analysis message before the call",
            "<|channel|>analysis<|message|>Need to use function get_current_weather.<|end|><|start|>assistant"
            '<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>'
            '{"location":"San Francisco"}<|call|>',
            [{"name": "get_current_weather", "arguments": {"location": "San Francisco"}}], written=False),
    Example("hermes", "QwenLM/Qwen docs framework/function_call.md (\"The output texts should be like\")",
            '<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "San Francisco, CA, USA"}}\n'
            '</tool_call>\n<tool_call>\n{"name": "get_temperature_date", "arguments": {"location": '
            '"San Francisco, CA, USA", "date": "2024-10-01"}}\n</tool_call><|im_end|>',
            [{"name": "get_current_temperature", "arguments": {"location": "San Francisco, CA, USA"}},
             {"name": "get_temperature_date", "arguments": {"location": "San Francisco, CA, USA", "date": "2024-10-01"}}],
            envelope='<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "San Francisco, CA, '
                     'USA"}}\n</tool_call>\n<tool_call>\n{"name": "get_temperature_date", "arguments": {"location": '
                     '"San Francisco, CA, USA", "date": "2024-10-01"}}\n</tool_call>'),
]


def _renders_exactly(fmt: str, calls: list, envelope: str, reasoning: bool) -> Optional[str]:
    """The rendering of ``calls`` that is ``envelope``, under the first of many seeds that gives it;
    None when none does."""
    for seed in range(4000):
        try:
            text = render(fmt, calls, RandomSource(seed), chatter=False, reasoning=reasoning).text
        except Unrepresentable:
            return None
        if text == envelope:
            return text
    return None


WRITTEN = [e for e in EXAMPLES if e.written]


@pytest.mark.parametrize("example", WRITTEN, ids=[e.id for e in WRITTEN])
def test_the_family_renderer_writes_the_real_example_token_for_token(example):
    fmt = get_format(example.format)
    envelope = example.text if example.envelope is None else example.envelope
    assert _renders_exactly(fmt.name, example.calls, envelope, example.reasoning) == envelope


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_the_reference_parser_reads_the_real_example(example):
    assert reference.parse(example.text) == example.calls


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_detect_names_the_family_and_version_of_the_real_example(example):
    found = detect(example.text)
    assert found.format is not None and get_format(found.format).full_name == get_format(example.format).full_name, found


#: Formats of model families (the rest are API shapes and generic syntaxes), and the one among them
#: whose real example is not written token for token (its fixture's spacing is no layout of ours).
FAMILY_FORMATS = {name for name, fmt in FORMATS.items()
                  if fmt.family in ("deepseek", "mistral", "glm", "kimi", "gemma", "harmony", "qwen3", "hermes")
                  or name == "llama3:json"}
READ_ONLY = {"mistral"}


def test_every_family_and_version_has_a_real_example():
    assert FAMILY_FORMATS <= {get_format(e.format).name for e in EXAMPLES}
    assert FAMILY_FORMATS - READ_ONLY <= {get_format(e.format).name for e in WRITTEN}
