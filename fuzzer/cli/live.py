"""The live display of a running job: on a terminal a ``rich`` progress bar, elsewhere plain lines.

On a terminal, one line is redrawn in place: the current phase (probing, fuzzing, shrinking,
...), a bar of the budget used with the time left, executions per second and the distinct
findings by verdict; each new finding is printed above it. When the output is not a terminal
(a CI log, a pipe) there is no redrawing and no escape code at all: a plain line every
:data:`PLAIN_EVERY` seconds of the job's time, and one line per finding.

Everything shown comes from the job's events — :class:`~fuzzer.engine.events.JobStarted` (label,
budget, ``settings["max_examples"]``), :class:`~fuzzer.engine.events.PhaseStarted`,
:class:`~fuzzer.engine.events.Progress` (its ``failures`` are the job's own counts by verdict) and
:class:`~fuzzer.engine.events.FindingRecorded` — never from counting here. Text that comes from the
target (exception messages in titles) is shown with control characters escaped, so a target
cannot write escape codes to the user's terminal.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Optional, TextIO

from fuzzer.engine.events import (Event, FindingRecorded, FormatsProbed, Interrupted, JobFinished, JobStarted, NonFatalError,
                                  Notice, Phase, PhaseStarted, Progress)
from fuzzer.engine.pipeline import EventHandler

#: Seconds of job time between plain progress lines.
PLAIN_EVERY = 10.0
#: Redraws per second of the live display.
REFRESH_PER_SECOND = 8


def _printable(text: Any) -> str:
    from fuzzer.reports.common import printable

    return printable(str(text))


def findings_text(failures: dict) -> str:
    """``2 crash · 1 corruption`` from a Progress event's ``failures`` (verdict -> count)."""
    return " · ".join(f"{n} {verdict}" for verdict, n in sorted(failures.items()) if n) or "no failures"


def _seconds(value: float) -> str:
    value = max(0.0, value)
    if value >= 3600:
        return f"{int(value // 3600)}h{int(value % 3600 // 60):02d}m"
    if value >= 60:
        return f"{int(value // 60)}m{int(value % 60):02d}s"
    return f"{int(value)}s"


#: What a job's executions are, where they have a name of their own (a summary's word).
_UNITS = {"executor": "scenarios", "agent": "episodes"}


