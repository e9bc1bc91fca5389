"""The records store: WAL, versioned schema with migrations, JSON columns, filters, the writer."""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st

from fuzzer.records import store as store_module
from fuzzer.records.record import Record, RecordFilter, RecordsError, new_record_id
from fuzzer.records.store import RecordStore, schema_version, storage_row
from fuzzer.records.values import dumps_json, parse_since, storable
from fuzzer.records.writer import BackgroundWriter


def _record(**fields) -> Record:
    values = dict(record_id=new_record_id(), timestamp="2026-12-01T10:00:00.000000Z", raw_model_output="{}",
                  parse_status="ok", parsed_calls=[{"name": "f", "arguments": {}}])
    values.update(fields)
    return Record(**values)


def test_a_new_database_is_wal_versioned_marked_and_indexed(tmp_path: Path):
    with RecordStore(tmp_path / "r.db") as store:
        conn = store.conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.version == schema_version()
        assert conn.execute("PRAGMA application_id").fetchone()[0] == store_module.APPLICATION_ID
        indexed = {row[2] for name in [r[1] for r in conn.execute("PRAGMA index_list(records)")]
                   for row in conn.execute(f"PRAGMA index_info({name})")}
    assert {"anomaly_type", "session_id", "timestamp", "parse_status", "parser_version", "record_id"} <= indexed


def test_json_columns_are_queryable_and_kept_valid(tmp_path: Path):
    with RecordStore(tmp_path / "r.db") as store:
        store.add([_record(parsed_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}]),
                   _record(parsed_calls=[{"name": "send_email", "arguments": {"to": "x"}}])])
        rows = store.conn.execute("SELECT json_extract(parsed_calls, '$[0].name'), "
                                  "json_extract(parsed_calls, '$[0].arguments.city') FROM records ORDER BY id").fetchall()
        assert rows == [("get_weather", "Paris"), ("send_email", None)]
        with pytest.raises(sqlite3.IntegrityError):
            store.conn.execute("INSERT INTO records (record_id, timestamp, parsed_calls) VALUES ('x', 't', '{oops')")


def test_an_older_database_is_migrated_and_keeps_its_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "old.db"
    with RecordStore(path) as store:
        kept = _record(session_id="before")
        store.add([kept])
    migrations = list(store_module.MIGRATIONS) + [(2, ("ALTER TABLE records ADD COLUMN reviewed INTEGER",))]
    monkeypatch.setattr(store_module, "MIGRATIONS", migrations)
    with RecordStore(path) as store:
        assert store.version == 2
        columns = {row[1] for row in store.conn.execute("PRAGMA table_info(records)")}
        assert "reviewed" in columns
        assert [r.session_id for r in store.records()] == ["before"]


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_bytes(b"this is no database at all" * 40), "not an SQLite database"),
    (lambda p: sqlite3.connect(p).execute("CREATE TABLE mine (x)").connection.commit(),
     "not a toolfuzz records database"),
    (lambda p: (RecordStore(p).close(), sqlite3.connect(p).execute("PRAGMA user_version = 99")),
     "written by a newer toolfuzz"),
], ids=["not sqlite", "foreign sqlite", "newer schema"])
def test_unusable_files_are_refused_in_one_line(tmp_path: Path, make, message):
    path = tmp_path / "x.db"
    make(path)
    with pytest.raises(RecordsError) as info:
        RecordStore(path)
    assert message in str(info.value) and str(path) in str(info.value) and "\n" not in str(info.value)


def test_a_missing_database_is_refused_when_it_must_exist(tmp_path: Path):
    with pytest.raises(RecordsError, match="no such records database"):
        RecordStore(tmp_path / "nope.db", must_exist=True)
    assert not (tmp_path / "nope.db").exists()


def test_raw_outputs_come_back_byte_exact(tmp_path: Path):
    texts = ["plain", "tab\tand\r\nnewline", "lone \udc80 surrogate", "\ufeffBOM", "\x00nul", "é" * 3]
    with RecordStore(tmp_path / "r.db") as store:
        store.add([_record(raw_model_output=t) for t in texts])
        assert [r.raw_model_output for r in store.records()] == texts


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=15)


@settings(max_examples=200, deadline=None)
@given(value=json_like | st.tuples(json_like) | st.sets(st.integers()) | st.binary())
def test_every_value_is_stored_as_valid_json(value):
    text = dumps_json(storable([value]))  # (a top-level None is stored as SQL NULL)
    decoded = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in stored JSON"))
    assert sqlite3.connect(":memory:").execute("SELECT json_valid(?)", (text,)).fetchone()[0] == 1
    if isinstance(value, float) and not math.isfinite(value):
        assert decoded == [{"$float": repr(value)}]


def test_filters_select_by_anomaly_session_status_time_and_version(tmp_path: Path):
    with RecordStore(tmp_path / "r.db") as store:
        a = _record(session_id="s1", parser_version="v3", timestamp="2026-11-01T00:00:00.000000Z")
        b = _record(session_id="s2", parser_version="v4", parse_status="error", anomaly_type="truncated_output",
                    anomaly_source="recorder", timestamp="2026-12-01T00:00:00.000000Z")
        c = _record(session_id="s2", parser_version="v4", execution_status="error",
                    timestamp="2026-12-02T00:00:00.000000Z")
        store.add([a, b, c])
        store.save_classification([(a.record_id, [("trailing_comma", "malformed_json", "x")], "malformed_json")], 1)
        store.add_label(c.record_id, "unknown_function")

        def ids(**kw):
            return [r.record_id for r in store.records(RecordFilter(**kw))]

        assert ids(anomaly=("malformed_json",)) == [a.record_id]
        assert ids(anomaly=("trailing_comma",)) == [a.record_id]
        assert ids(anomaly=("truncated_output", "unknown_function")) == [b.record_id, c.record_id]
        assert ids(session=("s2",)) == [b.record_id, c.record_id]
        assert ids(status=("error",)) == [b.record_id, c.record_id]
        assert ids(status=("execution:error",)) == [c.record_id]
        assert ids(since="2026-11-15T00:00:00.000000Z") == [b.record_id, c.record_id]
        assert ids(parser_version=("v3",), session=("s1",)) == [a.record_id]
        assert store.get(c.record_id[:-1] + c.record_id[-1]).labels[0]["label"] == "unknown_function"


