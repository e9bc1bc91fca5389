"""The guard of tests/unit/conftest.py: every way of starting a process is refused inside it, the
test that tried fails even if it caught the refusal, and everything is put back afterwards."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest

from tests.unit.conftest import GUARDED, ProcessStarted, _guarded

STARTS = {
    "subprocess.run": lambda: subprocess.run([sys.executable, "-c", "pass"]),
    "os.popen": lambda: os.popen("true").read(),
    "os.system": lambda: os.system("true"),
    "os.fork": lambda: os.fork(),
    "os.posix_spawn": lambda: os.posix_spawn(sys.executable, [sys.executable, "-c", "pass"], os.environ),
    "multiprocessing fork": lambda: multiprocessing.get_context("fork").Process(target=print).start(),
    "multiprocessing spawn": lambda: multiprocessing.get_context("spawn").Process(target=print).start(),
    "ProcessPoolExecutor": lambda: ProcessPoolExecutor(1).submit(print).result(),
}


@pytest.mark.parametrize("start", list(STARTS), ids=list(STARTS))
def test_every_way_of_starting_a_process_is_refused_and_fails_the_test(start):
    guard = _guarded("call")
    next(guard)
    try:
        with pytest.raises(ProcessStarted, match="a unit test started a process"):
            STARTS[start]()
    finally:
        with pytest.raises(pytest.fail.Exception, match="must start no process, and this one tried"):
            next(guard, None)


def test_a_refusal_caught_by_the_code_under_test_still_fails_the_test():
    guard = _guarded("call")
    next(guard)
    try:
        subprocess.run(["true"])
    except BaseException:  # noqa: BLE001 - code that swallows everything
        pass
    with pytest.raises(pytest.fail.Exception, match=r"tried subprocess\.Popen"):
        next(guard, None)


def test_what_the_guard_replaced_is_put_back():
    before = [owner.__dict__[name] for owner, name, _ in GUARDED]
    guard = _guarded("call")
    next(guard)
    assert [owner.__dict__[name] for owner, name, _ in GUARDED] != before
    next(guard, None)
    assert [owner.__dict__[name] for owner, name, _ in GUARDED] == before
