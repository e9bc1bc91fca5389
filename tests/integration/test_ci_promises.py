"""Issue 8: the promises a CI reads — exit codes, gate decisions, budgets, counts, reports.

One test (or a few) per numbered defect of the issue; each failed on the commit before the
pipeline landed. Campaigns run the real CLI in fresh processes (``cli``); usage errors run it in
this process (``runner``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from corpus.store import CorpusStore, Entry
from tests.conftest import ROOT, cli_env

CI = "tests.integration.targets.ci:"
NAIVE = "fuzzer.targets.naive:parse"
REFERENCE = "fuzzer.targets.reference:parse"


def errors(result) -> list[str]:
    text = getattr(result, "stderr", None)
    text = text if text is not None else result.output
    return [line for line in text.splitlines() if line.startswith("Error:")]


# -- 1. nothing tested is never a pass ----------------------------------------------------------


@pytest.mark.parametrize("target", ["rejects_everything", "no_call_ever"])
def test_1_a_campaign_that_tests_nothing_exits_2_naming_the_formats_and_the_rejection(cli, target):
    result = cli("campaign", "--tool", "get_weather", "--target", CI + target, "--budget", "5", "--report", "r.json")
    assert result.code == 2, result
    (line,) = errors(result)
    assert "no supported format" in line and "hermes" in line and "json" in line
    if target == "rejects_everything":
        assert "this parser accepts nothing" in line  # the first rejection message
    assert "Traceback" not in result.stderr
    report = result.report()
    assert report["problem"] and report["stop_reason"] == "nothing tested" and report["failures"] == []


def test_1_gate_and_replay_on_a_parser_that_accepts_nothing_exit_1(cli, tmp_path):
    made = cli("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "3000", "--corpus", "c", "-q")
    assert made.code == 1, made
    gate = cli("gate", "--corpus", "c", "--target", CI + "rejects_everything", "--tool", "get_weather",
               "--max-examples", "500", "--junit", "j.xml")
    assert gate.code == 1, gate
    assert "gate: BLOCKED" in gate.stdout and "NOTHING TESTED" in gate.stdout
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert int(suite.get("failures")) >= 1
    before = {p.name: p.read_text() for p in (tmp_path / "c").iterdir()}
    replay = cli("replay", "--corpus", "c", "--target", CI + "rejects_everything", "--update")
    assert replay.code == 1, replay
    assert "rejects" in replay.stderr
    # nothing was marked fixed against a parser that tests nothing
    assert {p.name: p.read_text() for p in (tmp_path / "c").iterdir()} == before


def test_1_replay_of_an_empty_corpus_is_not_an_all_clear(cli, tmp_path):
    """Nothing to replay is a wrong --corpus (exit 2, as a campaign that can test nothing), and so
    is a corpus whose only file cannot be read: nothing could be replayed (exit 2, naming the file)."""
    (tmp_path / "empty").mkdir()
    result = cli("replay", "--corpus", "empty", "--target", REFERENCE)
    assert result.code == 2 and "nothing to replay" in result.stderr, result
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "crash-0123456789ab.json").write_text("{not json", encoding="utf-8")
    broken = cli("replay", "--corpus", "broken", "--target", REFERENCE)
    assert broken.code == 2 and "crash-0123456789ab.json" in broken.stderr, broken


# -- 2. --target is required -------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    ["gate", "--corpus", "."], ["replay", "--corpus", "."], ["campaign", "--tool", "get_weather"],
    ["minimize", "sample.txt"], ["corpus", "add", "--corpus", ".", "sample.txt"],
    ["diff", "--new", REFERENCE], ["diff", "--old", REFERENCE],
])
def test_2_every_command_that_runs_a_target_requires_it(runner, tmp_path, command):
    (tmp_path / "sample.txt").write_text("{}")
    result = runner(*command)
    assert result.code == 2, result
    (line,) = errors(result)
    assert "Missing option" in line and ("--target" in line or "--old" in line or "--new" in line)


# -- 3. rejection signatures, and the gate blocking a new rejection bug --------------------------


PARSER_V1 = """
from fuzzer.targets.reference import parse as _reference


def _quotes(text):
    if text.lstrip().startswith("<tool_call>") and "'" in text:
        raise ValueError(f"unbalanced quote at offset {text.index(chr(39))}")


