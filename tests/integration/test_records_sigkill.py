"""The must-show crash test: 4 processes write one records database while 50 SIGKILLs land.

Each writer logs the ids of every batch it has committed (after the commit returns), so the log
is a lower bound of what is committed: every logged id must read back, and the file must pass
``PRAGMA integrity_check`` however the kills fell. A process is only killed once it is writing
(it has committed a batch), at a random moment of its stream of transactions. Writers are forked
from the test process (everything they need is imported first), so 50 restarts take no time.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import time
from pathlib import Path

from fuzzer.records.recorder import Recorder

WRITERS = 4
KILLS = 50


def _write_forever(db: Path, log: Path) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def committed(ids: list) -> None:
        os.write(fd, ("\n".join(ids) + "\n").encode())

    recorder = Recorder(db, enabled=True, batch_size=40, flush_interval=0.002, on_commit=committed,
                        busy_timeout_s=30)
    parse = recorder.parser(lambda text: [{"name": "f", "arguments": {"n": len(text)}}])
    i = 0
    while True:
        parse(f"{os.getpid()} {i} " + "x" * (50 + i % 400))
        i += 1
        if i % 50 == 0:
            time.sleep(0.002)


def _fork_writer(db: Path, log: Path) -> int:
    pid = os.fork()
    if pid == 0:  # the writer: it never returns into the test runner
        try:
            _write_forever(db, log)
        finally:
            os._exit(0)
    return pid


def _logged(tmp_path: Path) -> set:
    ids = set()
    for log in tmp_path.glob("commits-*.log"):
        for line in log.read_text(encoding="ascii", errors="replace").splitlines():
            if len(line) == 20:  # a line cut by the kill is shorter: not a complete id
                ids.add(line)
    return ids


def test_50_sigkills_while_4_processes_write_lose_nothing_committed(tmp_path: Path):
    db = tmp_path / "crash.db"
    rng = random.Random(20261201)
    logs = [tmp_path / f"commits-{slot}-0.log" for slot in range(WRITERS)]
    pids = [_fork_writer(db, log) for log in logs]
    kills = 0
    deadline = time.monotonic() + 60
    try:
        while kills < KILLS and time.monotonic() < deadline:
            ready = [slot for slot in range(WRITERS) if logs[slot].exists() and logs[slot].stat().st_size]
            if not ready:
                time.sleep(0.005)
                continue
            victim = rng.choice(ready)
            time.sleep(rng.uniform(0.0, 0.05))
            os.kill(pids[victim], signal.SIGKILL)
            _, status = os.waitpid(pids[victim], 0)
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL  # it was still writing
            kills += 1
            logs[victim] = tmp_path / f"commits-{victim}-{kills}.log"
            pids[victim] = _fork_writer(db, logs[victim])
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    logged = _logged(tmp_path)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = {row[0] for row in conn.execute("SELECT record_id FROM records")}
    assert kills == KILLS and len(logged) > 1000
    missing = logged - stored
    assert not missing, f"{len(missing)} committed records did not read back, e.g. {sorted(missing)[:3]}"
    writers = conn.execute("SELECT count(DISTINCT substr(record_id, 1, 12)) FROM records").fetchone()[0]
    assert writers >= KILLS  # every killed process had written
