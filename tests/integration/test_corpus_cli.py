"""The shrinking corpus end to end (issue 4): campaign --corpus, minimize, replay, corpus list/show/add/cmin.

Everything runs through the real ``fuzz`` command in temporary directories, with real worker
processes and real files. Claims about the files are checked by reading them back with
:class:`corpus.store.Entry`; claims about minimality and signatures are checked by running the
target in this process (:mod:`tests.integration.corpus_targets.harness`), independently of the
engine that made them.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from corpus.store import Entry
from fuzzer.targets import naive as naive_module
from tests.integration.corpus_targets.harness import (
    FUZZ, NAIVE, REFERENCE, env, fuzz, load, raw_sample, read_entries, read_json, run_inprocess,
    signature_of, single_deletions,
)

# A realistic ~2 KB model output: prose around a fenced list of calls, one of which the model wrote
# with "tool" instead of "name". The naive parser fails json.loads on the prose, takes the fence,
# and crashes with KeyError on the third call.
_PROSE = ("I looked at your itinerary and there are a few things to check before we book anything. "
          "First the weather in each city on the days you travel, then the flights between them. "
          "I will call the tools below; tell me if any of the dates are wrong.\n\n")
_CALLS = [
    {"name": "get_weather", "arguments": {"city": "Lisbon", "date": "2026-05-01", "unit": "celsius"}},
    {"name": "search_flights", "arguments": {"from_city": "Lisbon", "to_city": "Porto", "date": "2026-05-02",
                                             "passenger_count": 2, "cabin": "economy"}},
    {"tool": "get_weather", "arguments": {"city": "Porto", "date": "2026-05-02", "unit": "celsius"}},
    {"name": "book_hotel", "arguments": {"city": "Porto", "check_in": "2026-05-02", "check_out": "2026-05-05",
                                         "guests": 2, "preferences": {"breakfast": True, "floor": "high"}}},
]
LONG_SAMPLE = (_PROSE * 4 + "```json\n" + json.dumps(_CALLS, indent=2) + "\n```\n\n"
               + "Once these come back I will summarise the options and the total price for you. " * 3)
_TOKEN = re.compile(r"\w+|\s+|.", re.DOTALL)


def test_long_sample_is_about_2kb_and_crashes_the_naive_parser():
    assert 1800 <= len(LONG_SAMPLE) <= 2600
    outcome = run_inprocess(load(NAIVE), LONG_SAMPLE)
    assert outcome.kind == "raised" and outcome.exception == "KeyError"


# ---------------------------------------------------------------------------------------------------
# 1. campaign --corpus: one minimized, replayable file per signature


def test_campaign_corpus_has_one_minimized_replayable_file_per_signature(tmp_path):
    corpus, report = tmp_path / "corpus", tmp_path / "report.json"
    run = fuzz("campaign", "--tool", "get_weather", "--target", NAIVE, "--budget", "15", "--corpus", str(corpus),
               "--report", str(report), "-q", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    failures = read_json(report)["failures"]
    by_signature = {f["signature"]: f for f in failures}
    assert len(by_signature) == len(failures) >= 3

    entries = read_entries(corpus)  # every file parses and validates
    naive_version = "sha256:" + hashlib.sha256(Path(naive_module.__file__).read_bytes()).hexdigest()[:12]
    assert not [p for p in os.listdir(corpus) if not p.endswith(".json")], "temp files left behind"
    assert len(entries) == len(by_signature)
    assert {e.signature for e in entries.values()} == set(by_signature)
    for name, entry in entries.items():
        finding = by_signature[entry.signature]
        assert name == entry.file_name
        assert entry.status == "open" and entry.target == NAIVE and entry.verdict == finding["verdict"]
        assert len(entry.text) <= len(finding["input"])
        assert entry.text == finding["minimized_input"]
        assert entry.target_version == naive_version  # which parser version found it
        if entry.verdict == "crash" and "RecursionError" not in (entry.exception or ""):
            # independent check: this process gets the same crash signature from the stored text
            assert signature_of(raw_sample(entry.text), run_inprocess(load(NAIVE), entry.text)) == entry.signature

    replay = fuzz("replay", "--corpus", str(corpus), "--target", NAIVE, cwd=tmp_path)
    assert replay.returncode == 1, replay.stderr
    lines = [line for line in replay.stdout.splitlines() if line.split()[:1] in (["FAIL"], ["pass"], ["CHANGED"],
                                                                                ["REGRESSION"])]
    assert len(lines) == len(entries)
    for line in lines:
        mark, signature = line.split()[:2]
        assert mark == "FAIL" and signature in by_signature, line
    assert "CHANGED" not in replay.stdout


# ---------------------------------------------------------------------------------------------------
# 2. fuzz minimize: 1-minimal, and exit 1 when the sample does not fail


def _assert_one_minimal(text: str, signature: str) -> None:
    target = load(NAIVE)
    assert signature_of(raw_sample(text), run_inprocess(target, text)) == signature
    for units, what in ((list(text), "character"), (_TOKEN.findall(text), "token")):
        for candidate in set(single_deletions(text, units)):
            got = signature_of(raw_sample(candidate), run_inprocess(target, candidate))
            assert got != signature, f"deleting one {what} of {text!r} still fails as {signature}: {candidate!r}"


def test_minimize_text_file_gives_a_one_minimal_sample(tmp_path):
    sample, out = tmp_path / "output.txt", tmp_path / "min.txt"
    sample.write_text(LONG_SAMPLE, encoding="utf-8")
    expected = signature_of(raw_sample(LONG_SAMPLE), run_inprocess(load(NAIVE), LONG_SAMPLE))
    run = fuzz("minimize", str(sample), "--target", NAIVE, "-o", str(out), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"signature: {expected}" in run.stdout
    minimized = out.read_text(encoding="utf-8")
    assert f"size: {len(LONG_SAMPLE):,} -> {len(minimized):,} characters" in run.stdout
    assert len(minimized) < len(LONG_SAMPLE)
    _assert_one_minimal(minimized, expected)


def test_minimize_corpus_entry_keeps_its_signature(tmp_path):
    target = load(NAIVE)
    outcome = run_inprocess(target, LONG_SAMPLE)
    signature = signature_of(raw_sample(LONG_SAMPLE), outcome)
    entry = Entry(text=LONG_SAMPLE, signature=signature, verdict="crash", tool="get_weather", format=None,
                  exception="KeyError: 'name'", truth_known=False, target=NAIVE)
    path = tmp_path / entry.file_name
    path.write_text(entry.dumps(), encoding="ascii")
    before = path.read_bytes()
    out = tmp_path / "min.txt"
    run = fuzz("minimize", str(path), "--target", NAIVE, "-o", str(out), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"signature: {signature}" in run.stdout
    _assert_one_minimal(out.read_text(encoding="utf-8"), signature)
    assert path.read_bytes() == before  # minimize reads the entry, it does not rewrite it


def test_minimize_exits_1_when_the_sample_does_not_fail(tmp_path):
    sample = tmp_path / "fine.txt"
    sample.write_text('{"name": "get_weather", "arguments": {"city": "Paris"}}', encoding="utf-8")
    run = fuzz("minimize", str(sample), "--target", NAIVE, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "does not fail" in run.stdout and str(sample) in run.stdout
    assert "does not fail" not in run.stderr  # said once
    assert "Traceback" not in run.stderr


def test_minimize_missing_file_is_a_usage_error(tmp_path):
    run = fuzz("minimize", str(tmp_path / "nope.txt"), "--target", NAIVE, cwd=tmp_path)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr


# ---------------------------------------------------------------------------------------------------
# 4. SIGKILL while the corpus is written


def _corpus_is_whole(directory: Path) -> dict[str, Entry]:
    names = os.listdir(directory) if directory.is_dir() else []
    stray = [n for n in names if n.endswith(".json") and n.startswith(".")]
    assert not stray, f"temporary files named *.json: {stray}"
    entries = read_entries(directory)  # raises on any torn or half-written file
    for name, entry in entries.items():
        assert name == entry.file_name, f"{name} holds an entry that belongs in {entry.file_name}"
    return entries


def _group_gone(pgid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_sigkill_at_random_moments_leaves_every_corpus_file_whole(tmp_path):
    corpus = tmp_path / "corpus"
    rng = random.Random(20261130)
    kills = 0
    orphans = []
    for round_ in range(9):
        proc = subprocess.Popen([FUZZ, "campaign", "--tool", "get_weather", "--target", NAIVE, "--budget", "6",
                                 "--seed", str(round_), "--corpus", str(corpus), "-q"], cwd=tmp_path, env=env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            time.sleep(rng.uniform(0.5, 3.0))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)  # the campaign itself, mid-run; its workers must follow
                kills += 1
            proc.wait(timeout=30)
            if not _group_gone(proc.pid, 5.0):
                orphans.append(round_)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # only the group this test started
            except ProcessLookupError:
                pass
        _corpus_is_whole(corpus)
    assert kills >= 6
    assert not orphans, f"worker processes outlived the killed campaign in rounds {orphans}"

    entries = _corpus_is_whole(corpus)
    assert entries, "the campaign never got to write the corpus before being killed"
    assert len({e.signature for e in entries.values()}) == len(entries)  # still one file per signature
    final = fuzz("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "5000", "--seed", "1",
                 "--corpus", str(corpus), "-q", cwd=tmp_path)
    assert final.returncode == 1, final.stderr
    assert f"replayed {len(entries)} entries" in final.stdout
    after = _corpus_is_whole(corpus)
    assert len({e.signature for e in after.values()}) == len(after)
    replay = fuzz("replay", "--corpus", str(corpus), "--target", NAIVE, cwd=tmp_path)
    assert replay.returncode == 1 and "CHANGED" not in replay.stdout and "skipped" not in replay.stderr


# ---------------------------------------------------------------------------------------------------
# 5. corpus list / show / add / cmin, and corrupt files


KEYERROR_TEXT = '{"tool": "get_weather", "arguments": {"city": "Paris"}}'  # KeyError 'name'
TYPEERROR_TEXT = '[1, 2, 3]'  # TypeError: int is not subscriptable
PASSING_TEXT = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
APOSTROPHE_FENCE = '```json\n{"name": "get_weather", "arguments": {"city": "Xi\'an"}}\n```'
COMMA_FENCE = 'Here you go:\n```json\n{"name": "get_weather", "arguments": {"city": "a, }"}}\n```'


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _add(corpus: Path, *files: Path, shrink: bool = True, target: str = NAIVE) -> subprocess.CompletedProcess:
    return fuzz("corpus", "add", *map(str, files), "--corpus", str(corpus), "--target", target,
                "--shrink" if shrink else "--no-shrink", cwd=corpus.parent)


def test_corpus_add_text_files_and_jsonl_with_expected_calls(tmp_path):
    corpus = tmp_path / "corpus"
    t1 = _write(tmp_path / "keyerror.txt", KEYERROR_TEXT)
    t2 = _write(tmp_path / "typeerror.txt", TYPEERROR_TEXT)
    t3 = _write(tmp_path / "fine.txt", PASSING_TEXT)
    lines = [
        {"text": APOSTROPHE_FENCE, "format": "fenced",
         "calls": [{"name": "get_weather", "arguments": {"city": "Xi'an"}}]},
        {"text": COMMA_FENCE, "format": "fenced", "calls": [{"name": "get_weather", "arguments": {"city": "a, }"}}]},
        {"text": PASSING_TEXT, "format": "json", "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    ]
    jl = _write(tmp_path / "captured.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n\n")
    run = _add(corpus, t1, t2, t3, jl)
    assert run.returncode == 0, run.stderr
    assert "6 inputs" in run.stdout and "2 passed" in run.stdout

    entries = list(read_entries(corpus).values())
    verdicts = sorted(e.verdict for e in entries)
    assert verdicts == ["corruption", "crash", "crash", "false_reject"]
    naive = load(NAIVE)
    for e in entries:
        assert e.target == NAIVE and e.status == "open"
        if e.verdict == "crash":  # captured raw text: no truth, reduced as text
            assert not e.truth_known and len(e.text) <= len(KEYERROR_TEXT)
            assert signature_of(raw_sample(e.text), run_inprocess(naive, e.text)) == e.signature
        else:  # judged with the stated truth, so the truth is stored with it
            assert e.truth_known and e.format == "fenced" and e.calls

    listing = fuzz("corpus", "list", "--corpus", str(corpus), cwd=tmp_path)
    assert listing.returncode == 0
    assert "4 entries" in listing.stdout
    for e in entries:
        assert e.signature in listing.stdout and e.file_name in listing.stdout

    e = entries[0]
    show = fuzz("corpus", "show", "--corpus", str(corpus), e.signature[:-3], cwd=tmp_path)
    assert show.returncode == 0
    assert show.stdout == (corpus / e.file_name).read_text(encoding="ascii")
    by_file = fuzz("corpus", "show", "--corpus", str(corpus), e.file_name[:10], cwd=tmp_path)
    assert by_file.stdout == show.stdout
    missing = fuzz("corpus", "show", "--corpus", str(corpus), "crash-000000000000", cwd=tmp_path)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr

    # Adding the same inputs again keeps one file per signature.
    again = _add(corpus, t1, t2, jl)
    assert again.returncode == 0, again.stderr
    assert len(read_entries(corpus)) == 4


def test_corpus_add_bad_jsonl_line_is_a_usage_error(tmp_path):
    jl = _write(tmp_path / "bad.jsonl", '{"text": "x"}\n{"text": 3}\n')
    run = _add(tmp_path / "corpus", jl)
    assert run.returncode == 2
    assert "bad.jsonl:2" in run.stderr and "Traceback" not in run.stderr


def test_cmin_merge_keeps_one_entry_per_signature_with_the_smaller_text(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    # Same two bugs, found with inputs of different sizes in two corpora (no shrinking: sizes as given).
    key_small = _write(tmp_path / "k_small.txt", '{"tool": 1}')
    key_large = _write(tmp_path / "k_large.txt", KEYERROR_TEXT)
    type_small = _write(tmp_path / "t_small.txt", "[1]")
    type_large = _write(tmp_path / "t_large.txt", TYPEERROR_TEXT)
    only_b = _write(tmp_path / "only_b.txt", "[" * 3000 + "]" * 3000)  # RecursionError: a signature only b has
    assert _add(a, key_large, type_small, shrink=False).returncode == 0
    assert _add(b, key_small, type_large, only_b, shrink=False).returncode == 0
    a_before, b_before = read_entries(a), read_entries(b)
    b_bytes = {p.name: p.read_bytes() for p in b.iterdir()}
    signatures = {e.signature for e in a_before.values()} | {e.signature for e in b_before.values()}

    run = fuzz("corpus", "cmin", "--corpus", str(a), "--merge", str(b), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    merged = read_entries(a)
    assert {e.signature for e in merged.values()} == signatures
    assert len(merged) == len(signatures)
    smallest: dict[str, str] = {}
    for e in list(a_before.values()) + list(b_before.values()):
        if e.signature not in smallest or (len(e.text), e.text) < (len(smallest[e.signature]), smallest[e.signature]):
            smallest[e.signature] = e.text
    assert {e.signature: e.text for e in merged.values()} == smallest
    assert {p.name: p.read_bytes() for p in b.iterdir()} == b_bytes  # the merged-in corpus is untouched

    # A git merge can leave two files for one signature; cmin keeps the smaller one.
    big = [e for e in b_before.values() if e.text == TYPEERROR_TEXT][0]
    shutil.copy(b / big.file_name, a / big.file_name)
    assert len(read_entries(a)) == len(signatures) + 1
    dedupe = fuzz("corpus", "cmin", "--corpus", str(a), cwd=tmp_path)
    assert dedupe.returncode == 0, dedupe.stderr
    assert "1 duplicates removed" in dedupe.stdout
    final = read_entries(a)
    assert len(final) == len(signatures)
    assert {e.signature: e.text for e in final.values()} == smallest


def _corrupt_files(corpus: Path) -> dict[str, bytes]:
    corpus.mkdir(parents=True, exist_ok=True)
    files = {
        "garbage.json": b"{not json at all",
        "foreign.json": b'{"hello": "a file some other tool put here"}\n',
        "future.json": json.dumps({"format_version": 99, "text": "x"}).encode(),
        "binary.json": b"\xff\xfe\x00garbage",
    }
    for name, data in files.items():
        (corpus / name).write_bytes(data)
    return files


def _assert_untouched(corpus: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        assert (corpus / name).read_bytes() == data, f"{name} was modified"


def _assert_reported(run: subprocess.CompletedProcess, files: dict[str, bytes], command: str) -> None:
    output = run.stdout + run.stderr
    assert "Traceback" not in output, f"{command}: {output}"
    for name in files:
        assert name in output, f"`{command}` does not report the corrupt file {name}:\n{output}"


def _corpus_with_corrupt_files(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    corpus = tmp_path / "corpus"
    files = _corrupt_files(corpus)
    assert _add(corpus, _write(tmp_path / "k.txt", KEYERROR_TEXT), shrink=False).returncode == 0
    assert len(read_entries_valid(corpus)) == 1
    return corpus, files


def read_entries_valid(corpus: Path) -> list[Entry]:
    found = []
    for p in corpus.glob("*.json"):
        try:
            found.append(Entry.loads(p.read_text(encoding="utf-8")))
        except Exception:  # noqa: BLE001 - the corrupt files of the test
            pass
    return found


@pytest.mark.parametrize("command, code", [
    (["corpus", "list"], 1),  # lists what it can, never the all-clear over a broken corpus
    (["corpus", "cmin"], 0),
    (["replay", "--target", NAIVE], 1),  # the one valid entry still fails on the naive parser
    # replay fails and the gate blocks: a corpus file they cannot read is a regression test lost
    (["replay", "--target", REFERENCE, "--update"], 1),
    (["gate", "--target", REFERENCE, "--tool", "get_weather", "--max-examples", "300", "--seed", "1"], 1),
    (["campaign", "--target", NAIVE, "--tool", "get_weather", "--max-examples", "300", "--seed", "1", "-q"], 1),
    (["diff", "--old", NAIVE, "--new", REFERENCE, "--tool", "get_weather", "--max-examples", "100"], 0),
])
def test_corrupt_files_are_reported_by_name_and_left_untouched(tmp_path, command, code):
    corpus, files = _corpus_with_corrupt_files(tmp_path)
    run = fuzz(*command, "--corpus", str(corpus), cwd=tmp_path)
    assert run.returncode == code, run.stdout + run.stderr
    _assert_untouched(corpus, files)
    _assert_reported(run, files, " ".join(command[:2]))
    if command[0] != "campaign":  # the campaign adds what it finds; the others add nothing
        assert len(read_entries_valid(corpus)) == 1


def test_replay_of_a_corpus_of_only_unreadable_files_tested_nothing(runner, tmp_path):
    """No entry could be read, so nothing was replayed: exit 2 as for an empty corpus (the README's
    promise), naming the files, never 1 as if entries had failed."""
    files = _corrupt_files(tmp_path / "corpus")
    run = runner("replay", "--corpus", "corpus", "--target", REFERENCE)
    assert run.code == 2, run
    assert "Error: nothing to replay: corpus holds no readable entry (4 file(s) could not be read" in run.output
    assert all(name in run.output for name in files) and "Traceback" not in run.output


def test_minimize_and_reproduce_refuse_a_corrupt_corpus_entry(runner, tmp_path):
    """A corpus file cut short (or holding a merge conflict) is not a model output to shrink."""
    entry = Entry(text="{}", signature="crash-000000000001", verdict="crash", tool="get_weather")
    (tmp_path / "cut.json").write_text(entry.dumps()[:120])
    for command in (["minimize", "cut.json", "--target", NAIVE], ["reproduce", "cut.json"]):
        run = runner(*command)
        assert run.code == 2, run
        (line,) = run.output.splitlines()
        assert line.startswith("Error: cut.json: looks like a corpus entry but cannot be read as one: not JSON ("), line
        assert line.endswith("to use its text as a raw model output, pass it as a .txt file")


def test_minimize_takes_a_damaged_entry_s_text_as_model_output_from_a_txt_file(tmp_path):
    entry = Entry(text="{}", signature="crash-000000000001", verdict="crash", tool="get_weather")
    (tmp_path / "cut.txt").write_text(entry.dumps()[:120])
    run = fuzz("minimize", "cut.txt", "--target", NAIVE, cwd=tmp_path)
    assert run.returncode == 1 and "cut.txt: does not fail on" in run.stdout, run.stdout + run.stderr


def test_reproduce_of_a_json_file_that_is_no_toolfuzz_file_says_what_it_is_not(runner, tmp_path):
    (tmp_path / "garbage.json").write_text('{"hello": 1}')
    run = runner("reproduce", "garbage.json")
    assert run.code == 2, run
    assert run.output.splitlines() == ["Error: garbage.json: not a toolfuzz reproducer file or corpus entry; to run "
                                       "it as a raw model output, give --target M:A"]


def test_corpus_show_skips_corrupt_files(tmp_path):
    corpus, files = _corpus_with_corrupt_files(tmp_path)
    entry = read_entries_valid(corpus)[0]
    run = fuzz("corpus", "show", "--corpus", str(corpus), entry.signature, cwd=tmp_path)
    assert run.returncode == 0 and Entry.loads(run.stdout) == entry
    _assert_untouched(corpus, files)


def test_cmin_merge_reports_corrupt_files_of_the_other_corpus(tmp_path):
    corpus, files = _corpus_with_corrupt_files(tmp_path)
    other = tmp_path / "other"
    other_files = {f"o-{k}": v for k, v in _corrupt_files(other).items()}
    for name in list(other.iterdir()):
        name.rename(other / f"o-{name.name}")
    run = fuzz("corpus", "cmin", "--corpus", str(corpus), "--merge", str(other), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    _assert_untouched(corpus, files)
    _assert_untouched(other, other_files)
    _assert_reported(run, {**files, **other_files}, "corpus cmin --merge")


def test_corpus_add_reports_corrupt_files(tmp_path):
    corpus, files = _corpus_with_corrupt_files(tmp_path)
    run = _add(corpus, _write(tmp_path / "t.txt", TYPEERROR_TEXT))
    assert run.returncode == 0
    _assert_untouched(corpus, files)
    _assert_reported(run, files, "corpus add")


def test_a_corrupt_file_holding_an_entrys_name_is_never_overwritten(tmp_path):
    # Find the file name the entry will get, then put garbage under that name first.
    probe = tmp_path / "probe"
    text = _write(tmp_path / "k.txt", KEYERROR_TEXT)
    assert _add(probe, text, shrink=False).returncode == 0
    (name,) = read_entries(probe)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    garbage = b"<<<not an entry, written by a person>>>"
    (corpus / name).write_bytes(garbage)
    run = _add(corpus, text, shrink=False)
    assert run.returncode == 0, run.stderr
    assert (corpus / name).read_bytes() == garbage
    assert "Traceback" not in run.stderr


def test_corpus_add_jsonl_calls_without_format_are_still_judged(tmp_path):
    jl = _write(tmp_path / "captured.jsonl", json.dumps(
        {"text": COMMA_FENCE, "calls": [{"name": "get_weather", "arguments": {"city": "a, }"}}]}) + "\n")
    run = _add(tmp_path / "corpus", jl)
    assert run.returncode == 0, run.stderr
    assert [e.verdict for e in read_entries(tmp_path / "corpus").values()] == ["corruption"]


# A captured output must be stored byte for byte: a parser may treat "\r" differently from "\n"
# (regexes with $, line splitting), and the corpus exists to replay exactly what the model wrote.
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@example(trailer="\r\n")
@given(trailer=st.text(alphabet=" \t\r\n", max_size=6))
def test_corpus_add_stores_captured_text_exactly(tmp_path_factory, trailer):
    home = tmp_path_factory.mktemp("exact")
    text = '{"tool": 1}' + trailer  # json.loads accepts the whitespace, then KeyError: a crash
    path = home / "captured.txt"
    path.write_bytes(text.encode("utf-8"))
    run = _add(home / "corpus", path, shrink=False)
    assert run.returncode == 0, run.stderr
    assert [e.text for e in read_entries(home / "corpus").values()] == [text]


def test_a_known_bug_found_again_is_one_junit_test_case_not_two(tmp_path):
    """A campaign over an existing corpus replays its entries and fuzzes on: an entry that fails
    again and is re-found is one bug — one test case (the finding), counted once everywhere."""
    import xml.etree.ElementTree as ET

    corpus = tmp_path / "corpus"
    first = fuzz("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "3000", "--seed", "3",
                 "--corpus", str(corpus), "-q", cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    run = fuzz("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "3000", "--seed", "3",
               "--corpus", str(corpus), "--junit", "j.xml", "--report", "r.json", "-q", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    report = read_json(tmp_path / "r.json")
    found = {f["signature"] for f in report["failures"]}
    refound = [c for c in report["corpus"] if c["status"] != "pass" and (c["now"] or c["signature"]) in found]
    assert refound, "the second campaign re-finds some of the first one's bugs"
    names = [case.get("name") for case in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")]
    assert all(names.count(sig) == 1 for sig in found)
    assert not any(c["signature"] in n for c in refound for n in names if n not in found)
    suite = ET.parse(tmp_path / "j.xml").getroot()
    suite = suite if suite.tag == "testsuite" else next(suite.iter("testsuite"))
    counts = report["counts"]
    assert int(suite.get("tests")) == len(names) == sum(counts.values())
    assert int(suite.get("failures")) == counts["failed"]


def test_minimize_names_a_corruption_entry_by_the_signature_the_campaign_filed(tmp_path):
    """A corruption is filed by the functions its minimized input runs: minimizing its corpus entry
    again names the entry's own signature (not the oracle's)."""
    corpus = tmp_path / "corpus"
    run = fuzz("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "3000", "--seed", "5",
               "--corpus", str(corpus), "-q", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    corruptions = {name: e for name, e in read_entries(corpus).items()
                   if e.verdict == "corruption" and " (via " in e.title and e.minimized}
    assert corruptions
    for name, entry in list(corruptions.items())[:3]:
        again = fuzz("minimize", str(corpus / name), "--target", NAIVE, "--budget", "10", cwd=tmp_path)
        assert f"signature: {entry.signature}" in again.stdout, (entry.title, again.stdout)


def test_a_campaign_into_a_new_corpus_says_it_added_every_entry_and_replaced_none(tmp_path):
    corpus = tmp_path / "new-corpus"
    run = fuzz("campaign", "--tool", "get_weather", "--target", NAIVE, "--max-examples", "3000", "--seed", "2",
               "--corpus", str(corpus), cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    entries = read_entries(corpus)
    (line,) = [line for line in run.stdout.splitlines() if line.startswith(f"corpus {corpus}")]
    assert f"{len(entries)} added" in line and "replaced" not in line, line
