"""The unit tests start no process: a guard fails any that does.

Why: ``tests/unit`` is the fast half of the suite, run on every save; a unit test that forks a
worker pool or runs the CLI in a subprocess is slow, load-dependent and belongs in
``tests/integration`` (DESIGN.md, "Tests by speed"). The guard makes that a rule rather than a
habit: for the setup, call and teardown of every test under this directory it replaces each way
Python starts a process — ``subprocess`` (``Popen`` and everything built on it: ``run``,
``check_output``, ``os.popen``), ``os.fork``/``forkpty``/``posix_spawn``/``posix_spawnp``/
``system`` (and so ``os.spawn*`` and ``pty``), ``multiprocessing`` processes of every start
method (and so ``ProcessPoolExecutor``) and the ``_posixsubprocess.fork_exec`` they end in — with
a function that refuses, and fails the test naming what it tried to start. The refusal is a
``BaseException`` so that an ``except Exception`` in the code under test cannot swallow it, and the
attempt is remembered so that the test fails even when something catches it anyway.

The names are replaced where they live (``os.fork``, ``subprocess.Popen``): a reference taken
before the test ran (``from os import fork`` at import time) is not seen. Run the whole of
``tests/unit`` with ``-n 2`` after adding a test that might fork to be sure.
"""

from __future__ import annotations

import multiprocessing.process
import os
import subprocess
from typing import Any, Callable, Iterator

import _posixsubprocess
import pytest


class ProcessStarted(BaseException):
    """Raised in place of starting a process inside a unit test."""


#: (owner, attribute, what it starts) — patched for every phase of every unit test.
GUARDED: list[tuple[Any, str, str]] = [
    (subprocess.Popen, "_execute_child", "subprocess.Popen"),
    (multiprocessing.process.BaseProcess, "start", "multiprocessing.Process.start"),
    (_posixsubprocess, "fork_exec", "_posixsubprocess.fork_exec"),
    *[(os, name, f"os.{name}") for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system")
      if hasattr(os, name)],
]


def _refuse(what: str, attempts: list) -> Callable[..., Any]:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        attempts.append(what)
        raise ProcessStarted(f"a unit test started a process ({what}); move it to tests/integration "
                             f"or test the logic without one")

    return refuse


def _guarded(phase: str) -> Iterator[None]:
    attempts: list[str] = []
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in GUARDED]
    for owner, name, what in GUARDED:
        setattr(owner, name, _refuse(what, attempts))
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
    if attempts:
        pytest.fail(f"{phase}: a unit test must start no process, and this one tried "
                    f"{', '.join(dict.fromkeys(attempts))}", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from _wrap("setup")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _wrap("call")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield from _wrap("teardown")


def _wrap(phase: str) -> Iterator[Any]:
    guard = _guarded(phase)
    next(guard)
    try:
        result = yield
    except BaseException:
        guard.close()  # restore; the test's own failure is the one to report
        raise
    try:
        next(guard)
    except StopIteration:
        pass
    return result
