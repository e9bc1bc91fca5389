"""Every verdict of every harness, in one registry: its name, its meaning in words, and how the
engine treats it.

A harness registers each verdict its oracles give (:func:`verdict`), in the module that gives it:
the parser's oracle, the executor's and the agent's checks. The console, the JSON and Markdown
reports, JUnit, SARIF (one rule per verdict, described in its own words), the HTML legend and the
gate read it here, so a verdict means the same thing in every output, and a new harness's
verdicts are described everywhere without an edit elsewhere.

Two harnesses may give a verdict of the same name (``crash``, ``hang``): each registers its own
words under its own kind, and :func:`describe` finds the harness's first, then any harness's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from corpus.signature import Signature
from strategies.registry import Registry


@dataclass(frozen=True)
class VerdictInfo:
    """What a verdict is.

    ``truth``: it depends on the sample's ground truth (corruption, false_reject, missed_anomaly):
    shrinking must keep the meaning by shrinking the structured input and recomputing the truth,
    and a failure that needs earlier inputs is filed as state kept between calls. Otherwise the
    input alone carries it. ``movable``: a refactor that moves the code can make a known bug fail
    the same way from another place (the gate's MOVED); a hang or a slow path is where it is.
    ``timed``: showing it again costs a timeout or a timing (hang, slow): it is not re-run to
    confirm it. ``level``: its SARIF level."""

    name: str
    description: str
    harness: str
    truth: bool = False
    movable: bool = False
    timed: bool = False
    level: str = "error"

    @property
    def key(self) -> str:
        return f"{self.harness}:{self.name}"


@dataclass(frozen=True)
class Violation:
    """One broken promise, as a harness's check finds it: the verdict it earns, the signature that
    says which bug it is (:mod:`corpus.signature`), and what happened, in words. A harness may
    add where it happened (the executor: the call and the waits between its attempts)."""

    verdict: str
    signature: Signature
    reason: str


#: Every verdict, keyed by ``harness:name``.
VERDICTS: Registry[VerdictInfo] = Registry("verdict")


def verdict(name: str, description: str, *, harness: str, truth: bool = False, movable: bool = False,
            timed: bool = False, level: str = "error", module: Optional[str] = None) -> VerdictInfo:
    """Register a verdict of ``harness`` (idempotent for the same words: a module imported twice)."""
    info = VerdictInfo(name, " ".join(description.split()), harness, truth, movable, timed, level)
    known = VERDICTS.get(info.key)
    if known is not None and known == info:
        return known
    return VERDICTS.register(info.key, info, module=module)


def info(name: str, harness: Optional[str] = None) -> Optional[VerdictInfo]:
    """The verdict ``name`` of ``harness`` if it has one, else the first harness's of that name."""
    _load()
    if harness is not None:
        found = VERDICTS.get(f"{harness}:{name}")
        if found is not None:
            return found
    return next((v for v in VERDICTS.values() if v.name == name), None)


def describe(name: str, harness: Optional[str] = None) -> str:
    """The verdict's meaning in one sentence (what SARIF rules, the HTML legend and --explain say)."""
    found = info(name, harness)
    return found.description if found is not None else f"A failure toolfuzz reports as {name!r}."


def of_harness(harness: str) -> list[VerdictInfo]:
    _load()
    return [v for v in VERDICTS.values() if v.harness == harness]


def _load() -> None:
    """Every built-in harness registers its verdicts when it is imported; a report may be written
    by a process that imported only one (or none: ``fuzz report`` of a JSON file)."""
    from fuzzer.engine.harness import load_harnesses

    load_harnesses()


__all__ = ["VERDICTS", "VerdictInfo", "describe", "info", "of_harness", "verdict"]
