"""A Ctrl-C inside a bookkeeping block waits for the block to end (:mod:`fuzzer.engine.interrupts`).

Real signals, sent to this process with ``os.kill``: the handler under test is the one Python
calls, at the point Python calls it.
"""

from __future__ import annotations

import os
import signal
import threading

import pytest

from fuzzer.engine.interrupts import BALANCED, ctrl_c_waits_for_books


def ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def test_a_ctrl_c_inside_a_block_is_raised_when_the_block_ends():
    steps = []
    with ctrl_c_waits_for_books():
        with pytest.raises(KeyboardInterrupt):
            with BALANCED:
                steps.append("counted in its class")
                ctrl_c()
                steps.append("filed under its signature")
            steps.append("after the block")  # not reached: the interrupt comes first
    assert steps == ["counted in its class", "filed under its signature"]


def test_nested_blocks_raise_once_when_the_outermost_ends():
    steps = []
    with ctrl_c_waits_for_books():
        with pytest.raises(KeyboardInterrupt):
            with BALANCED:
                with BALANCED:
                    ctrl_c()
                steps.append("the outer block goes on")
        # nothing is left pending: the next block runs to its end quietly
        with BALANCED:
            steps.append("a later block")
    assert steps == ["the outer block goes on", "a later block"]


def test_a_ctrl_c_outside_any_block_is_raised_at_once():
    with ctrl_c_waits_for_books():
        with pytest.raises(KeyboardInterrupt):
            ctrl_c()
            for _ in range(1000):  # Python runs the handler at its next check, within these
                pass
            pytest.fail("the interrupt waited although no block was open")


def test_the_default_handler_is_back_afterwards_and_left_alone_when_someone_set_their_own():
    with ctrl_c_waits_for_books():
        assert signal.getsignal(signal.SIGINT) == BALANCED.on_sigint
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    calls = []
    previous = signal.signal(signal.SIGINT, lambda *a: calls.append(a))
    try:
        with ctrl_c_waits_for_books():
            assert signal.getsignal(signal.SIGINT) != BALANCED.on_sigint
            with BALANCED:
                ctrl_c()
        assert len(calls) == 1  # theirs ran; nothing of ours was raised
    finally:
        signal.signal(signal.SIGINT, previous)


def test_off_the_main_thread_nothing_is_installed():
    seen = []
    thread = threading.Thread(target=lambda: seen.append(_installed_inside()))
    thread.start()
    thread.join()
    assert seen == [False]


def _installed_inside() -> bool:
    with ctrl_c_waits_for_books():
        return signal.getsignal(signal.SIGINT) == BALANCED.on_sigint
