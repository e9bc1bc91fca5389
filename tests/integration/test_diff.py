"""`fuzz diff` end to end (issue 5): two parser versions on the same samples, honestly classified.

The report's claims are re-checked here, independently of the engine: every reported (minimized)
input is run through both parsers in this process and judged again with the oracle and the
difference's own truth, and must show the same difference. The git test builds a real repository
with two commits of a parser and compares ``git:HEAD~1`` with the working tree.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from fuzzer.harnesses.parser.findings import jsonable
from fuzzer.harnesses.parser.outcome import Outcome
from strategies._internal.sample import Sample
from tests.integration.corpus_targets.harness import (
    NAIVE, REFERENCE, fuzz, load, oracle, read_json, run_inprocess,
)

KINDS = ("same", "fixed", "regression", "changed")
DIFF = ("--tool", "get_weather", "--max-examples", "3000", "--seed", "1")


def _diff(tmp: Path, old: str, new: str, *extra: str, name: str = "d.json") -> tuple[subprocess.CompletedProcess,
                                                                                    dict]:
    report = tmp / name
    run = fuzz("diff", "--old", old, "--new", new, *extra, "--report", str(report), cwd=tmp)
    data = read_json(report)
    assert run.returncode == (1 if data["counts"]["regression"] else 0), run.stdout + run.stderr  # exit 1 iff
    return run, data


@pytest.fixture(scope="module")
def forward(tmp_path_factory):
    return _diff(tmp_path_factory.mktemp("fwd"), NAIVE, REFERENCE, *DIFF)


@pytest.fixture(scope="module")
def backward(tmp_path_factory):
    return _diff(tmp_path_factory.mktemp("bwd"), REFERENCE, NAIVE, *DIFF)


def _assert_consistent(run: subprocess.CompletedProcess, data: dict) -> None:
    """The report's numbers add up, and the exit status follows the rule (1 iff a regression)."""
    counts = data["counts"]
    assert set(counts) == set(KINDS)
    assert sum(counts.values()) == data["samples"] > 0
    for kind in KINDS:
        assert sum(row[kind] for row in data["by_class"].values()) == counts[kind]
    assert run.returncode == (1 if counts["regression"] else 0)
    differences = data["differences"]
    assert {d["kind"] for d in differences} <= {"regression", "changed"}
    assert bool(counts["regression"]) == any(d["kind"] == "regression" for d in differences)
    assert bool(counts["changed"]) == any(d["kind"] == "changed" for d in differences)
    for d in differences:
        for key in ("kind", "anomaly_class", "operator", "format", "input", "old", "new"):
            assert key in d, f"difference without {key!r}: {d}"
        for side in (d["old"], d["new"]):
            assert {"outcome", "verdict", "signature"} <= set(side)
            assert (side["verdict"] == "pass") == (side["signature"] is None)
    assert sum(d["count"] for d in differences) == counts["regression"] + counts["changed"]


def _side_now(target_ref: str, d: dict) -> dict:
    """Run ``target`` on the difference's input in this process and describe it as the report does."""
    text = d["input"]
    outcome: Outcome = run_inprocess(load(target_ref), text)
    sample = Sample(text=text, format=d["format"], anomaly_class=d["anomaly_class"], operator=d["operator"],
                    calls=d.get("truth"), tool=d.get("tool") or "", truth_known=True)
    o = oracle("parse")
    judgment = o.judge(sample, outcome)
    side = {"outcome": outcome.kind, "verdict": judgment.verdict.value,
            "signature": o.signature(sample, judgment, outcome).id if judgment.failed else None}
    if outcome.kind == "returned":
        side["calls"] = jsonable(outcome.calls)
    elif outcome.kind in ("rejected", "raised"):
        side["exception"] = outcome.exception
    return side


def _kind(old: dict, new: dict) -> str:
    old_failed, new_failed = old["verdict"] != "pass", new["verdict"] != "pass"
    if old_failed != new_failed:
        return "fixed" if old_failed else "regression"
    if old["outcome"] == new["outcome"] == "rejected":  # by what a caller sees, not where it was raised
        return "same" if (old["verdict"], old["exception"]) == (new["verdict"], new["exception"]) else "changed"
    return "same" if old == new else "changed"


