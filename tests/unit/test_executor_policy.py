"""The executor policy: defaults, loading, the errors a user sees, --explain."""

from __future__ import annotations

import pytest

from fuzzer.harnesses.executor.policy import (DEFAULT_FALLBACK_SCHEMA, Policy, PolicyError, check_against_registry, explain,
                                    load_policy, policy_from_mapping)


def test_defaults_are_stamina_and_pybreaker_practice():
    p = Policy()
    assert (p.max_attempts, p.deadline) == (10, 45.0)
    assert (p.backoff.initial, p.backoff.multiplier, p.backoff.max, p.backoff.jitter) == (0.1, 2.0, 5.0, 1.0)
    assert (p.breaker.fail_max, p.breaker.reset_timeout) == (5, 60.0)
    assert [p.backoff.base(k) for k in range(1, 8)] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0]
    assert "http_404" not in p.retry_on and "http_503" in p.retry_on
    assert p.fallback_schema == DEFAULT_FALLBACK_SCHEMA


def test_non_idempotent_auto_reads_the_verb_of_the_tool_name():
    names = ["get_weather", "send_email", "book_hotel", "createCalendarEvent", "search_flights", "DeleteUser"]
    assert Policy().non_idempotent_tools(names) == ["send_email", "book_hotel", "createCalendarEvent", "DeleteUser"]
    assert Policy(non_idempotent=("get_weather",)).non_idempotent_tools(names) == ["get_weather"]


def test_declared_exceptions_match_dotted_or_bare_names():
    p = Policy(raises=("mypkg.errors.ToolError", "ValueError"))
    assert p.declared(["mypkg.errors.ToolError", "Exception"])
    assert p.declared(["pydantic_core.ValidationError", "ValueError", "Exception"])
    assert not p.declared(["KeyError", "LookupError", "Exception"])


def test_a_policy_file_and_a_pyproject_table(tmp_path):
    (tmp_path / "p.toml").write_text("max_attempts = 3\n[backoff]\ninitial = 1.5\n", encoding="utf-8")
    p = load_policy(str(tmp_path / "p.toml"))
    assert p.max_attempts == 3 and p.backoff.initial == 1.5 and p.backoff.max == 5.0
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n[tool.toolfuzz.executor]\ndeadline = false\n"
                                             "[tool.toolfuzz.executor.breaker]\nenabled = false\n", encoding="utf-8")
    p = load_policy(cwd=str(tmp_path))
    assert p.deadline is None and not p.breaker.enabled and "pyproject.toml" in p.source
    assert load_policy(cwd=str(tmp_path / "nowhere")) == Policy()


def test_a_fallback_schema_may_be_a_json_file_next_to_the_policy(tmp_path):
    (tmp_path / "fallback.json").write_text('{"type": "object", "required": ["isError"]}', encoding="utf-8")
    (tmp_path / "p.toml").write_text('fallback_schema = "fallback.json"\n', encoding="utf-8")
    assert load_policy(str(tmp_path / "p.toml")).fallback_schema == {"type": "object", "required": ["isError"]}


@pytest.mark.parametrize("text, message", [
    ("max_attempts = 'three'", "p.toml: max_attempts: expected an integer >= 1 (or false for none), got string 'three'"),
    ("max_attempts = 0", "p.toml: max_attempts: expected an integer >= 1 (or false for none), got integer 0"),
    ("max_attempts = true", "p.toml: max_attempts: expected an integer >= 1 (or false for none), got boolean True"),
    ("[backoff]\nmax = 'none'", "p.toml: backoff.max: expected a number of seconds >= 0 (or false for none)"),
    ("retry_on = ['timeout:urllib3']", "p.toml: retry_on: 'timeout:urllib3': unknown library 'urllib3' after the colon"),
    ("retry_on = ['timeot:httpx']", "p.toml: retry_on: unknown fault kind 'timeot'; did you mean timeout"),
    ("validates_calls = 'no'", "p.toml: validates_calls: expected true or false, got string 'no'"),
    ("redacts_secrets = 0", "p.toml: redacts_secrets: expected true or false, got integer 0"),
    ("max_attempt = 3", "p.toml: unknown key 'max_attempt'; did you mean 'max_attempts'?"),
    ("[backoff]\ninitial = -1", "p.toml: backoff.initial: expected a number of seconds >= 0, got integer -1"),
    ("[backoff]\nmultipler = 2", "p.toml: unknown key 'backoff.multipler'; did you mean 'multiplier'?"),
    ("[backoff]\ninitial = 5\nmax = 1", "p.toml: backoff.max: expected a number of seconds >= backoff.initial"),
    ("[breaker]\nfail_max = 2.5", "p.toml: breaker.fail_max: expected an integer >= 1, got number 2.5"),
    ("[breaker]\nenabled = 'yes'", "p.toml: breaker.enabled: expected true or false, got string 'yes'"),
    ("retry_on = ['timeout', 'http_5xx']", "p.toml: retry_on: unknown fault kind 'http_5xx'"),
    ("retry_on = 'timeout'", "p.toml: retry_on: expected a list of fault kind strings, got string 'timeout'"),
    ("non_idempotent = 3", "p.toml: non_idempotent: expected \"auto\" or a list of tool names"),
    ("fallback_schema = 7", "p.toml: fallback_schema: expected a JSON Schema"),
    ("fallback_schema = {type = 'objekt'}", "p.toml: fallback_schema: not a valid JSON Schema"),
    ("fallback_schema = {'$ref' = '#/nope'}", "p.toml: fallback_schema: $ref '#/nope' does not resolve"),
    ("[fallback_schema.properties.error]\n'$ref' = 'https://example.com/e.json'",
     "p.toml: fallback_schema: $ref 'https://example.com/e.json' does not resolve"),
    ("deadline = 'soon'", "p.toml: deadline: expected a number of seconds >= 0 (or false for none)"),
    ("backoff = 3", "p.toml: backoff: expected a table, got integer 3"),
    ("max_attempts = [", "p.toml: not valid TOML"),
])
def test_bad_policies_name_file_key_and_expected_type(tmp_path, text, message):
    (tmp_path / "p.toml").write_text(text + "\n", encoding="utf-8")
    with pytest.raises(PolicyError) as info:
        load_policy(str(tmp_path / "p.toml"))
    assert message in str(info.value).replace(str(tmp_path) + "/", "")
    assert "\n" not in str(info.value)