class LiveProgressHandler(EventHandler):
    """Progress of one job on ``stream`` (stderr by default). ``live`` forces the mode (None:
    a live display exactly when ``stream`` is a terminal that can redraw)."""

    def __init__(self, *, stream: Optional[TextIO] = None, live: Optional[bool] = None,
                 plain_every: float = PLAIN_EVERY, quiet: bool = False):
        """``quiet``: no progress and no finding lines, only warnings and Ctrl-C."""
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.plain_every = plain_every
        self._live_wanted = live
        self.label = ""
        self.job = "job"
        self.phase: str = str(Phase.LOADING)
        self.budget_s: Optional[float] = None
        self.max_examples: Optional[int] = None
        self.executions = 0
        self.elapsed_s = 0.0
        self.failures: dict = {}
        self._at = time.monotonic()  # when elapsed_s was last reported
        self._last_plain: Optional[float] = None
        self._console: Any = None
        self._progress: Any = None
        self._task: Any = None

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def live(self) -> bool:
        return self._progress is not None

    def start(self) -> None:
        from rich.console import Console

        console = Console(file=self.stream, highlight=False, soft_wrap=False)
        live = self._live_wanted if self._live_wanted is not None else (
            console.is_terminal and not console.is_dumb_terminal)
        if not live or self.quiet:
            return
        if self._live_wanted:
            console = Console(file=self.stream, highlight=False, force_terminal=True)
        self._console = console
        self._progress = self._make_progress(console)
        self._task = self._progress.add_task("", total=None, **self._fields())
        self._progress.start()

    def shutdown(self) -> None:
        if self._progress is not None:
            self._refresh()
            self._progress.stop()
            self._progress = None

    # -- events ----------------------------------------------------------------------------------
    def handle_event(self, event: Event) -> None:
        if isinstance(event, JobStarted):
            self.job, self.label = event.job, event.label
            self.budget_s = event.budget_s
            self.max_examples = (event.settings or {}).get("max_examples")
        elif isinstance(event, PhaseStarted):
            self.phase = str(event.phase) + (f" {event.label}" if event.label else "")
        elif isinstance(event, Progress):
            self.executions, self.elapsed_s, self.failures = event.executions, event.elapsed_s, dict(event.failures)
            self._at = time.monotonic()
            if event.budget_s is not None:
                self.budget_s = event.budget_s
            if event.label:
                self.phase = f"{event.phase} {event.label}"
            elif str(event.phase) != self.phase.split(" ")[0]:
                self.phase = str(event.phase)
            if not self.live and not self.quiet:
                self._plain_progress()
        elif isinstance(event, FindingRecorded):
            if not event.improved and not self.quiet:
                f = event.finding
                self._say(f"found {f.verdict_name} {f.signature.id} ({f.signature.title})")
        elif isinstance(event, NonFatalError):
            self._say(f"warning: {event.message}")
        elif isinstance(event, Notice):
            self._say(event.message)
        elif isinstance(event, FormatsProbed) and event.unsupported and event.supported and not self.quiet:
            self._say(f"{event.label}: not supported by the target (skipped): {', '.join(event.unsupported)}")
        elif isinstance(event, Interrupted):
            self._say("interrupted: finishing the report (Ctrl-C again to stop shrinking)")
        elif isinstance(event, JobFinished):
            result = event.result
            self.executions = getattr(result, "executions", self.executions)
            self.elapsed_s = getattr(result, "elapsed_s", self.elapsed_s)
            if not self.live and self._last_plain is not None and not self.quiet:
                self._plain_progress(force=True)
        if self.live:
            self._refresh()

    # -- plain lines -----------------------------------------------------------------------------
    @property
    def unit(self) -> str:
        """What the job counts, in the words of its summary."""
        return _UNITS.get(self.job or "", "executions")

    def _prefix(self) -> str:
        return f"[{self.job}{' ' + _printable(self.label) if self.label else ''}]"

    def _say(self, text: str) -> None:
        line = f"{self._prefix()} {_printable(text)}"
        if self.live:
            from rich.text import Text

            self._progress.console.print(Text(line))
        else:
            self.stream.write(line + "\n")
            self.stream.flush()

    def plain_line(self) -> str:
        rate = self.executions / self.elapsed_s if self.elapsed_s > 0 else 0.0
        line = (f"{self._prefix()} {self.phase}: {self.executions:,} {self.unit} ({rate:,.0f}/s), "
                f"{findings_text(self.failures)}, {_seconds(self.elapsed_s)}")
        if self.budget_s:
            line += f" of {_seconds(self.budget_s)} ({_seconds(self.budget_s - self.elapsed_s)} left)"
        elif self.max_examples:
            line += f", {self.executions:,} of {self.max_examples:,} {self.unit}"
        return _printable(line)

    def _plain_progress(self, force: bool = False) -> None:
        if force or self._last_plain is None or self.elapsed_s - self._last_plain >= self.plain_every:
            self._last_plain = self.elapsed_s
            self.stream.write(self.plain_line() + "\n")
            self.stream.flush()

    # -- the live display ------------------------------------------------------------------------
    def _make_progress(self, console: Any) -> Any:
        from rich.progress import BarColumn, Progress as RichProgress, ProgressColumn, TextColumn
        from rich.text import Text

        handler = self

        class TimeLeftColumn(ProgressColumn):
            """The budget's time left, counting down between events."""

            def render(self, task: Any) -> Text:
                return Text(handler.time_left(), style="cyan")

        return RichProgress(TextColumn("[bold]{task.fields[phase]}"), BarColumn(bar_width=30),
                            TextColumn("{task.fields[share]}"), TimeLeftColumn(),
                            TextColumn("{task.fields[rate]}"), TextColumn("{task.fields[findings]}"),
                            console=console, refresh_per_second=REFRESH_PER_SECOND, transient=False,
                            redirect_stdout=False, redirect_stderr=False)

    def time_left(self) -> str:
        if self.budget_s:
            running = self.elapsed_s + (time.monotonic() - self._at if self.phase.split(" ")[0] != "loading" else 0)
            return f"{_seconds(self.budget_s - min(running, self.budget_s))} left"
        if self.max_examples:
            return f"{max(0, self.max_examples - self.executions):,} to go"
        return f"{_seconds(self.elapsed_s)}"

    def _fields(self) -> dict:
        rate = self.executions / self.elapsed_s if self.elapsed_s > 0 else 0.0
        return {"phase": _printable(self.phase), "rate": f"{rate:,.0f} exec/s",
                "findings": _printable(findings_text(self.failures)),
                "share": f"{self.executions:,} {self.unit}"}

    def _refresh(self) -> None:
        if self.budget_s:
            total, done = self.budget_s, min(self.elapsed_s, self.budget_s)
        elif self.max_examples:
            total, done = float(self.max_examples), float(min(self.executions, self.max_examples))
        else:
            total, done = None, 0.0
        self._progress.update(self._task, total=total, completed=done, **self._fields())


__all__ = ["LiveProgressHandler", "findings_text"]
