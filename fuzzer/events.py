"""Events the engine yields; handlers (console, report, corpus) consume them.

The engine never prints and never exits: it yields these frozen events, and the exit status is
derived from the final one (STYLE.md, Schemathesis's engine/events).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CampaignStarted:
    tool: str
    target: str
    level: str
    seed: int
    operators: int
    skipped_tools: dict = field(default_factory=dict)  # tool -> why it cannot be generated


@dataclass(frozen=True)
class FormatsProbed:
    supported: dict  # format -> list of supported variations
    unsupported: dict  # format or format/variation -> reason


@dataclass(frozen=True)
class CorpusReplayed:
    entries: int
    failing: int
    fixed: int
    problems: tuple = ()


@dataclass(frozen=True)
class Progress:
    executions: int
    elapsed_s: float
    failures: dict  # verdict -> distinct signatures
    phase: str = "fuzzing"


@dataclass(frozen=True)
class FindingRecorded:
    finding: Any
    improved: bool = False  # announced again: a smaller reproducer was found for it


@dataclass(frozen=True)
class Interrupted:
    pass


@dataclass(frozen=True)
class CampaignFinished:
    result: Any  # CampaignResult
    stop_reason: str  # "budget" | "max_examples" | "interrupted"
