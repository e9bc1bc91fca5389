"""The recorder inside an application: off by default, light, transparent, never failing the app."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fuzzer.records.recorder import Recorder, UnrecordedToolCall, playback, rebuild_exception
from fuzzer.records.store import RecordStore


def _records(path: Path) -> list:
    with RecordStore(path, must_exist=True) as store:
        return store.records()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TOOLFUZZ_RECORD", "TOOLFUZZ_RECORD_DB", "TOOLFUZZ_REPLAYING", "TOOLFUZZ_REDACT_KEYS",
                 "TOOLFUZZ_REDACT_PATHS", "TOOLFUZZ_REDACT_PATTERNS"):
        monkeypatch.delenv(name, raising=False)


def test_recording_is_off_by_default(tmp_path: Path, clean_env: None):
    recorder = Recorder(db=tmp_path / "calls.db")
    parse = recorder.parser(lambda text: [{"name": "f", "arguments": {}}])
    assert parse("x") == [{"name": "f", "arguments": {}}]
    assert not recorder.enabled
    recorder.close()
    assert not (tmp_path / "calls.db").exists()


def test_the_environment_turns_it_on_and_names_the_file(tmp_path: Path, clean_env: None,
                                                        monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLFUZZ_RECORD", "1")
    monkeypatch.setenv("TOOLFUZZ_RECORD_DB", str(tmp_path / "env.db"))
    recorder = Recorder(parser_version="v9")
    recorder.parser(lambda text: [])("hello")
    recorder.flush()
    [record] = _records(tmp_path / "env.db")
    assert (record.raw_model_output, record.parse_status, record.parser_version) == ("hello", "no_call", "v9")
    recorder.close()


def test_an_argument_wins_over_the_environment_and_replay_workers_never_record(
        tmp_path: Path, clean_env: None, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLFUZZ_RECORD", "0")
    assert Recorder(db=tmp_path / "a.db", enabled=True).enabled
    monkeypatch.setenv("TOOLFUZZ_RECORD", "1")
    assert not Recorder(db=tmp_path / "a.db", enabled=False).enabled
    monkeypatch.setenv("TOOLFUZZ_REPLAYING", "1")
    assert not Recorder(db=tmp_path / "a.db", enabled=True).enabled


# --------------------------------------------------------------------------------------------
# Pass-through: return values and exceptions reach the caller as the very same objects


class Opaque:
    """A return value the recorder cannot turn into JSON: broken repr and equality."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no eq")

    __hash__ = object.__hash__


class CallLike:
    def __init__(self, name: object, arguments: object):
        self.name, self.arguments = name, arguments


class Custom(BaseException):
    pass


class BrokenMessage(Exception):
    def __str__(self) -> str:
        raise ValueError("no message")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    | st.tuples(inner, inner), max_leaves=12)
returns = (json_values | st.builds(Opaque) | st.builds(CallLike, st.text(max_size=8), json_values)
           | st.lists(st.fixed_dictionaries({"name": st.text(max_size=8), "arguments": json_values}), max_size=3))
exceptions = st.builds(lambda cls, msg: cls(msg), st.sampled_from(
    [ValueError, KeyError, TypeError, RuntimeError, RecursionError, MemoryError, KeyboardInterrupt, SystemExit,
     GeneratorExit, Custom, BrokenMessage, UnicodeError]), st.text(max_size=20))


@pytest.fixture(scope="module")
def live_recorder(tmp_path_factory: pytest.TempPathFactory):
    recorder = Recorder(db=tmp_path_factory.mktemp("passthrough") / "p.db", enabled=True)
    yield recorder
    recorder.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=returns, error=st.none() | exceptions, args=st.lists(json_values | st.builds(Opaque), max_size=3),
       kind=st.sampled_from(["parser", "executor", "tool"]), in_turn=st.booleans())
