"""Helpers shared by the corpus, gate and diff tests: run ``fuzz`` for real, judge in-process.

``fuzz`` runs as a subprocess in a temporary directory with the repository on ``PYTHONPATH``, so
the test targets in this package load in the CLI's worker processes exactly as a user's module
would. :func:`run_inprocess` calls a target in this process and builds the same
:class:`~fuzzer.isolation.Outcome` a worker would (declared rejections, traceback frames without
the caller's own frame, normalized calls), so a test can check a minimized input or a reported
difference without going through the engine it is checking.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from corpus.store import Entry
from fuzzer.harnesses.parser.outcome import Outcome
from fuzzer.engine.references import describe_exception as _describe_exception
from fuzzer.harnesses.parser.oracle import Oracle
from fuzzer.engine.calls import InvalidReturn, normalize_calls
from strategies._internal.sample import Sample
from strategies._internal.tools import builtin_registry

ROOT = str(Path(__file__).resolve().parents[3])
FUZZ = str(Path(sys.executable).with_name("fuzz"))
NAIVE = "fuzzer.targets.naive:parse"
REFERENCE = "fuzzer.targets.reference:parse"
BUGGY = "tests.integration.corpus_targets.buggy:parse"


def env() -> dict[str, str]:
    """The environment for ``fuzz``: the repository importable, no colour, no terminal tricks."""
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e.pop("TOOLFUZZ_TOOLS", None)
    return e


def fuzz(*args: str, cwd: str | os.PathLike[str], timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run ``fuzz ARGS`` in ``cwd`` and return the completed process (text output)."""
    return subprocess.run([FUZZ, *args], cwd=str(cwd), env=env(), capture_output=True, text=True,
                          timeout=timeout, errors="surrogateescape")


def load(ref: str) -> Callable[[str], Any]:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def run_inprocess(target: Callable[[str], Any], text: str,
                  reject: tuple[type[BaseException], ...] = (ValueError,)) -> Outcome:
    """What the worker would report for ``target(text)``, computed in this process."""
    try:
        value = target(text)
    except reject as exc:
        name, message, frames = _describe_exception(exc)
        return Outcome("rejected", exception=name, message=message, frames=frames)
    except Exception as exc:  # noqa: BLE001 - every undeclared exception is a crash
        name, message, frames = _describe_exception(exc)
        return Outcome("raised", exception=name, message=message, frames=frames)
    try:
        return Outcome("returned", calls=normalize_calls(value))
    except InvalidReturn as exc:
        return Outcome("invalid", message=str(exc))


_ORACLES: dict[str, Oracle] = {}


def oracle(level: str = "parse") -> Oracle:
    if level not in _ORACLES:
        _ORACLES[level] = Oracle(builtin_registry(), level)
    return _ORACLES[level]


def raw_sample(text: str) -> Sample:
    """A captured model output with no known truth: only robustness is judged."""
    return Sample(text=text, format="raw", anomaly_class=None, operator=None, calls=None, truth_known=False)


def signature_of(sample: Sample, outcome: Outcome, level: str = "parse") -> Optional[str]:
    """The failure signature of (sample, outcome), or None when the oracle passes it."""
    o = oracle(level)
    judgment = o.judge(sample, outcome)
    return o.signature(sample, judgment, outcome).id if judgment.failed else None


def read_entries(directory: str | os.PathLike[str]) -> dict[str, Entry]:
    """Every ``*.json`` of a corpus directory parsed as an Entry (raises on the first bad one)."""
    found = {}
    for path in sorted(Path(directory).glob("*.json")):
        found[path.name] = Entry.loads(path.read_text(encoding="utf-8"))
    return found


def read_json(path: str | os.PathLike[str]) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def single_deletions(text: str, units: Sequence[str]) -> list[str]:
    """Every text obtained by deleting one unit of ``units`` (which join to ``text``)."""
    assert "".join(units) == text
    return ["".join(units[:i]) + "".join(units[i + 1:]) for i in range(len(units))]