def _compact(text):
    pass


def parse(text):
    _quotes(text)
    _compact(text)
    return _reference(text)
"""
#: The next version of the same file: also rejects hermes JSON written without a space after ':'.
PARSER_V2 = PARSER_V1.replace("""def _compact(text):
    pass""", """def _compact(text):
    if text.lstrip().startswith("<tool_call>") and '":' in text and '": ' not in text:
        raise ValueError("compact JSON is not supported")""")


def test_3_a_new_rejection_bug_behind_an_open_false_reject_of_the_same_format_is_blocked(cli, tmp_path):
    common = ("--target", "myparser:parse", "--tool", "get_weather", "--format", "hermes", "--seed", "2",
              "--max-examples", "4000")
    (tmp_path / "myparser.py").write_text(PARSER_V1)
    made = cli("campaign", *common, "--corpus", "c", "--report", "a.json", "-q")
    assert made.code == 1, made
    old = [f for f in made.report("a.json")["failures"] if f["verdict"] == "false_reject"]
    assert len(old) == 1 and "'" in old[0]["minimized_input"]
    assert cli("gate", "--corpus", "c", *common).code == 0  # the same version: known, not blocking

    (tmp_path / "myparser.py").write_text(PARSER_V2)
    gate = cli("gate", "--corpus", "c", *common, "--report", "g.json")
    assert gate.code == 1, gate
    new = gate.report("g.json")["gate"]["new"]
    assert new and old[0]["signature"] not in new
    assert any(line.startswith(f"NEW {new[0]}") for line in gate.stdout.splitlines())
    # the campaign never replaces the apostrophe entry with an input of the other root cause
    again = cli("campaign", *common, "--corpus", "c", "-q")
    assert again.code == 1
    entries = {e.signature: e for _, e in CorpusStore(tmp_path / "c").entries()}
    assert "'" in entries[old[0]["signature"]].text and len(entries) >= 2


# -- 4. --budget is a limit ----------------------------------------------------------------------


def _stopped_by_the_budget(report: dict) -> None:
    """The budget ended the run, and the report says so (how long that took on a loaded machine is
    the benchmarks' business, not a test's)."""
    assert report["stop_reason"] == "budget", report["stop_reason"]


def test_4_budget_holds_with_many_findings_and_marks_unshrunk_ones(cli, tmp_path):
    result = cli("campaign", "--tool", "get_weather", "--target", CI + "digits", "--budget", "5",
                 "--report", "r.json", "--corpus", "c", "-q")
    assert result.code == 1, result
    report = result.report()
    assert len(report["failures"]) >= 10
    _stopped_by_the_budget(report)
    unshrunk = [f for f in report["failures"] if not f["minimized"]]
    for f in unshrunk:  # found too late to minimize, or even to confirm first
        assert re.search(r"\bnot (confirmed or )?minimized\b", f["note"]), f["note"]
    entries = {e.signature: e for _, e in CorpusStore(tmp_path / "c").entries()}
    for f in report["failures"]:
        assert entries[f["signature"]].minimized == f["minimized"]
    labels = [line.split()[0] for line in result.stdout.splitlines() if line.startswith(("    minimized:", "    input:"))]
    assert labels.count("input:") == len(unshrunk)


def test_4_budget_holds_on_a_target_that_always_hangs(cli):
    result = cli("campaign", "--tool", "get_weather", "--target", "tests.integration.targets.torture:hang_always",
                 "--budget", "4", "--timeout", "0.5", "--report", "r.json", "-q")
    assert result.code == 1, result
    _stopped_by_the_budget(result.report())
    assert {f["verdict"] for f in result.report()["failures"]} == {"hang"}


# -- 5. cmin keeps fixed entries fixed and never drops what it cannot judge -----------------------


def test_5_cmin_merge_keeps_a_fix_made_after_the_copy(cli, tmp_path):
    made = cli("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "3000", "--corpus", "a", "-q")
    assert made.code == 1
    subprocess.run(["cp", "-r", str(tmp_path / "a"), str(tmp_path / "b")], check=True)
    fixed = cli("replay", "--corpus", "a", "--target", REFERENCE, "--update")
    assert fixed.code == 0, fixed
    merged = cli("corpus", "cmin", "--corpus", "a", "--merge", "b")
    assert merged.code == 0, merged
    assert {e.status for _, e in CorpusStore(tmp_path / "a").entries()} == {"fixed"}


def test_5_entries_whose_tool_is_missing_are_reported_never_deleted(cli, tmp_path):
    made = cli("campaign", "--tool", "get_weather", "--target", "fuzzer.targets.naive:parse", "--level", "validate",
               "--max-examples", "3000", "--corpus", "c", "-q")
    assert made.code == 1
    (tmp_path / "other.json").write_text(json.dumps({"lookup": {"type": "object", "properties": {"q": {"type": "string"}}}}))
    before = sorted(p.name for p in (tmp_path / "c").iterdir())
    replay = cli("replay", "--corpus", "c", "--target", "fuzzer.targets.reference:parse_validated", "--tools",
                 "other.json", "--report", "r.json")
    statuses = {r["signature"]: r["status"] for r in replay.report()["replayed"]}
    validate_level = [e.signature for _, e in CorpusStore(tmp_path / "c").entries() if e.level == "validate"]
    assert validate_level and all(statuses[s] == "unjudged" for s in validate_level), statuses
    assert "not in the registry" in replay.stdout
    cmin = cli("corpus", "cmin", "--corpus", "c", "--target", REFERENCE, "--tools", "other.json")
    assert cmin.code == 0, cmin
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == before


# -- 6. malformed and deep inputs are one line, not a traceback -----------------------------------


def _deep(n: int) -> str:
    return "[" * n + "]" * n


@pytest.mark.parametrize("name, content", [
    ("deep.json", '{"t": {"type": "object", "properties": {"a": ' + "{\"items\": " * 5000 + "{}" + "}" * 5000 + "}}}"),
    ("deep.yaml", "t:\n  type: object\n  properties:\n    a: " + _deep(5000) + "\n"),
])
def test_6_deep_tools_files_are_one_line(runner, tmp_path, name, content):
    (tmp_path / name).write_text(content)
    result = runner("tools", "--tools", name)
    assert result.code == 2, result
    (line,) = errors(result)
    assert name in line


def test_6_deep_jsonl_for_corpus_add_is_one_line(runner, tmp_path):
    (tmp_path / "deep.jsonl").write_text('{"text": ' + _deep(5000) + "}\n")
    result = runner("corpus", "add", "--corpus", "c", "--target", REFERENCE, "deep.jsonl")
    assert result.code == 2, result
    (line,) = errors(result)
    assert "deep.jsonl:1" in line and "deeply" in line


def test_6_an_entry_with_a_non_integer_choice_is_skipped_with_a_warning(cli, tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    good = Entry(text="{}", signature="crash-000000000001", verdict="crash", truth_known=False)
    (corpus / good.file_name).write_text(good.dumps())
    bad = json.loads(Entry(text="{", signature="crash-000000000002", verdict="crash", tool="get_weather",
                           recipe={"tool": "get_weather", "format": "json", "choices": [1]}).dumps())
    bad["recipe"]["choices"] = [1, "two"]
    (corpus / "bad.json").write_text(json.dumps(bad))
    for command in (["replay"], ["gate", "--max-examples", "300", "--tool", "get_weather"],
                    ["campaign", "--max-examples", "300", "--tool", "get_weather"]):
        result = cli(*command, "--corpus", "c", "--target", NAIVE)
        assert "Traceback" not in result.stderr and result.code in (0, 1), (command, result)
        assert any("bad.json" in line and "choices" in line for line in result.stderr.splitlines()), (command, result)
    cmin = cli("corpus", "cmin", "--corpus", "c")
    assert cmin.code == 0 and "bad.json" in cmin.stderr and (corpus / "bad.json").exists()
    minimize = cli("minimize", str(corpus / "bad.json"), "--target", NAIVE)
    assert minimize.code == 2 and len(errors(minimize)) == 1 and "choices" in errors(minimize)[0]


# -- 7. numbers that add up ----------------------------------------------------------------------


def test_7_counts_add_up_and_max_examples_is_exact(cli):
    result = cli("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "3000", "--seed", "4",
                 "--report", "r.json", "--junit", "j.xml", "-q")
    report = result.report()
    assert report["executions"] == 3000
    assert sum(c["executions"] for c in report["by_class"].values()) == report["executions"]
    suite = ET.parse(result.cwd / "j.xml").getroot()
    assert int(suite.get("failures")) == len(report["failures"]) == report["counts"]["failed"]
    assert f"{len(report['failures'])} distinct failure(s)" in result.stdout


def test_7_gate_counts_are_the_same_in_console_json_and_junit(cli, tmp_path):
    made = cli("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "4000", "--corpus", "c", "-q")
    assert made.code == 1
    fixed = cli("replay", "--corpus", "c", "--target", REFERENCE, "--update")
    assert fixed.code == 0
    gate = cli("gate", "--corpus", "c", "--target", NAIVE, "--tool", "get_weather", "--max-examples", "2000",
               "--report", "g.json", "--junit", "g.xml")
    assert gate.code == 1
    report = gate.report("g.json")
    entries = len(list((tmp_path / "c").glob("*.json")))
    first = gate.stdout.splitlines()[0]
    numbers = [int(w) for w in first.replace(",", "").split() if w.isdigit()]
    assert numbers[0] == entries and sum(numbers[1:]) == entries, first
    suite = ET.parse(tmp_path / "g.xml").getroot()
    cases = suite.findall("testcase")
    assert len(cases) == sum(report["counts"].values())
    assert int(suite.get("failures")) == report["counts"]["failed"]
    assert int(suite.get("skipped")) == report["counts"]["skipped"]
    regressions = set(report["gate"]["regressions"])
    for case in cases:
        if case.get("name").split()[0] in regressions:
            assert case.find("failure") is not None  # never "passing" what the console calls a regression


def test_7_elapsed_includes_worker_start_up(cli):
    result = cli("campaign", "--tool", "get_weather", "--target", "tests.integration.targets.slow_import:parse",
                 "--max-examples", "500", "--report", "r.json", "-q")
    assert result.code == 0, result
    report = result.report()
    assert report["setup_s"] >= 1.5 and report["elapsed_s"] >= report["setup_s"]


# -- 8. finding text describes the input shown ----------------------------------------------------


def test_8_titles_reasons_and_exceptions_describe_the_minimized_input(cli):
    from fuzzer.harnesses.parser.outcome import describe_outcome
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation import WorkerPool
    from fuzzer.harnesses.parser.oracle import Oracle
    from strategies._internal.build import replay_recipe
    from strategies._internal.tools import load_registry

    result = cli("campaign", "--tool", "search_flights", "--target", NAIVE, "--max-examples", "8000", "--seed", "5",
                 "--report", "r.json", "-q")
    registry = load_registry(None)
    oracle = Oracle(registry, "parse")
    checked = 0
    with WorkerPool(TargetSpec(NAIVE, cwd=str(ROOT))) as pool:
        for f in result.report()["failures"]:
            if not f["recipe"] or f["verdict"] == "nondeterminism":
                continue
            from strategies._internal.sample import Recipe

            sample = replay_recipe(Recipe.from_json(f["recipe"]), registry)
            assert sample.text == f["minimized_input"]
            outcome = pool.run([sample.text])[0]
            judgment = oracle.judge(sample, outcome)
            assert judgment.reason == f["reason"], f
            expected = oracle.signature(sample, judgment, outcome)
            if f["oracle_signature"]:  # filed by the functions it ran: the oracle's id is kept
                assert expected.id == f["oracle_signature"], f
                if " (via " in f["title"]:  # and the words of the title are this input's damage
                    from fuzzer.harnesses.parser.damage import coarse_damage

                    words = coarse_damage(judgment.key, judgment.reason)[1]
                    assert f["title"].startswith(f"{f['verdict']}: {words} (via "), f
            else:
                # a rejection keyed without its format names the formats it was seen in
                listed = ", ".join(f["formats"]) + (" outputs" if len(f["formats"]) > 1 else " output")
                assert expected.title.replace("valid output rejected", f"valid {listed} rejected", 1) == f["title"], f
                assert f["format"] in f["formats"], f
            assert describe_outcome(outcome) == f["exception"], f
            checked += 1
    assert checked >= 3


# -- 9. reproduce commands run as printed --------------------------------------------------------


def test_9_long_inputs_get_a_reproducer_that_runs_as_printed(cli, tmp_path):
    import random

    rnd = random.Random(9)
    text = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789{}") for _ in range(3000))
    (tmp_path / "long.txt").write_text(text)
    result = cli("minimize", "long.txt", "--target", CI + "crashes_on_long", "--budget", "20")
    assert result.code == 0, result
    command = next(line.split("reproduce: ", 1)[1] for line in result.stdout.splitlines() if line.startswith("reproduce: "))
    argv = shlex.split(command)
    assert argv[:4] == [sys.executable, "-m", "fuzzer", "reproduce"], command
    assert Path(argv[4]).is_file() and Path(argv[4]).parent == tmp_path / ".toolfuzz" / "reproduce"
    env = {**cli_env(), "PATH": "/usr/bin:/bin"}  # no venv on PATH
    proc = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "MemoryError: buffer too small" in proc.stdout, proc


# -- 10. contract problems and the --reject-on hint -----------------------------------------------


def test_10_a_target_returning_text_is_one_contract_problem(cli):
    result = cli("campaign", "--tool", "get_weather", "--target", CI + "returns_text", "--budget", "3")
    assert result.code == 2, result
    (line,) = errors(result)
    assert "does not return calls" in line and "str" in line


def test_10_crashes_of_the_targets_own_exception_class_print_the_reject_on_hint(cli):
    result = cli("campaign", "--tool", "get_weather", "--target", CI + "own_error", "--max-examples", "2000", "-q")
    assert result.code == 1
    hint = "--reject-on tests.integration.targets.ci:ParseError"
    assert any(line.startswith("hint: ") and hint in line for line in result.stdout.splitlines()), result


# -- 11. options every command should have -------------------------------------------------------


def test_11_campaign_junit_replay_report_and_update_statuses(cli, tmp_path):
    made = cli("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "3000", "--corpus", "c",
               "--junit", "j.xml", "-q")
    assert made.code == 1 and ET.parse(tmp_path / "j.xml").getroot().findall("testcase")
    replay = cli("replay", "--corpus", "c", "--target", REFERENCE, "--update", "--report", "r.json")
    assert replay.code == 0, replay
    report = replay.report()
    assert report["updates"] and all(u["to"] == "fixed" for u in report["updates"])
    for update in report["updates"]:
        assert f"updated {update['signature']}: open -> fixed" in replay.stdout


def test_11_usage_errors_name_the_option(runner, tmp_path):
    (tmp_path / "bin.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    add = runner("corpus", "add", "--corpus", "c", "--target", REFERENCE, "bin.txt")
    assert add.code == 2 and "binary" in errors(add)[0] and "bin.txt" in errors(add)[0]
    cmin = runner("corpus", "cmin", "--corpus", "c", "--merge", "nowhere")
    assert cmin.code == 2 and "--merge" in errors(cmin)[0]
    gate = runner("gate", "--corpus", "nowhere", "--target", REFERENCE)
    assert gate.code == 2 and "--corpus" in errors(gate)[0]


# -- 13. findings that only happen after other inputs --------------------------------------------


def test_13_a_history_dependent_finding_is_reported_with_the_inputs_it_needs(cli, tmp_path):
    result = cli("campaign", "--tool", "get_weather", "--target", CI + "checksum_cache", "--max-examples", "6000",
                 "--seed", "1", "--report", "r.json", "-q")
    assert result.code == 1, result
    failures = result.report()["failures"]
    dependent = [f for f in failures if f["history"]]
    assert dependent, failures
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation import WorkerPool

    with WorkerPool(TargetSpec(CI + "checksum_cache", cwd=str(ROOT))) as pool:
        for f in dependent:
            assert 1 <= len(f["history"]) <= 3  # reduced to the few inputs that matter
            alone = pool.run([f["minimized_input"]], fresh=True)[0]
            after = pool.run(f["history"] + [f["minimized_input"]], fresh=True)[-1]
            assert (alone.kind, alone.calls) != (after.kind, after.calls)  # alone it does nothing wrong
            argv = shlex.split(f["reproduce"])
            assert argv[:4] == [sys.executable, "-m", "fuzzer", "reproduce"]
            assert json.loads(Path(argv[4]).read_text())["history"] == f["history"]
