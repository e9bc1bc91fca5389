"""A corpus written before signatures changed their keys (issue 30): the naive parser's fenced
apostrophe rejection was stored as ``false_reject-1f57590daa2b`` (the format and the message's
values in its key); it is now one finding for every format, under another key.

The gate must not block on the re-keying alone — the entry fails exactly as it was filed, and
the campaign's finding under the new key is that known bug (MOVED) — and it must still block
when the entry was marked fixed and fails again: a re-keying never passes a regression."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corpus.store import CorpusStore, Entry
from tests.integration.corpus_targets.harness import NAIVE, fuzz

OLD_ID = "false_reject-1f57590daa2b"
TEXT = '```json\n{"name": "get_weather", "arguments": {"city": "\'"}}\n```'
GATE = ("--tool", "get_weather", "--format", "fenced", "--max-examples", "3000", "--seed", "1")


def old_corpus(path: Path, status: str) -> None:
    CorpusStore(path).put(Entry(
        text=TEXT, signature=OLD_ID, verdict="false_reject", status=status, tool="get_weather", format="fenced",
        calls=[{"name": "get_weather", "arguments": {"city": "'"}}], exception="ValueError: could not parse tool call: "
        "Expecting ',' delimiter: line 1 column 49 (char 48)", target=NAIVE,
        title="false_reject: valid fenced rejected with ValueError in naive.py:parse (could not parse tool call: "
              "Expecting <str> delimiter: line <n> column <n> (char <n>))",
        what="false_reject|fenced|ValueError|could not parse tool call: Expecting <str> delimiter: line <n> "
             "column <n> (char <n>)"))


def test_an_entry_filed_under_the_old_key_is_the_same_known_bug_for_the_gate(tmp_path):
    old_corpus(tmp_path / "c", "open")
    run = fuzz("gate", "--corpus", "c", "--target", NAIVE, *GATE, "--report", "g.json", cwd=tmp_path)
    report = json.loads((tmp_path / "g.json").read_text())
    (moved,) = [m for m in report["moved"] if m.get("file")]
    assert moved["signature"] == OLD_ID and moved["now"] != OLD_ID, report["moved"]
    assert f"MOVED {OLD_ID} -> {moved['now']}" in run.stdout and "fails exactly as it was filed" in run.stdout
    # the campaign found the apostrophe bug under its new key: known, not new
    found = [f["signature"] for f in report["failures"]]
    assert moved["now"] in found, found
    assert moved["now"] not in report["gate"]["new"] and OLD_ID not in report["gate"]["regressions"]


def test_a_fixed_entry_under_the_old_key_that_fails_again_still_blocks(tmp_path):
    old_corpus(tmp_path / "c", "fixed")
    run = fuzz("gate", "--corpus", "c", "--target", NAIVE, *GATE, "--report", "g.json", cwd=tmp_path)
    report = json.loads((tmp_path / "g.json").read_text())
    assert run.returncode == 1 and OLD_ID in report["gate"]["regressions"], run.stdout
    assert f"REGRESSION {OLD_ID}" in run.stdout


def test_an_ignore_list_written_under_the_old_key_still_silences_the_bug(tmp_path):
    """``--ignore false_reject-1f57590daa2b`` (the apostrophe bug's key of before) in a config
    or a CI script: the bug it names is still ignored, not reported anew under its new key."""
    run = fuzz("campaign", "--target", NAIVE, *GATE, "--anomaly", "valid", "--no-coverage", "--ignore", OLD_ID,
               "--report", "r.json", cwd=tmp_path)
    report = json.loads((tmp_path / "r.json").read_text())
    titles = [f["title"] for f in report["failures"]]
    assert not [t for t in titles if "Expecting <str> delimiter" in t], titles
    assert report["ignored"] > 0 and [t for t in titles if "Expecting value" in t], (titles, run.stdout)


def test_a_nondeterminism_filed_by_its_input_s_class_is_the_same_known_bug_under_its_new_key(tmp_path):
    """A nondeterminism was keyed by the class of the input that showed it (one finding per class
    for a target answering at random); it is now keyed by what differed between the runs. The
    entry filed the old way replays as rekeyed, and the campaign's nondeterminism is not NEW."""
    from corpus.signature import verdict_signature

    target = "tests.integration.targets.buggy:drops_at_random"
    old = verdict_signature("nondeterminism", anomaly_class=None, operator=None, format="json")
    CorpusStore(tmp_path / "c").put(Entry(
        text='{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}', signature=old.id,
        verdict="nondeterminism", tool="get_weather", format="json", target=target, title=old.title, what=old.what,
        calls=[{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}]))
    run = fuzz("gate", "--corpus", "c", "--target", target, "--tool", "get_weather", "--max-examples", "3000",
               "--seed", "1", "--report", "g.json", cwd=tmp_path)
    report = json.loads((tmp_path / "g.json").read_text())
    (moved,) = [m for m in report["moved"] if m.get("file")]
    assert moved["signature"] == old.id and moved["now"].startswith("nondeterminism-"), report["moved"]
    assert f"MOVED {old.id} -> {moved['now']}" in run.stdout, run.stdout
    assert not [s for s in report["gate"]["new"] if s.startswith("nondeterminism-")], report["gate"]["new"]
