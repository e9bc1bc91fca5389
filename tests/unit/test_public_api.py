"""The public surface: `strategies` re-exports, the Hypothesis strategies, `fuzz tools/anomalies/samples`."""

from __future__ import annotations

import importlib
import inspect
import json

import pytest

from click.testing import CliRunner
from hypothesis import given, settings

import strategies as tf
from fuzzer.cli import main
from fuzzer.targets.reference import parse

REGISTRY = tf.builtin_registry()


def test_all_is_the_export_table_and_each_name_is_the_object_its_module_defines():
    from strategies import _EXPORTS

    assert tf.__all__ == sorted(_EXPORTS)
    for name, module in _EXPORTS.items():
        obj = getattr(tf, name)
        assert obj is getattr(importlib.import_module(module), name), name
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert (obj.__doc__ or "").strip(), f"{name} has no docstring"
    # nothing public is left out of __all__ (submodules and typing helpers aside)
    stray = [n for n in dir(tf) if not n.startswith("_") and n not in tf.__all__
             and not inspect.ismodule(getattr(tf, n)) and n not in ("Any", "annotations")]
    assert stray == []
    with pytest.raises(AttributeError):
        tf.no_such_name


def test_every_registered_name_is_documented():
    for name, fmt in tf.FORMATS.items():
        assert fmt.description.strip() and fmt.description != name, name
    for name, op in tf.OPERATORS.items():
        doc = (op.function.__doc__ or "").strip()
        assert doc and op.description == doc.splitlines()[0] and op.description != name, name
        assert op.description.rstrip().endswith((".", ")", "`")), f"{name}: the first line is not a sentence"
    for name, cls in tf.ANOMALY_CLASSES.items():
        assert cls.description.strip() and tf.operators_of(name), name


def test_operator_registry_covers_every_class():
    assert len(tf.OPERATORS) >= 40
    for name in tf.ANOMALY_CLASSES:
        ops = tf.operators_of(name)
        assert len(ops) >= 2, name
        for op in ops:
            assert op.description and op.description != op.name, op.name


@settings(max_examples=60, deadline=None)
@given(tf.model_outputs(REGISTRY, "get_weather", anomalies=[]))
def test_valid_model_outputs_parse_exactly_with_the_reference(sample):
    assert parse(sample.text) == sample.calls


@settings(max_examples=60, deadline=None)
@given(tf.model_outputs(REGISTRY, "search_flights", anomalies=["truncated_output"], valid=False))
def test_truncated_outputs_have_no_truth_and_are_rejected(sample):
    assert sample.anomaly_class == "truncated_output" and sample.calls is None
    try:
        assert parse(sample.text) == []
    except ValueError:
        pass


@settings(max_examples=40, deadline=None)
@given(tf.tool_calls(REGISTRY, "book_hotel"))
def test_tool_calls_satisfy_their_schema(call):
    assert call["name"] == "book_hotel"
    tf.tool_validator(REGISTRY["book_hotel"]).validate(call["arguments"])


def test_samples_command_is_deterministic_and_prints_the_contract():
    runner = CliRunner()
    first = runner.invoke(main, ["samples", "--tool", "get_weather", "-n", "200", "--seed", "1"])
    second = runner.invoke(main, ["samples", "--tool", "get_weather", "-n", "200", "--seed", "1"])
    assert first.exit_code == 0 and first.output == second.output
    lines = [json.loads(line) for line in first.output.splitlines()]
    assert len(lines) == 200
    assert all(set(line) == {"text", "format", "anomaly_class", "operator", "calls"} for line in lines)
    other = runner.invoke(main, ["samples", "--tool", "get_weather", "-n", "200", "--seed", "2"])
    assert other.output != first.output


def test_samples_with_anomalies_carry_their_class():
    runner = CliRunner()
    result = runner.invoke(main, ["samples", "--tool", "get_weather", "-n", "50", "--anomaly", "missing_argument",
                                  "--anomaly", "truncated_output"])
    assert result.exit_code == 0, result.output
    classes = {json.loads(line)["anomaly_class"] for line in result.output.splitlines()}
    assert classes <= {"missing_argument", "truncated_output"} and classes


