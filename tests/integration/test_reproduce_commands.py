"""Reproduce commands run as printed, in a process of their own, from anywhere."""

from __future__ import annotations

import shlex
import subprocess
import sys

from fuzzer.harnesses.parser.reproduce import inline_command, reproducer_document, target_home, write_reproducer
from tests.unit.test_agent_findings import a_finding


def test_the_agent_reproduce_command_runs_as_printed_and_fails_while_the_bug_is_there():
    finding = a_finding("crash")
    command = finding.reproduce()
    assert command.startswith("/") and "fuzzer.harnesses.agent.reproduce" in command
    proc = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert finding.signature.id in proc.stdout and "Traceback" in proc.stdout
    assert "1. " in proc.stdout  # the script's steps


def test_a_target_found_in_the_run_s_directory_reproduces_from_anywhere(tmp_path, monkeypatch):
    """A user's parser next to their tools file is importable only from that directory: its inline
    command and its reproducer file name the directory, so either runs as printed from elsewhere.
    An installed module (the bundled targets) gets no directory: its command stays short."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "myparser_home_test.py").write_text("def parse(text):\n    raise KeyError(text)\n")
    monkeypatch.chdir(project)
    target = "myparser_home_test:parse"
    assert target_home(target) == str(project) and target_home("fuzzer.targets.naive:parse") is None
    assert "sys.path" not in inline_command("fuzzer.targets.naive:parse", "x")
    write_reproducer(str(project / "r.json"), reproducer_document(target=target, text="x" * 2000))
    for command in (inline_command(target, "{oops"), f"{sys.executable} -m fuzzer reproduce {project / 'r.json'}"):
        ran = subprocess.run(shlex.split(command), cwd=elsewhere, capture_output=True, text=True, timeout=60)
        assert ran.returncode == 1 and "KeyError" in ran.stderr + ran.stdout, (command, ran)


def test_a_missed_anomaly_s_reproduce_command_fails_while_the_calls_as_written_are_returned(cli):
    """At ``--level validate`` a parser that returns calls breaking the tool's schema misses the
    anomaly. Its reproduce command printed only what the parser returned and exited 0 — a
    reproducer that says "fixed" while the bug is there. It now exits 1 while the calls as written
    come back, and 0 against a parser that validates (the same command, the target swapped)."""
    result = cli("campaign", "--tool", "get_weather", "--target", "fuzzer.targets.reference:parse", "--level", "validate",
                 "--format", "json", "--anomaly", "invalid_argument_type", "--max-examples", "600", "--seed", "1",
                 "--report", "r.json", "-q")
    assert result.code == 1, result
    missed = [f for f in result.report()["failures"] if f["verdict"] == "missed_anomaly"]
    assert missed, [f["verdict"] for f in result.report()["failures"]]
    for finding in missed[:3]:
        command = finding["reproduce"]
        assert "forbidden=True" in command, command
        ran = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60, executable="/bin/bash")
        assert ran.returncode == 1, (command, ran.stdout, ran.stderr)
        assert "break the promise" in ran.stdout, ran.stdout
        fixed = command.replace("from fuzzer.targets.reference import parse as t",
                                "from fuzzer.targets.reference import parse_validated as t")
        assert fixed != command
        ran = subprocess.run(fixed, shell=True, capture_output=True, text=True, timeout=60, executable="/bin/bash")
        assert ran.returncode == 0, (fixed, ran.stdout, ran.stderr)
