"""Shared fixtures: run the real ``fuzz`` CLI in a fresh process, and share one expensive run
between pytest-xdist workers.

The CLI runs as ``python -m fuzzer`` (the interpreter running the tests, i.e. the project's venv),
in the test's ``tmp_path``, with the repository root on PYTHONPATH so that test-only targets
(``tests.integration.targets...``) are importable by the CLI and by its worker processes. SIGINT
is reset to its default in the child: a test suite started in the background inherits an ignored
SIGINT, and the Ctrl-C test must deliver a real one.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "fuzzer", *map(str, args)]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.pop("TOOLFUZZ_TOOLS", None)  # set by the CLI for its own workers only
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def pytest_configure(config: Any) -> None:
    """The tests that press Ctrl-C in this process (the interrupt guard, a campaign stopped mid-order)
    need Python's own SIGINT handler. A suite started in the background by a non-interactive shell
    inherits an ignored SIGINT, and Python then installs none: give it back, in every xdist worker,
    so those tests test toolfuzz rather than how the suite was started."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def default_sigint() -> None:
    """preexec_fn: a real Ctrl-C for the child even when the test runner ignores SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str
    cwd: Path

    def report(self, name: str = "r.json") -> dict[str, Any]:
        return json.loads((self.cwd / name).read_text(encoding="utf-8"))

    def __str__(self) -> str:  # shown by pytest when an assertion about the result fails
        return f"exit {self.code}\n--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}"


def run_cli(cwd: Path, *args: str, timeout: float = 180) -> CliResult:
    proc = subprocess.run(cli_command(*args), cwd=cwd, env=cli_env(), capture_output=True, text=True,
                          timeout=timeout, preexec_fn=default_sigint)
    return CliResult(proc.returncode, proc.stdout, proc.stderr, cwd)


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., CliResult]:
    """``cli("campaign", "--tool", ...)`` runs ``fuzz`` in ``tmp_path``; returns a :class:`CliResult`."""

    def call(*args: str, timeout: float = 180) -> CliResult:
        return run_cli(tmp_path, *args, timeout=timeout)

    return call


@pytest.fixture(scope="session")
def shared_once(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Callable[[str, Callable[[Path], Any]], Any]:
    """``shared_once(name, make)`` returns ``make(directory)``'s JSON-able result, computed once per
    test session even under pytest-xdist (the other workers wait on a file lock and read the
    cached JSON), so an expensive campaign several tests inspect runs only once."""
    base = tmp_path_factory.getbasetemp()
    root = base if worker_id == "master" else base.parent

    def once(name: str, make: Callable[[Path], Any]) -> Any:
        directory = root / f"shared-{name}"
        directory.mkdir(exist_ok=True)
        cache = directory / "result.json"
        with open(root / f"shared-{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if cache.exists():
                    return json.loads(cache.read_text(encoding="utf-8"))
                text = json.dumps(make(directory))
                cache.write_text(text, encoding="utf-8")
                return json.loads(text)  # the same value every worker gets
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    return once


@pytest.fixture(scope="session")
def worker_id(request: pytest.FixtureRequest) -> str:
    """pytest-xdist's worker id ("gw0", ...), or "master" without xdist (xdist defines the same
    fixture; this one keeps the suite runnable with ``-p no:xdist``)."""
    workerinput = getattr(request.config, "workerinput", None)
    return workerinput["workerid"] if workerinput else "master"


@dataclass
class InProcessResult:
    code: int
    output: str  # stdout and stderr together, as click >= 8.2 reports them
    stdout: str

    def __str__(self) -> str:
        return f"exit {self.code}\n{self.output[-4000:]}"


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., InProcessResult]:
    """``runner("gate", ...)`` runs the CLI in this process (click's CliRunner) in ``tmp_path``: for
    usage errors and other checks that start no worker process. Campaigns use :func:`cli`."""
    from click.testing import CliRunner

    from fuzzer.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))

    def call(*args: str) -> InProcessResult:
        result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
        return InProcessResult(result.exit_code, result.output, result.stdout)

    return call
