"""Registry loading: every accepted input shape, and one clear line for every kind of bad input."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
import yaml

from strategies._internal.schema import compile_tool, tool_validator
from strategies._internal.source import RandomSource
from strategies._internal.tools import builtin_registry, load_registry
from strategies.errors import InvalidSchema, RegistryError, UnknownName

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


SHAPES = {
    "openai_list": [{"type": "function", "function": {"name": "w", "description": "d", "parameters": WEATHER}}],
    "openai_wrapped": {"tools": [{"type": "function", "function": {"name": "w", "description": "d",
                                                                   "parameters": WEATHER}}]},
    "anthropic": [{"name": "w", "description": "d", "input_schema": WEATHER}],
    "mcp": {"tools": [{"name": "w", "description": "d", "inputSchema": WEATHER}]},
    "mcp_result": {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "w", "description": "d",
                                                                    "inputSchema": WEATHER}]}},
    "mapping": {"w": dict(WEATHER, description="d")},
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("ext", ["json", "yaml"])
def test_every_shape_loads(tmp_path, shape, ext):
    data = SHAPES[shape]
    text = json.dumps(data) if ext == "json" else yaml.safe_dump(data)
    registry = load_registry(_write(tmp_path, f"tools.{ext}", text))
    assert registry.names() == ["w"]
    tool = registry["w"]
    assert {k: v for k, v in tool.schema.items() if k != "description"} == WEATHER and tool.description == "d"
    assert registry.source.endswith(f"tools.{ext}")
    value = compile_tool(tool).generate(RandomSource(3))
    assert tool_validator(tool).is_valid(value) and "city" in value


def test_none_is_the_builtin_registry():
    registry = load_registry(None)
    assert registry.source == "<built-in>"
    for name in ("get_weather", "search_flights", "book_hotel", "send_email", "calculate"):
        assert name in registry
    for tool in registry:
        assert tool.description
        stack = [tool.schema]
        while stack:  # additionalProperties false on every object
            node = stack.pop()
            if isinstance(node, dict):
                if node.get("type") == "object":
                    assert node.get("additionalProperties") is False, tool.name
                stack.extend(node.values())
    weather = registry["get_weather"].schema
    assert weather["required"] == ["city"] and weather["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert set(registry["search_flights"].schema["required"]) == {"from_city", "to_city", "date"}
    with pytest.raises(UnknownName, match="did you mean get_weather"):
        registry["get_wether"]


def test_missing_parameters_means_no_arguments(tmp_path):
    path = _write(tmp_path, "t.json", [{"type": "function", "function": {"name": "ping"}}])
    tool = load_registry(path)["ping"]
    assert compile_tool(tool).generate(RandomSource(0)) == {}


def test_python_reference_to_pydantic_models(tmp_path, monkeypatch):
    (tmp_path / "my_tools.py").write_text(textwrap.dedent('''
        from typing import Literal, Optional
        from pydantic import BaseModel, Field

        class GetWeather(BaseModel):
            """Get the weather for a city."""
            city: str = Field(min_length=1)
            unit: Literal["celsius", "fahrenheit"] = "celsius"

        class Address(BaseModel):
            street: str
            zip: str = Field(pattern=r"^\\d{5}$")

        class CreateHTTPUser(BaseModel):
            __tool_name__ = "create_user"
            name: str
            address: Optional[Address] = None
            tags: list[str] = []

        MODELS = [GetWeather, CreateHTTPUser]
        DATA = {"tools": [{"name": "w", "input_schema": {"type": "object"}}]}
    '''))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    try:
        single = load_registry("my_tools:GetWeather")
        assert single.names() == ["get_weather"] and single.source == "my_tools:GetWeather"
        assert single["get_weather"].description == "Get the weather for a city."
        many = load_registry("my_tools:MODELS")
        assert many.names() == ["get_weather", "create_user"]
        user = many["create_user"]
        for seed in range(50):
            assert tool_validator(user).is_valid(compile_tool(user).generate(RandomSource(seed)))
        assert load_registry("my_tools:DATA").names() == ["w"]
        with pytest.raises(RegistryError, match=r"my_tools:GetWether: .*no attribute 'GetWether'; did you mean"):
            load_registry("my_tools:GetWether")
        with pytest.raises(RegistryError, match="cannot import module 'no_such_mod'"):
            load_registry("no_such_mod:X")
    finally:
        sys.modules.pop("my_tools", None)


def _error(tmp_path, data, name="tools.json"):
    path = _write(tmp_path, name, data)
    with pytest.raises(RegistryError) as info:
        load_registry(path)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return path, message


def _tool(name, parameters):
    return [{"type": "function", "function": {"name": name, "parameters": parameters}}]


BAD = [
    ("not json", '{"tools": [\n  {"name": "a",}\n]}', "not valid JSON: Expecting property name enclosed in "
                                                         "double quotes at line 2 column 16"),
    ("no name", [{"type": "function", "function": {"parameters": WEATHER}}], "at /0/function: tool has no 'name'"),
    ("schema not object", _tool("f", [1, 2]), "tool 'f', at /0/function/parameters: schema must be an object"),
    ("bad type", _tool("f", {"type": "object", "properties": {"unit": {"type": "strng"}}}),
     "tool 'f', at /0/function/parameters/properties/unit/type: 'strng' is not a JSON type"),
    ("bad type in list", _tool("f", {"type": "object", "properties": {"u": {"type": ["string", "nul"]}}}),
     "tool 'f', at /0/function/parameters/properties/u/type/1: 'nul' is not a JSON type"),
    ("required not list", _tool("f", {"type": "object", "properties": {"a": {"type": "string"}}, "required": "a"}),
     "tool 'f', at /0/function/parameters/required: 'required' must be a list of strings"),
    ("required bool", _tool("f", {"type": "object", "properties": {"a": {"type": "string", "required": True}}}),
     "tool 'f', at /0/function/parameters/properties/a/required: 'required' must be a list of strings"),
    ("dangling ref", _tool("f", {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}),
     "tool 'f', at /0/function/parameters/properties/a/$ref: $ref '#/$defs/Missing' does not resolve"),
    ("remote ref", _tool("f", {"type": "object", "properties": {"a": {"$ref": "http://x/s.json"}}}),
     "does not resolve (only local references"),
    ("bad pattern", _tool("f", {"type": "object", "properties": {"a": {"type": "string", "pattern": "(["}}}),
     "tool 'f', at /0/function/parameters/properties/a/pattern: 'pattern' '([' is not a valid regular expression"),
    ("negative length", _tool("f", {"type": "object", "properties": {"a": {"type": "string", "minLength": -1}}}),
     "at /0/function/parameters/properties/a/minLength: 'minLength' must be a non-negative integer"),
    ("metaschema", _tool("f", {"type": "object", "properties": {"a": {"type": "string", "uniqueItems": "yes"}}}),
     "tool 'f', at /0/function/parameters/properties/a/uniqueItems: 'yes' is not of type 'boolean'"),
    ("not an object root", _tool("f", {"type": "string"}),
     "tool 'f', at /0/function/parameters/type: the arguments schema must describe an object"),
    ("duplicate", [{"name": "f", "input_schema": WEATHER}, {"name": "f", "input_schema": WEATHER}],
     "tool 'f', at /1/input_schema: duplicate tool name (first defined at /0/input_schema)"),
    ("mapping value", {"f": "string"}, "tool 'f', at /f: schema must be an object or a boolean, got string"),
    ("scalar file", "42", "expected a tools list or a {name: schema} mapping, got integer"),
    ("empty list", "[]", "no tools defined"),
]


@pytest.mark.parametrize("data,expected", [(d, e) for _, d, e in BAD], ids=[i for i, _, _ in BAD])
def test_bad_input_is_one_clear_line(tmp_path, data, expected):
    path, message = _error(tmp_path, data)
    assert message.startswith((path + ": ", path + ", ")), message
    assert expected in message, message


def test_bad_yaml_names_line_and_column(tmp_path):
    path, message = _error(tmp_path, "tools:\n  - name: a\n    input_schema: {type: object\n", name="t.yaml")
    assert message.startswith(path + ": not valid YAML") and "line 4" in message, message


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(RegistryError, match=r"nope\.json: no such file$"):
        load_registry(str(tmp_path / "nope.json"))
    with pytest.raises(RegistryError, match="is a directory"):
        load_registry(str(tmp_path))


def test_schema_errors_are_invalid_schema(tmp_path):
    path = _write(tmp_path, "t.json", _tool("f", {"type": "object", "properties": {"a": {"type": "strng"}}}))
    with pytest.raises(InvalidSchema) as info:
        load_registry(path)
    assert info.value.tool == "f" and info.value.pointer == "/0/function/parameters/properties/a/type"
    assert isinstance(info.value, TypeError)  # InvalidSchema is also a TypeError, like Hypothesis's errors


def test_tool_pointer_is_kept_for_compile_errors(tmp_path):
    # loads fine (valid JSON Schema), but no value satisfies it: the compile error points into the file
    path = _write(tmp_path, "t.json", {"tools": [{"name": "f", "inputSchema": {
        "type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "minimum": 3, "maximum": 1}}}}]})
    tool = load_registry(path)["f"]
    with pytest.raises(InvalidSchema, match=r"tool 'f', at /tools/0/inputSchema/properties/n: "):
        compile_tool(tool)


def test_builtin_registry_is_fresh_each_time():
    a, b = builtin_registry(), builtin_registry()
    assert a.names() == b.names() and a is not b
