"""`fuzz executor` as a user meets it: bad inputs are one line and exit 2, --explain, replaying
one scenario (the 30 s backoff that takes no time), reports, the corpus, Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest
from click.testing import CliRunner

from fuzzer.cli import main
from tests.conftest import ROOT, cli_command, cli_env, default_sigint, run_cli

NAIVE = "fuzzer.targets.executor_naive:make_executor"
ROBUST = "fuzzer.targets.executor_robust:make_executor"
BROKEN = "tests.integration.executor_targets.broken:"


@pytest.fixture
def fuzz(tmp_path, monkeypatch):
    """``fuzz(*args)`` runs the CLI in-process (click's runner) in ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))

    def call(*args):
        return CliRunner().invoke(main, ["executor", *args], catch_exceptions=False)

    return call


@pytest.mark.parametrize("args, files, message", [
    (["--executor", NAIVE, "--policy", "missing.toml"], {}, "missing.toml: no such policy file"),
    (["--executor", NAIVE, "--policy", "p.toml"], {"p.toml": "max_attempts = 'x'\n"},
     "p.toml: max_attempts: expected an integer >= 1 (or false for none), got string 'x'"),
    (["--executor", NAIVE, "--policy", "p.toml"], {"p.toml": "[backof]\ninitial = 1\n"},
     "p.toml: unknown key 'backof'; did you mean 'backoff'?"),
    (["--executor", NAIVE, "--policy", "p.toml"], {"p.toml": "non_idempotent = ['send_emails']\n"},
     "p.toml: non_idempotent: unknown tool 'send_emails'; did you mean send_email?"),
    (["--executor", NAIVE, "--replay-scenario", "[]"], {}, "--replay-scenario: "),
    (["--executor", NAIVE, "--tools", "nope.json"], {}, "nope.json: no such file"),
    (["--executor", NAIVE, "--policy", "p.toml"], {"p.toml": "raises = ['ValueErorr']\n"},
     "p.toml: raises: 'ValueErorr': no loaded module defines an exception class of that name (did you mean 'ValueError'?)"),
    (["--executor", NAIVE, "--policy", "p.toml"], {"p.toml": "raises = ['nosuchpkg.errors.ToolError']\n"},
     "p.toml: raises: 'nosuchpkg.errors.ToolError': module 'nosuchpkg.errors' cannot be imported"),
    (["--executor", NAIVE, "--policy", "p.toml"], {"p.toml": "raises = ['json.dumps']\n"},
     "p.toml: raises: 'json.dumps': 'dumps' in 'json': a function, not an exception class"),
    (["--executor", NAIVE, "--workers", "0"], {}, "--workers"),
    (["--executor", NAIVE, "--budget", "inf"], {}, "'--budget': 'inf' is not a finite number of seconds"),
    (["--executor", NAIVE, "--timeout", "nan"], {}, "'--timeout': 'nan' is not a finite number of seconds"),
    (["--executor", NAIVE, "--policy", "p.toml"], {"p.toml": "[fallback_schema]\n'$ref' = '#/nope'\n"},
     "p.toml: fallback_schema: $ref '#/nope' does not resolve"),
    (["--executor", BROKEN + "NOT_A_FACTORY"], {}, "int object is not callable"),
    (["--executor", BROKEN + "make_returns_int"], {},
     "it returned int, which is neither callable as execute(name, arguments) nor has an execute_tool"),
    (["--executor", BROKEN + "make_raises"], {}, "calling it with the tools raised RuntimeError: cannot build"),
    (["--executor", "no_such_module:make"], {}, "module 'no_such_module' not found"),
    (["--executor", "fuzzer.targets.executor_naive:make_exec"], {}, "did you mean 'make_executor'?"),
    (["--executor", "naive"], {}, "is not of the form module:attribute"),
    ([], {}, "--executor is required"),
    (["--executor", NAIVE, "--implementations", "x:TOOLS"], {}, "--implementations: only used with --http"),
    (["--executor", NAIVE, "--http"], {}, "has no attribute 'TOOLS'"),
    (["--executor", NAIVE, "--replay-scenario", "{bad"], {}, "--replay-scenario: not JSON"),
    (["--executor", NAIVE, "--replay-scenario", "s.json"], {"s.json": '{"steps": [{"name": "x", "gap": "later"}]}'},
     "s.json.steps[0].gap: expected a number of seconds >= 0"),
])
def test_bad_inputs_are_one_line_and_exit_2(fuzz, tmp_path, args, files, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = fuzz(*args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert message in lines[0]


def test_an_executor_given_by_a_relative_path_with_dot_dot_loads(tmp_path):
    # --executor ../dir/mod:attr said the file was not found although mod.py was there
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "my_executor.py").write_text(f"from {ROBUST.split(':')[0]} import make_executor\n",
                                                     encoding="utf-8")
    (tmp_path / "work").mkdir()
    result = run_cli(tmp_path / "work", "executor", "--executor", "../lib/my_executor:make_executor",
                     "--max-examples", "20", "--seed", "1", "-q")
    assert result.code == 0, result
    assert "not found" not in result.stderr


def test_explain_prints_the_policy_in_effect(fuzz, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.toolfuzz.executor]\nmax_attempts = 4\n", encoding="utf-8")
    result = fuzz("--explain")
    assert result.exit_code == 0
    assert "pyproject.toml [tool.toolfuzz.executor]" in result.output.splitlines()[0]
    assert "max_attempts = 4  # set" in result.output
    assert "# non-idempotent tools: book_hotel, send_email, create_calendar_event" in result.output


def test_a_30s_backoff_replays_in_virtual_time_and_shows_its_waits(fuzz, tmp_path):
    (tmp_path / "p.toml").write_text("max_attempts = 5\ndeadline = 120\n[backoff]\ninitial = 2\nmax = 16\n"
                                     "jitter = 0\n", encoding="utf-8")
    scenario = {"steps": [{"name": "get_weather", "arguments": {"city": "Paris"},
                           "schedule": {"then": {"kind": "http_503"}}}]}
    result = fuzz("--executor", "fuzzer.targets.executor_robust:make_patient_executor", "--policy", "p.toml",
                  "--replay-scenario", json.dumps(scenario))
    assert result.exit_code == 0, result.output
    assert "waits: 2, 4, 8, 16 s (total 30 s)" in result.output
    assert "attempt 5 of get_weather at 30 s, after waiting 16 s: http_503" in result.output
    assert "no violation" in result.output
    real_ms = float(result.output.split("real time: ")[1].split(" ms")[0])
    assert real_ms < 30_000  # the point: not 30 s (the benchmark measures how far under)


def test_a_campaign_writes_its_report_junit_and_corpus(tmp_path):
    result = run_cli(tmp_path, "executor", "--executor", NAIVE, "--max-examples", "60", "--seed", "1", "--report",
                     "r.json", "--junit", "j.xml", "--corpus", "corpus", "-q")
    assert result.code == 1, result
    report = result.report()
    assert report["executions"] == 60 and report["failures"]
    assert "minimal schedule:" in result.stdout and "reproduce: " in result.stdout
    assert (tmp_path / "j.xml").read_text().count("<failure") == len(report["failures"])
    entries = [json.loads(p.read_text()) for p in (tmp_path / "corpus").glob("*.json")]
    assert len(entries) == len(report["failures"])
    assert {e["kind"] for e in entries} == {"executor"} and all(e["scenario"]["steps"] for e in entries)
    assert f"corpus corpus: {len(entries)} added" in result.stdout


@pytest.mark.parametrize("executor, code", [(NAIVE, 1), (ROBUST, 130)])
def test_ctrl_c_finishes_the_report(tmp_path, executor, code):
    proc = subprocess.Popen(cli_command("executor", "--executor", executor, "--budget", "60", "--report", "r.json"),
                            cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    for line in proc.stderr:  # until scenarios have been judged
        if " found " in line or (" scenarios " in line and ": 0 scenarios" not in line):
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, (out, err)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["stop_reason"] == "interrupted" and report["executions"] > 0


def test_exitfirst_max_failures_and_ignore_limit_what_an_executor_run_reports(tmp_path):
    def run(*extra):
        result = run_cli(tmp_path, "executor", "--executor", NAIVE, "--max-examples", "400", "--seed", "1",
                         "--no-shrink", "--report", "r.json", "-q", *extra)
        return result, [f["signature"] for f in result.report()["failures"]]
    everything = run()[1]
    assert len(everything) >= 3
    first, found = run("-x")
    assert first.code == 1 and len(found) == 1 and first.report()["stop_reason"] == "max_failures"
    assert len(run("--max-failures", "2")[1]) == 2
    kept = run("--ignore", everything[0])[1]
    assert kept and everything[0] not in kept and set(kept) <= set(everything)


def test_declared_exceptions_resolve_by_dotted_or_bare_name(fuzz, tmp_path):
    (tmp_path / "p.toml").write_text("raises = ['json.JSONDecodeError', 'KeyError', 'ToolError']\n", encoding="utf-8")
    (tmp_path / "myexec.py").write_text(
        "class ToolError(Exception):\n    pass\n\n"
        "def make_executor(tools):\n    return lambda name, arguments: {'error': 'no'}\n", encoding="utf-8")
    result = fuzz("--executor", "myexec:make_executor", "--policy", "p.toml", "--max-examples", "5", "--no-shrink")
    assert result.exit_code in (0, 1), result.output  # it ran: every name answered to a class


def test_replaying_a_scenario_that_hangs_runs_it_twice_not_ten_times(fuzz, monkeypatch):
    from fuzzer.harnesses.executor import job

    ran: list = []
    run = job.run_scenarios

    def counted(pool, scenarios, **kwargs):
        ran.extend(scenarios)
        return run(pool, scenarios, **kwargs)

    monkeypatch.setattr(job, "run_scenarios", counted)
    scenario = {"steps": [{"name": "calculate", "arguments": {"expression": "1+1"}}]}
    result = fuzz("--executor", BROKEN + "make_busy_hangs", "--timeout", "0.5", "--replay-scenario",
                  json.dumps(scenario))
    assert result.exit_code == 1, result.output
    assert "the scenario did not finish: hung" in result.output and "hang" in result.output
    assert len(ran) == 2  # once cold, once warm: not the warm runs of a scenario that finished (each a timeout)


def test_workers_run_the_campaign_and_come_from_the_config_file_too(tmp_path):
    (tmp_path / "toolfuzz.toml").write_text("workers = 2\n", encoding="utf-8")
    result = run_cli(tmp_path, "executor", "--executor", NAIVE, "--max-examples", "80", "--seed", "1", "--no-shrink",
                     "--report", "r.json", "-q")
    assert result.code == 1, result
    assert result.report()["executions"] == 80
    assert result.report()["workers"] == 2


def test_what_tools_and_arguments_carry_is_printed_on_one_line_and_escaped(fuzz, tmp_path):
    (tmp_path / "wild.py").write_text(
        "def make_executor(tools):\n"
        "    def execute(name, arguments):\n"
        "        raise RuntimeError('line one\\nline two \\u2028 and \\x7f and \\x1b[2J')\n"
        "    return execute\n", encoding="utf-8")
    result = fuzz("--executor", "wild:make_executor", "--max-examples", "20", "--seed", "2")
    assert result.exit_code == 1, result.output
    assert "line one\\nline two \\u2028 and \\x7f and \\x1b[2J" in result.output
    for bad in ("\u2028", "\x7f", "\x1b", "line one\n"):
        assert bad not in result.output
    for line in result.output.split("\n"):
        assert not line or line.startswith((" ", "executor", "[executor")), repr(line)  # nothing at column 0 mid-finding


def test_markdown_and_html_reports_speak_of_schedules_and_scenarios(tmp_path):
    result = run_cli(tmp_path, "executor", "--executor", NAIVE, "--max-examples", "40", "--seed", "1",
                     "--markdown", "r.md", "--html", "r.html", "--report", "r.json", "-q")
    assert result.code == 1, result
    markdown, page = (tmp_path / "r.md").read_text(), (tmp_path / "r.html").read_text()
    failures = result.report()["failures"]
    assert markdown.count("\n#### ") == len(failures)
    assert "schedule: " in markdown and "Minimized scenario:" in markdown
    for parser_words in ("as a JSON string", "valid in ?", " in ?"):
        assert parser_words not in markdown and parser_words not in page
    assert failures[0]["schedule"] in markdown.replace("\\|", "|")


RETRIES_EVERYTHING = '''
import time


def make_executor(tools):
    def execute(name, arguments):
        for attempt in range(3):
            try:
                return tools[name](**arguments)
            except Exception as exc:  # retries a 404 as readily as a 503
                if attempt == 2:
                    return {"error": type(exc).__name__}
                time.sleep(0.5 * 2 ** attempt)
    return execute
'''


def test_a_finding_s_reproduce_command_runs_from_another_directory(tmp_path):
    """The executor and the tools file are the user's own, next to each other: the printed command
    finds both from anywhere (files by absolute path, the executor's directory on PYTHONPATH)."""
    (tmp_path / "my_executor.py").write_text(RETRIES_EVERYTHING, encoding="utf-8")
    (tmp_path / "my_tools.json").write_text(json.dumps({"lookup": {
        "type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}}), encoding="utf-8")
    result = run_cli(tmp_path, "executor", "--executor", "my_executor:make_executor", "--tools", "my_tools.json",
                     "--max-examples", "200", "--seed", "2", "--report", "r.json", "-q")
    assert result.code == 1, result
    failure = next(f for f in result.report()["failures"] if f["verdict"] == "retry_violation")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    replay = subprocess.run(failure["reproduce"], shell=True, cwd=elsewhere, env=cli_env(), capture_output=True,
                            text=True, timeout=120)
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert failure["signature"] in replay.stdout
