"""Events every job yields; handlers (console, reports, corpus writer) consume them.

A job — campaign, replay, gate, diff, corpus add, executor, agent, records replay — is an
engine-level generator (:class:`fuzzer.engine.pipeline.Job`). It never prints and never exits: it yields
these frozen events, and the exit status is the one its final :class:`JobFinished` carries
(STYLE.md: Schemathesis's ``engine/events``). Status words are str Enums, so they print and
serialize as their values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional


class Word(str, Enum):
    """A str Enum that prints and serializes as its value (the vocabulary of reports)."""

    def __str__(self) -> str:
        return self.value


class StopReason(Word):
    """Why a job stopped. ``NOTHING_TESTED`` is never an all-clear (exit 2 or 1, never 0)."""

    DONE = "done"
    BUDGET = "budget"
    MAX_EXAMPLES = "max_examples"
    MAX_FAILURES = "max_failures"
    INTERRUPTED = "interrupted"
    NOTHING_TESTED = "nothing tested"


class Phase(Word):
    """What a job is doing now (shown by the live display, reported in Progress)."""

    LOADING = "loading"
    REPLAYING = "replaying"
    PROBING = "probing"
    FUZZING = "fuzzing"
    EXPLORING = "exploring"
    CONFIRMING = "confirming"
    SHRINKING = "shrinking"
    COMPARING = "comparing"


class ExitCode(int, Enum):
    """The contract's exit statuses (DESIGN.md, "Commands")."""

    OK = 0
    FAILURES = 1
    USAGE = 2
    INTERRUPTED = 130


@dataclass(frozen=True)
class Event:
    """Base class of every event."""


@dataclass(frozen=True)
class JobStarted(Event):
    job: str  # "campaign", "gate", "executor", ... (the command's name)
    label: str  # what is under test: the target, executor or agent reference
    settings: dict = field(default_factory=dict)  # the effective settings, JSON-able
    budget_s: Optional[float] = None


@dataclass(frozen=True)
class PhaseStarted(Event):
    phase: Phase
    label: str = ""  # e.g. the tool being fuzzed


@dataclass(frozen=True)
class Progress(Event):
    executions: int
    elapsed_s: float
    failures: dict  # verdict -> distinct signatures so far
    phase: Phase = Phase.FUZZING
    label: str = ""
    budget_s: Optional[float] = None


@dataclass(frozen=True)
class FindingRecorded(Event):
    """A distinct failure (one per signature), confirmed and (within budget) minimized.

    ``improved``: announced again because a smaller reproducer was found for it."""

    finding: Any
    improved: bool = False


@dataclass(frozen=True)
class NonFatalError(Event):
    """Something the user must hear about that does not stop the job (a skipped corpus entry,
    a tool whose schema cannot be generated)."""

    message: str


@dataclass(frozen=True)
class Notice(Event):
    """Something the user should read as the job goes that is no problem (what a diff compares,
    once both versions loaded): the live display prints it on stderr."""

    message: str


@dataclass(frozen=True)
class Interrupted(Event):
    """Ctrl-C: the job stops, announces what it found and finishes its result."""


@dataclass(frozen=True)
class JobFinished(Event):
    """The terminal event: the job's result, why it stopped and the exit status it earned."""

    result: Any
    stop_reason: StopReason
    exit_code: int


# -- campaign-specific events ------------------------------------------------------------------


@dataclass(frozen=True)
class FormatsProbed(Event):
    supported: dict  # format -> list of supported variations
    unsupported: dict  # format or format/variation -> reason
    label: str = ""
