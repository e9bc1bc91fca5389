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


def test_a_value_from_the_file_that_cannot_be_used_names_the_file_and_key(cli, tmp_path):
    """Well typed but unusable (a reject_on module that does not exist, found when the worker
    loads it): the error names where the value came from — the file and key when it came from the
    file, the flag when it was typed."""
    (tmp_path / ".git").mkdir()  # the repository root: the search for a config file stops here
    (tmp_path / "toolfuzz.toml").write_text('target = "fuzzer.targets.naive:parse"\nreject_on = "nosuch:Err"\n')
    from_file = cli("campaign", "--tool", "get_weather", "--budget", "1")
    assert from_file.code == 2 and from_file.stderr.startswith("Error: toolfuzz.toml: reject_on 'nosuch:Err': "), \
        from_file
    typed = cli("campaign", "--tool", "get_weather", "--budget", "1", "--reject-on", "nosuch:Other")
    assert typed.code == 2 and typed.stderr.startswith("Error: --reject-on 'nosuch:Other': "), typed


def test_a_campaign_says_what_it_took_from_the_file_and_an_explicit_budget_wins(cli, tmp_path):
    # The file's max_examples used to override --budget, and its corpus was filled silently with
    # another target's findings.
    (tmp_path / "toolfuzz.toml").write_text('target = "fuzzer.targets.reference:parse"\ncorpus = "fuzz-corpus"\n'
                                           "seed = 1\nmax_examples = 2000\n", encoding="utf-8")
    result = cli("campaign", "--tool", "get_weather", "--target", "fuzzer.targets.naive:parse", "--budget", "2",
                 "--report", "r.json", "-q")
    assert result.code == 1, result
    lines = result.stderr.splitlines()
    assert lines[0] == ("config toolfuzz.toml: seed = 1, corpus = fuzz-corpus; "
                        "not used: max_examples (--budget given)"), result
    assert lines[1].startswith("warning: the corpus fuzz-corpus is the one toolfuzz.toml keeps for "
                               "fuzzer.targets.reference:parse; this run's target is fuzzer.targets.naive:parse")
    report = result.report()
    assert report["stop_reason"] == "budget" and report["seed"] == 1, report["stop_reason"]


def test_the_gate_s_campaign_takes_the_per_tool_tables_as_a_campaign_does(cli, tmp_path):
    """A `[tools.get_weather]` table promising validation: the campaign judged get_weather at
    --level validate and found the reference parser's missed anomalies, while the gate, whose
    first line said it took `per tool: get_weather (level)`, judged it at parse level and passed."""
    (tmp_path / "toolfuzz.toml").write_text(
        'target = "fuzzer.targets.reference:parse"\ncorpus = "fuzz-corpus"\nseed = 1\nmax_examples = 2000\n'
        '[tools.get_weather]\nlevel = "validate"\n', encoding="utf-8")
    (tmp_path / "fuzz-corpus").mkdir()
    gate = cli("gate", "--tool", "get_weather")
    assert "per tool: get_weather (level)" in gate.stdout + gate.stderr, gate
    assert gate.code == 1 and "gate: BLOCKED" in gate.stdout, gate
    assert "NEW missed_anomaly-" in gate.stdout, gate
