"""The declared loop policy: defaults, where it is read from, and one clear line for a bad value."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzer.harnesses.agent.policy import AgentPolicy, PolicyError, load_policy


def test_defaults_follow_common_practice():
    p = AgentPolicy()
    assert (p.max_turns, p.max_tool_calls, p.duplicates, p.convergence, p.must_notice_chain_break, p.errors,
            p.validates_calls) == (10, 30, "forbid", 3, False, (), True)
    assert p.caps.max_turns == 10 and p.caps.max_tool_calls == 30


def test_a_policy_file_with_top_level_keys(tmp_path: Path):
    path = tmp_path / "policy.toml"
    path.write_text('max_turns = 4\nduplicates = "allow"\nerrors = ["ValueError", "mypkg.AgentError"]\n')
    p = load_policy(str(path))
    assert (p.max_turns, p.duplicates, p.convergence) == (4, "allow", 3)
    assert p.allows("ValueError") and p.allows("mypkg.AgentError") and p.allows("other.ValueError")
    assert not p.allows("KeyError")


def test_the_pyproject_table_is_read_from_a_file_or_the_current_directory(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.toolfuzz.agent]\nconvergence = 0\n')
    assert load_policy(str(tmp_path / "pyproject.toml")).convergence == 0
    assert load_policy(None, cwd=str(tmp_path)).convergence == 0
    assert load_policy(None, cwd=str(tmp_path / "nowhere")) == AgentPolicy()


def test_compact_json_holds_only_what_differs_and_round_trips():
    p = AgentPolicy(max_turns=3, must_notice_chain_break=True)
    assert p.to_json(compact=True) == {"max_turns": 3, "must_notice_chain_break": True}
    assert AgentPolicy.from_json(p.to_json(compact=True)) == p
    assert AgentPolicy.from_json(p.to_json()) == p


@pytest.mark.parametrize("text, message", [
    ("max_turns = 'ten'", "P: max_turns: expected a positive integer, got 'ten' (string)"),
    ("max_turns = 0", "P: max_turns: expected a positive integer, got 0 (integer)"),
    ("max_turns = true", "P: max_turns: expected a positive integer, got True (boolean)"),
    ("max_tool_calls = 2.5", "P: max_tool_calls: expected a positive integer, got 2.5 (float)"),
    ("duplicates = 'sometimes'", "P: duplicates: expected one of 'forbid', 'allow', got 'sometimes' (string)"),
    ("convergence = 1", "P: convergence: expected 0 (no rule) or an integer >= 2, got 1 (integer)"),
    ("must_notice_chain_break = 'yes'", "P: must_notice_chain_break: expected true or false, got 'yes' (string)"),
    ("errors = 'ValueError'", "P: errors: expected a list of exception type names, got 'ValueError' (string)"),
    ("max_turn = 3", "P: unknown key 'max_turn'; did you mean max_turns?"),
    ("colour = 3", "P: unknown key 'colour'; known keys: max_turns, max_tool_calls, duplicates, convergence, "
                   "must_notice_chain_break, errors, validates_calls"),
    ("validates_calls = 'no'", "P: validates_calls: expected true or false, got 'no' (string)"),
    ("[tool.toolfuzz.agent]\nmax_turns = -1",
     "P: [tool.toolfuzz.agent] max_turns: expected a positive integer, got -1 (integer)"),
    ("[tool.toolfuzz]\nagent = 3", "P: [tool.toolfuzz.agent] must be a table, not integer"),
    ("[tool.other]\nx = 1", "P: no [tool.toolfuzz.agent] table (a policy file holds that table or the keys at top level)"),
    ("max_turns = ", "P: not valid TOML"),
], ids=lambda v: v if len(v) < 40 else v[:40])
def test_a_bad_policy_is_one_line_naming_the_file_and_key(tmp_path: Path, text, message):
    path = tmp_path / "P"
    path.write_text(text + "\n")
    with pytest.raises(PolicyError) as info:
        load_policy(str(path))
    shown = str(info.value).replace(str(path), "P")
    assert shown.startswith(message) and "\n" not in shown


def test_a_missing_or_unreadable_policy_file(tmp_path: Path):
    with pytest.raises(PolicyError, match="nope.toml: no such file"):
        load_policy(str(tmp_path / "nope.toml"))
    with pytest.raises(PolicyError, match="is a directory"):
        load_policy(str(tmp_path))
