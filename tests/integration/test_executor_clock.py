"""The virtual clock, installed in a fresh interpreter (it patches the process's clocks for good,
which a test process must not suffer): every clock an executor reads follows it, waits take no
real time, and asyncio and pybreaker work on it unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.conftest import ROOT, cli_env

SCRIPT = textwrap.dedent("""
    import asyncio, datetime, json, time
    from fuzzer.harnesses.executor.clock import CLOCK, EPOCH
    CLOCK.install()
    from time import sleep                       # bound after install: the virtual one
    import pybreaker

    out = {}
    mono0, wall0 = time.monotonic(), time.time()
    sleep(30)
    time.sleep(0.5)
    out["monotonic_moved"] = time.monotonic() - mono0
    out["perf_counter_is_monotonic"] = time.perf_counter() == time.monotonic()
    out["wall_moved"] = time.time() - wall0
    out["utc_now"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
    out["sleeps"] = list(CLOCK.sleeps)

    async def main():
        t0 = asyncio.get_running_loop().time()
        await asyncio.sleep(120)
        try:
            await asyncio.wait_for(asyncio.sleep(3600), timeout=10)
            timed_out = False
        except asyncio.TimeoutError:
            timed_out = True
        return asyncio.get_running_loop().time() - t0, timed_out

    out["async_moved"], out["wait_for_timed_out"] = asyncio.run(main())

    breaker = pybreaker.CircuitBreaker(fail_max=1, reset_timeout=60)
    def fail():
        raise RuntimeError("down")
    try:
        breaker.call(fail)
    except Exception:
        pass
    CLOCK.advance(59)
    out["open_at_59"] = breaker.current_state
    try:
        breaker.call(lambda: "up")
    except pybreaker.CircuitBreakerError:
        pass
    CLOCK.advance(2)
    out["after_61"] = breaker.call(lambda: "up")
    CLOCK.arm(10)
    try:
        while True:
            time.sleep(1)
    except BaseException as exc:
        out["abort"] = type(exc).__name__
    CLOCK.disarm()
    CLOCK.reset()
    out["reset_wall"] = time.time() == EPOCH
    print(json.dumps(out))
""")


def test_every_clock_follows_the_virtual_one_and_waits_cost_nothing():
    """Waits cost nothing: each clock moved by exactly what was slept (30.5 s, 130 s), which no
    real wait measures to the microsecond — no real-time bound needed."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=cli_env(), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["monotonic_moved"] == 30.5 and out["wall_moved"] == 30.5
    assert out["perf_counter_is_monotonic"]
    assert out["utc_now"] == "2026-01-01T00:00:30.500000+00:00"
    assert out["sleeps"] == [30, 0.5]
    assert 130 <= out["async_moved"] < 130.1 and out["wait_for_timed_out"]
    assert out["open_at_59"] == "open" and out["after_61"] == "up"
    assert out["abort"] == "VirtualTimeExceeded"
    assert out["reset_wall"]
