"""Who may change a corpus entry's status, end to end through the real ``fuzz`` command.

Only ``fuzz replay --update`` (and ``fuzz corpus set-status`` / ``reopen``, a person's decision)
change a status. Every other command that meets an entry marked fixed failing again reports a
regression (exit 1) and leaves it fixed, so the next gate still blocks.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
from pathlib import Path

from corpus.store import Entry
from tests.integration.corpus_targets.harness import BUGGY, FUZZ, REFERENCE, env, fuzz, read_entries

GATE = ("--tool", "get_weather", "--max-examples", "2000", "--seed", "1")
#: The buggy target's one crash (IndexError on an unclosed <tool_call>); the reference handles it.
TRIGGER = "<tool_call>"


def _fixed_corpus(tmp_path: Path) -> tuple[Path, str]:
    """A corpus whose one entry, the buggy target's crash, is marked fixed by replay --update."""
    (tmp_path / "out.txt").write_text(TRIGGER)
    corpus = tmp_path / "corpus"
    add = fuzz("corpus", "add", "--corpus", str(corpus), "--target", BUGGY, "--no-shrink", "out.txt", cwd=tmp_path)
    assert add.returncode == 0 and add.stdout.startswith("added "), add.stdout + add.stderr
    fixed = fuzz("replay", "--corpus", str(corpus), "--target", REFERENCE, "--update", cwd=tmp_path)
    assert fixed.returncode == 0 and ": open -> fixed" in fixed.stdout, fixed.stdout + fixed.stderr
    (entry,) = read_entries(corpus).values()
    assert entry.status == "fixed"
    return corpus, entry.signature


