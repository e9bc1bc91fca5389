"""Warming a target up before it is timed: bounded, never raising, saying when it did not warm."""

from __future__ import annotations

import threading

from fuzzer.engine.warmup import WARMUP_MAX_S, WARMUP_MIN_S, warm_up, warmup_limit


def test_a_warm_up_that_finishes_warmed_up():
    done = []
    result = warm_up(lambda: done.append(1), 5.0)
    assert done == [1] and result.finished and result.error is None and result.note("x", 5.0) is None


def test_a_warm_up_that_never_ends_is_stopped_at_its_limit_even_when_the_target_catches_it():
    def spins():
        while True:
            pass

    def spins_and_swallows():  # a harness's runner catches whatever the target raises
        try:
            spins()
        except BaseException:  # noqa: BLE001
            pass

    for target in (spins, spins_and_swallows):
        result = warm_up(target, 0.2)
        assert not result.finished
        assert "did not finish within 0.2 s" in result.note("agent 'x'", 0.2)


def test_what_a_warm_up_raises_is_kept_not_raised():
    result = warm_up(lambda: 1 / 0, 5.0)
    assert result.finished and result.error == "ZeroDivisionError: division by zero"
    assert "raised ZeroDivisionError" in result.note("agent 'x'", 5.0)


def test_threads_a_warm_up_leaves_running_are_counted():
    stop = threading.Event()
    try:
        result = warm_up(lambda: threading.Thread(target=stop.wait, daemon=True).start(), 5.0)
        assert result.threads_left == 1 and "left 1 thread(s) running" in result.note("agent 'x'", 5.0)
    finally:
        stop.set()


def test_the_limit_is_a_few_timeouts_within_bounds():
    assert warmup_limit(0.5) == WARMUP_MIN_S and warmup_limit(100) == WARMUP_MAX_S
    assert WARMUP_MIN_S <= warmup_limit(2.0) <= WARMUP_MAX_S
