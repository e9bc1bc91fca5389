"""`fuzz reproduce FILE` of a corpus entry of every kind: 1 while it still fails, 0 once it does not.

Before, only a parser entry (or a parser reproducer file) could be reproduced: an executor or an
agent entry was refused ("only parser entries are model outputs"), so the command a CI script ran
on a stored finding said nothing about whether that finding was fixed.
"""

from __future__ import annotations

from corpus.store import Entry

RUNAWAY = {"formats": ["json"], "shape": "openai", "user": "How much is 17% of 2,340?",
           "turns": [{"step": "runaway", "mode": "same", "finish": "tool_calls",
                      "calls": [{"name": "get_weather", "arguments": {"city": "a"}, "raw": "{\"city\": \"a\"}"}]}]}
HTTP_503 = {"steps": [{"name": "get_weather", "arguments": {"city": "Paris"},
                       "schedule": {"then": {"kind": "http_503"}}}]}


def _entry(tmp_path, name: str, **fields) -> str:
    (tmp_path / name).write_text(Entry(**fields).dumps())
    return name


def test_an_executor_entry_reproduces_on_the_executor_it_names_and_on_another(cli, tmp_path):
    name = _entry(tmp_path, "executor.json", kind="executor", text="get_weather(city='Paris') -- http_503",
                  signature="crash-1126034d8809", verdict="crash", scenario=HTTP_503,
                  target="fuzzer.targets.executor_naive:make_executor")
    still = cli("reproduce", name)
    assert still.code == 1, still
    assert "crash-1126034d8809" in still.stdout and "attempt 1 of get_weather" in still.stdout
    fixed = cli("reproduce", name, "--target", "fuzzer.targets.executor_robust:make_executor")
    assert fixed.code == 0 and "no violation" in fixed.stdout, fixed


def test_an_agent_entry_reproduces_by_playing_its_script(cli, tmp_path):
    name = _entry(tmp_path, "agent.json", kind="agent", text="runaway", signature="nontermination-ecf722f6ca2a",
                  verdict="nontermination", scenario={"script": RUNAWAY}, target="fuzzer.targets.agent_naive:run")
    still = cli("reproduce", name)
    assert still.code == 1, still
    assert "[nontermination-ecf722f6ca2a]" in still.stdout and "what the loop did:" in still.stdout
    fixed = cli("reproduce", name, "--target", "fuzzer.targets.agent_state_machine:run")
    assert fixed.code == 0 and "no violation" in fixed.stdout, fixed


def test_an_entry_whose_harness_this_toolfuzz_lacks_is_one_error_line(cli, tmp_path):
    name = _entry(tmp_path, "number.json", kind="number", text="-5", signature="wrong_number-000000000001",
                  verdict="wrong_number", target="m:parse")
    run = cli("reproduce", name)
    assert run.code == 2, run
    assert run.stderr.splitlines() == ["Error: number.json: a number entry, but this toolfuzz has no number harness"]
