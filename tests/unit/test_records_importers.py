"""Importers on realistic files of each external format; bad files get one line and exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuzzer.cli import main
from fuzzer.records.importers import IMPORTERS, ImportFormatError, import_file
from fuzzer.records.store import RecordStore

DATA = Path(__file__).resolve().parents[1] / "data" / "records"


def _calls(result) -> list:
    return [r.parsed_calls for r in result.records]


def test_an_openai_chat_log_links_tool_results_and_replies_to_the_call_that_asked():
    result = import_file(str(DATA / "openai_chat_log.jsonl"))
    first, reply_turn, broken, parallel = result.records
    assert first.source == "openai" and first.session_id == "user-42" and first.trace_id == "chatcmpl-A1"
    assert first.parsed_calls == [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}]
    assert json.loads(first.raw_model_output)["tool_calls"][0]["id"] == "call_abc123"
    assert first.tool_io[0]["result"] == {"temperature": 18, "unit": "celsius"}
    assert first.execution_status == "ok" and first.final_reply == "It is 18°C in Paris."
    assert first.timestamp == "2024-12-05T12:00:00.000000Z" and first.metadata["finish_reason"] == "tool_calls"
    assert reply_turn.parse_status is None and reply_turn.raw_model_output == "It is 18°C in Paris."
    assert broken.parse_status == "error" and broken.parse_error.startswith("json.decoder.JSONDecodeError")
    assert [c["arguments"]["city"] for c in parallel.parsed_calls] == ["Oslo", "Lima"]
    assert first.tools_hash in result.tool_sets and len(result.tool_sets) == 1
    assert any("2 tool call(s) have no tool result" in w for w in result.warnings)


def test_openai_batch_output_and_single_completions_are_read():
    batch = import_file(str(DATA / "openai_batch_output.jsonl"))
    assert [r.parse_status for r in batch.records] == ["ok", "error"]  # the expired request is skipped
    assert batch.records[0].parsed_calls == [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
    assert any("responses only" in w for w in batch.warnings)
    single = import_file(str(DATA / "openai_completion.json"))
    assert single.records[0].raw_model_output.startswith("<tool_call>") and single.records[0].parse_status is None


def test_otlp_spans_join_chat_output_and_tool_execution_and_warn_about_opt_in_content():
    result = import_file(str(DATA / "otel_otlp_spans.json"))
    chat, orphan = result.records
    assert [c["name"] for c in chat.parsed_calls] == ["get_weather", "search_flights"]
    assert chat.trace_id == "5b8efff798038103d269b633813fc60c" and chat.timestamp == "2024-12-05T12:00:00.000000Z"
    assert [e["status"] for e in chat.execution_result] == ["ok", "error"]
    assert chat.tool_io[0]["result"] == {"temperature": 18, "unit": "celsius"}
    assert chat.execution_error == "TimeoutError: upstream timed out after 30 s"
    assert orphan.parse_status == "error"  # its recorded arguments were cut off
    assert len(result.warnings) == 1 and "gen_ai.tool.call.arguments" in result.warnings[0]
    assert "opt-in" in result.warnings[0]


def test_console_exporter_spans_with_completion_attributes_are_read():
    result = import_file(str(DATA / "otel_console_spans.json"))
    trailing, duplicate = result.records
    assert trailing.parse_status == "error" and "Berlin" in trailing.raw_model_output
    assert duplicate.parsed_calls == [{"name": "get_weather", "arguments": {"city": "Madrid"}}] * 2
    assert trailing.timestamp == "2024-12-05T12:00:00.000000Z"


def test_a_vcr_cassette_gives_its_chat_completions_plain_and_streamed():
    result = import_file(str(DATA / "vcr_openai_cassette.yaml"))
    assert [r.source for r in result.records] == ["vcr", "vcr"]
    assert _calls(result) == [[{"name": "get_weather", "arguments": {"city": "Paris"}}],
                              [{"name": "get_weather", "arguments": {"city": "Oslo"}}]]
    assert result.records[1].trace_id == "chatcmpl-V2"
    assert all(r.tools_hash for r in result.records)


def test_hand_made_records_keep_their_fields():
    result = import_file(str(DATA / "handmade_records.jsonl"))
    repaired, failed = result.records
    assert (repaired.parse_status, repaired.session_id, repaired.source) == ("repaired", "review", "manual")
    assert failed.parse_error == "ValueError: no JSON object" and failed.parser_version == "import:manual"


@pytest.mark.parametrize("name, kind, message", [
    ("bad_truncated_log.jsonl", "auto", "bad_truncated_log.jsonl:2: not JSON"),
    ("bad_truncated_log.jsonl", "openai", "bad_truncated_log.jsonl:2: not JSON"),
    ("bad_cassette.yaml", "auto", "bad_cassette.yaml:3: not YAML"),
    ("bad_cassette_no_chat.yaml", "auto", "no interaction's response is a chat completion"),
    ("bad_not_records.json", "auto", "not a records file this version can import"),
    ("bad_not_records.json", "openai", "bad_not_records.json: not a chat completion"),
    ("otel_no_content.json", "auto", "no tool call could be imported (1 execute_tool span(s) carry no "
                                     "gen_ai.tool.call.arguments"),
    ("openai_chat_log.jsonl", "vcr", "not YAML"),
    ("openai_chat_log.jsonl", "otel", "expected span objects"),
], ids=lambda v: str(v)[:30])
def test_bad_files_are_refused_in_one_line_naming_the_file(name, kind, message):
    with pytest.raises(ImportFormatError) as info:
        import_file(str(DATA / name), kind=kind)
    text = str(info.value)
    assert message in text and name in text and "\n" not in text


def test_the_cli_imports_redacts_and_exits_2_on_a_bad_file(tmp_path: Path):
    runner = CliRunner()
    db = str(tmp_path / "in.db")
    for name in ("openai_chat_log.jsonl", "otel_otlp_spans.json", "vcr_openai_cassette.yaml", "handmade_records.jsonl"):
        result = runner.invoke(main, ["records", "add", db, str(DATA / name)])
        assert result.exit_code == 0, result.output
        assert "added" in result.output
    with RecordStore(db) as store:
        records = store.records()
        assert len(records) == 4 + 2 + 2 + 2
        assert store.conn.execute("SELECT count(*) FROM tool_sets").fetchone()[0] == 2
    everything = (tmp_path / "in.db").read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("in.db-*"))
    assert b"jane.doe@example.com" not in everything  # (it is in a request, not a record, but never stored)

    copy = tmp_path / "broken.jsonl"
    shutil.copy(DATA / "bad_truncated_log.jsonl", copy)
    result = runner.invoke(main, ["records", "add", db, str(copy)])
    assert result.exit_code == 2
    assert result.output.strip() == f"Error: {copy}:2: not JSON (Unterminated string starting at)"
    for args, message in ((["records", "add", db, str(tmp_path / "missing.json")], "missing.json: cannot read"),
                          (["records", "add", db, "--from", "openaii", str(copy)], "unknown importer 'openaii'"),
                          (["records", "add", db], "nothing to add"),
                          (["records", "add", db, "--calls", "[]"], "give --text or --text-file too")):
        result = runner.invoke(main, args)
        assert result.exit_code == 2 and message in result.output and len(result.output.strip().splitlines()) == 1, \
            result.output


def test_every_importer_is_registered_with_a_description():
    assert set(IMPORTERS) == {"records", "openai", "vcr", "otel"}
    assert all(item.description for item in IMPORTERS.values())