def test_anomalies_lists_every_class_with_two_operators_and_examples():
    result = CliRunner().invoke(main, ["anomalies"])
    assert result.exit_code == 0
    for name in tf.ANOMALY_CLASSES:
        header = next(line for line in result.output.splitlines() if line.startswith(name + " "))
        count = int(header.split("(")[1].split()[0])
        assert count >= 2
    assert result.output.count("e.g. ") >= 40


def test_tools_lists_the_builtin_registry():
    result = CliRunner().invoke(main, ["tools"])
    assert result.exit_code == 0
    for name in ("get_weather", "search_flights", "book_hotel", "send_email", "calculate"):
        assert name in result.output


def test_bad_tools_file_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "tools.json"
    bad.write_text('{"get_weather": {"type": "object", "properties": {"unit": {"type": "strng"}}}}')
    result = CliRunner().invoke(main, ["tools", "--tools", str(bad)])
    assert result.exit_code == 2
    error_lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(error_lines) == 1 and str(bad) in error_lines[0] and "/properties/unit/type" in error_lines[0]
    assert "Traceback" not in result.output


# --------------------------------------------------------------------------- the public strategies


def test_every_public_strategy_is_registered_exported_and_lazy():
    from strategies._internal.public import STRATEGIES

    assert set(STRATEGIES) == {"arguments", "tool_calls", "model_outputs"} and set(STRATEGIES) <= set(tf.__all__)
    for name in STRATEGIES:
        assert getattr(tf, name) is STRATEGIES[name] and getattr(tf, name).__doc__
    # nothing is checked at construction: a typo surfaces when the strategy is first used
    lazy = tf.model_outputs(REGISTRY, "get_wether", formats=["hermse"])
    with pytest.raises(tf.UnknownName, match="get_weather"):
        lazy.validate()


@pytest.mark.parametrize("build, expected", [
    (lambda: tf.model_outputs(REGISTRY, "get_weather"), "model_outputs(registry=builtin_registry(), tool='get_weather')"),
    (lambda: tf.model_outputs(REGISTRY, "get_weather", formats=["hermes"], prose=False, layouts=["crlf"]),
     "model_outputs(registry=builtin_registry(), tool='get_weather', formats=['hermes'], prose=False, "
     "layouts=['crlf'])"),
    (lambda: tf.tool_calls(REGISTRY, "book_hotel", multi=None),
     "tool_calls(registry=builtin_registry(), tool='book_hotel', multi=None)"),
    (lambda: tf.arguments(tf.load_registry("tests/data/tools_50.json"), "get_current_time"),
     "arguments(registry=load_registry('tests/data/tools_50.json'), tool='get_current_time')"),
])
def test_the_repr_reads_like_the_call(build, expected):
    assert repr(build()) == expected


INVALID = [
    ("prose='yes'", lambda: tf.model_outputs(REGISTRY, "get_weather", prose="yes"), tf.InvalidArgument, "prose"),
    ("several=1", lambda: tf.model_outputs(REGISTRY, "get_weather", several=1), tf.InvalidArgument, "several"),
    ("valid=None", lambda: tf.model_outputs(REGISTRY, "get_weather", valid=None), tf.InvalidArgument, "valid"),
    ("formats=3", lambda: tf.model_outputs(REGISTRY, "get_weather", formats=3), tf.InvalidArgument, "formats"),
    ("formats=[1]", lambda: tf.model_outputs(REGISTRY, "get_weather", formats=[1]), tf.InvalidArgument, "formats"),
    ("formats=['hermse']", lambda: tf.model_outputs(REGISTRY, "get_weather", formats=["hermse"]), tf.UnknownName,
     "hermes"),
    ("anomalies=['truncated']", lambda: tf.model_outputs(REGISTRY, "get_weather", anomalies=["truncated"]),
     tf.UnknownName, "truncated_output"),
    ("layouts=['crfl']", lambda: tf.model_outputs(REGISTRY, "get_weather", layouts=["crfl"]), tf.UnknownName, "crlf"),
    ("layouts=[]", lambda: tf.model_outputs(REGISTRY, "get_weather", layouts=[]), tf.InvalidArgument, "layouts"),
    ("registry=dict", lambda: tf.model_outputs({}, "get_weather"), tf.InvalidArgument, "registry"),
    ("tool=3", lambda: tf.tool_calls(REGISTRY, 3), tf.InvalidArgument, "tool"),
    ("multi='no'", lambda: tf.tool_calls(REGISTRY, "get_weather", multi="no"), tf.InvalidArgument, "multi"),
    ("nothing applies", lambda: tf.model_outputs(REGISTRY, "calculate", formats=["json"], anomalies=["enum_value_outside"],
                                                 valid=False), tf.InvalidArgument, "none of the selected"),
]


