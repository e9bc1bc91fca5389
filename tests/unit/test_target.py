"""The target contract: loading ``M:A`` references and normalizing every return shape."""

from __future__ import annotations

import dataclasses
import json
import textwrap
import uuid
from collections import OrderedDict
from types import MappingProxyType, SimpleNamespace

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.engine.calls import MAX_DEPTH, InvalidReturn, normalize_calls
from fuzzer.engine.references import load_reject_types, load_target
from strategies.errors import TargetError


@pytest.fixture
def project(tmp_path):
    """A user project directory with a uniquely named parser module (sys.modules is global)."""
    name = f"userparser_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
        import json

        def parse(text):
            return json.loads(text)

        class Parser:
            def __init__(self):
                self.prefix = "p_"

            def parse(self, text):
                return {"name": self.prefix + text, "arguments": {}}

            @staticmethod
            def static(text):
                return [text]

        class NeedsArgs:
            def __init__(self, config):
                pass

            def parse(self, text):
                return None

        class ParseFailed(Exception):
            pass

        table = {"a": 1}
    """))
    return tmp_path, name


def _write(tmp_path, body: str) -> str:
    name = f"usermod_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
    return name


def _error(ref: str, **kwargs) -> str:
    with pytest.raises(TargetError) as info:
        load_target(ref, **kwargs)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


# -- load_target


def test_loads_function_method_and_staticmethod(project):
    cwd, name = project
    assert load_target(f"{name}:parse", cwd=str(cwd))('{"a": 1}') == {"a": 1}
    # An instance method is bound to a no-argument instance, so its __init__ state is there.
    assert load_target(f"{name}:Parser.parse", cwd=str(cwd))("x") == {"name": "p_x", "arguments": {}}
    assert load_target(f"{name}:Parser.static", cwd=str(cwd))("y") == ["y"]


def test_loads_a_file_path(project):
    cwd, name = project
    assert load_target(f"{name}.py:parse", cwd=str(cwd))("[1]") == [1]
    assert "not found" in _error("nowhere/missing.py:parse", cwd=str(cwd))


def test_cwd_goes_first_on_sys_path(tmp_path, monkeypatch):
    """The user's own module wins over one of the same name elsewhere on sys.path."""
    name = f"shadowed_{uuid.uuid4().hex[:8]}"
    for sub, answer in (("installed", 1), ("project", 2)):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / f"{name}.py").write_text(f"def parse(text):\n    return {answer}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "installed"))
    assert load_target(f"{name}:parse", cwd=str(tmp_path / "project"))("") == 2


def test_missing_colon(project):
    assert "missing ':'" in _error("userparser.parse")
    assert "empty module" in _error(":parse")
    assert "empty attribute" in _error("json:")


def test_module_not_found_suggests_close_names(project):
    cwd, name = project
    message = _error(f"{name[:-1]}X:parse", cwd=str(cwd))
    assert "not found" in message and repr(name) in message


def test_missing_attribute_suggests_close_names(project):
    cwd, name = project
    message = _error(f"{name}:pasre", cwd=str(cwd))
    assert "has no attribute 'pasre'" in message and "'parse'" in message
    assert "has no attribute 'prase'" in _error(f"{name}:Parser.prase", cwd=str(cwd))


def test_not_callable(project):
    cwd, name = project
    assert "dict object is not callable" in _error(f"{name}:table", cwd=str(cwd))


def test_unbindable_method(project):
    cwd, name = project
    message = _error(f"{name}:NeedsArgs.parse", cwd=str(cwd))
    assert "NeedsArgs() failed" in message and "TypeError" in message


@pytest.mark.parametrize("body, expected", [
    ("raise ValueError('bad config\\nsecond line')", "raised ValueError: bad config second line"),
    ("import a_module_that_does_not_exist_42", "raised ModuleNotFoundError: No module named"),
    ("def broken(:\n    pass", "raised SyntaxError"),
    ("import sys\nsys.exit(4)", "raised SystemExit: 4"),
])
def test_import_failures_are_one_line(tmp_path, body, expected):
    name = _write(tmp_path, body)
    message = _error(f"{name}:parse", cwd=str(tmp_path))
    assert f"importing {name!r}" in message and expected in message


# -- load_reject_types


def test_reject_types():
    import json as json_module

    assert load_reject_types([]) == (ValueError,)
    assert load_reject_types(["KeyError", "json:JSONDecodeError", "json.decoder.JSONDecodeError"]) == (
        KeyError, json_module.JSONDecodeError, json_module.JSONDecodeError)


def test_reject_types_from_the_project(project):
    cwd, name = project
    (cls,) = load_reject_types([f"{name}:ParseFailed"], cwd=str(cwd))
    assert cls.__name__ == "ParseFailed" and issubclass(cls, Exception)


@pytest.mark.parametrize("ref, expected", [
    ("ValueErorr", "did you mean 'ValueError'"),
    ("len", "is not an exception class"),
    ("json:loads", "is not an exception class"),
    ("json:NoSuchError", "has no attribute 'NoSuchError'"),
])
def test_reject_type_errors(ref, expected):
    with pytest.raises(TargetError, match=expected):
        load_reject_types([ref])


class _ClaimsEverything(type):
    def __subclasscheck__(cls, other):
        return True


class Anything(Exception, metaclass=_ClaimsEverything):
    pass


@pytest.mark.parametrize("ref", ["builtins:BaseException", "Exception", "BaseException", "builtins.Exception",
                                 f"{__name__}:Anything"])
def test_a_rejection_type_that_would_swallow_every_crash_is_refused(ref):
    # --reject-on builtins:BaseException used to count every crash as a clean rejection: a run
    # that could only pass
    with pytest.raises(TargetError) as info:
        load_reject_types([ref])
    message = str(info.value)
    assert message.startswith("--reject-on '") and "base class of every crash" in message
    assert "declare the type your parser raises to reject an input" in message and "\n" not in message


def test_a_broad_but_not_total_rejection_type_is_the_users_call():
    assert load_reject_types(["LookupError", "builtins:ArithmeticError"]) == (LookupError, ArithmeticError)


# -- module files given as paths, and what a missing module is said to be


def test_a_module_given_by_a_relative_path_with_dot_dot_loads_with_or_without_py(tmp_path):
    # --executor ../dir/mod:attr said the file was not found although mod.py was there
    name = f"relmod_{uuid.uuid4().hex[:8]}"
    (tmp_path / "lib" / name).mkdir(parents=True)
    (tmp_path / "lib" / f"{name}.py").write_text("def parse(text):\n    return [text]\n")
    (tmp_path / "lib" / name / "__init__.py").write_text("def parse(text):\n    return None\n")
    (tmp_path / "work").mkdir()
    work = str(tmp_path / "work")
    assert load_target(f"../lib/{name}:parse", cwd=work)("x") == ["x"]  # mod.py beats the package, as import does
    assert load_target(f"../lib/{name}.py:parse", cwd=work)("y") == ["y"]
    package = f"relpkg_{uuid.uuid4().hex[:8]}"
    (tmp_path / "lib" / package).mkdir()
    (tmp_path / "lib" / package / "__init__.py").write_text("def parse(text):\n    return [1]\n")
    assert load_target(f"../lib/{package}:parse", cwd=work)("z") == [1]
    message = _error("../lib/nothere:parse", cwd=work)
    assert "not found (nor nothere.py, nor a package directory)" in message


def test_a_missing_module_is_offered_the_users_modules_not_every_installed_one(tmp_path):
    # every missing module used to get "did you mean 'xdist'?" (any installed top-level module)
    name = f"myparser_{uuid.uuid4().hex[:6]}"
    (tmp_path / f"{name}.py").write_text("def parse(text):\n    return None\n")
    assert f"did you mean {name!r}" in _error(f"{name[:-1]}:parse", cwd=str(tmp_path))
    message = _error("xdis:parse", cwd=str(tmp_path))  # close to pytest-xdist's module, and to dis
    assert "not found" in message and "did you mean" not in message, message


# -- normalize_calls

CALL = {"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}}


class CallModel(pydantic.BaseModel):
    name: str
    arguments: dict


class ArgsModel(pydantic.BaseModel):
    city: str
    days: list[int]


@dataclasses.dataclass
class CallRecord:
    name: str
    arguments: object


class FunctionHolder:
    """Shaped like the OpenAI SDK's tool-call object: ``.function.name`` / ``.function.arguments``."""

    def __init__(self, name, arguments):
        self.id, self.type = "call_1", "function"
        self.function = SimpleNamespace(name=name, arguments=arguments)


@pytest.mark.parametrize("value", [
    CALL,
    [CALL],
    (CALL,),
    {"name": "get_weather", "arguments": json.dumps(CALL["arguments"])},
    {"name": "get_weather", "arguments": json.dumps(CALL["arguments"]).encode()},
    {"name": "get_weather", "arguments": {"city": "Paris", "days": (1, 2)}},
    OrderedDict(name="get_weather", arguments=MappingProxyType({"days": [1, 2], "city": "Paris"})),
    {"type": "function", "function": {"name": "get_weather", "arguments": json.dumps(CALL["arguments"])}},
    [{"id": "call_9", "function": CALL}],
    CallModel(**CALL),
    CallRecord("get_weather", {"city": "Paris", "days": [1, 2]}),
    CallRecord("get_weather", ArgsModel(city="Paris", days=[1, 2])),
    SimpleNamespace(name="get_weather", arguments=json.dumps(CALL["arguments"])),
    FunctionHolder("get_weather", json.dumps(CALL["arguments"])),
], ids=lambda v: type(v).__name__)
def test_every_contract_shape_normalizes_to_the_same_call(value):
    calls = normalize_calls(value)
    assert calls == [CALL]
    assert type(calls[0]) is dict and type(calls[0]["arguments"]["days"]) is list


@pytest.mark.parametrize("value", [None, [], ()])
def test_no_call(value):
    assert normalize_calls(value) == []


@pytest.mark.parametrize("value, expected", [
    ("get_weather(city='Paris')", "str"),
    (42, "int"),
    ([CALL, "junk"], "call #1"),
    ({"arguments": {}}, "no 'name'"),
    ({"type": "function", "function": {"arguments": {}}}, "no 'name'"),
    ({"name": "x"}, "no 'arguments'"),
    ({"name": 3, "arguments": {}}, "name is int"),
    ({"name": "x", "arguments": "{not json"}, "not JSON"),
    ({"name": "x", "arguments": "[1, 2]"}, "list, not an object"),
    ({"name": "x", "arguments": [1, 2]}, "not a mapping"),
    ({"name": "x", "arguments": None}, "not a mapping"),
    (SimpleNamespace(name="x"), "no 'name' and 'arguments'"),
    ([[CALL]], "list"),
])
def test_non_calls_are_invalid(value, expected):
    with pytest.raises(InvalidReturn, match=expected):
        normalize_calls(value)


def test_deep_and_cyclic_returns_are_invalid_not_recursion_errors():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InvalidReturn):
        normalize_calls(deep)
    with pytest.raises(InvalidReturn, match="deeper"):
        normalize_calls({"name": "x", "arguments": {"a": deep}})
    cyclic: dict = {}
    cyclic["self"] = cyclic
    with pytest.raises(InvalidReturn, match="deeper"):
        normalize_calls({"name": "x", "arguments": cyclic})
    with pytest.raises(InvalidReturn):
        normalize_calls({"name": "x", "arguments": "[" * 100_000 + "]" * 100_000})
    # Nesting up to the limit is fine.
    ok: object = 1
    for _ in range(MAX_DEPTH - 1):
        ok = [ok]
    assert normalize_calls({"name": "x", "arguments": {"a": ok}})[0]["arguments"]["a"] == ok


def test_non_json_values_become_repr_markers():
    class Thing:
        def __repr__(self):
            return "<thing>"

    class BadRepr:
        def __repr__(self):
            raise RuntimeError("no")

    args = {"s": {1}, "b": b"\x00", "t": Thing(), "bad": BadRepr(), 7: "seven"}
    out = normalize_calls({"name": "x", "arguments": args})[0]["arguments"]
    assert out["s"] == {"$repr": "{1}"} and out["b"] == {"$repr": "b'\\x00'"} and out["t"] == {"$repr": "<thing>"}
    assert "failing __repr__" in out["bad"]["$repr"]
    assert out["$repr:7"] == "seven"  # a non-string key never equals the JSON key "7"
    json.dumps(out)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


def _tupleize(value):
    """The same value with lists turned into tuples, the way a Python parser might build it."""
    if isinstance(value, list):
        return tuple(_tupleize(v) for v in value)
    if isinstance(value, dict):
        return {k: _tupleize(v) for k, v in value.items()}
    return value


@settings(max_examples=150, deadline=None)
@given(name=st.text(), arguments=st.dictionaries(st.text(max_size=8), json_values, max_size=5))
def test_json_arguments_survive_every_encoding(name, arguments):
    """Mapping, JSON string, tuples-for-lists and objects all normalize to the same JSON value."""
    expected = [{"name": name, "arguments": arguments}]
    assert normalize_calls({"name": name, "arguments": arguments}) == expected
    assert normalize_calls({"name": name, "arguments": json.dumps(arguments)}) == expected
    assert normalize_calls(SimpleNamespace(name=name, arguments=_tupleize(arguments))) == expected
    normalized = normalize_calls([{"type": "function", "function": {"name": name, "arguments": arguments}}])
    assert json.loads(json.dumps(normalized)) == expected


anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary()
    | st.builds(object) | st.sets(st.integers(), max_size=3) | st.complex_numbers(),
    lambda children: (st.lists(children, max_size=3) | st.tuples(children, children)
                      | st.dictionaries(st.text(max_size=3) | st.integers(), children, max_size=3)),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None)