def test_since_reads_durations_and_dates():
    now = 1_800_000_000.0
    assert parse_since("2h", now=now) == store_module.iso_time(now - 7200)
    assert parse_since("2026-12-01") == "2026-12-01T00:00:00.000000Z"
    assert parse_since("2026-12-01T10:00+01:00") == "2026-12-01T09:00:00.000000Z"
    with pytest.raises(RecordsError, match="--since 'yesterday'"):
        parse_since("yesterday")


def test_the_writer_takes_many_threads_and_drops_rather_than_blocks_when_full(tmp_path: Path):
    committed: list = []
    writer = BackgroundWriter(str(tmp_path / "w.db"), batch_size=64, on_commit=committed.extend)
    snapshots = [[_record(session_id=f"t{t}").as_tuple() for _ in range(300)] for t in range(4)]
    threads = [threading.Thread(target=lambda s=s: [writer.submit(x) for x in s]) for s in snapshots]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert writer.flush(30)
    assert writer.written == 1200 and len(committed) == 1200 and writer.dropped == 0
    with RecordStore(tmp_path / "w.db") as store:
        assert store.count() == 1200
    writer.close()

    tiny = BackgroundWriter(str(tmp_path / "w.db"), max_queue=10, flush_interval=5.0, batch_size=10_000)
    tiny._thread = threading.current_thread()  # pretend it runs, so nothing drains the queue
    accepted = [tiny.submit(_record().as_tuple()) for _ in range(25)]
    assert accepted.count(True) == 10 and tiny.dropped == 15


def test_storage_rows_encode_without_touching_the_snapshot():
    calls = [{"name": "f", "arguments": {"x": float("nan")}}]
    snapshot = _record(parsed_calls=calls, timestamp=time.time()).as_tuple()
    row = storage_row(snapshot, None)
    assert json.loads(row[store_module.FIELDS.index("parsed_calls")]) == [{"name": "f", "arguments": {"x": {"$float": "nan"}}}]
    assert math.isnan(calls[0]["arguments"]["x"])
    assert row[store_module.FIELDS.index("timestamp")].endswith("Z")


_ONE_BY_ONE = (f"INSERT INTO records ({', '.join(store_module.FIELDS)}) VALUES "
               f"({', '.join('?' * len(store_module.FIELDS))}) ON CONFLICT(record_id) DO UPDATE SET "
               + ", ".join(f"{name} = excluded.{name}" for name in store_module.FIELDS if name != "record_id"))
_MAYBE_TEXT = st.one_of(st.none(), st.sampled_from(["a", "", "ok", "x y"]))


@st.composite
def _row_batches(draw) -> list:
    """Rows in storage form: few record ids (so some repeat, as a record re-sent after its
    executor ran does), NULL in varying columns."""
    rows = []
    names = ("session_id", "trace_id", "parse_status", "parse_error", "final_reply", "anomaly_type", "parser_version")
    usual = {name: draw(st.booleans()) for name in names}  # most rows of a batch share their NULL columns
    for _ in range(draw(st.integers(1, 12))):
        values = {name: (draw(st.sampled_from(["a", "", "ok", "x y"])) if usual[name] else None)
                  for name in names}
        if draw(st.integers(0, 4)) == 0:
            values.update({name: draw(_MAYBE_TEXT) for name in names})
        values["parsed_calls"] = draw(st.one_of(st.none(), st.just('[{"name":"f","arguments":{}}]')))
        values["execution_latency_ms"] = draw(st.one_of(st.none(), st.floats(0, 10)))
        record = Record(record_id=draw(st.sampled_from("abcdefgh")), timestamp=draw(st.sampled_from(["t1", "t2"])),
                        **values)
        rows.append(storage_row(record.as_tuple(), None))
    return rows


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(_row_batches(), min_size=1, max_size=3))
def test_a_batch_leaves_the_table_as_upserting_its_rows_one_by_one_would(tmp_path_factory, batches):
    """write_rows groups rows by their NULL columns, writes several per statement and keeps one
    row per record id: the table (ids and order included) must be what the plain
    one-row-at-a-time upsert makes."""
    directory = tmp_path_factory.mktemp("batch")
    with RecordStore(directory / "grouped.db") as grouped, RecordStore(directory / "plain.db") as plain, \
            mock.patch.object(store_module, "ROWS_PER_STATEMENT", 3):  # the batches drawn are small
        for rows in batches:
            grouped.write_rows(rows)
            for row in rows:
                plain.conn.execute(_ONE_BY_ONE, row)
        query = "SELECT id, * FROM records ORDER BY id"
        assert grouped.conn.execute(query).fetchall() == plain.conn.execute(query).fetchall()


def test_a_read_command_never_turns_a_file_into_a_records_database(tmp_path):
    import sqlite3

    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    before = other.read_bytes()
    for path, words in ((empty, "an empty file"), (other, "not a records database")):
        with pytest.raises(RecordsError, match=words):
            RecordStore(path, must_exist=True)
    assert empty.read_bytes() == b"" and other.read_bytes() == before
    RecordStore(tmp_path / "new.db").close()  # writing commands still create one
    with RecordStore(tmp_path / "new.db", must_exist=True):
        pass
