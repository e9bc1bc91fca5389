"""`fuzz agent` end to end: real worker processes, real corpus files, real reproduce commands."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpus.store import CorpusStore
from fuzzer.cli import main
from fuzzer.engine.decisions import decide_gate
from fuzzer.engine.harness import ReplayContext, load_harnesses
from tests.conftest import cli_command, cli_env, default_sigint

NAIVE = "fuzzer.targets.agent_naive:run"
STATE_MACHINE = "fuzzer.targets.agent_state_machine:run"
ROOT = Path(__file__).resolve().parents[2]


def naive_campaign(shared_once) -> dict:
    def make(directory: Path) -> dict:
        from tests.conftest import run_cli

        result = run_cli(directory, "agent", "--agent", NAIVE, "--max-examples", "80", "--seed", "1",
                         "--report", "r.json", "--corpus", "corp", "-q")
        return {"code": result.code, "stdout": result.stdout, "stderr": result.stderr,
                "report": result.report(), "dir": str(directory)}

    return shared_once("agent-naive", make)


def test_the_naive_loop_shows_four_distinct_violations_each_as_a_minimal_script(shared_once):
    run = naive_campaign(shared_once)
    assert run["code"] == 1, run["stderr"]
    report = run["report"]
    verdicts = {f["verdict"] for f in report["failures"]}
    assert len(verdicts) >= 4, verdicts
    assert {"nontermination", "duplicate_execution", "unvalidated_execution", "crash"} <= verdicts
    for failure in report["failures"]:
        assert failure["minimized"], failure["signature"]
        assert failure["steps"] <= 3, failure["minimized_input"]
        assert all(line in run["stdout"] for line in failure["minimized_input"].splitlines())
    assert report["executions"] == 80 and report["counts"]["failed"] == len(report["failures"])


def test_findings_go_to_the_corpus_and_replay_on_the_loop_that_has_them(shared_once):
    run = naive_campaign(shared_once)
    store = CorpusStore(Path(run["dir"]) / "corp")
    entries = store.entries()
    assert len(entries) == len(run["report"]["failures"])
    assert {e.kind for _p, e in entries} == {"agent"}
    harness = load_harnesses()["agent"]
    context = ReplayContext(cwd=run["dir"], timeout=2.0)
    still = harness.replay(entries, NAIVE, context)
    assert [r.status for r in still] == ["fail"] * len(entries)
    fixed = harness.replay(entries, STATE_MACHINE, context)
    assert [r.status for r in fixed] == ["pass"] * len(entries)
    known = {e.signature: e for _p, e in entries}
    assert not decide_gate(fixed, [], known).blocked
    assert harness.replay(entries, None, context)[0].status == "unjudged"


def test_a_printed_reproduce_command_runs_as_printed(shared_once):
    run = naive_campaign(shared_once)
    failure = next(f for f in run["report"]["failures"] if f["verdict"] == "duplicate_execution")
    proc = subprocess.run(failure["reproduce"], shell=True, cwd=run["dir"], env=cli_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and failure["signature"] in proc.stdout, proc.stderr


@pytest.mark.parametrize("shape", ["openai", "anthropic", "text"])
def test_the_state_machine_is_clean_against_every_model_shape(cli, shape):
    extra = ["--format", "json", "--format", "fenced"] if shape == "text" else []
    result = cli("agent", "--agent", STATE_MACHINE, "--model-shape", shape, *extra, "--max-examples", "200",
                 "--seed", "7", "--report", "r.json", "-q")
    assert result.code == 0, result
    report = result.report()
    assert report["failures"] == [] and report["executions"] == 200 and report["shape"] == shape
    assert report["model_requests"] > 400 and report["tool_executions"] > 150
    assert "no failure" in result.stdout
    # a clean run is one passing test case, in every writer (not an empty suite: tests="0")
    assert report["counts"] == {"passed": 1, "failed": 0, "skipped": 0}


def test_a_planted_off_by_one_in_max_turns_is_caught_with_exactly_that_verdict(cli, tmp_path: Path):
    source = (ROOT / "fuzzer" / "targets" / "agent_state_machine.py").read_text()
    planted = source.replace("if self.turns >= self.max_turns:", "if self.turns > self.max_turns:")
    assert planted != source
    (tmp_path / "planted_loop.py").write_text(planted)
    result = cli("agent", "--agent", "planted_loop:run", "--max-examples", "150", "--seed", "2", "--report", "r.json",
                 "-q")
    assert result.code == 1, result
    report = result.report()
    assert report["by_verdict"] == {"nontermination": 1}
    assert report["failures"][0]["minimized"] and report["failures"][0]["steps"] == 1


def test_the_reproduce_command_of_a_loop_in_the_run_directory_runs_from_anywhere(cli, tmp_path: Path):
    """The loop and the tools file are the user's, next to where `fuzz agent` ran: the printed
    command must find both when pasted into a terminal elsewhere, as a parser's and an executor's
    command do (it raised ModuleNotFoundError there)."""
    source = (ROOT / "fuzzer" / "targets" / "agent_state_machine.py").read_text()
    (tmp_path / "planted_loop_home.py").write_text(
        source.replace("if self.turns >= self.max_turns:", "if self.turns > self.max_turns:"))
    (tmp_path / "my_tools.json").write_text(json.dumps({
        "get_weather": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "get_time": {"type": "object", "properties": {"zone": {"type": "string"}}}}))
    result = cli("agent", "--agent", "planted_loop_home:run", "--tools", "my_tools.json", "--max-examples", "150",
                 "--seed", "2", "--report", "r.json", "-q")
    assert result.code == 1, result
    failure = result.report()["failures"][0]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(failure["reproduce"], shell=True, cwd=elsewhere, env=cli_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and failure["signature"] in proc.stdout, proc.stderr


BAD = """
def one_argument(a):
    pass