def test_missing_and_misplaced_policy_files(tmp_path):
    with pytest.raises(PolicyError, match="no such policy file"):
        load_policy(str(tmp_path / "missing.toml"))
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n[tool.black]\n", encoding="utf-8")
    with pytest.raises(PolicyError, match=r"no \[tool.toolfuzz.executor\] table"):
        load_policy(str(tmp_path / "pyproject.toml"))


def test_tools_the_policy_names_must_exist():
    policy = policy_from_mapping({"non_idempotent": ["send_emial"]}, source="p.toml")
    with pytest.raises(PolicyError, match="p.toml: non_idempotent: unknown tool 'send_emial'; did you mean send_email"):
        check_against_registry(policy, ["get_weather", "send_email"])


def test_explain_marks_what_the_file_set_and_resolves_auto():
    policy = policy_from_mapping({"max_attempts": 4, "backoff": {"jitter": 0}}, source="p.toml")
    lines = explain(policy, ["get_weather", "send_email"])
    assert lines[0] == "# executor policy from p.toml"
    assert "max_attempts = 4  # set" in lines and "deadline = 45" in lines
    assert "jitter = 0  # set" in lines
    assert "# non-idempotent tools: send_email" in lines
    assert any(line.startswith("# waits before attempts 2..: 0.1, 0.2, 0.4 s") for line in lines)


def test_a_timeout_in_retry_on_covers_the_timeout_whose_side_effect_happened():
    """The executor sees the same timeout either way: a policy listing "timeout" cannot mean to
    forbid retrying commit_then_timeout (retry_non_idempotent_on decides that for tools with side
    effects); the README's example policy gave a false retry_violation."""
    policy = Policy(retry_on=("timeout", "http_503"))
    assert policy.transient("commit_then_timeout") and policy.counts_for_breaker("commit_then_timeout")
    assert not policy.transient("http_500")
    assert not Policy(retry_on=("http_503",)).transient("commit_then_timeout")


def test_promises_a_library_does_not_make_can_be_stated_and_explain_shows_them(tmp_path):
    """backoff with max_time only and an unbounded expo; LangGraph's rule that retries an httpx
    timeout but not a requests one; an executor that neither validates nor redacts."""
    (tmp_path / "p.toml").write_text('max_attempts = false\ndeadline = 60\nretry_on = ["timeout:httpx", "http_503"]\n'
                                     'validates_calls = false\nredacts_secrets = false\n[backoff]\nmax = false\n',
                                     encoding="utf-8")
    p = load_policy(str(tmp_path / "p.toml"))
    assert p.max_attempts is None and p.backoff.max is None and not p.validates_calls and not p.redacts_secrets
    assert p.retry_on == ("timeout:httpx", "http_503")
    assert [p.backoff.base(k) for k in (1, 7, 11)] == [0.1, 6.4, 102.4]  # no cap
    text = "\n".join(explain(p, ["get_weather"]))
    for line in ("max_attempts = false  # set", 'retry_on = ["timeout:httpx", "http_503"]  # set',
                 "validates_calls = false  # set", "redacts_secrets = false  # set", "max = false  # set",
                 "# max_attempts = false: no attempt limit", "# backoff.max = false: the waits grow without bound"):
        assert line in text, line
    assert Policy.from_json(p.to_json()) == p  # as a corpus entry keeps it
    defaults = "\n".join(explain(Policy(), ["get_weather"]))
    assert "validates_calls = true\n" in defaults and "redacts_secrets = true\n" in defaults
