"""Issue 9: what no operator anticipates — unsafe parsers, super-linear time, and bugs only the
coverage-guided exploration reaches. Real campaigns through the CLI, real worker processes."""

from __future__ import annotations

import os

import pytest

from tests.conftest import cli_env

EXPLORE = "tests.integration.targets.explore:"


def test_an_eval_based_parser_is_reported_unsafe(cli):
    result = cli("campaign", "--tool", "get_weather", "--target", EXPLORE + "eval_pythonic", "--format", "pythonic",
                 "--budget", "6", "--report", "r.json", "-q")
    assert result.code == 1, result
    unsafe = [f for f in result.report()["failures"] if f["verdict"] == "unsafe"]
    assert len(unsafe) == 1, result.report()["failures"]
    assert "exec" in unsafe[0]["title"] and "explore.py" in unsafe[0]["title"]
    assert "executed code it was given" in unsafe[0]["reason"]


def test_a_parser_that_runs_a_command_is_blocked_and_reported(cli, tmp_path):
    (tmp_path / "shell.py").write_text(
        "import os\n"
        "from fuzzer.targets.reference import parse as _reference\n"
        "def parse(text):\n"
        "    if 'Paris' in text:\n"
        "        os.system('touch /tmp/toolfuzz-should-never-exist')\n"
        "    return _reference(text)\n")
    result = cli("campaign", "--tool", "get_weather", "--target", "shell:parse", "--max-examples", "3000",
                 "--report", "r.json", "-q")
    assert result.code == 1, result
    (unsafe,) = [f for f in result.report()["failures"] if f["verdict"] == "unsafe"]
    assert "os.system" in unsafe["title"] and "started a process" in unsafe["reason"]

    assert not os.path.exists("/tmp/toolfuzz-should-never-exist")  # blocked, not just seen


def test_a_quadratic_regex_is_reported_slow_with_its_exponent_before_any_hang(cli):
    result = cli("campaign", "--tool", "get_weather", "--target", EXPLORE + "quadratic_cleanup", "--budget", "25",
                 "--corpus", "c", "--report", "r.json", "-q")
    assert result.code == 1, result
    failures = result.report()["failures"]
    slow = [f for f in failures if f["verdict"] == "slow"]
    assert slow, failures
    growth = slow[0]["growth"]
    assert growth["exponent"] >= 1.6 and growth["sizes"] == sorted(growth["sizes"])
    assert "quadratic_cleanup" in slow[0]["title"]  # where the time goes: the stack sampled mid-run
    hangs = [f for f in failures if f["verdict"] == "hang"]
    assert all(h["found_at_s"] > slow[0]["found_at_s"] for h in hangs)
    # its reproduce command, run as printed from elsewhere, times the repetitions (run once, the
    # minimized input takes a millisecond and shows nothing)
    import shlex
    import subprocess

    shown = subprocess.run(shlex.split(slow[0]["reproduce"]), cwd="/", capture_output=True, text=True,
                           timeout=120, env=cli_env())  # PYTHONPATH: the test targets
    assert shown.returncode == 1 and "still slow" in shown.stdout and "grows as n^" in shown.stdout, shown
    # its corpus entry is timed again by reproduce (still slow: exit 1), as replay judges it;
    # minimize says in one line that there is nothing left to shrink
    import json

    (entry,) = [p for p in (result.cwd / "c").glob("*.json") if json.loads(p.read_text())["verdict"] == "slow"]
    again = cli("reproduce", str(entry))
    assert again.code == 1 and "still slow" in again.stdout and "repeating" in again.stdout, again
    refused = cli("minimize", str(entry), "--target", EXPLORE + "quadratic_cleanup")
    assert refused.code == 2 and len(refused.stderr.strip().splitlines()) == 1, refused


