"""What recording costs the application, against an unwrapped parse function in the same run.

Goals (docs: issue 10): recording on sustains at least 20,000 records/s in one process (wall time
from the first call until every record is committed to SQLite, redaction included); recording
off adds at most 1 µs per call. Run from the repository root::

    .venv/bin/python benchmarks/recording.py [--records 50000] [--rounds 3]

Each round uses a fresh database in a temporary directory; the best round is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fuzzer.records.recorder import Recorder  # noqa: E402
from fuzzer.records.store import RecordStore  # noqa: E402

CALLS = [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius", "date": "2026-12-05"}}]


def make_texts(count: int) -> list[str]:
    """~100-byte model outputs, all distinct (as production traffic is)."""
    return [json.dumps({"name": "get_weather", "arguments": {"city": f"Paris{i}", "unit": "celsius",
                                                             "date": "2026-12-05"}}) for i in range(count)]


def parse(text: str) -> list:
    """The user's parser: as cheap as a parser gets, so the recorder's cost is not hidden."""
    return CALLS


def per_call_ns(fn, texts: list[str], chunk: int = 2000) -> float:
    """The fastest chunk's time per call: a chunk the scheduler did not interrupt says what the
    code costs; the mean over a busy machine says what the machine is doing."""
    best = float("inf")
    for start in range(0, len(texts), chunk):
        part = texts[start:start + chunk]
        began = time.perf_counter()
        for text in part:
            fn(text)
        best = min(best, (time.perf_counter() - began) / len(part))
    return best * 1e9


def recording_on(texts: list[str]) -> tuple[float, float, int, int, float]:
    """(records/s until all are committed, calls/s seen by the application, written, dropped,
    records per CPU-second of this process — all its threads — which a busy machine does not
    distort as much as wall time)."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "bench.db")
        recorder = Recorder(path, enabled=True, parser_version="bench", max_queue=len(texts) + 1)
        wrapped = recorder.parser(parse)
        wrapped("warm up")  # opens the database and starts the writer thread
        recorder.flush()
        start, cpu_start = time.perf_counter(), time.process_time()
        for text in texts:
            wrapped(text)
        calls_done = time.perf_counter()
        recorder.flush(timeout=600)
        committed, cpu = time.perf_counter(), time.process_time() - cpu_start
        written, dropped = recorder.written - 1, recorder.dropped
        recorder.close()
        with RecordStore(path) as store:
            assert store.count() == written + 1, (store.count(), written)
    return len(texts) / (committed - start), len(texts) / (calls_done - start), written, dropped, len(texts) / cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    texts = make_texts(args.records)

    off = Recorder(os.devnull, enabled=False).parser(parse)
    baseline, disabled = [], []
    for _ in range(args.rounds * 3):  # interleaved, so both see the same machine
        baseline.append(per_call_ns(parse, texts))
        disabled.append(per_call_ns(off, texts))
    base_ns, off_ns = min(baseline), min(disabled)
    overhead_us = (off_ns - base_ns) / 1000

    best = max((recording_on(texts) for _ in range(args.rounds)), key=lambda r: r[0])
    rate, app_rate, written, dropped, cpu_rate = best
    unwrapped_rate = 1e9 / base_ns

    print(f"unwrapped parse:         {base_ns:8.0f} ns/call  ({unwrapped_rate:,.0f} calls/s)")
    print(f"recording off:           {off_ns:8.0f} ns/call  -> {overhead_us:.3f} us added per call "
          f"({off_ns / base_ns:.2f}x the unwrapped call; goal <= 1 us)")
    print(f"recording on:            {rate:8,.0f} records/s committed to SQLite, redacted "
          f"({written:,} records, {dropped} dropped; goal >= 20,000/s)")
    print(f"                         {cpu_rate:8,.0f} records per CPU-second of the process (every thread)")
    print(f"                         {app_rate:8,.0f} calls/s seen by the application "
          f"({unwrapped_rate / app_rate:.0f}x slower than unwrapped while the writer shares the GIL)")
    ok = overhead_us <= 1.0 and rate >= 20_000 and dropped == 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    print("goals: " + ("met" if ok else "NOT met") + f" (load average {load:.1f} on {os.cpu_count()} cores)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
