"""`fuzz formats`, `fuzz formats detect`, `campaign --format-from` and a user's own format loaded with
`--formats-from`, through the real CLI."""

from __future__ import annotations

import json
import sqlite3

from tests.unit.test_real_examples import EXAMPLES


def test_formats_lists_every_family_version_and_layout_with_an_example(cli):
    result = cli("formats")
    assert result.code == 0, result
    for name in ("mistral:v3 (also mistral:v3)", "mistral:v11", "deepseek:v3.2", "glm:4.5", "kimi:k2", "gemma:4",
                 "qwen3:xml", "harmony", "llama3:json"):
        assert name.split(" ")[0] in result.stdout, name
    assert "[TOOL_CALLS]get_weather[ARGS]" in result.stdout
    assert "variants: prose, several calls, reasoning" in result.stdout
    assert "layouts: usual" in result.stdout


def test_detect_names_each_real_example_and_prints_the_format_options(cli, tmp_path):
    lines = [json.dumps({"text": e.text}) for e in EXAMPLES] + [json.dumps("<|tool▁call|>get_weather ...")]
    (tmp_path / "outputs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("formats", "detect", "outputs.jsonl", "--each")
    assert result.code == 1, result  # one output is in no known family
    for example in EXAMPLES:
        assert example.format.replace("qwen3:xml", "qwen3:xml") in result.stdout
    assert "unknown #" in result.stdout and "'<|tool▁call|>'" in result.stdout
    assert "fuzz with: --format " in result.stdout and "--format deepseek:v3.2" in result.stdout


def test_detect_reads_a_records_database(cli, tmp_path):
    db = tmp_path / "calls.db"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE records (id INTEGER PRIMARY KEY, raw_model_output TEXT)")
        connection.execute("INSERT INTO records (raw_model_output) VALUES (?)",
                           ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',))
    result = cli("formats", "detect", "calls.db")
    assert result.code == 0, result
    assert "gemma:4" in result.stdout and "fuzz with: --format gemma:4" in result.stdout


def test_an_unreadable_file_is_one_line(cli, tmp_path):
    (tmp_path / "bad.jsonl").write_text("{not json\n", encoding="utf-8")
    result = cli("formats", "detect", "bad.jsonl")
    assert result.code == 2 and "bad.jsonl:1: not a JSON line" in result.stderr and "Traceback" not in result.stderr


def test_campaign_format_from_fuzzes_the_formats_found(cli, tmp_path):
    (tmp_path / "out.txt").write_text('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', encoding="utf-8")
    result = cli("campaign", "--tool", "get_weather", "--target", "fuzzer.targets.reference:parse",
                 "--format-from", "out.txt", "--max-examples", "600", "--report", "r.json", "-q")
    assert result.code == 0, result
    assert "formats found in out.txt: mistral:v11" in result.stderr
    assert set(result.report()["formats"]["supported"]) == {"mistral:v11"}


def test_a_user_format_from_a_module_is_fuzzed_end_to_end(cli):
    args = ("campaign", "--tool", "get_weather", "--formats-from", "tests.integration.user_formats.outputs_protocol",
            "--format", "outputs_protocol:single", "--max-examples", "1500", "--report", "r.json", "-q")
    good = cli(*args, "--target", "tests.integration.user_formats.protocol_parser:parse")
    assert good.code == 0, good
    report = good.report()
    assert set(report["formats"]["supported"]) == {"outputs_protocol"}
    assert report["by_class"]["valid"]["executions"] > 0
    # the reference parser knows nothing of it: every valid output is a false_reject
    bad = cli(*args, "--target", "fuzzer.targets.reference:parse")
    assert bad.code == 1, bad
    assert any(f["verdict"] == "false_reject" and f["format"] == "outputs_protocol" for f in bad.report()["failures"])


def test_a_renderer_failing_in_a_worker_stops_the_campaign_with_its_traceback(cli):
    """toolfuzz's own code (here a user format's renderer) failing while a worker builds samples is
    no finding and no "nothing to generate": the families of that order built nothing, and the run
    went on as if they had been tried (the run then claimed a coverage it did not have). The run
    stops, naming the failure and showing where it happened."""
    result = cli("campaign", "--tool", "get_weather", "--formats-from", "tests.integration.user_formats.broken_protocol",
                 "--format", "broken_protocol:single", "--anomaly", "unexpected_argument", "--max-examples", "2000",
                 "--target", "fuzzer.targets.reference:parse", "--report", "r.json")
    assert result.code not in (0, 2), result  # neither a pass nor a user's usage error
    assert "toolfuzz failed while building samples in a worker" in result.stderr, result
    assert "the plugin's own bug" in result.stderr, result
