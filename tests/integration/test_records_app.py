"""The must-shows on the bundled example application (fuzzer/targets/records_app.py):

1. 1,000 tool calls from 4 processes into one database; `fuzz records stats` shows the class
   distribution; `fuzz records pool` lists what no detector explains.
2. After a parser change `fuzz records replay` reports pass rates and exactly the records whose
   result changed — checked against calling both parsers directly; `--baseline` works; so does
   execution replay with the tools answered from the records.
3. `fuzz corpus import --records` finds the planted bugs the recorded outputs reach.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from fuzzer.records.detect import Classifier, class_distribution, pool
from fuzzer.records.recorder import error_text, playback
from fuzzer.records.store import RecordStore
from fuzzer.targets import records_app
from tests.conftest import cli_command, cli_env, default_sigint, run_cli

APP = "fuzzer.targets.records_app"


@pytest.fixture(scope="module")
def app_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example application's database: 1,000 turns recorded by 4 processes."""
    directory = tmp_path_factory.mktemp("records_app")
    proc = subprocess.run(cli_command()[:1] + ["-m", APP, "--db", "calls.db", "--calls", "1000", "--processes", "4"],
                          cwd=directory, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "1000 turns from 4 processes" in proc.stdout
    with RecordStore(directory / "calls.db") as store:
        Classifier(store).run()  # once, so that every copy starts classified
    return directory / "calls.db"


@pytest.fixture
def db(app_db: Path, tmp_path: Path) -> Path:
    """A private copy (commands classify and label in place)."""
    copy = tmp_path / "calls.db"
    with sqlite3.connect(app_db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return copy


@pytest.fixture
def fuzz(db: Path, monkeypatch: pytest.MonkeyPatch):
    """``fuzz(*args)``: the CLI in this process (quick), in the database's directory."""
    from click.testing import CliRunner

    from fuzzer.cli import main

    monkeypatch.chdir(db.parent)
    monkeypatch.setenv("TOOLFUZZ_TOOLS", "")  # --tools sets it for the workers: undone after the test

    def invoke(*args: str) -> Any:
        result = CliRunner().invoke(main, list(args))
        result.code = result.exit_code
        return result

    return invoke


def _outcome(parse, text: str) -> tuple:
    try:
        return ("calls", json.dumps(parse(text), sort_keys=True))
    except Exception as exc:  # noqa: BLE001
        return ("error", error_text(exc).split(": ", 1)[0])


def test_four_processes_recorded_a_thousand_calls_into_one_database(app_db: Path):
    conn = sqlite3.connect(app_db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*), count(DISTINCT record_id), count(DISTINCT session_id) "
                        "FROM records").fetchone() == (1000, 1000, 4)
    assert conn.execute("SELECT count(DISTINCT substr(record_id, 1, 12)) FROM records").fetchone()[0] == 4
    by_status = dict(conn.execute("SELECT parse_status, count(*) FROM records GROUP BY 1").fetchall())
    assert by_status["ok"] > 600 and by_status["error"] > 50
    assert conn.execute("SELECT count(*) FROM records WHERE execution_result IS NOT NULL "
                        "AND tool_io IS NOT NULL AND final_reply IS NOT NULL").fetchone()[0] > 500
    assert conn.execute("SELECT count(*) FROM records WHERE raw_model_output LIKE '%@example.%'").fetchone()[0] == 0


def test_stats_show_the_class_distribution_per_parser_version_and_session(db: Path, fuzz):
    result = run_cli(db.parent, "records", "stats", db.name)
    assert result.code == 0, result
    with RecordStore(db) as store:
        records = store.records()
    expected = class_distribution(records, "parser_version")["v3"]
    assert f"v3 ({len(records):,} records)" in result.stdout
    for cls, n in expected.items():
        if cls:
            label = "unknown (pool)" if cls == "unknown" else cls
            assert re.search(rf"^\s+{re.escape(label)}\s+{n:,}\s", result.stdout, re.M), (cls, n, result.stdout)
    for cls in ("valid", "malformed_json", "truncated_output", "unknown_function", "duplicate_call",
                "invalid_argument_type", "missing_argument", "unknown (pool)"):
        assert cls in result.stdout
    for session in range(4):
        assert f"worker-{session} (250): valid" in result.stdout
    as_json = json.loads(fuzz("records", "stats", db.name, "--json").stdout)
    assert as_json["by_parser_version"]["v3"] == {"records": 1000, **{c: n for c, n in expected.items() if c}}


def test_the_pool_lists_what_no_detector_explains_and_labels_take_records_out(db: Path, fuzz):
    with RecordStore(db) as store:
        Classifier(store).run()
        unexplained = pool(store)
    texts = {r.raw_model_output for r in unexplained}
    assert unexplained and all(t.startswith(("name:", "I can't")) for t in texts)  # YAML and refusals only
    result = fuzz("records", "pool", db.name, "--limit", "1000")
    assert result.code == 0, result
    listed = re.findall(r"^([0-9a-f]{20})  ", result.stdout, re.M)
    assert listed == [r.record_id for r in unexplained]
    first = listed[0]
    labeled = fuzz("records", "label", db.name, first, "envelope_error", "--note", "YAML, not JSON")
    assert labeled.code == 0 and f"labeled {first} as envelope_error" in labeled.stdout
    again = fuzz("records", "pool", db.name, "--limit", "1000")
    assert first not in again.stdout and f"{len(listed) - 1} record(s) in the pool" in again.stdout
    shown = json.loads(fuzz("records", "show", db.name, first).stdout)
    ambiguous = fuzz("records", "show", db.name, first[:12])
    assert ambiguous.code == 2 and "several records" in ambiguous.stderr
    assert shown["labels"][0]["note"] == "YAML, not JSON" and shown["anomaly_type"] == "envelope_error"


def test_replay_reports_exactly_the_records_a_parser_change_changed(db: Path):
    with RecordStore(db) as store:
        records = store.records()
    expected = {r.record_id for r in records
                if _outcome(records_app.parse_v3, r.raw_model_output) != _outcome(records_app.parse_v4, r.raw_model_output)}
    assert 50 < len(expected) < 500
    same = run_cli(db.parent, "records", "replay", db.name, "--target", f"{APP}:parse_v3", "--as-version", "v3", "-q")
    assert same.code == 0, same
    assert "recorded with v3, replayed with v3: 0 changed" in same.stdout
    changed = run_cli(db.parent, "records", "replay", db.name, "--target", f"{APP}:parse_v4", "--as-version", "v4",
                      "--report", "replay.json", "--junit", "replay.xml", "-q")
    assert changed.code == 1, changed
    report = changed.report("replay.json")
    assert {row["record_id"] for row in report["changed"]} == expected
    [version] = report["by_version"]
    assert (version["recorded_version"], version["replayed_version"], version["records"]) == ("v3", "v4", 1000)
    assert version["parse_passed"] == 1000 - len(expected) and set(version["changed"]) == expected
    assert f"recorded with v3, replayed with v4: {len(expected)} changed" in changed.stdout
    assert report["distinct_outputs"] < 1000  # identical outputs were parsed once
    assert (db.parent / "replay.xml").read_text().count("<failure") == len(expected)


def test_a_baseline_is_saved_then_compared_and_only_regressions_fail(db: Path, fuzz):
    saved = fuzz("records", "replay", db.name, "--target", f"{APP}:parse_v3", "--baseline", "base.json",
                    "-q")
    assert saved.code == 0 and "baseline saved: base.json" in saved.stdout, saved
    assert json.loads((db.parent / "base.json").read_text())["format"] == "toolfuzz-records-baseline"
    regressed = fuzz("records", "replay", db.name, "--target", f"{APP}:parse_v4", "--baseline",
                        "base.json", "--report", "r.json", "-q")
    assert regressed.code == 1, regressed
    report = json.loads((db.parent / "r.json").read_text())
    changed = {row["record_id"]: row for row in report["changed"]}
    assert set(report["baseline"]["regressed"]) == {i for i, row in changed.items() if row["baseline"] == "regressed"}
    counts = report["baseline"]["counts"]
    assert counts["same"] + counts["regressed"] + counts.get("changed", 0) == 1000
    assert counts["regressed"] and counts["same"] == 1000 - len(changed)
    # v4 reads the Python-dict outputs v3 refused: the records vouch for no calls, so that is a
    # change nobody can call right or wrong, never a regression (it was, with exit 1)
    parses = [row for row in changed.values() if row["change"] == "now parses"]
    assert parses and all(row["baseline"] == "changed" and not row["truth_known"] for row in parses)
    listed = re.findall(r"^  ([0-9a-f]{20})  ", regressed.stdout, re.M)
    assert listed and len(listed) == len(set(listed)) and "[regressed]" in regressed.stdout  # each once
    unchanged = fuzz("records", "replay", db.name, "--target", f"{APP}:parse_v3", "--baseline",
                        "base.json", "-q")
    assert unchanged.code == 0 and "1000 same" in unchanged.stdout, unchanged


def test_execution_replay_answers_tools_from_the_records(db: Path, fuzz):
    with RecordStore(db) as store:
        executed = [r for r in store.records() if r.execution_result]
    expected = set()
    for record in executed:
        with playback(record.tool_io or []):
            for entry in record.execution_result:
                try:
                    now = ("ok", json.dumps(records_app.execute_v2(entry["call"]), sort_keys=True))
                except Exception as exc:  # noqa: BLE001
                    now = ("error", error_text(exc).split(": ", 1)[0])
                then = ("ok", json.dumps(entry["result"], sort_keys=True)) if entry["status"] == "ok" else \
                    ("error", entry["error"].split(": ", 1)[0])
                if now != then:
                    expected.add(record.record_id)
    assert expected
    same = fuzz("records", "replay", db.name, "--target", f"{APP}:parse_v3", "--executor", f"{APP}:execute_v1", "-q")
    assert same.code == 0 and "100.0%" in same.stdout, same
    changed = run_cli(db.parent, "records", "replay", db.name, "--target", f"{APP}:parse_v3",
                      "--executor", f"{APP}:execute_v2", "--report", "x.json", "-q")
    assert changed.code == 1, changed
    report = changed.report("x.json")
    assert {row["record_id"] for row in report["changed"]} == expected
    assert all(row["execution_match"] is False and row["parse_match"] is True for row in report["changed"])


def test_corpus_import_turns_failing_records_into_entries_that_keep_the_record_id(db: Path, fuzz):
    first = fuzz("corpus", "import", "--records", db.name, "--corpus", "corp",
                    "--target", f"{APP}:parse_v4", "--tools", str(db.parent / "tools.json"))
    assert first.code == 2 and "tools.json" in first.output  # no such tools file: one line
    (db.parent / "tools.json").write_text(json.dumps(records_app.TOOLS))
    imported = fuzz("corpus", "import", "--records", db.name, "--corpus", "corp",
                       "--target", f"{APP}:parse_v4", "--tools", "tools.json")
    assert imported.code == 0, imported
    entries = [json.loads(p.read_text()) for p in (db.parent / "corp").glob("*.json")]
    keys = {e["verdict"]: e for e in entries}
    assert set(keys) == {"corruption", "crash"}
    assert keys["crash"]["exception"].startswith("KeyError")
    assert keys["corruption"]["title"] == "corruption: 1 call(s) returned, 2 written"
    with RecordStore(db) as store:
        for entry in entries:
            assert store.get(entry["scenario"]["record_id"]).record_id == entry["scenario"]["record_id"]
            assert len(entry["scenario"]["records"]) > 1
    again = fuzz("corpus", "import", "--records", db.name, "--corpus", "corp",
                    "--target", f"{APP}:parse_v4", "--tools", "tools.json")
    assert again.code == 0 and "2 kept" in again.stdout and len(list((db.parent / "corp").glob("*.json"))) == 2


@pytest.mark.parametrize("args, message", [
    (["records", "stats", "missing.db"], "missing.db: no such records database"),
    (["records", "list", "not-a-db.txt"], "not-a-db.txt: not an SQLite database"),
    (["records", "list", "calls.db", "--since", "yesterday"], "--since 'yesterday'"),
    (["records", "list", "calls.db", "--anomaly", "malformed_jsn"], "did you mean malformed_json"),
    (["records", "list", "calls.db", "--status", "broken"], "--status 'broken'"),
    (["records", "show", "calls.db", "ffff"], "no record with id 'ffff'"),
    (["records", "label", "calls.db", "ffff", "envelope_error"], "no record with id 'ffff'"),
    (["records", "replay", "calls.db", "--target", "nosuchmodule:parse"], "module 'nosuchmodule' not found"),
    (["records", "replay", "calls.db", "--target", "parse"], "not of the form module:callable"),
    (["records", "replay", "calls.db", "--target", f"{APP}:parse_v3", "--executor", f"{APP}:nothere"],
     "--executor 'fuzzer.targets.records_app:nothere': module 'fuzzer.targets.records_app' has no attribute"),
    (["records", "replay", "calls.db", "--target", f"{APP}:parse_v3", "--baseline", "not-a-db.txt"],
     "not a baseline file"),
    (["records", "replay", "calls.db", "--target", f"{APP}:parse_v3", "--session", "nobody"],
     "no records to replay match the filters"),
    (["corpus", "import", "--records", "missing.db", "--corpus", "c", "--target", f"{APP}:parse_v3"],
     "missing.db: no such records database"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_inputs_get_one_line_and_exit_2(db: Path, fuzz, args, message):
    (db.parent / "not-a-db.txt").write_text("hello\n" * 200)
    result = fuzz(*args)
    assert result.code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], result.output


def test_ctrl_c_mid_replay_reports_what_was_replayed_and_exits_130(db: Path):
    (db.parent / "slowparse.py").write_text(
        "import time\nfrom fuzzer.targets.records_app import parse_v3\n\n"
        "def parse(text):\n    time.sleep(0.01)\n    return parse_v3(text)\n")
    proc = subprocess.Popen(cli_command("records", "replay", db.name, "--target", "slowparse:parse",
                                        "--report", "partial.json"),
                            cwd=db.parent, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    first_progress = proc.stderr.readline()  # a chunk of outputs has been replayed
    assert "replaying" in first_progress and " executions " in first_progress, first_progress
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err
    report = json.loads((db.parent / "partial.json").read_text())
    assert report["stop_reason"] == "interrupted" and 0 < report["records"] < 1000 and report["changed"] == []


def test_replay_records_and_the_campaign_seeded_from_production(db: Path, fuzz):
    """``fuzz replay --records`` is the records replay; ``--seeds-from`` runs what models really sent
    first, so the campaign finds the planted bug the recorded outputs reach; ``--weights-from``
    draws classes as production showed them."""
    replayed = fuzz("replay", "--records", db.name, "--target", f"{APP}:parse_v4")
    assert replayed.code == 1 and "changed" in replayed.output, replayed.output
    assert fuzz("replay", "--records", db.name, "--target", f"{APP}:parse_v3").code == 0
    both = fuzz("replay", "--records", db.name, "--corpus", "c", "--target", f"{APP}:parse_v3")
    assert both.code == 2 and "one of --corpus DIR or --records DB" in both.output

    seeded = fuzz("campaign", "--tool", "get_weather", "--target", f"{APP}:parse_v4", "--seeds-from", db.name,
                  "--max-examples", "300", "--report", "seeded.json", "-q")
    report = json.loads((db.parent / "seeded.json").read_text())
    assert seeded.code == 1 and any(f["title"].startswith("corruption: 1 call(s) returned, 2 written")
                                    for f in report["failures"]), report["failures"]
    weighted = fuzz("campaign", "--tool", "get_weather", "--target", f"{APP}:parse_v3", "--weights-from", db.name,
                    "--max-examples", "2000", "--report", "weighted.json", "-q")
    plain = fuzz("campaign", "--tool", "get_weather", "--target", f"{APP}:parse_v3",
                 "--max-examples", "2000", "--report", "plain.json", "-q")
    assert weighted.code != 2 and plain.code != 2, (weighted.output, plain.output)
    shares = [json.loads((db.parent / name).read_text())["by_class"] for name in ("weighted.json", "plain.json")]
    never = "injection_payload"  # production never showed it: the floor weight
    assert shares[0].get(never, {"executions": 0})["executions"] < shares[1][never]["executions"]


def test_the_readme_manual_record_is_added_from_text_and_from_a_file(tmp_path: Path, monkeypatch):
    """``fuzz records add DB --text/--text-file --calls --parse-status``, as the README shows it."""
    from click.testing import CliRunner

    from fuzzer.cli import main
    from fuzzer.records.store import RecordStore

    monkeypatch.chdir(tmp_path)
    text = '{"name": "get_weather", "arguments": {"city": "Paris",}}'
    calls = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    (tmp_path / "t.txt").write_text(text)
    for source in (["--text", text], ["--text-file", "t.txt"]):
        result = CliRunner().invoke(main, ["records", "add", "calls.db", *source, "--calls", calls,
                                           "--parse-status", "repaired"])
        assert result.exit_code == 0, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    with RecordStore(str(tmp_path / "calls.db")) as store:
        records = list(store.records())
    assert [r.raw_model_output for r in records] == [text, text]
    assert all(r.parsed_calls == json.loads(calls) and r.parse_status == "repaired" for r in records)
