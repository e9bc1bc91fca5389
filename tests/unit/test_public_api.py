"""The public surface: `strategies` re-exports, the Hypothesis strategies, `fuzz tools/anomalies/samples`."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner
from hypothesis import given, settings

import strategies as tf
from fuzzer.cli import main
from fuzzer.targets.reference import parse

REGISTRY = tf.builtin_registry()


def test_all_names_resolve_and_importing_errors_does_not_import_hypothesis():
    for name in tf.__all__:
        assert getattr(tf, name) is not None, name
    code = "import sys, strategies.errors; assert 'hypothesis' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


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