def test_return_values_and_exceptions_pass_through_unchanged(live_recorder, value, error, args, kind, in_turn):
    seen = []

    def function(*a, **k):
        seen.append((a, k))
        if error is not None:
            raise error
        return value

    wrapped = getattr(live_recorder, kind)(function)
    context = live_recorder.turn(session_id="s") if in_turn else _nothing()
    with context:
        try:
            got = wrapped(*args, flag=1)
        except BaseException as exc:  # noqa: BLE001 - the point is to see exactly what comes out
            assert exc is error
        else:
            assert error is None and got is value
    [(a, k)] = seen
    assert k == {"flag": 1} and len(a) == len(args) and all(x is y for x, y in zip(a, args))


def test_async_functions_pass_through_too(live_recorder):
    error = KeyError("k")

    @live_recorder.parser
    async def parse(text):
        if text == "boom":
            raise error
        return [{"name": "a", "arguments": {}}]

    assert asyncio.run(parse("ok")) == [{"name": "a", "arguments": {}}]
    with pytest.raises(KeyError) as info:
        asyncio.run(parse("boom"))
    assert info.value is error


def test_an_async_parser_and_executor_are_recorded_as_what_they_return(tmp_path: Path, clean_env: None):
    """An ``async def`` parser is awaited by its wrapper: the record holds the calls it returned
    (not "invalid: a coroutine object"), and the async executor's result joins that record."""
    recorder = Recorder(db=tmp_path / "a.db", enabled=True)

    @recorder.parser
    async def parse(text):
        await asyncio.sleep(0)
        return [{"name": "get_weather", "arguments": {"city": text}}]

    @recorder.executor
    async def execute(call):
        await asyncio.sleep(0)
        return {"temperature": 20}

    async def turn():
        for call in await parse("Paris"):
            await execute(call)

    asyncio.run(turn())
    recorder.flush()
    (record,) = _records(tmp_path / "a.db")
    assert record.parse_status == "ok", record.parse_error
    assert record.parsed_calls == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    assert [e["status"] for e in record.execution_result] == ["ok"]
    recorder.close()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# --------------------------------------------------------------------------------------------
# What a record holds


def test_a_turn_records_parse_execution_tools_and_reply_as_one_record(tmp_path: Path, clean_env: None):
    recorder = Recorder(db=tmp_path / "t.db", enabled=True, parser_version="v3",
                        tools={"get_weather": {"type": "object"}})

    @recorder.parser
    def parse(text):
        return json.loads(text)

    @recorder.tool
    def get_weather(city, unit="celsius"):
        if city == "Atlantis":
            raise LookupError("no such city")
        return {"temperature": 20}

    @recorder.executor
    def execute(call):
        return get_weather(**call["arguments"])

    with recorder.turn(session_id="u1", trace_id="t1") as turn:
        for call in parse('[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
                          '{"name": "get_weather", "arguments": {"city": "Atlantis"}}]'):
            try:
                execute(call)
            except LookupError:
                pass
        turn.final_reply = "20 degrees in Paris"
        turn.annotate(model="gpt-test")
    with pytest.raises(ZeroDivisionError):
        with recorder.turn(session_id="u2"):
            parse("[]")
            1 / 0
    recorder.flush()
    first, second = _records(tmp_path / "t.db")
    assert (first.session_id, first.trace_id, first.parse_status, first.parser_version) == ("u1", "t1", "ok", "v3")
    assert [e["status"] for e in first.execution_result] == ["ok", "error"]
    assert first.execution_status == "error" and first.execution_error == "LookupError: no such city"
    assert [e["tool"] for e in first.tool_io] == ["get_weather", "get_weather"]
    assert first.tool_io[0] == {"tool": "get_weather", "arguments": {"city": "Paris"}, "status": "ok",
                                "result": {"temperature": 20}, "latency_ms": first.tool_io[0]["latency_ms"]}
    assert first.final_reply == "20 degrees in Paris" and first.metadata == {"model": "gpt-test"}
    assert first.tools_hash and first.parse_latency_ms >= 0 and first.execution_latency_ms >= 0
    assert second.parse_status == "no_call" and second.metadata["turn_error"].startswith("ZeroDivisionError")
    with RecordStore(tmp_path / "t.db") as store:
        assert store.tool_set(first.tools_hash) == {"get_weather": {"type": "object"}}
    recorder.close()


