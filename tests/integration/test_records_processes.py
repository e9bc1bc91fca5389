"""The records store and recorder across processes: a forked child (web servers fork their
workers after import), a disk that fills up under a running application, and recorded outputs
driving a campaign's worker pool. The rest of the records tests start no process
(tests/unit/test_records_*.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from fuzzer.harnesses.parser.outcome import TargetSpec
from fuzzer.isolation import WorkerPool
from fuzzer.records.inject import seed_samples
from fuzzer.records.record import new_record_id
from fuzzer.records.store import RecordStore
from fuzzer.records.writer import BackgroundWriter
from tests.conftest import cli_env
from tests.unit.test_records_inject import REGISTRY, db  # noqa: F401 - db is a fixture
from tests.unit.test_records_store import _record


def test_a_forked_child_starts_with_an_empty_queue_and_its_own_writer(tmp_path: Path):
    writer = BackgroundWriter(str(tmp_path / "f.db"), flush_interval=0.01)
    writer.submit(_record(session_id="parent").as_tuple())
    writer.flush()
    pid = os.fork()
    if pid == 0:  # the child: write one record of its own, then leave without atexit handlers
        code = 1
        try:
            code = 0 if writer.pending == 0 and writer._thread is None else 2
            writer.submit(_record(session_id="child").as_tuple())
            code = code if writer.flush(10) else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    with RecordStore(tmp_path / "f.db") as store:
        assert sorted(r.session_id for r in store.records()) == ["child", "parent"]
    writer.close()


def test_a_forked_child_makes_record_ids_of_its_own():
    """Ids are a per-process prefix and a counter: the child's prefix is renewed at fork, so the
    parent's and the child's next ids differ (the same id would make one upsert the other)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, new_record_id().encode("ascii"))
        finally:
            os._exit(0)
    os.close(write)
    child_id = os.read(read, 100).decode("ascii")
    os.waitpid(pid, 0)
    os.close(read)
    parent_id = new_record_id()
    assert len(child_id) == len(parent_id) == 20
    assert child_id[:12] != parent_id[:12]


def test_a_full_disk_is_logged_once_and_never_reaches_the_app(tmp_path: Path):
    script = textwrap.dedent(f"""
        import json, logging, resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        from fuzzer.records.recorder import Recorder
        from fuzzer.records.store import RecordStore
        RecordStore({str(tmp_path / 'full.db')!r}).close()
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, resource.RLIM_INFINITY))
        warnings = []
        class Count(logging.Handler):
            def emit(self, record):
                warnings.append(record.getMessage())
        logging.getLogger("toolfuzz.records").addHandler(Count(level=logging.WARNING))
        recorder = Recorder({str(tmp_path / 'full.db')!r}, enabled=True, batch_size=50)
        parse = recorder.parser(lambda text: [{{"name": "f", "arguments": {{"n": len(text)}}}}])
        ok = all(parse("x" * 2000 + str(i)) == [{{"name": "f", "arguments": {{"n": 2000 + len(str(i))}}}}]
                 for i in range(2000))
        recorder.flush(60)
        print(json.dumps({{"ok": ok, "warnings": warnings, "dropped": recorder.dropped,
                          "written": recorder.written}}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=cli_env(), cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["ok"] is True
    assert len(out["warnings"]) == 1 and "full" in out["warnings"][0], out["warnings"]
    assert out["dropped"] > 0 and out["written"] > 0


def test_seeds_drive_the_campaign(db: str):
    """``--seeds-from``: the campaign runs the recorded outputs first, then confirms, shrinks and
    announces what they show."""
    from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings
    from fuzzer.engine.events import FindingRecorded
    from fuzzer.engine.pipeline import EventHandler, run_job

    class Found(EventHandler):
        findings: list = []

        def handle_event(self, event):
            if isinstance(event, FindingRecorded):
                self.findings.append(event.finding)

    seeds = seed_samples(db, REGISTRY, tool="get_weather")
    target = "fuzzer.targets.records_app:parse_v4"
    settings = CampaignSettings(tools=["get_weather"], target=target, max_examples=len(seeds) + 200,
                                budget_s=None, seeds=seeds, explore=False, slow=False)
    with WorkerPool(TargetSpec(target)) as pool:
        final = run_job(CampaignJob(REGISTRY, settings, pool), [Found()])
    assert "corruption|calls:fewer" in {f.signature.key for f in Found.findings}
    assert final.result.executions >= len(seeds)