def test_corpus_add_of_a_fixed_entry_s_bug_is_a_regression_and_the_gate_still_blocks(tmp_path):
    corpus, signature = _fixed_corpus(tmp_path)
    again = fuzz("corpus", "add", "--corpus", str(corpus), "--target", BUGGY, "--no-shrink", "out.txt", cwd=tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    assert again.stdout.startswith(f"REGRESSION {signature} ") and "1 regression" in again.stdout
    assert {e.status for e in read_entries(corpus).values()} == {"fixed"}
    gate = fuzz("gate", "--corpus", str(corpus), "--target", BUGGY, *GATE, cwd=tmp_path)
    assert gate.returncode == 1 and f"REGRESSION {signature}" in gate.stdout, gate.stdout + gate.stderr


def test_corpus_import_of_a_fixed_entry_s_bug_is_a_regression(tmp_path):
    corpus, signature = _fixed_corpus(tmp_path)
    made = fuzz("records", "add", "calls.db", "--text", TRIGGER, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    imported = fuzz("corpus", "import", "--records", "calls.db", "--corpus", str(corpus), "--target", BUGGY,
                    "--no-shrink", cwd=tmp_path)
    assert imported.returncode == 1, imported.stdout + imported.stderr
    assert imported.stdout.startswith(f"REGRESSION {signature} ") and "1 regression" in imported.stdout
    assert {e.status for e in read_entries(corpus).values()} == {"fixed"}


#: A target with one crash reached by two inputs ("@" and "##"); the partial fix below leaves "##".
PARTLY = """
from fuzzer.targets.reference import parse as reference


def parse(text):
    if {triggers}:
        return [][0]
    return reference(text)
"""


def test_a_partly_fixed_entry_met_again_keeps_the_failing_input_so_replay_update_reopens_it(tmp_path):
    """A partial fix: the stored minimal input passes, replay marks the entry fixed, but the bug is
    still there for another input. corpus add of that input says REGRESSION and must store it in
    the entry. Otherwise the corpus keeps the smaller input that passes, and the line's own advice,
    "fuzz replay --update marks it open", cannot work: replay would keep calling the bug fixed."""
    module = tmp_path / "partly.py"
    module.write_text(PARTLY.format(triggers='"@" in text or "##" in text'))
    (tmp_path / "small.txt").write_text("@")
    (tmp_path / "other.txt").write_text("##")
    corpus = tmp_path / "corpus"
    add = fuzz("corpus", "add", "--corpus", str(corpus), "--target", "partly:parse", "--no-shrink", "small.txt",
               cwd=tmp_path)
    assert add.returncode == 0 and add.stdout.startswith("added "), add.stdout + add.stderr
    module.write_text(PARTLY.format(triggers='"##" in text'))  # the partial fix: "@" passes now
    fixed = fuzz("replay", "--corpus", str(corpus), "--target", "partly:parse", "--update", cwd=tmp_path)
    assert fixed.returncode == 0 and ": open -> fixed" in fixed.stdout, fixed.stdout + fixed.stderr
    (entry,) = read_entries(corpus).values()
    again = fuzz("corpus", "add", "--corpus", str(corpus), "--target", "partly:parse", "--no-shrink", "other.txt",
                 cwd=tmp_path)
    assert again.returncode == 1 and again.stdout.startswith(f"REGRESSION {entry.signature} "), again.stdout
    (stored,) = read_entries(corpus).values()
    assert (stored.status, stored.text) == ("fixed", "##")  # still fixed (the gate blocks), but the failing input
    assert stored.status_since == entry.status_since  # when it was marked fixed is not forgotten
    reopened = fuzz("replay", "--corpus", str(corpus), "--target", "partly:parse", "--update", cwd=tmp_path)
    assert reopened.returncode == 1, reopened.stdout + reopened.stderr
    assert f"updated {entry.signature}: fixed -> open" in reopened.stdout, reopened.stdout
    assert {e.status for e in read_entries(corpus).values()} == {"open"}


# ---------------------------------------------------------------------------------------------------
# A corpus the user cannot write: the results first, then one line naming the directory, exit 2


def _as_a_user_who_cannot_write(*args: str, cwd: Path, read_only: Path) -> subprocess.CompletedProcess:
    """``fuzz ARGS`` with ``read_only`` (and its files) not writable: the mode bits off, and, when
    the tests run as root, the CLI started without the capabilities that let root ignore them."""
    for path in [read_only, *read_only.iterdir()]:
        path.chmod(path.stat().st_mode & ~0o222)
    try:
        return subprocess.run([FUZZ, *args], cwd=str(cwd), env=env(), capture_output=True, text=True, timeout=120,
                              preexec_fn=_drop_root_file_powers if os.geteuid() == 0 else None)
    finally:
        for path in [read_only, *read_only.iterdir()]:
            path.chmod(path.stat().st_mode | 0o200)


def _drop_root_file_powers() -> None:
    """preexec_fn: drop CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER from the bounding
    set, so the program root execs next gets none of them and mode bits apply to it."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2, 3):
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_replay_update_on_a_read_only_corpus_prints_its_results_then_one_line_and_exits_2(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    entry = Entry(text=TRIGGER, signature="crash-000000000001", verdict="crash", tool="get_weather")
    (corpus / entry.file_name).write_text(entry.dumps())
    run = _as_a_user_who_cannot_write("replay", "--corpus", str(corpus), "--target", REFERENCE, "--update",
                                      cwd=tmp_path, read_only=corpus)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout.splitlines()[0].startswith("pass ") and "1 entries: 1 pass" in run.stdout
    (error,) = [line for line in run.stderr.splitlines() if line.startswith("Error:")]
    assert str(corpus) in error and "cannot write the corpus" in error and "not saved" in error
    assert {e.status for e in read_entries(corpus).values()} == {"open"}


def test_cmin_with_a_target_on_a_read_only_corpus_is_one_line_and_exit_2(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    small = Entry(text="{}", signature="crash-000000000001", verdict="crash", tool="get_weather")
    large = Entry(text="{ }", signature="crash-000000000001", verdict="crash", tool="get_weather")
    for entry in (small, large):  # two files of one signature: cmin removes the larger
        (corpus / entry.file_name).write_text(entry.dumps())
    run = _as_a_user_who_cannot_write("corpus", "cmin", "--corpus", str(corpus), "--target", REFERENCE,
                                      cwd=tmp_path, read_only=corpus)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.splitlines() == [f"Error: {corpus}: cannot write the corpus (Permission denied)"]
    assert len(list(corpus.iterdir())) == 2


# ---------------------------------------------------------------------------------------------------
# Hangs with margin: stored so that they hang at twice the timeout, fixed only well inside it

SLEEPY = '''
import time

from fuzzer.targets.reference import parse as reference


def parse(text):
    """The reference parser, except that a number takes as many seconds, and an output starting
    "<slow>" 5 ms per "x" in it: a hang that grows with its input."""
    if text[:1].isdigit():
        time.sleep(float(text))
        return []
    if text.startswith("<slow>"):
        time.sleep(0.005 * text.count("x"))
        return []
    return reference(text)
'''


def _hang_entry(corpus: Path, text: str, n: int) -> Entry:
    entry = Entry(text=text, signature=f"hang-00000000000{n}", verdict="hang", truth_known=False,
                  scenario={"frames": [["sleepy.py", "parse"]]})
    corpus.mkdir(exist_ok=True)
    (corpus / entry.file_name).write_text(entry.dumps())
    return entry


def test_replay_never_marks_fixed_a_hang_that_merely_finished_in_time(tmp_path):
    """An input that takes 2 s against a 3 s timeout has not stopped hanging: replay --update leaves
    it open (and says why), while the one that now answers at once is marked fixed."""
    (tmp_path / "sleepy.py").write_text(SLEEPY)
    corpus = tmp_path / "corpus"
    slow, quick = _hang_entry(corpus, "2.0", 1), _hang_entry(corpus, "0", 2)
    run = fuzz("replay", "--corpus", str(corpus), "--target", "sleepy:parse", "--timeout", "3", "--update",
               cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    lines = {line.split()[1]: line for line in run.stdout.splitlines() if line.split()[1:2] in ([slow.signature],
                                                                                               [quick.signature])}
    assert lines[slow.signature].startswith("FAIL ") and lines[quick.signature].startswith("pass ")
    statuses = {e.signature: e.status for e in read_entries(corpus).values()}
    assert statuses == {slow.signature: "open", quick.signature: "fixed"}
    assert f"updated {quick.signature}: open -> fixed" in run.stdout
    assert f"updated {slow.signature}" not in run.stdout


def test_a_hang_is_stored_so_that_it_hangs_at_twice_the_timeout(tmp_path):
    """150 marks take 0.75 s: a hang at 0.5 s, but not at 1 s. corpus add stores an input that
    still hangs at 1 s (its run of marks made longer), so replay does not see it pass by chance."""
    (tmp_path / "sleepy.py").write_text(SLEEPY)
    (tmp_path / "out.txt").write_text("<slow>" + "x" * 150)
    run = fuzz("corpus", "add", "--corpus", "corpus", "--target", "sleepy:parse", "--timeout", "0.5", "--no-shrink",
               "out.txt", cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.startswith("added "), run.stdout + run.stderr
    (entry,) = read_entries(tmp_path / "corpus").values()
    assert entry.verdict == "hang" and entry.text.startswith("<slow>")
    assert 0.005 * entry.text.count("x") > 2 * 0.5  # what the target takes on it: over twice the timeout


def test_set_status_and_reopen_are_the_way_back_from_a_wrong_fix(runner, tmp_path):
    corpus = tmp_path / "corpus"
    entry = _hang_entry(corpus, "2.0", 1)
    marked = runner("corpus", "set-status", "--corpus", "corpus", entry.signature[:10], "fixed")
    assert marked.code == 0 and marked.output == f"{entry.signature}: open -> fixed\n", marked
    assert read_entries(corpus)[entry.file_name].status == "fixed"
    reopened = runner("corpus", "reopen", "--corpus", "corpus", entry.file_name)
    assert reopened.code == 0 and reopened.output == f"{entry.signature}: fixed -> open\n", reopened
    assert read_entries(corpus)[entry.file_name].status == "open"
    again = runner("corpus", "reopen", "--corpus", "corpus", entry.signature)
    assert again.code == 0 and again.output == f"{entry.signature}: already open\n"
    for args in (["reopen", "--corpus", "corpus", "crash-"], ["set-status", "--corpus", "corpus", entry.signature, "shut"],
                 ["reopen", "--corpus", "nowhere", entry.signature]):
        bad = runner("corpus", *args)
        assert bad.code == 2 and bad.output.startswith("Error: ") and len(bad.output.splitlines()) == 1, bad


def test_a_nondeterminism_entry_is_not_marked_fixed_by_a_replay_that_happened_to_agree(tmp_path):
    """A target that drops arguments at random gives the truth on most single runs: replay runs a
    nondeterminism entry's input, or one not reproducible alone, many times, and two answers or a
    failing run fail it again (never "fixed")."""
    from tests.conftest import run_cli

    target = "tests.integration.targets.buggy:drops_at_random"
    found = run_cli(tmp_path, "campaign", "--target", target, "--tool", "get_weather", "--seed", "0",
                    "--max-examples", "6000", "--corpus", "corpus", "-q")
    assert found.code == 1, found
    replay = run_cli(tmp_path, "replay", "--corpus", "corpus", "--target", target, "--update")
    entries = [json.loads(p.read_text()) for p in (tmp_path / "corpus").glob("*.json")]
    nondeterministic = [e for e in entries if e["verdict"] == "nondeterminism"]
    assert nondeterministic, ([e["verdict"] for e in entries], found.stdout[-2500:], replay.stdout[-1500:])
    # (and a corruption filed as not reproducible alone: the same coin, another verdict)
    assert all(e.get("status", "open") == "open" for e in entries), replay.stdout
    assert "open -> fixed" not in replay.stdout and replay.code == 1, replay.stdout


def test_an_open_entry_of_a_target_answering_at_random_is_not_marked_fixed_by_one_passing_replay(tmp_path):
    """A corruption of a target that drops arguments one time in three can be confirmed alone by
    chance, and then pass one replay two times in three: an open entry that passes runs again
    before it may be called fixed, and one failing run keeps it open."""
    from corpus.store import CorpusStore
    from tests.conftest import run_cli

    target = "tests.integration.targets.buggy:drops_at_random"
    call = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
    CorpusStore(tmp_path / "corpus").put(Entry(
        text=json.dumps(call), signature="corruption-0123456789ab", verdict="corruption", tool="get_weather",
        format="json", calls=[call], target=target, title="corruption: argument(s) dropped: city, unit"))
    replay = run_cli(tmp_path, "replay", "--corpus", "corpus", "--target", target, "--update")
    (entry,) = [json.loads(p.read_text()) for p in (tmp_path / "corpus").glob("*.json")]
    assert entry.get("status", "open") == "open" and "open -> fixed" not in replay.stdout, replay.stdout
    assert replay.code == 1, replay


def test_a_fixed_entry_of_a_target_answering_at_random_again_is_a_regression(tmp_path):
    """A fixed bug that comes back one time in three passed one replay two times in three, so a
    gate with a short campaign let it through: a fixed entry that passes runs again, and one
    failing run is a regression."""
    from corpus.store import CorpusStore
    from tests.conftest import run_cli

    target = "tests.integration.targets.buggy:drops_at_random"
    call = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
    CorpusStore(tmp_path / "corpus").put(Entry(
        text=json.dumps(call), signature="corruption-0123456789ab", verdict="corruption", tool="get_weather",
        format="json", calls=[call], target=target, title="corruption: argument(s) dropped: city, unit",
        status="fixed"))
    for _ in range(3):  # before: each passed two times in three; all three failing, one time in 27
        replay = run_cli(tmp_path, "replay", "--corpus", "corpus", "--target", target)
        assert replay.code == 1 and "REGRESSION corruption-0123456789ab" in replay.stdout, replay
