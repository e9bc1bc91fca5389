"""Faults and schedules of the executor harness: the registry, the records, what each kind does."""

from __future__ import annotations

import email.utils

import httpx
import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.harnesses.executor import faults, http
from fuzzer.harnesses.executor.faults import FAULTS, Fault, FaultError, make
from fuzzer.harnesses.executor.schedule import PATTERNS, FaultMenu, Schedule, draw_schedule
from strategies._internal.source import RandomSource

ISSUE_KINDS = ["ok", "slow", "timeout", "connection_refused", "connection_reset", "http_429", "http_500", "http_502",
               "http_503", "http_504", "http_400", "http_401", "http_403", "http_404", "http_422", "malformed_body",
               "schema_drift", "commit_then_timeout", "secret_error"]


def test_every_fault_of_the_issue_is_registered_with_a_category():
    assert sorted(FAULTS) == sorted(ISSUE_KINDS)
    for name, kind in FAULTS.items():
        assert kind.category in faults.CATEGORIES, name
    assert {k for k, v in FAULTS.items() if v.transient} == {
        "timeout", "connection_refused", "connection_reset", "http_429", "http_500", "http_502", "http_503",
        "http_504", "commit_then_timeout"}
    assert FAULTS["commit_then_timeout"].commits and not FAULTS["timeout"].commits
    assert "succeed_after" in PATTERNS and "down" in PATTERNS


def test_a_registered_name_cannot_be_registered_again():
    from strategies.registry import DuplicateName

    with pytest.raises(DuplicateName):
        faults.fault_kind("timeout", "timeout", "again")


@given(st.sampled_from(ISSUE_KINDS), st.integers(0, 10_000))
@settings(max_examples=60, deadline=None)
def test_drawn_faults_round_trip_through_json(kind, seed):
    fault = FaultMenu(kinds=(kind,), transient=(), flavors=faults.FLAVORS).draw(RandomSource(seed))
    assert fault.kind == kind
    assert Fault.from_json(fault.to_json()) == fault


@pytest.mark.parametrize("data, message", [
    ({"kind": "http_418"}, "unknown fault kind 'http_418'"),
    ({"kind": "timeout", "after": [1]}, "fault.after: expected a JSON scalar"),
    ("timeout", "expected an object with a string 'kind'"),
])
def test_bad_fault_records_name_the_problem(data, message):
    with pytest.raises(FaultError, match=message.replace("(", r"\(").replace("[", r"\[")):
        Fault.from_json(data)


def test_retry_after_as_an_http_date_gives_the_exact_wait_from_that_instant():
    wall = 1_767_225_600.4
    value, wait = faults.retry_after_header(make("http_429", retry_after=30, form="date"), wall)
    assert email.utils.parsedate_to_datetime(value).timestamp() == pytest.approx(wall + wait)
    assert 30 <= wait < 31
    assert faults.retry_after_header(make("http_429", retry_after=5, form="seconds"), wall) == ("5", 5.0)
    assert faults.retry_after_header(make("http_500"), wall) == (None, None)


@pytest.mark.parametrize("via, timeout_type, status_type", [
    ("builtin", TimeoutError, faults.ToolHTTPError),
    ("requests", requests.exceptions.Timeout, requests.exceptions.HTTPError),
    ("httpx", httpx.TimeoutException, httpx.HTTPStatusError),
])
def test_failures_are_the_exceptions_each_library_raises(via, timeout_type, status_type):
    assert isinstance(http.failure_for(make("timeout", via=via, after=5), "get_weather", 0.0), timeout_type)
    error = http.failure_for(make("http_429", via=via, retry_after=7, form="seconds"), "get_weather", 0.0)
    assert isinstance(error, status_type)
    assert error.response.status_code == 429
    assert error.response.headers["Retry-After"] == "7"
    refused = http.failure_for(make("connection_refused", via=via), "get_weather", 0.0)
    assert isinstance(refused, (ConnectionRefusedError, requests.exceptions.ConnectionError, httpx.ConnectError))


def test_a_secret_error_carries_its_canary_in_the_message():
    canary = faults.canary_secret(3)
    for via in faults.FLAVORS:
        error = http.failure_for(make("secret_error", via=via, canary=canary), "send_email", 0.0)
        assert canary in str(error)
        assert error.response.status_code == 401


def test_bad_results_break_the_healthy_result_in_the_declared_way():
    good = faults.ok_result("get_weather", 1)
    assert set(faults.bad_result(make("schema_drift", variant="missing"), good)) < set(good)
    renamed = faults.bad_result(make("schema_drift", variant="renamed"), good)
    assert len(renamed) == len(good) and set(renamed) != set(good)
    assert faults.bad_result(make("malformed_body", variant="empty"), good) == ""
    text = faults.bad_result(make("malformed_body", variant="invalid_json"), good)
    with pytest.raises(ValueError):
        import json

        json.loads(text)


def test_schedules_say_what_every_attempt_meets():
    s = Schedule(faults=(make("http_503"), make("http_503"), make("timeout", after=5)), then=make("http_500"))
    assert [s.fault_for(i).kind for i in range(1, 6)] == ["http_503", "http_503", "timeout", "http_500", "http_500"]
    assert s.describe() == "http_503 ×2, timeout(after=5s), then http_500 on every later attempt"
    assert Schedule.from_json(s.to_json()) == s
    assert Schedule().describe() == "no faults" and Schedule().size == 0 and s.size == 4


@given(st.integers(0, 2 ** 20))
@settings(max_examples=80, deadline=None)
def test_drawn_schedules_use_only_the_menu_and_zero_choices_are_healthy(seed):
    from strategies._internal.source import ReplaySource

    menu = FaultMenu(kinds=("timeout", "http_404"), transient=("timeout",), flavors=("builtin",))
    schedule = draw_schedule(RandomSource(seed), menu)
    assert {f.kind for f in schedule.faults + (schedule.then,)} <= {"ok", "timeout", "http_404"}
    if schedule.pattern == "succeed_after":
        assert {f.kind for f in schedule.faults} == {"timeout"} and schedule.then.is_ok
    assert draw_schedule(ReplaySource([]), menu) == Schedule()
