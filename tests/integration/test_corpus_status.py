"""Who may change a corpus entry's status, end to end through the real ``fuzz`` command.

Only ``fuzz replay --update`` (and ``fuzz corpus set-status`` / ``reopen``, a person's decision)
change a status. Every other command that meets an entry marked fixed failing again reports a
regression (exit 1) and leaves it fixed, so the next gate still blocks.
"""

from __future__ import annotations

from pathlib import Path

from corpus.store import Entry
from tests.integration.corpus_targets.harness import BUGGY, REFERENCE, fuzz, read_entries

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
