"""The README's CI gate is `fuzz gate` plus a config file: the test writes the README's
toolfuzz.toml, runs the README's command exactly, and checks the file's settings were used —
and that the command line still beats the file."""

from __future__ import annotations

import re
import shlex

from tests.conftest import ROOT

SECTION = (ROOT / "README.md").read_text(encoding="utf-8").split("## Reports, config and pytest", 1)[1].split("\n## ", 1)[0]


def _block(language: str) -> str:
    return re.search(rf"```{language}\n(.*?)```", SECTION, re.S).group(1)


def test_the_readme_gate_runs_from_the_config_file_alone(cli, tmp_path):
    (tmp_path / "toolfuzz.toml").write_text(_block("toml"), encoding="utf-8")
    (tmp_path / "fuzz-corpus").mkdir()  # committed next to the parser (an empty one, here)
    command = shlex.split(_block("sh"))
    assert command[:2] == ["fuzz", "gate"] and len(command) == 2, command
    passed = cli(*command[1:])
    assert passed.code == 0, passed
    assert "gate: passed" in passed.stdout
    assert re.search(r"campaign: 2,0\d\d executions", passed.stdout), passed  # max_examples = 2000 from the file
    blocked = cli(*command[1:], "--target", "fuzzer.targets.naive:parse")
    assert blocked.code == 1, blocked
    assert "gate: BLOCKED" in blocked.stdout
    # the reproduce line: the target from the command line, the rest from the file
    local = next(line for line in blocked.stdout.splitlines() if line.startswith("reproduce locally: "))
    argv = shlex.split(local[len("reproduce locally: "):])
    options = dict(zip(argv[2::2], argv[3::2]))
    assert argv[:2] == ["fuzz", "gate"]
    assert {"--corpus": "fuzz-corpus", "--target": "fuzzer.targets.naive:parse", "--level": "parse", "--seed": "1",
            "--max-examples": "2000"}.items() <= options.items()
