"""A stream finding: how it reads, reports, reproduces and becomes a corpus entry (kind ``stream``).

Why its own module: these are the Harness protocol's last pieces (finding -> corpus entry,
reproducer, rendering), and :mod:`.harness` reads entries back with :func:`case_of_entry`.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from typing import Any, ClassVar, Optional

from fuzzer.engine.results import ShrunkFinding, shown
from fuzzer.harnesses.stream.checks import StreamCase
from fuzzer.harnesses.stream.splits import deltas
from fuzzer.harnesses.stream.worker import Settings, case_from_json, case_to_json


@dataclass
class StreamFinding(ShrunkFinding):
    """One distinct failure of a stream campaign. ``case`` is the stream that first showed it
    (the smallest of its order), ``outcome`` what it gave (:class:`~.worker.StreamOutcome`, or the
    :class:`~.worker.StreamFault` of a worker that hung or died); ``minimized`` / ``minimized_outcome``
    their shrunk forms."""

    kind: ClassVar[str] = "stream"
    first_input: ClassVar[str] = "case"
    case: StreamCase = None  # type: ignore[assignment]
    outcome: Any = None
    settings: Settings = None  # type: ignore[assignment]
    minimized_outcome: Any = None

    best_outcome = shown("outcome")

    @property
    def exception(self) -> Optional[str]:
        error = getattr(self.best_outcome, "error", None) or getattr(self.outcome, "error", None)
        return f"{error[0]}: {error[1]}" if error else None

    @property
    def frames(self) -> tuple:
        error = getattr(self.outcome, "error", None)
        if error:
            return tuple(error[2])
        return tuple(getattr(self.outcome, "frames", ()) or ())

    def location(self) -> Optional[tuple]:
        return (self.frames[-1][0], self.frames[-1][1]) if self.frames else None

    def reproduce(self) -> str:
        return reproduce_command(self.settings, self.best)

    def streamed(self) -> Optional[dict]:
        """What the client folded out of the stream shown (None: it raised, hung or died)."""
        outcome = self.best_outcome
        if getattr(outcome, "calls", None) is None:
            return None
        return {"calls": outcome.calls, "content": outcome.content, "reasoning": outcome.reasoning}

    def to_report(self) -> dict:
        case = self.best
        streamed = self.streamed()
        return {"signature": self.signature.id, "verdict": self.verdict_name, "title": self.signature.title,
                "reason": self.reason, "anomaly_class": case.anomaly_class, "operator": case.operator,
                "format": case.format, "tool": case.tool, "input": self.case.text,
                "minimized_input": self.minimized.text if self.minimized is not None else None,
                "minimized": self.is_minimized, "deltas": deltas(case.text, case.cuts), "cuts": list(case.cuts),
                "split_family": case.family, "truth": case.truth if case.truth_known else None,
                "content": case.content, "returned": streamed["calls"] if streamed else None,
                "streamed": streamed, "exception": self.exception, "reproduce": self.reproduce(),
                "count": self.count, "confirmed": self.confirmed, "reproducible": self.reproducible,
                "notes": list(self.notes), "shrink_note": self.shrink_note or None}

    def to_entry(self, *, target: str, version: Optional[str]) -> Any:
        from corpus.store import Entry

        case = self.best
        return Entry(kind="stream", text=case.text, signature=self.signature.id, verdict=self.verdict_name,
                     title=self.signature.title, tool=case.tool or None, format=case.format,
                     anomaly_class=case.anomaly_class, operator=case.operator, exception=self.exception,
                     what=self.signature.what, calls=case.truth, truth_known=case.truth_known,
                     minimized=self.is_minimized, target=target, target_version=version,
                     scenario={"case": case_to_json(case), "api": self.settings.api, "shape": self.settings.shape,
                               "mode": self.settings.mode, "tools": self.settings.tools})

    def text(self) -> str:
        """The console block: the verdict and why, the output, the deltas as a Python list, what was
        streamed against what was expected, and the command that replays it."""
        case = self.best
        lines = [f"{self.verdict_name}  {self.signature.id}  ({self.signature.title}, seen {self.count}x)",
                 f"    why:       {self.reason}",
                 f"    sample:    {case.anomaly_class or 'valid'}{'/' + case.operator if case.operator else ''} in "
                 f"{case.format}, split {case.family} ({len(case.cuts)} cut(s))",
                 f"    {'minimized' if self.minimized is not None else 'input'}: {_shown_text(case.text)}"
                 + (f" (from {len(self.case.text)} chars)" if self.minimized is not None else ""),
                 f"    deltas:    {_shown_deltas(case)}"]
        if case.truth_known and case.truth is not None:
            lines.append(f"    expected:  {json.dumps(case.truth, ensure_ascii=False)}"
                         + (f" content {case.content!r}" if case.content is not None else ""))
        streamed = self.streamed()
        if streamed is not None and self.verdict_name not in ("crash", "hang", "slow"):
            lines.append(f"    streamed:  {json.dumps(streamed['calls'], ensure_ascii=False, default=repr)}"
                         + (f" content {streamed['content']!r}" if case.content is not None else ""))
        if self.exception:
            lines.append(f"    exception: {self.exception}")
        for note in self.notes:
            lines.append(f"    note:      {note}")
        if self.shrink_note:
            lines.append(f"    note:      {self.shrink_note}")
        lines.append(f"    reproduce: {self.reproduce()}")
        return "\n".join(lines)


def _shown_text(text: str, limit: int = 600) -> str:
    return repr(text) if len(text) <= limit else f"{text[:limit // 2]!r} ... ({len(text):,} chars) ... {text[-limit // 4:]!r}"


#: Deltas shown in the console (the reproduce command and the report keep them all).
SHOWN_DELTAS = 24


def _shown_deltas(case: StreamCase) -> str:
    parts = deltas(case.text, case.cuts)
    if len(parts) <= SHOWN_DELTAS:
        return repr(parts)
    return f"{parts[:SHOWN_DELTAS // 2]!r}[:-1] ... {len(parts) - SHOWN_DELTAS} more ... {parts[-SHOWN_DELTAS // 2:]!r}"


def reproduce_command(settings: Settings, case: StreamCase) -> str:
    """A shell command that streams ``case`` into the target in-process, prints every step's
    events and what they fold into, judges it, and exits 1 while it fails
    (:func:`fuzzer.harnesses.stream.reproduce.main`). It names the interpreter that ran ``fuzz``."""
    args = [sys.executable, "-m", "fuzzer.harnesses.stream.reproduce"]
    if settings.parser:
        args += ["--parser", settings.parser]
        if settings.api != "events":
            args += ["--parser-api", settings.api]
    else:
        args += ["--consumer", settings.consumer, "--consumer-shape", settings.shape]
    if settings.tools:
        args += ["--tools", settings.tools]
    args += ["--case", json.dumps(_compact_case(case), ensure_ascii=False, separators=(",", ":"))]
    return " ".join(shlex.quote(a) for a in args)


def _compact_case(case: StreamCase) -> dict:
    """The case as the reproduce command carries it: what judging needs (no recipe)."""
    data = case_to_json(case)
    data.pop("recipe", None)
    for key, default in (("family", "whole"), ("operator", None), ("anomaly_class", None), ("tool", "")):
        if data.get(key) == default:
            data.pop(key)
    return data


def case_of_entry(entry: Any) -> StreamCase:
    """The stream case a corpus entry of kind ``stream`` holds."""
    from strategies.errors import ToolfuzzError

    data = (entry.scenario or {}).get("case")
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise ToolfuzzError("the entry has no stream case")
    try:
        return case_from_json(data)
    except (TypeError, ValueError) as exc:
        raise ToolfuzzError(f"the entry's stream case is unreadable ({exc})") from None


__all__ = ["StreamFinding", "case_of_entry", "reproduce_command"]