@given(value=anything | st.builds(lambda a: {"name": "t", "arguments": a}, anything))
def test_any_return_normalizes_to_json_or_is_invalid(value):
    """Whatever a target returns, the engine gets JSON-serializable calls or InvalidReturn."""
    try:
        calls = normalize_calls(value)
    except InvalidReturn:
        return
    assert all(set(c) == {"name", "arguments"} and type(c["name"]) is str for c in calls)
    assert all(_json_typed(c["arguments"]) and type(c["arguments"]) is dict for c in calls)
    json.dumps(calls)


def _json_typed(value) -> bool:
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) is list:
        return all(_json_typed(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _json_typed(v) for k, v in value.items())
    return False


@pytest.mark.parametrize("value", [
    {"name": "f", "args": {"x": 1}},  # LangChain ToolCall
    {"type": "tool_use", "id": "t1", "name": "f", "input": {"x": 1}},  # Anthropic content block
    {"name": "f", "parameters": {"x": 1}},  # Llama 3 JSON tool call
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}]},
    SimpleNamespace(content="", tool_calls=[SimpleNamespace(name="f", args={"x": 1})]),  # AIMessage-like
])
def test_framework_shapes_normalize_to_the_same_call(value):
    assert normalize_calls(value) == [{"name": "f", "arguments": {"x": 1}}]


def test_a_message_without_tool_calls_means_no_call():
    assert normalize_calls({"role": "assistant", "content": "hi", "tool_calls": None}) == []
    assert normalize_calls(SimpleNamespace(content="hi", tool_calls=[])) == []


def test_an_exception_class_that_cannot_be_hashed_is_still_named():
    """Names are cached per class; a target's metaclass that defines __eq__ without __hash__ makes
    its exception classes unhashable, and naming one must not raise (it killed the worker)."""
    from fuzzer.engine.references import exception_name

    class Meta(type):
        def __eq__(cls, other):
            return cls is other

    Unhashable = Meta("Unhashable", (ValueError,), {"__module__": "parsers.strict"})
    assert exception_name(Unhashable) == "parsers.strict.Unhashable"
    assert exception_name(Unhashable) == "parsers.strict.Unhashable"
    assert exception_name(KeyError) == "KeyError"
