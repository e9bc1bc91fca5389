"""The executor and agent harnesses on code shaped like the libraries users write it with.

Executors shaped like LangGraph's ToolNode and RetryPolicy, stamina and backoff; agent loops shaped
like openai-agents, pydantic-ai and smolagents, each on a real ``openai`` client whose HTTP layer
toolfuzz's scripted model answers (``fuzzer.harnesses.agent.transport``) — see ``library_shapes/``. With
policies that state only what each library documents, the harnesses report the libraries' real
bugs and no false alarm: no crash for an exception declared by a re-exported or a base-class
name, no hang for a cold first episode, no result_not_fed_back for results fed back as text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SHAPES = "tests.integration.library_shapes"
HERE = Path(__file__).resolve().parent / "library_shapes"


@pytest.mark.parametrize("loop, policy", [
    ("agents_like:run", "agents.toml"),  # errors named by a re-export of their base class
    ("pydantic_ai_like:run", "pydantic_ai.toml"),  # IncompleteToolCall declared as UnexpectedModelBehavior; 3 s cold start
    ("smolagents_like:run", "smolagents.toml"),  # calls sent back as text, results as "Observation:" user messages
], ids=["openai-agents", "pydantic-ai", "smolagents"])
def test_agent_loops_on_a_real_openai_client_keep_the_promises_their_libraries_document(cli, loop, policy):
    result = cli("agent", "--agent", f"{SHAPES}.{loop}", "--policy", str(HERE / policy), "--max-examples", "120",
                 "--seed", "1", "--report", "r.json", "-q")
    report = result.report()
    assert result.code == 0, result
    assert report["failures"] == [] and report["executions"] == 120
    assert not any(note.startswith("warming") for note in report["notes"]), report["notes"]
    # what the false alarms came from was played: cut-off calls, failing tools, results to feed back
    assert report["by_step"]["length"]["episodes"] and report["by_step"]["tool_error"]["episodes"]
    assert report["tool_executions"] > 100


@pytest.mark.parametrize("executor, policy, expected", [
    # LangGraph's default_retry_on retries every requests HTTP error (an error Response is falsy)
    ("langgraph_like", "langgraph.toml", {"retry_violation: retried a non-transient client error (4xx)",
                                          "retry_violation: retried a non-transient rate limit (429)"}),
    ("stamina_like", "stamina.toml", set()),
    # backoff reads the elapsed time before a slow call: the next attempt can start past max_time
    ("backoff_like", "backoff.toml", {"deadline_exceeded: started an attempt after the deadline"}),
], ids=["langgraph", "stamina", "backoff"])
def test_executors_shaped_like_the_libraries_show_their_real_bugs_and_nothing_else(cli, executor, policy, expected):
    result = cli("executor", "--executor", f"{SHAPES}.{executor}:make_executor", "--policy", str(HERE / policy),
                 "--max-examples", "3000", "--seed", "2", "--no-shrink", "--report", "r.json", "-q")
    assert result.code == (1 if expected else 0), result
    assert {f["title"] for f in result.report()["failures"]} == expected


def test_explain_shows_the_promises_a_library_does_not_make(cli):
    backoff = cli("executor", "--executor", f"{SHAPES}.backoff_like:make_executor", "--policy", str(HERE / "backoff.toml"),
                  "--explain")
    assert backoff.code == 0, backoff
    for line in ("max_attempts = false  # set", "validates_calls = false  # set", "redacts_secrets = false  # set",
                 "max = false  # set", "# max_attempts = false: no attempt limit"):
        assert line in backoff.stdout, line
    langgraph = cli("executor", "--executor", f"{SHAPES}.langgraph_like:make_executor", "--policy",
                    str(HERE / "langgraph.toml"), "--explain")
    assert '"timeout:httpx"' in langgraph.stdout
    agent = cli("agent", "--agent", f"{SHAPES}.smolagents_like:run", "--explain")
    assert "validates_calls = True" in agent.stdout and "unvalidated_execution" in agent.stdout


def test_an_error_name_that_names_no_class_is_one_line_naming_the_policy_file_and_key(cli, tmp_path):
    (tmp_path / "p.toml").write_text('errors = ["UnexpectedModelBehaviour"]\n', encoding="utf-8")
    result = cli("agent", "--agent", f"{SHAPES}.pydantic_ai_like:run", "--policy", "p.toml", "--max-examples", "5")
    assert result.code == 2, result
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert lines == ["Error: p.toml: errors: 'UnexpectedModelBehaviour': no loaded module defines an exception class "
                     "of that name; give its dotted name"], lines
