"""The README's first two commands are what CI runs, and every `fuzz` command it shows exists."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from fuzzer.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, re.S)


def test_readme_starts_with_install_and_test_commands_that_ci_runs():
    install, tests = (block.strip() for block in _shell_blocks()[:2])
    install_part = install.split(" && .venv/bin/fuzz ")[0]
    assert install_part in CI, "the README's install command is not what .ci/run runs"
    assert tests in CI.splitlines(), "the README's test command is not what .ci/run runs"
    assert "fuzz campaign --tool get_weather --target fuzzer.targets.naive:parse" in install


def test_every_fuzz_subcommand_in_the_readme_exists_and_has_help():
    runner = CliRunner()
    commands = set(re.findall(r"`fuzz ([a-z]+)", README)) | set(re.findall(r"\bfuzz ([a-z]+) --", README))
    assert {"campaign", "minimize", "replay", "gate", "diff", "tools", "anomalies", "samples"} <= commands
    for name in sorted(commands):
        result = runner.invoke(main, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert "Usage:" in result.output


def test_code_fences_are_balanced_so_no_section_turns_into_code():
    fences = [line for line in README.splitlines() if line.lstrip().startswith("```")]
    assert len(fences) % 2 == 0
    # no fence marker glued to prose (the stray fragment of issue 8, defect 12); inside a code block
    # a fence in the text (a minimized input that begins with one) is the output shown, not markup
    prose, in_code = [], False
    for line in README.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        elif not in_code:
            prose.append(line)
    assert not [line for line in prose if "```" in line
                and not line.lstrip().startswith(("`", "|", "-")) and line.count("`") % 2]