def _assert_differences_reproduce(data: dict, old_ref: str, new_ref: str) -> None:
    assert data["differences"], "nothing to check: the diff found no difference"
    for d in data["differences"]:
        old, new = _side_now(old_ref, d), _side_now(new_ref, d)
        where = f"{d['kind']} on {d['anomaly_class']}/{d['operator']} in {d['format']}: {d['input'][:200]!r}"
        assert old == {k: v for k, v in d["old"].items() if k != "detail"}, where
        assert new == {k: v for k, v in d["new"].items() if k != "detail"}, where
        assert _kind(old, new) == d["kind"], where


def test_naive_to_reference_fixes_things_and_reports_honestly(forward):
    run, data = forward
    _assert_consistent(run, data)
    assert data["old"] == NAIVE and data["new"] == REFERENCE
    assert data["counts"]["fixed"] > 0
    assert data["by_class"]["valid"]["fixed"] > 0  # formats the naive parser cannot read at all
    _assert_differences_reproduce(data, NAIVE, REFERENCE)


def test_minimized_examples_are_no_larger_than_the_originals(forward, backward):
    for _run, data in (forward, backward):
        for d in data["differences"]:
            assert len(d["input"]) <= len(d["original_input"])


def test_reverse_direction_reports_regressions_and_exits_1(forward, backward):
    run, data = backward
    _assert_consistent(run, data)
    assert run.returncode == 1
    assert data["counts"]["regression"] > 0
    # The same samples in the other direction: every fix becomes a regression and vice versa.
    fwd = forward[1]["counts"]
    assert data["samples"] == forward[1]["samples"]
    assert data["counts"] == {"same": fwd["same"], "fixed": fwd["regression"], "regression": fwd["fixed"],
                              "changed": fwd["changed"]}
    for d in data["differences"]:
        if d["kind"] == "regression":
            assert d["old"]["verdict"] == "pass" and d["new"]["verdict"] != "pass"
    assert "REGRESSION" in run.stdout
    _assert_differences_reproduce(data, REFERENCE, NAIVE)


def test_a_parser_against_itself_is_all_same(tmp_path):
    run, data = _diff(tmp_path, NAIVE, NAIVE, "--tool", "get_weather", "--max-examples", "1000", "--seed", "2")
    assert run.returncode == 0
    assert data["counts"]["same"] == data["samples"] > 0 and data["differences"] == []


def test_diff_runs_corpus_entries_first(tmp_path):
    corpus = tmp_path / "corpus"
    text = tmp_path / "t.txt"
    text.write_text('{"tool": "get_weather"}', encoding="utf-8")
    add = fuzz("corpus", "add", str(text), "--corpus", str(corpus), "--target", NAIVE, cwd=tmp_path)
    assert add.returncode == 0, add.stderr
    run, data = _diff(tmp_path, NAIVE, REFERENCE, "--corpus", str(corpus), "--tool", "get_weather",
                      "--max-examples", "50", "--seed", "1")
    assert "1 corpus entries" in run.stderr
    assert data["samples"] >= 51
    assert data["by_class"]["valid"]["fixed"] >= 1  # the corpus crash: the reference rejects it cleanly


# ---------------------------------------------------------------------------------------------------
# git:REF targets


PARSER_V1 = textwrap.dedent('''
    """A strict parser for bare JSON tool calls (an object or a list of objects)."""
    import json


    def parse(text):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"not JSON: {exc}")
        calls = data if isinstance(data, list) else [data]
        out = []
        for call in calls:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str) \\
                    or not isinstance(call.get("arguments"), dict):
                raise ValueError("not a tool call")
            out.append({"name": call["name"], "arguments": call["arguments"]})
        return out
''')

# Version 2 "simplifies" the loop and only keeps the first call: a regression on every
# multi-call output.
PARSER_V2 = PARSER_V1.replace("    return out\n", "    return out[:1]  # one call at a time\n")


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                           "-c", "commit.gpgsign=false", *args], cwd=repo, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("repo")
    _git(repo, "init", "-q")
    (repo / "myparser.py").write_text(PARSER_V1, encoding="utf-8")
    _git(repo, "add", "myparser.py")
    _git(repo, "commit", "-q", "-m", "parser v1")
    (repo / "myparser.py").write_text(PARSER_V2, encoding="utf-8")
    _git(repo, "commit", "-q", "-am", "parser v2: simpler")
    assert PARSER_V1 != PARSER_V2
    return repo


