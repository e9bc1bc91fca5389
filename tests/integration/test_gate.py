"""`fuzz gate` end to end (issue 4): passes a fixed parser, blocks a new bug and a regression.

A corpus is built once per worker with the naive parser. The gate then runs against the reference
parser (which handles everything the corpus holds), against a copy of the reference with one bug the
corpus does not hold (:mod:`tests.integration.corpus_targets.buggy`), and against that bug after it
was recorded and marked fixed. JUnit and JSON reports are parsed for real.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from corpus.store import Entry

from tests.integration.corpus_targets.harness import (
    BUGGY, NAIVE, REFERENCE, env, fuzz, load, raw_sample, read_entries, read_json, run_inprocess, signature_of,
)

GATE = ("--tool", "get_weather", "--max-examples", "3000", "--seed", "1")


@pytest.fixture(scope="module")
def naive_corpus(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("naive")
    corpus = home / "corpus"
    run = fuzz("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "20000", "--seed", "1",
               "--corpus", str(corpus), "-q", cwd=home)
    assert run.returncode == 1, run.stderr
    assert len(read_entries(corpus)) >= 3
    return corpus


@pytest.fixture
def corpus(naive_corpus, tmp_path) -> Path:
    copy = tmp_path / "corpus"
    shutil.copytree(naive_corpus, copy)
    return copy


@pytest.fixture(scope="module")
def bug_signature() -> str:
    """The buggy target's one crash, computed in this process on its smallest trigger."""
    text = "<tool_call>"
    return signature_of(raw_sample(text), run_inprocess(load(BUGGY), text))


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def _junit(path: Path) -> tuple[ET.Element, dict[str, ET.Element]]:
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None and suite.tag == "testsuite"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert int(suite.get("tests")) == len(cases)
    assert int(suite.get("failures")) == sum(1 for c in cases.values() if c.find("failure") is not None)
    return suite, cases