@pytest.mark.parametrize("call, build, error, words", INVALID, ids=[row[0] for row in INVALID])
def test_invalid_arguments_name_the_argument_when_first_used(call, build, error, words):
    strategy = build()  # lazy: no error yet
    with pytest.raises(error, match=words):
        strategy.validate()
    assert issubclass(tf.InvalidArgument, TypeError) and issubclass(tf.InvalidArgument, tf.ToolfuzzError)


def test_arguments_after_the_tool_are_keyword_only():
    with pytest.raises(TypeError):
        tf.model_outputs(REGISTRY, "get_weather", ["hermes"])
    with pytest.raises(TypeError):
        tf.tool_calls(REGISTRY, "get_weather", True)


@settings(max_examples=60, deadline=None)
@given(tf.model_outputs(REGISTRY, "send_email", anomalies=[], prose=False, several=False,
                        layouts=["compact", "crlf"]))
def test_prose_several_and_layouts_are_honoured(sample):
    from strategies._internal.formats import CHATTER_AFTER, CHATTER_BEFORE

    assert len(sample.calls) == 1 and sample.layout in ("compact JSON", "indent 2, CRLF")
    assert not any(sentence in sample.text for sentence in CHATTER_BEFORE + CHATTER_AFTER)
    assert parse(sample.text) == sample.calls


@settings(max_examples=40, deadline=None)
@given(tf.model_outputs(REGISTRY, "get_weather", formats=["hermes"], anomalies=[], prose=True, several=True))
def test_prose_and_several_calls_can_be_forced_on(sample):
    assert len(sample.calls) >= 2
    assert not sample.text.startswith("<tool_call>") or not sample.text.endswith("</tool_call>")  # prose is there
    assert parse(sample.text) == sample.calls


def test_the_readme_example_runs_against_the_bundled_reference_parser():
    """The README's section, as written, with the reference parser standing in for the user's."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use the strategies in your own tests", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "from mypkg.parsing import parse" in code
    namespace: dict = {}
    exec(compile(code.replace("from mypkg.parsing import parse", "from fuzzer.targets.reference import parse"),
                 "README.md", "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_")]
    assert len(tests) >= 3
    for test in tests:
        settings(max_examples=25, deadline=None)(test)()


def test_the_fuzzer_facade_exports_every_name_in_all_from_the_module_that_defines_it():
    """``from fuzzer import GateJob, run_job, Harness, ...``: what a program uses without the CLI."""
    import fuzzer

    assert fuzzer.__all__ == sorted(fuzzer.__all__) and len(fuzzer.__all__) == len(set(fuzzer.__all__))
    for name in fuzzer.__all__:
        obj = getattr(fuzzer, name)
        if name in fuzzer._MODULES:
            assert inspect.ismodule(obj) and obj.__name__ == fuzzer._MODULES[name]
            continue
        assert obj is getattr(importlib.import_module(fuzzer._EXPORTS[name]), name), name
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert (obj.__doc__ or "").strip(), f"{name} has no docstring"
    assert {"run_job", "CampaignJob", "GateJob", "ReplayJob", "ReproduceJob", "CorpusWriter", "Harness",
            "register_harness", "Subject", "VERDICTS", "recorder"} <= set(fuzzer.__all__)
    assert set(fuzzer.__all__) <= set(dir(fuzzer))
    with pytest.raises(AttributeError):
        fuzzer.no_such_name