def test_git_ref_against_working_tree_reports_the_regression(repo):
    status_before = _git(repo, "status", "--porcelain")
    worktrees_before = _git(repo, "worktree", "list")
    report = repo.parent / f"{repo.name}-diff.json"
    run = fuzz("diff", "--old", "git:HEAD~1:myparser:parse", "--new", "myparser:parse", "--tool", "get_weather",
               "--max-examples", "1500", "--seed", "1", "--report", str(report), cwd=repo)
    assert run.returncode == 1, run.stdout + run.stderr
    data = read_json(report)
    _assert_consistent(run, data)
    assert data["counts"]["regression"] > 0 and data["counts"]["fixed"] == 0
    regressions = [d for d in data["differences"] if d["kind"] == "regression"]
    for d in regressions:  # v1 returned every call; v2 dropped all but the first
        assert d["old"]["verdict"] == "pass" and d["new"]["verdict"] == "corruption"
        assert len(d["new"]["calls"]) == 1 < len(d["old"]["calls"])
    # The temporary worktree is gone and the repository is as it was.
    assert _git(repo, "worktree", "list") == worktrees_before
    assert _git(repo, "status", "--porcelain") == status_before


def test_git_ref_unknown_ref_is_one_line_exit_2(repo):
    run = fuzz("diff", "--old", "git:nosuchref:myparser:parse", "--new", "myparser:parse", "--tool", "get_weather",
               "--max-examples", "10", cwd=repo)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    message = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(message) == 1 and "nosuchref" in message[0]


def test_git_ref_missing_module_is_one_line_exit_2(repo):
    run = fuzz("diff", "--old", "git:HEAD~1:missing_module:parse", "--new", "myparser:parse", "--tool",
               "get_weather", "--max-examples", "10", cwd=repo)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    message = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(message) == 1 and "missing_module" in message[0] and "HEAD~1" in message[0]
    assert _git(repo, "worktree", "list").count("\n") == 1  # no worktree left behind


def test_git_ref_outside_a_repository_is_exit_2(tmp_path):
    (tmp_path / "myparser.py").write_text(PARSER_V1, encoding="utf-8")
    run = fuzz("diff", "--old", "git:HEAD:myparser:parse", "--new", "myparser:parse", "--tool", "get_weather",
               "--max-examples", "10", cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr


def test_malformed_git_target_is_exit_2(repo):
    run = fuzz("diff", "--old", "git:HEAD~1", "--new", "myparser:parse", "--max-examples", "10", cwd=repo)
    assert run.returncode == 2 and "git:REF:module:callable" in run.stderr


def test_a_budgeted_diff_leaves_time_to_minimize_its_examples(tmp_path):
    """With --budget, comparing stops where the shrinking share begins (it used to compare to the
    end and never shrink an example)."""
    run, data = _diff(tmp_path, REFERENCE, NAIVE, "--tool", "get_weather", "--budget", "8", "--seed", "1")
    assert data["counts"]["regression"] and data["stop_reason"] == "budget"
    shrunk = [d for d in data["differences"] if len(d["input"]) < len(d["original_input"])]
    assert shrunk, [(d["kind"], len(d["input"])) for d in data["differences"]][:10]


def test_a_refactor_that_moves_the_rejection_into_a_helper_changes_nothing(tmp_path):
    """v1 raises its ValueErrors in ``parse``; the refactor raises the same ones from a new
    helper. Every rejection now has other frames (another signature), yet no caller can tell:
    the diff must report no change at all, and exit 0."""
    repo = tmp_path / "refactor"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "myparser.py").write_text(PARSER_V1, encoding="utf-8")
    _git(repo, "add", "myparser.py")
    _git(repo, "commit", "-q", "-m", "parser v1")
    moved = PARSER_V1.replace('raise ValueError(f"not JSON: {exc}")', '_refuse(f"not JSON: {exc}")') \
        .replace('raise ValueError("not a tool call")', '_refuse("not a tool call")') \
        + "\n\ndef _refuse(why):\n    raise ValueError(why)\n"
    assert moved.count("_refuse(") == 3
    (repo / "myparser.py").write_text(moved, encoding="utf-8")
    report = tmp_path / "diff.json"
    run = fuzz("diff", "--old", "git:HEAD:myparser:parse", "--new", "myparser:parse", "--tool", "get_weather",
               "--max-examples", "1500", "--seed", "1", "--report", str(report), cwd=repo)
    assert run.returncode == 0, run.stdout + run.stderr
    data = read_json(report)
    _assert_consistent(run, data)
    assert data["samples"] > 0 and data["counts"]["same"] == data["samples"], data["counts"]


