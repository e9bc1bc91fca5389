"""Edge cases a review turned up: older-draft schemas, unwritable outputs, anomalies that cannot
apply, several tools sharing one bug, Class.method targets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import strategies as tf
from fuzzer.harnesses.parser.outcome import Outcome
from fuzzer.harnesses.parser.oracle import Oracle
from strategies import Sample

ROOT = Path(__file__).resolve().parents[2]
NAIVE = "fuzzer.targets.naive:parse"
DRAFT4 = {
    "rate": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}},
             "required": ["n"], "additionalProperties": False},
    "pair": {"type": "object", "properties": {"p": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}},
             "additionalProperties": False},
}


def _one_line_error(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.code == 2, result
    assert len(lines) == 1 and lines[0].startswith("Error: "), result
    assert "Traceback" not in result.stdout + result.stderr
    return lines[0]


def test_the_oracle_validates_with_the_schemas_own_draft(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(DRAFT4))
    registry = tf.load_registry(str(path))
    oracle = Oracle(registry, "validate")
    call = {"name": "rate", "arguments": {"n": 1}}
    s = Sample(text="...", format="json", anomaly_class="duplicate_call", operator="duplicate_call_adjacent",
               calls=[call, call], tool="rate")
    # n=1 is valid under draft 4 (1 > 0): only the duplicate breaks the promise
    assert oracle.promise.problem_key([call]) is None
    assert oracle.judge(s, Outcome(kind="returned", calls=[call])).failed is False
    tuple_call = {"name": "pair", "arguments": {"p": ["a", 1]}}
    assert oracle.promise.problem_key([tuple_call]) is None


@pytest.mark.parametrize("tool", ["rate", "pair"])
def test_the_reference_passes_older_draft_schemas_at_validate_level(cli, tmp_path, tool):
    (tmp_path / "tools.json").write_text(json.dumps(DRAFT4))
    result = cli("campaign", "--tools", "tools.json", "--tool", tool, "--level", "validate",
                 "--target", "fuzzer.targets.reference:parse_validated",
                 "--max-examples", "4000", "--report", "r.json", "-q")
    assert result.code == 0, result
    assert result.report()["failures"] == []


@pytest.mark.parametrize("args, needle", [
    (["campaign", "--target", NAIVE, "--tool", "get_weather", "--report", "/proc/r.json", "--budget", "1"], "--report"),
    (["campaign", "--target", NAIVE, "--tool", "get_weather", "--corpus", "afile/sub", "--budget", "1"], "--corpus"),
    (["gate", "--target", NAIVE, "--corpus", ".", "--junit", "/proc/j.xml", "--budget", "1"], "--junit"),
    (["campaign", "--target", NAIVE, "--tools", "int.json", "--anomaly", "injection_payload", "--budget", "1"],
     "--anomaly"),
    (["diff", "--old", NAIVE, "--new", NAIVE, "--tools", "int.json", "--anomaly", "injection_payload",
      "--max-examples", "50"], "--anomaly"),
])
def test_impossible_requests_fail_fast_with_one_line(cli, tmp_path, args, needle):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "int.json").write_text(json.dumps({"count": {"type": "object", "properties": {"n": {"type": "integer"}}}}))
    result = cli(*args, timeout=60)
    assert needle in _one_line_error(result)


def test_one_bug_found_through_several_tools_is_one_finding(cli):
    result = cli("campaign", "--target", NAIVE, "--tool", "get_weather", "--tool", "calculate",
                 "--max-examples", "8000", "--seed", "2", "--report", "r.json", "-q")
    assert result.code == 1, result
    signatures = [f["signature"] for f in result.report()["failures"]]
    assert signatures and len(signatures) == len(set(signatures))


def test_model_outputs_refuses_anomalies_that_cannot_apply():
    registry = tf.builtin_registry()
    strategy = tf.model_outputs(registry, "get_weather", formats=["openai"], anomalies=["unclosed_tag"], valid=False)
    with pytest.raises(tf.InvalidArgument, match="none of the selected anomalies"):
        strategy.validate()  # strategies are lazy: checked on first use


def test_reproduce_commands_work_for_class_method_targets(cli, tmp_path):
    (tmp_path / "clsparser.py").write_text(
        "import json\n"
        "class Parser:\n"
        "    def parse(self, text):\n"
        "        data = json.loads(text)\n"
        "        return [data] if isinstance(data, dict) else data\n")
    result = cli("campaign", "--tool", "get_weather", "--target", "clsparser:Parser.parse", "--format", "json",
                 "--max-examples", "3000", "-q")
    assert result.code == 1, result
    commands = [line.split("reproduce: ", 1)[1] for line in result.stdout.splitlines() if "reproduce: " in line]
    assert commands
    for command in commands[:3]:
        env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
               "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])}
        run = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60,
                             env=env, executable="/bin/bash")
        # the finding reproduces: the parser raises (it is a crash or a rejection), never a usage slip
        assert "TypeError: Parser.parse() missing" not in run.stderr
        assert "SyntaxError" not in run.stderr and "ModuleNotFoundError" not in run.stderr, run.stderr


@pytest.mark.parametrize("command", [
    ["campaign", "--tool", "get_weather", "--target"],
    ["executor", "--executor"],
])
def test_an_import_that_never_finishes_is_one_line_within_the_budget(cli, tmp_path, command):
    # It used to print nothing and run forever: the engine waited on the stuck importer's exit.
    # The import gets the budget (at least 5 s), then the one line says where it was stuck.
    ref = "tests.integration.targets.import_hang:parse"
    result = cli(*command, ref, "--budget", "1", timeout=90)
    line = _one_line_error(result)
    option = "--executor" if command[0] == "executor" else "target"
    assert line.startswith(f"Error: {option} {ref!r}: importing it did not finish within 5 s"), line
    source = (ROOT / "tests/integration/targets/import_hang.py").read_text().splitlines()
    stuck = next(n for n, text in enumerate(source, 1) if "time.sleep" in text)
    assert f"stuck at import_hang.py line {stuck} in <module>" in line, line
    pid = int((tmp_path / "import_hang.pid").read_text())
    with pytest.raises(ProcessLookupError):  # the importing process was stopped and reaped
        os.kill(pid, 0)


@pytest.mark.parametrize("command", [
    ["campaign", "--target", "fuzzer.targets.reference:parse"],
    ["executor", "--executor", "fuzzer.targets.executor_robust:make_executor"],
])
def test_a_tools_module_whose_import_never_finishes_is_one_line_within_the_budget(cli, command):
    # `--tools mypkg.tools:Models` is imported in the command's own process, with no deadline: a
    # module waiting for something at import time made `--budget 1` a run that never ended
    ref = "tests.integration.targets.import_hang:TOOLS"
    result = cli(*command, "--tools", ref, "--budget", "1", timeout=90)
    line = _one_line_error(result)
    assert "importing 'tests.integration.targets.import_hang' did not finish within 5 s" in line, line
    assert "stuck at import_hang.py line" in line and line.startswith("Error: "), line


def test_boolean_schemas_are_fuzzed_and_listed(cli, tmp_path):
    # {"booltool": true} was a traceback ("'bool' object has no attribute 'get'") and exit 1
    (tmp_path / "tools.json").write_text(json.dumps({
        "booltool": True, "never": False,
        "mixed": {"type": "object", "properties": {"a": True, "b": False, "xs": {"type": "array", "items": True}},
                  "required": ["a"], "additionalProperties": {"anyOf": [True, {"type": "integer"}]}}}))
    result = cli("campaign", "--tools", "tools.json", "--target", "fuzzer.targets.reference:parse_validated",
                 "--level", "validate", "--format", "json", "--max-examples", "3000", "--report", "r.json", "-q")
    assert result.code == 0, result
    assert "Traceback" not in result.stderr
    assert "never: skipped, cannot generate its arguments" in result.stderr and "schema is false" in result.stderr
    report = result.report()
    assert report["failures"] == [] and report["executions"] > 0
    listed = cli("tools", "--tools", "tools.json")
    assert listed.code == 0, listed
    assert "any arguments (schema true)" in listed.stdout and "b: never allowed (false)" in listed.stdout