def test_without_a_turn_the_executor_calls_join_the_last_parse(tmp_path: Path, clean_env: None):
    recorder = Recorder(db=tmp_path / "i.db", enabled=True)
    parse = recorder.parser(lambda text: [{"name": "f", "arguments": {"x": len(text)}}])
    execute = recorder.executor(lambda call: call["arguments"]["x"] * 2)
    for text in ("ab", "abc"):
        for call in parse(text):
            execute(call)
    bad = recorder.parser(lambda text: (_ for _ in ()).throw(ValueError("bad output")))
    with pytest.raises(ValueError):
        bad("zzz")
    recorder.flush()
    records = _records(tmp_path / "i.db")
    assert [(r.raw_model_output, r.parse_status) for r in records] == [("ab", "ok"), ("abc", "ok"), ("zzz", "error")]
    assert [e["result"] for e in records[1].execution_result] == [6]
    assert records[2].parse_error == "ValueError: bad output" and records[2].execution_result is None
    recorder.close()


def test_playback_answers_tools_from_the_record_and_fails_loudly_on_anything_else():
    recorder = Recorder(enabled=False)
    calls = []

    @recorder.tool
    def get_weather(city):
        calls.append(city)
        return {"live": True}

    tool_io = [{"tool": "get_weather", "arguments": {"city": "Paris"}, "status": "ok", "result": {"t": 1}},
               {"tool": "get_weather", "arguments": {"city": "Oslo"}, "status": "error", "error": "TimeoutError: slow"}]
    with playback(tool_io):
        assert get_weather(city="Paris") == {"t": 1}
        with pytest.raises(TimeoutError, match="slow"):
            get_weather(city="Oslo")
        with pytest.raises(UnrecordedToolCall):
            get_weather(city="Paris")  # answered once, as recorded
    assert calls == []
    assert get_weather(city="Lima") == {"live": True} and calls == ["Lima"]
    assert type(rebuild_exception("nowhere.Missing: gone")).__name__ == "Missing"


# --------------------------------------------------------------------------------------------
# The recorder failing: logged once, never seen by the application


def _warnings(caplog: pytest.LogCaptureFixture) -> list:
    return [r for r in caplog.records if r.name == "toolfuzz.records" and r.levelno == logging.WARNING]


def test_an_unwritable_location_is_logged_once_and_the_app_goes_on(tmp_path: Path, clean_env: None,
                                                                   caplog: pytest.LogCaptureFixture):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the database's directory should be")
    recorder = Recorder(db=blocker / "calls.db", enabled=True, batch_size=10)
    parse = recorder.parser(lambda text: [{"name": text, "arguments": {}}])
    with caplog.at_level(logging.WARNING, logger="toolfuzz.records"):
        for i in range(100):
            assert parse(f"t{i}") == [{"name": f"t{i}", "arguments": {}}]
        recorder.flush()
    assert len(_warnings(caplog)) == 1
    assert "cannot write records" in _warnings(caplog)[0].getMessage()
    assert recorder.dropped == 100 and recorder.written == 0
    recorder.close()


def test_a_locked_database_is_logged_once_and_recording_resumes_when_it_is_released(
        tmp_path: Path, clean_env: None, caplog: pytest.LogCaptureFixture):
    path = tmp_path / "locked.db"
    RecordStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    recorder = Recorder(db=path, enabled=True, busy_timeout_s=0.05, batch_size=5)
    parse = recorder.parser(lambda text: [])
    with caplog.at_level(logging.INFO, logger="toolfuzz.records"):
        for i in range(30):
            assert parse(f"locked {i}") == []
        recorder.flush()
        assert len(_warnings(caplog)) == 1 and "locked" in _warnings(caplog)[0].getMessage()
        holder.execute("ROLLBACK")
        holder.close()
        parse("after the lock")
        recorder.flush()
    assert recorder.dropped == 30
    assert [r.raw_model_output for r in _records(path)] == ["after the lock"]
    assert any("again" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)
    recorder.close()