def makes_a_number():
    return 3

NOT_CALLABLE = 5
"""


@pytest.mark.parametrize("args, message", [
    (["--agent", "nocolon"], "--agent: 'nocolon' is not of the form module:callable"),
    (["--agent", "no_such_module_x:run"], "--agent 'no_such_module_x:run': module 'no_such_module_x' not found"),
    (["--agent", "bad_agents:nope"], "module 'bad_agents' has no attribute 'nope'"),
    (["--agent", "bad_agents:NOT_CALLABLE"], "int object is not callable"),
    (["--agent", "bad_agents:one_argument"], "must be run(model, tools, user_input) or a factory taking no arguments"),
    (["--agent", "bad_agents:makes_a_number"], "the factory returned int, not a callable"),
    (["--agent", NAIVE, "--tools", "missing.json"], "missing.json: no such file"),
    (["--agent", NAIVE, "--policy", "missing.toml"], "missing.toml: no such file"),
    (["--agent", NAIVE, "--policy", "bad.toml"], "bad.toml: max_turns: expected a positive integer, got 'x'"),
    (["--agent", NAIVE, "--format", "hermes"], "applies to --model-shape text only"),
    (["--agent", NAIVE, "--model-shape", "grpc"], "'grpc' is not one of"),
    # an openai-style loop given another shape's model: the wrong option, not a crash of the loop
    (["--agent", NAIVE, "--model-shape", "text"], "uses the model as the openai shape's client (AttributeError: "
                                                  "'TextModel' object has no attribute 'chat'), but --model-shape is "
                                                  "text: run it with --model-shape openai"),
    (["--agent", NAIVE, "--model-shape", "anthropic"], "run it with --model-shape openai"),
    (["--agent", NAIVE, "--report", "no/dir/r.json"], "--report: directory"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_inputs_are_one_line_and_exit_2(tmp_path: Path, monkeypatch, args, message):
    (tmp_path / "bad_agents.py").write_text(BAD)
    (tmp_path / "bad.toml").write_text('max_turns = "x"\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["agent", *args, "--max-examples", "3"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], result.output


def test_ctrl_c_keeps_every_finding_and_the_report(tmp_path: Path):
    proc = subprocess.Popen(cli_command("agent", "--agent", NAIVE, "--budget", "60", "--report", "r.json"), cwd=tmp_path,
                            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    found = 0
    deadline = time.monotonic() + 60
    while not found and time.monotonic() < deadline:
        line = proc.stderr.readline()
        found += "] found " in line
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["stop_reason"] == "interrupted" and report["failures"]
    assert "interrupted: finishing the report" in err


HANGS_AND_DIES = """
import os
import time


def run(client, tools, user_input):
    if user_input.startswith("How much"):
        while True:          # a loop that waits forever for something that never comes
            time.sleep(0.01)
    if user_input.startswith("Email"):
        os._exit(3)          # a loop that takes its process down
    return client.chat.completions.create(messages=[]).choices[0].message.content