def test_two_crashes_of_one_type_at_different_sites_print_differently():
    """A CHANGED entry whose sides crash with the same exception type must show what differs:
    the innermost frame of each side."""
    from fuzzer.engine.jobs.diff import _side_line
    from fuzzer.engine.jobs.diff import Side, classify

    old = Side(Outcome(kind="raised", exception="RecursionError", frames=(("myp.py", "parse"), ("myp.py", "_load"))),
               "crash", "crash-old")
    new = Side(Outcome(kind="raised", exception="RecursionError", frames=(("myp.py", "parse"), ("myp.py", "_decode"))),
               "crash", "crash-new")
    assert classify(old, new) == "changed"
    assert _side_line(old).endswith("raised RecursionError in myp.py:_load")
    assert _side_line(new).endswith("raised RecursionError in myp.py:_decode")


def test_a_diff_that_compared_no_sample_is_an_error_not_a_pass(tmp_path):
    """Every call outlasts the budget: nothing was compared, and the exit status must not say
    the versions agree."""
    (tmp_path / "slowp.py").write_text("import time\n\n\ndef parse(text):\n    time.sleep(0.6)\n    return []\n")
    run = fuzz("diff", "--old", "slowp:parse", "--new", "slowp:parse", "--tool", "get_weather", "--budget", "0.3",
               "--timeout", "5", "--report", "d.json", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "no sample was compared" in run.stderr
    assert read_json(tmp_path / "d.json")["samples"] == 0


def test_two_module_files_with_the_same_code_differ_in_nothing(tmp_path):
    """``--old myparser_v1:parse --new myparser_v2:parse``: a crash's signature names the file its
    frames are in, and every crash of the old file read "changed" for its name alone."""
    code = ("import json\n\n\ndef parse(text):\n    data = json.loads(text.strip().strip('`'))\n"
            "    return [{'name': data['name'], 'arguments': data['arguments']}]\n")
    (tmp_path / "myparser_v1.py").write_text(code)
    (tmp_path / "myparser_v2.py").write_text(code)
    run, data = _diff(tmp_path, "myparser_v1:parse", "myparser_v2:parse", *DIFF)
    assert data["samples"] > 0 and data["counts"]["same"] == data["samples"], data["counts"]


OWN_ERROR = """
import json


class ParseError(ValueError):
    pass


def parse(text):
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("arguments"), dict):
        raise ParseError("not a tool call")
    return [{"name": data["name"], "arguments": data["arguments"]}]


def nothing(text):
    return []
"""


def test_two_module_files_rejecting_with_their_own_exception_differ_in_nothing(tmp_path):
    """Every rejection used to read "rejected myparser_v1.ParseError" against
    "rejected myparser_v2.ParseError" and counted as changed."""
    (tmp_path / "myparser_v1.py").write_text(OWN_ERROR)
    (tmp_path / "myparser_v2.py").write_text(OWN_ERROR)
    run, data = _diff(tmp_path, "myparser_v1:parse", "myparser_v2:parse", "--tool", "get_weather",
                      "--max-examples", "600", "--seed", "1")
    assert run.returncode == 0, run.stdout + run.stderr
    assert data["samples"] > 0 and data["counts"]["same"] == data["samples"], data["counts"]


def test_versions_that_never_return_a_call_exit_2_saying_which(tmp_path):
    """It said "511 same" when neither version ever returned a call, and exited 0."""
    (tmp_path / "p.py").write_text(OWN_ERROR)
    for old, new, named in (("p:nothing", "p:nothing", "neither version"), ("p:nothing", "p:parse", "old version")):
        report = tmp_path / "d.json"
        run = fuzz("diff", "--old", old, "--new", new, "--tool", "get_weather", "--anomaly", "valid",
                   "--max-examples", "300", "--report", str(report), cwd=tmp_path)
        assert run.returncode == 2, run.stdout + run.stderr
        errors = [line for line in run.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and "could test nothing" in errors[0] and named in errors[0], run.stderr
        assert "Traceback" not in run.stderr
        assert read_json(report)["problem"] == errors[0][len("Error: "):]