@pytest.mark.parametrize("coverage, found", [("--coverage", True), ("--no-coverage", False)])
def test_a_token_of_the_targets_own_vocabulary_is_found_only_by_exploration(cli, coverage, found):
    result = cli("campaign", "--tool", "get_weather", "--target", EXPLORE + "special_token", "--budget", "8",
                 coverage, "--report", "r.json", "-q")
    report = result.report()
    crashes = [f for f in report["failures"] if f["verdict"] == "crash" and "special_token" in f["title"]]
    assert bool(crashes) is found, report["failures"]
    if found:
        assert "<|endoftext|>" in crashes[0]["minimized_input"]
        assert report["coverage"]["lines"] > 0 and "explore.py" in report["coverage"]["files"]
        assert "exploration" in report["by_class"]
    else:
        assert report["coverage"] is None and "exploration" not in report["by_class"]


def test_one_kind_of_damage_on_two_paths_is_two_findings_whichever_comes_first(cli):
    """Losing every argument to an unread ``parameters`` envelope and dropping empty values in a
    helper both look like "argument(s) dropped" to the oracle; the paths tell the bugs apart.
    Neither may hide behind the other, whichever a run happens to find first (a gate holding one
    would otherwise block on the other as new, or let it pass unseen)."""
    for seed in ("1", "2"):
        result = cli("campaign", "--tool", "get_weather", "--target", "tests.integration.targets.buggy:two_drop_paths",
                     "--max-examples", "4000", "--seed", seed, "--report", "r.json", "-q")
        assert result.code == 1, result
        dropped = [f for f in result.report()["failures"] if "dropped" in f["title"]]
        envelope = [f for f in dropped if '"parameters"' in f["minimized_input"]]
        helper = [f for f in dropped if "_without_empty" in f["title"]]
        assert len(envelope) == 1 and len(helper) == 1, [(f["title"], f["minimized_input"]) for f in dropped]
        assert '"parameters"' not in helper[0]["minimized_input"]


@pytest.mark.parametrize("cached", [True, False])
def test_a_module_the_parser_imports_on_first_use_is_not_unsafe(cli, tmp_path, cached):
    """Loading a module's compiled code (marshal) or writing its cache is the import system's own
    work: a parser that imports a helper lazily is not unpickling data nor writing files."""
    import py_compile

    (tmp_path / "lazy_helper.py").write_text("def strip(text):\n    return text.strip()\n")
    if cached:
        py_compile.compile(str(tmp_path / "lazy_helper.py"), doraise=True)
    (tmp_path / "lazy.py").write_text(
        "from fuzzer.targets.reference import parse as _reference\n"
        "def parse(text):\n"
        "    from lazy_helper import strip\n"
        "    return _reference(strip(text))\n")
    result = cli("campaign", "--tool", "get_weather", "--target", "lazy:parse", "--max-examples", "400",
                 "--report", "r.json", "-q")
    assert result.report()["executions"] >= 400, result
    assert [f["title"] for f in result.report()["failures"] if f["verdict"] == "unsafe"] == []


def test_a_quadratic_fence_stripper_is_reported_slow_with_its_exponent_not_hang(cli):
    """Issue 30: ``while "```" in t: t = t.replace("```", "", 1)`` hung on long outputs and was
    reported only as a hang. Every hang is probed for growth; this one grows, so it is one slow
    finding with the exponent. A short timeout and no exploration (so no other probe runs): the
    hangs come first, and each must become the slow finding."""
    result = cli("campaign", "--tool", "get_weather", "--target", EXPLORE + "fence_stripper", "--budget", "20",
                 "--seed", "1", "--no-coverage", "--timeout", "0.3", "--report", "r.json", "-q")
    assert result.code == 1, result
    failures = result.report()["failures"]
    assert not [f for f in failures if f["verdict"] == "hang"], [(f["title"], f["found_at_s"], f["note"], f["input"][:300])
                                                                 for f in failures]
    (slow,) = [f for f in failures if f["verdict"] == "slow"]
    assert slow["growth"]["exponent"] >= 1.6 and "`" in slow["growth"]["fragment"]
    assert "fence_stripper" in slow["title"]