"""


def test_a_hang_and_a_death_are_caught_by_the_watchdog_with_their_stacks(cli, tmp_path: Path):
    (tmp_path / "fragile_loop.py").write_text(HANGS_AND_DIES)
    result = cli("agent", "--agent", "fragile_loop:run", "--max-examples", "25", "--seed", "3", "--timeout", "0.5",
                 "--no-shrink", "--report", "r.json", "-q")
    assert result.code == 1, result
    titles = {f["verdict"]: f["title"] for f in result.report()["failures"]}
    assert titles["hang"] == "hang: stuck in fragile_loop.py:run"
    assert titles["crash"].startswith("crash: the target process died (exit status 3)")


def test_the_same_seed_finds_the_same_failures_with_the_same_scripts():
    from fuzzer.harnesses.agent.job import AgentCampaign, AgentSettings
    from fuzzer.engine.pipeline import run_job

    def campaign() -> dict:
        settings = AgentSettings(agent=NAIVE, seed=5, max_examples=40, budget_s=None, shrink=False, cwd=str(ROOT))
        return {f.signature.id: f.script.to_json() for f in run_job(AgentCampaign(settings)).result.findings}

    first = campaign()
    assert first and campaign() == first


def test_the_gate_blocks_new_agent_findings_names_them_and_says_how_to_store_them(cli, tmp_path: Path):
    """An agent gate whose campaign finds what the corpus lacks: NEW lines, BLOCKED, exit 1, the
    reports written, and the command that stores the findings is `fuzz agent` (not a parser campaign)."""
    (tmp_path / "corp").mkdir()
    run = cli("gate", "--corpus", "corp", "--agent", NAIVE, "--seed", "1", "--max-examples", "80",
              "--report", "g.json", "--junit", "g.xml")
    assert run.code == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "gate: BLOCKED" in run.stdout
    report = json.loads((tmp_path / "g.json").read_text())
    assert report["new"] and all(f"NEW {n['signature']} ({n['title']})" in run.stdout for n in report["new"])
    assert all(n["reproduce"] for n in report["new"])
    assert (tmp_path / "g.xml").read_text().count("<failure") == len(report["new"])
    store = next(line for line in run.stdout.splitlines() if line.startswith("after fixing"))
    assert store.split(": ", 1)[1].startswith(f"fuzz agent --agent {NAIVE} --corpus corp --seed 1")


def test_the_budget_ends_a_run_whose_episodes_hang_and_a_cut_shrink_is_not_called_minimal(cli, tmp_path: Path):
    """Every third user message hangs the loop: with --timeout 1 a batch of them cost a second
    each past the budget. Episodes still running when --budget ends are stopped (the run stops for
    the budget); a hang whose shrinking the budget cut off is reported as not minimized."""
    (tmp_path / "fragile_loop.py").write_text(HANGS_AND_DIES.replace("os._exit(3)", "pass"))
    result = cli("agent", "--agent", "fragile_loop:run", "--budget", "4", "--timeout", "1", "--seed", "3",
                 "--report", "r.json", "-q")
    assert result.code == 1, result
    assert result.report()["stop_reason"] == "budget"
    (hang,) = [f for f in result.report()["failures"] if f["verdict"] == "hang"]
    assert hang["minimized"] is (not hang["shrink_note"]), hang  # cut off or never started: not minimal
    assert ("minimal script" in result.stdout) is hang["minimized"]


def test_exitfirst_max_failures_and_ignore_limit_what_an_agent_run_reports(cli, shared_once):
    everything = [f["signature"] for f in naive_campaign(shared_once)["report"]["failures"]]
    first = cli("agent", "--agent", NAIVE, "--max-examples", "80", "--seed", "1", "-x", "--report", "r.json", "-q")
    assert first.code == 1 and len(first.report()["failures"]) == 1
    assert first.report()["stop_reason"] == "max_failures"
    two = cli("agent", "--agent", NAIVE, "--max-examples", "80", "--seed", "1", "--max-failures", "2",
              "--report", "r.json", "-q")
    assert len(two.report()["failures"]) == 2
    ignored = cli("agent", "--agent", NAIVE, "--max-examples", "80", "--seed", "1", "--ignore", everything[0],
                  "--report", "r.json", "-q")
    kept = [f["signature"] for f in ignored.report()["failures"]]
    assert everything[0] not in kept and set(kept) <= set(everything) and kept


ONCE = '''
_made = []


def make():
    """A loop factory that works once per process (a client that may be created only once): the
    load probe passes, and every episode after it fails before the loop runs."""
    if _made:
        raise RuntimeError("client already created")
    _made.append(1)
    from fuzzer.targets.agent_state_machine import run
    return run
'''


def test_a_loop_that_can_run_no_episode_tested_nothing_exit_2(cli, tmp_path: Path):
    """Episodes that could not run at all are not episodes: the run says so and exits 2 (it printed
    "the loop kept every promise" and exited 0). The loop is warmed up where the workers are forked
    from, so a factory that works once per process fails when the workers check that it loads."""
    (tmp_path / "once_agent.py").write_text(ONCE)
    result = cli("agent", "--agent", "once_agent:make", "--max-examples", "30", "--report", "r.json")
    assert result.code == 2, result
    lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
    assert len(lines) == 1 and "making a loop raised RuntimeError: client already created" in lines[0], lines


def test_episodes_that_cannot_run_are_not_episodes(cli, tmp_path: Path):
    """A factory that works for the warm-up and the load check, then fails in every episode: no
    episode ran, the campaign says so, stops early and exits 2."""
    (tmp_path / "episodes_agent.py").write_text(ONCE.replace("if _made:", "if len(_made) >= 2:"))
    result = cli("agent", "--agent", "episodes_agent:make", "--max-examples", "30", "--report", "r.json")
    assert result.code == 2, result
    assert "no episode could run" in result.stderr + result.stdout
    report = result.report()
    assert report["executions"] == 0 and report["failures"] == []
    assert any("client already created" in note for note in report["notes"])