def test_the_buggy_target_has_exactly_one_bug(tmp_path, bug_signature):
    """The premise of the gate tests: a campaign on the buggy target finds that crash and nothing else."""
    report = tmp_path / "r.json"
    run = fuzz("campaign", "--target", BUGGY, *GATE, "--report", str(report), "-q", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert [f["signature"] for f in read_json(report)["failures"]] == [bug_signature]
    assert bug_signature.startswith("crash-")


def test_gate_passes_the_reference_parser(corpus, tmp_path):
    before = _snapshot(corpus)
    junit, report = tmp_path / "gate.xml", tmp_path / "gate.json"
    run = fuzz("gate", "--corpus", str(corpus), "--target", REFERENCE, *GATE, "--junit", str(junit),
               "--report", str(report), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "gate: passed" in run.stdout
    n = len(before)
    assert f"replayed {n} corpus entries: {n} pass" in run.stdout
    suite, cases = _junit(junit)
    # every entry, and the campaign that ran and found nothing new: a passing test, not an empty suite
    assert suite.get("failures") == "0" and len(cases) == n + 1
    assert cases[REFERENCE].find("failure") is None and cases[REFERENCE].get("classname") == "toolfuzz.gate.campaign"
    data = read_json(report)
    assert data["gate"] == {"blocked": False, "new": [], "regressions": []}
    assert data["failures"] == [] and data["executions"] >= 3000 and data["seed"] == 1
    assert _snapshot(corpus) == before  # the gate reads the corpus, it does not change it


def test_gate_does_not_block_on_known_open_failures(corpus, tmp_path):
    run = fuzz("gate", "--corpus", str(corpus), "--target", NAIVE, *GATE, cwd=tmp_path)
    assert "known open failures" in run.stdout
    assert run.returncode == 0, run.stdout + run.stderr
    assert "NEW" not in run.stdout and "REGRESSION" not in run.stdout


def test_gate_blocks_a_new_bug_and_prints_how_to_reproduce_it(corpus, tmp_path, bug_signature):
    before = _snapshot(corpus)
    junit, report = tmp_path / "gate.xml", tmp_path / "gate.json"
    run = fuzz("gate", "--corpus", str(corpus), "--target", BUGGY, *GATE, "--junit", str(junit),
               "--report", str(report), cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    out = run.stdout
    assert f"NEW {bug_signature}" in out
    assert "REGRESSION" not in out
    assert "gate: BLOCKED" in out
    assert _snapshot(corpus) == before

    # The minimized input and the one-line reproduction, run for real.
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"NEW {bug_signature}"))
    minimized = lines[at + 1].strip()
    assert minimized.startswith("minimized:") and "<tool_call>" in minimized
    reproduce = lines[at + 2].strip()
    argv = shlex.split(reproduce[len("reproduce: "):])
    assert argv[:2] == [sys.executable, "-c"]  # the interpreter that ran fuzz, not a bare python
    proc = subprocess.run(argv, cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "IndexError" in proc.stderr

    # The gate's own "reproduce locally" command gives the same verdict (the gate is deterministic).
    local = next(line for line in lines if line.startswith("reproduce locally: "))
    cmd = shlex.split(local[len("reproduce locally: "):])
    assert cmd[0] == "fuzz"
    again = fuzz(*cmd[1:], cwd=tmp_path)
    assert again.returncode == 1 and f"NEW {bug_signature}" in again.stdout

    suite, cases = _junit(junit)
    assert int(suite.get("failures")) >= 1
    failing = {name: c for name, c in cases.items() if c.find("failure") is not None}
    assert any(bug_signature in name for name in failing), list(cases)
    data = read_json(report)
    assert data["gate"]["blocked"] is True and data["gate"]["new"] == [bug_signature]
    assert data["gate"]["regressions"] == []
    (finding,) = [f for f in data["failures"] if f["signature"] == bug_signature]
    assert finding["verdict"] == "crash" and "<tool_call>" in finding["minimized_input"]
    assert len(finding["minimized_input"]) <= len(finding["input"])


def test_gate_blocks_a_fixed_entry_that_regresses(corpus, tmp_path, bug_signature):
    # Record the bug in the corpus, fix it (reference), mark it fixed, then bring the bug back.
    add = fuzz("campaign", "--target", BUGGY, *GATE, "--corpus", str(corpus), "-q", cwd=tmp_path)
    assert add.returncode == 1, add.stderr
    entries = read_entries(corpus)
    assert bug_signature in {e.signature for e in entries.values()}

    fixed = fuzz("replay", "--corpus", str(corpus), "--target", REFERENCE, "--update", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert any(line.startswith("updated ") and line.endswith(": open -> fixed") for line in fixed.stdout.splitlines())
    assert {e.status for e in read_entries(corpus).values()} == {"fixed"}

    junit, report = tmp_path / "gate.xml", tmp_path / "gate.json"
    run = fuzz("gate", "--corpus", str(corpus), "--target", BUGGY, *GATE, "--junit", str(junit),
               "--report", str(report), cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"REGRESSION {bug_signature}" in run.stdout
    assert f"NEW {bug_signature}" not in run.stdout
    suite, cases = _junit(junit)
    failures = [c.find("failure") for c in cases.values() if c.find("failure") is not None]
    assert failures and all("regression" in (f.get("message") or "") for f in failures)
    assert any(bug_signature in name for name, c in cases.items() if c.find("failure") is not None)
    data = read_json(report)
    assert data["gate"]["blocked"] is True and bug_signature in data["gate"]["regressions"]
    assert data["gate"]["new"] == []

    # A campaign with the corpus that finds it again says REGRESSION and keeps it fixed: had it
    # re-opened the entry, the gate would call the regression a known open failure and pass.
    again = fuzz("campaign", "--target", BUGGY, *GATE, "--corpus", str(corpus), "-q", cwd=tmp_path)
    assert again.returncode == 1 and f"REGRESSION {bug_signature}" in again.stdout, again.stdout
    assert {e.status for e in read_entries(corpus).values()} == {"fixed"}
    still = fuzz("gate", "--corpus", str(corpus), "--target", BUGGY, *GATE, cwd=tmp_path)
    assert still.returncode == 1 and f"REGRESSION {bug_signature}" in still.stdout, still.stdout
    # Ignoring it is the user's choice, and said out loud: never a silent pass over a regression.
    ignored = fuzz("gate", "--corpus", str(corpus), "--target", BUGGY, *GATE, "--ignore", bug_signature, cwd=tmp_path)
    assert ignored.returncode == 0, ignored.stdout + ignored.stderr
    assert f"IGNORED REGRESSION {bug_signature}" in ignored.stdout, ignored.stdout

    # Re-opening it (replay --update on the buggy target) makes it a known open failure again.
    reopened = fuzz("replay", "--corpus", str(corpus), "--target", BUGGY, "--update", cwd=tmp_path)
    assert reopened.returncode == 1
    statuses = {e.signature: e.status for e in read_entries(corpus).values()}
    assert statuses[bug_signature] == "open"
    assert sum(s == "fixed" for s in statuses.values()) == len(statuses) - 1
    calm = fuzz("gate", "--corpus", str(corpus), "--target", BUGGY, *GATE, cwd=tmp_path)
    assert calm.returncode == 0, calm.stdout + calm.stderr


def test_gate_on_a_missing_corpus_directory_is_a_usage_error(tmp_path):
    """Like replay: a typo in --corpus must not silently gate against an empty corpus."""
    run = fuzz("gate", "--corpus", str(tmp_path / "none"), "--target", BUGGY, *GATE, cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.startswith("Error: --corpus:") and "none" in run.stderr
    assert not (tmp_path / "none").exists()


def test_gate_on_an_empty_corpus_runs_the_campaign_alone(tmp_path, bug_signature):
    (tmp_path / "empty").mkdir()
    run = fuzz("gate", "--corpus", str(tmp_path / "empty"), "--target", BUGGY, *GATE, cwd=tmp_path)
    assert run.returncode == 1 and f"NEW {bug_signature}" in run.stdout


def test_gate_usage_errors_exit_2(tmp_path):
    bad_tool = fuzz("gate", "--corpus", str(tmp_path), "--target", REFERENCE, "--tool", "no_such_tool", cwd=tmp_path)
    assert bad_tool.returncode == 2 and "Traceback" not in bad_tool.stderr
    bad_target = fuzz("gate", "--corpus", str(tmp_path), "--target", "no_such_module:parse", "--tool",
                      "get_weather", "--max-examples", "10", cwd=tmp_path)
    assert bad_target.returncode == 2 and "no_such_module" in bad_target.stderr
    assert "Traceback" not in bad_target.stderr


def test_gate_blocks_a_fixed_entry_that_fails_again_with_another_known_signature(tmp_path, bug_signature):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    known = Entry(text="<tool_call>", signature=bug_signature, verdict="crash", truth_known=False, target=BUGGY)
    # Fixed long ago under an older signature; the bug that now breaks it is a known open one.
    fixed = Entry(text="<tool_call>{", signature="crash-0123456789ab", verdict="crash", truth_known=False,
                  title="crash: IndexError in old_parser.py:parse", status="fixed", target=BUGGY)
    for entry in (known, fixed):
        (corpus / entry.file_name).write_text(entry.dumps(), encoding="ascii")
    run = fuzz("gate", "--corpus", str(corpus), "--target", BUGGY, *GATE, cwd=tmp_path)
    assert "NEW" not in run.stdout  # the crash itself is known
    assert run.returncode == 1, run.stdout  # but a fixed entry fails again


def test_cmin_merge_of_a_stale_corpus_keeps_fixed_entries_fixed(tmp_path, bug_signature):
    ours, stale = tmp_path / "ours", tmp_path / "stale"
    ours.mkdir()
    stale.mkdir()
    fixed = Entry(text="<tool_call>", signature=bug_signature, verdict="crash", truth_known=False, target=BUGGY,
                  status="fixed", first_seen="2026-01-01T00:00:00Z", last_seen="2026-06-01T00:00:00Z")
    old = Entry(text="<tool_call> x", signature=bug_signature, verdict="crash", truth_known=False, target=BUGGY,
                status="open", first_seen="2026-01-01T00:00:00Z", last_seen="2026-01-01T00:00:00Z")
    (ours / fixed.file_name).write_text(fixed.dumps(), encoding="ascii")
    (stale / old.file_name).write_text(old.dumps(), encoding="ascii")
    run = fuzz("corpus", "cmin", "--corpus", str(ours), "--merge", str(stale), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (entry,) = read_entries(ours).values()
    assert entry.text == "<tool_call>"
    assert entry.status == "fixed"
    gate = fuzz("gate", "--corpus", str(ours), "--target", BUGGY, *GATE, cwd=tmp_path)
    assert gate.returncode == 1 and f"REGRESSION {bug_signature}" in gate.stdout


def test_gate_reproduce_command_keeps_every_option_that_changes_the_run(tmp_path, bug_signature):
    (tmp_path / "c").mkdir()
    run = fuzz("gate", "--corpus", str(tmp_path / "c"), "--target", BUGGY, "--format", "hermes", "--timeout", "1.5",
               *GATE, cwd=tmp_path)
    assert run.returncode == 1 and f"NEW {bug_signature}" in run.stdout
    local = next(line for line in run.stdout.splitlines() if line.startswith("reproduce locally: "))
    cmd = shlex.split(local[len("reproduce locally: "):])
    assert cmd[cmd.index("--format") + 1] == "hermes"
    assert cmd[cmd.index("--timeout") + 1] == "1.5"


def test_gate_junit_is_valid_xml_when_inputs_hold_control_characters(tmp_path, bug_signature):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    entry = Entry(text="<tool_call>\x01\x00\x1b[0m", signature=bug_signature, verdict="crash", truth_known=False,
                  target=BUGGY, status="fixed")
    (corpus / entry.file_name).write_text(entry.dumps(), encoding="ascii")
    junit = tmp_path / "gate.xml"
    run = fuzz("gate", "--corpus", str(corpus), "--target", BUGGY, *GATE, "--junit", str(junit), cwd=tmp_path)
    assert run.returncode == 1 and f"REGRESSION {bug_signature}" in run.stdout
    suite, cases = _junit(junit)
    assert int(suite.get("failures")) >= 1


def test_a_corpus_file_with_a_merge_conflict_blocks_the_gate_naming_it(corpus, tmp_path):
    """The gate that passes the reference parser blocks once one of its files cannot be read."""
    conflicted = tmp_path / "conflicted"
    shutil.copytree(corpus, conflicted)
    victim = sorted(conflicted.glob("*.json"))[0]
    victim.write_text("<<<<<<< HEAD\n" + victim.read_text() + "=======\n>>>>>>> branch\n")
    junit = tmp_path / "gate.xml"
    run = fuzz("gate", "--corpus", str(conflicted), "--target", REFERENCE, *GATE, "--junit", str(junit), cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "gate: BLOCKED" in run.stdout
    assert any(line.startswith("UNREADABLE corpus file") and victim.name in line for line in run.stdout.splitlines())
    suite, cases = _junit(junit)
    assert suite.get("failures") == "1"


def test_replay_names_a_corpus_file_it_cannot_read_and_fails(corpus, tmp_path):
    """As the gate does: a file that cannot be read is a regression test that no longer runs."""
    broken = tmp_path / "broken"
    shutil.copytree(corpus, broken)
    (broken / "zz-bad.json").write_text('{"broken')
    junit = tmp_path / "replay.xml"
    run = fuzz("replay", "--corpus", str(broken), "--target", REFERENCE, "--junit", str(junit), cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert any(line.startswith("UNREADABLE corpus file") and "zz-bad.json" in line for line in run.stdout.splitlines())
    suite, cases = _junit(junit)
    assert suite.get("failures") == "1" and any("zz-bad.json" in name for name in cases)


STRICT_REJECTIONS = '''
import json


class ParseError(Exception):
    pass


def parse(text):
    """Reads a bare JSON call and never validates it; rejects everything else with its own type."""
    try:
        data = json.loads(text)
    except ValueError:
        raise ParseError("not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not isinstance(data.get("arguments"), dict):
        raise ParseError("not a call")
    return [data]
'''


def test_the_command_that_stores_a_blocked_gate_s_findings_judges_as_the_gate_does(tmp_path):
    """The gate prints how to accept its new failures as known. That command must judge as the
    gate did (level, clean rejections, timeout, formats): run as printed, the gate passes after it
    (a campaign at parse level filed the parser's own rejections as crashes, and the gate stayed
    blocked)."""
    (tmp_path / "strict_parser.py").write_text(STRICT_REJECTIONS)
    (tmp_path / "corp").mkdir()
    gate = ("gate", "--corpus", "corp", "--target", "strict_parser:parse", "--reject-on", "strict_parser:ParseError",
            "--level", "validate", "--tool", "get_weather", "--format", "json", "--seed", "2",
            "--max-examples", "1500", "--timeout", "3")
    blocked = fuzz(*gate, cwd=tmp_path)
    assert blocked.returncode == 1 and "gate: BLOCKED" in blocked.stdout, blocked.stdout + blocked.stderr
    store = next(line for line in blocked.stdout.splitlines() if line.startswith("after fixing"))
    argv = shlex.split(store.split(": ", 1)[1])
    assert argv[:2] == ["fuzz", "campaign"]
    for flag in ("--level", "--reject-on", "--timeout", "--format", "--tool"):
        assert flag in argv, argv
    stored = fuzz(*argv[1:], cwd=tmp_path)
    assert stored.returncode == 1, stored.stdout + stored.stderr  # the missed anomalies, stored
    # its rejections are clean, as in the gate: never a crash (a valid output with prose it
    # rejects is a false_reject, which names the exception too)
    assert not re.search(r"crash: \S*ParseError", stored.stdout), stored.stdout
    again = fuzz(*gate, cwd=tmp_path)
    assert again.returncode == 0 and "gate: passed" in again.stdout, again.stdout + again.stderr


TAGGED = '''
import json
import re


def parse(text):
    match = re.search(r"<tool_call>(.*?)</tool_call>", text, re.S)
    if match is None:
        raise ValueError("no tool call")
    data = json.loads(match.group(1))
    return [{"name": data["name"], "arguments": data["arguments"]}]
'''
#: The same parser after a refactor that changes nothing it does: its body moved into a helper.
TAGGED_REFACTORED = '''
import json
import re


def _call(data):
    return {"name": data["name"], "arguments": data["arguments"]}


def _extract(text):
    match = re.search(r"<tool_call>(.*?)</tool_call>", text, re.S)
    if match is None:
        raise ValueError("no tool call")
    return [_call(json.loads(match.group(1)))]


def parse(text):
    return _extract(text)
'''


def test_a_refactor_that_moves_a_known_bug_does_not_block_the_gate_and_a_new_bug_still_does(tmp_path):
    """A crash's signature names where it is raised: after a refactor the corpus entry's own input
    fails the same way from another function. The gate calls that moved (a known bug), and the
    campaign's findings under the moved signature known; a new bug in the refactored code blocks."""
    module = tmp_path / "tagged.py"
    module.write_text(TAGGED)
    common = ("--target", "tagged:parse", "--tool", "get_weather", "--format", "hermes", "--seed", "1",
              "--max-examples", "2000")
    stored = fuzz("campaign", *common, "--corpus", "corp", "-q", cwd=tmp_path)
    assert stored.returncode == 1 and "crash" in stored.stdout, stored.stdout + stored.stderr
    passing = fuzz("gate", "--corpus", "corp", *common, "--markdown", "pass.md", "--html", "pass.html", cwd=tmp_path)
    assert passing.returncode == 0  # nothing new yet: the known findings are no failures in any report
    markdown = (tmp_path / "pass.md").read_text(encoding="utf-8")
    assert "failures found" not in markdown and "✅ no new failure" in markdown, markdown[:300]
    assert 'class="card bad"' not in (tmp_path / "pass.html").read_text(encoding="utf-8")

    module.write_text(TAGGED_REFACTORED)
    moved = fuzz("gate", "--corpus", "corp", *common, "--report", "g.json", cwd=tmp_path)
    assert moved.returncode == 0 and "gate: passed" in moved.stdout, moved.stdout + moved.stderr
    assert "MOVED crash-" in moved.stdout and "NEW" not in moved.stdout
    report = read_json(tmp_path / "g.json")
    assert report["moved"] and not report["new"]

    module.write_text(TAGGED_REFACTORED.replace('    return {"name": data["name"], "arguments": data["arguments"]}',
                                                '    if data["arguments"] == {}:\n        return [][0]\n'
                                                '    return {"name": data["name"], "arguments": data["arguments"]}'))
    new = fuzz("gate", "--corpus", "corp", *common, cwd=tmp_path)
    assert new.returncode == 1 and "gate: BLOCKED" in new.stdout, new.stdout + new.stderr
    assert "NEW crash-" in new.stdout and "IndexError" in new.stdout


def test_a_gate_with_a_budget_runs_both_its_campaigns_until_their_share_ends(tmp_path):
    """--budget bounds the gate's short campaigns together (how it is shared:
    tests/unit/test_gate_budget.py): a parser's and an executor's campaign each run, and each
    stops for its budget."""
    (tmp_path / "corp").mkdir()
    run = fuzz("gate", "--corpus", "corp", "--target", "fuzzer.targets.reference:parse", "--tool", "get_weather",
               "--executor", "fuzzer.targets.executor_robust:make_executor", "--budget", "8", "--report", "g.json",
               cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    report = read_json(tmp_path / "g.json")
    assert len(report["campaigns"]) == 2 and all(c["executions"] > 0 for c in report["campaigns"])
    assert [c["stop_reason"] for c in report["campaigns"]] == ["budget", "budget"], report["campaigns"]


def test_a_gate_that_could_replay_no_corpus_entry_blocks(tmp_path):
    """A corpus of parser entries gated with an executor only: not one regression test ran, which
    is no pass (replay exits 1 on it too); the gate says why and blocks."""
    from corpus.store import CorpusStore

    store = CorpusStore(tmp_path / "corp")
    store.put(Entry(text="{}", signature="crash-000000000001", verdict="crash", tool="get_weather", status="fixed"))
    run = fuzz("gate", "--corpus", "corp", "--executor", "fuzzer.targets.executor_robust:make_executor",
               "--budget", "2", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "no corpus entry could be replayed" in run.stdout + run.stderr
