"""The corpus store under SIGKILL: a writer process killed at random moments leaves every file
whole and every announced write in place (writes go to a temporary file, fsync, then os.replace)."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time

from corpus.store import CorpusStore, Entry
from tests.conftest import ROOT, cli_env


WRITER = r"""
import sys
from corpus.store import CorpusStore, Entry
store = CorpusStore(sys.argv[1])
n = int(sys.argv[2])
print("ready", flush=True)
while True:
    sig = "sig%d" % (n % 4)
    if n % 23 == 0:
        print("rm", sig, flush=True)   # announced before it starts
        store.remove(sig)
    else:
        size = 1 + (-n * 37) % 400      # sizes sweep downward, so puts keep replacing files
        store.put(Entry(text="\ud800\x00" + "x" * size + str(n), signature=sig, verdict="crash",
                        status="fixed" if n % 3 else "open", exception="E: %d" % n))
        print("put", sig, flush=True)
    n += 1
"""


def test_a_writer_killed_at_random_moments_leaves_every_file_whole(tmp_path):
    rng = random.Random(1234)
    corpus_dir = tmp_path / "corpus"
    env = cli_env()
    must_exist: dict[str, bool] = {}
    for kill in range(30):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(corpus_dir), str(kill * 1000)],
                                stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.04))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        assert proc.returncode == -signal.SIGKILL
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2:
                must_exist[parts[1]] = parts[0] == "put"
        files = [p for p in corpus_dir.glob("*.json") if not p.name.startswith(".")] if corpus_dir.exists() else []
        present = set()
        for file in files:  # every file whole: parses and validates
            entry = Entry.loads(file.read_text(encoding="ascii"))
            assert entry.text.startswith("\ud800\x00")
            present.add(entry.signature)
        for sig, should in must_exist.items():
            if should:
                assert sig in present, f"kill {kill}: {sig} vanished"
        store = CorpusStore(corpus_dir)
        assert len(store.entries()) == len(files) and store.problems == []
    assert any(must_exist.values())

