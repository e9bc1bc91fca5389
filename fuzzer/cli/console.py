"""Console handlers: progress on stderr while a job runs, its summary on stdout when it ends.

``run_command`` is the one way a command runs a job: it checks every output path before any work,
attaches the reproducer writer, the corpus writer, the report writers and the console, runs the
job, and exits with the status the job's final event carries.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Optional, Sequence

import click

from fuzzer.events import (Event, FindingRecorded, FormatsProbed, Interrupted, JobFinished, NonFatalError,
                           PhaseStarted, Progress)
from fuzzer.pipeline import EventHandler, Job, run_job

#: Seconds between plain progress lines when stderr is not a terminal (CI logs).
PLAIN_EVERY = 10.0


class ProgressLines(EventHandler):
    """Progress on stderr: one live line on a terminal, a plain line every PLAIN_EVERY s otherwise;
    found failures, skipped formats, warnings and Ctrl-C as lines of their own."""

    def __init__(self, *, quiet: bool = False, label: str = ""):
        self.quiet = quiet
        self.label = label
        self.live = sys.stderr.isatty()
        self._last_plain = 0.0
        self._dirty = False

    def _line(self, text: str) -> None:
        if self.live:
            click.echo("\r\033[2K" + text, nl=False, err=True)
            self._dirty = True
        else:
            click.echo(text, err=True)

    def _say(self, text: str) -> None:
        self._clear()
        click.echo(text, err=True)

    def _clear(self) -> None:
        if self._dirty:
            click.echo("\r\033[2K", nl=False, err=True)
            self._dirty = False

    def handle_event(self, event: Event) -> None:
        if isinstance(event, NonFatalError):
            self._say(f"warning: {event.message}")  # shown even with --quiet
            return
        if isinstance(event, Interrupted):
            self._say("interrupted: finishing the result (Ctrl-C again to stop at once)")
            return
        if self.quiet:
            return
        label = getattr(event, "label", "") or self.label
        if isinstance(event, Progress):
            now = time.monotonic()
            if not self.live and now - self._last_plain < PLAIN_EVERY:
                return
            self._last_plain = now
            rate = event.executions / event.elapsed_s if event.elapsed_s else 0
            failures = ", ".join(f"{n} {v}" for v, n in sorted(event.failures.items())) or "no failures"
            left = f", {max(0.0, event.budget_s - event.elapsed_s):.0f}s left" if event.budget_s else ""
            self._line(f"{label}: {event.phase.value}: {event.executions:,} executions, {rate:,.0f}/s, {failures} "
                       f"[{event.elapsed_s:.0f}s{left}]")
        elif isinstance(event, FindingRecorded) and not event.improved:
            f = event.finding
            self._say(f"found {f.verdict_name} {f.signature.id} ({f.signature.title})")
        elif isinstance(event, FormatsProbed) and event.unsupported and event.supported:
            self._say(f"{event.label}: not supported by the target (skipped): {', '.join(event.unsupported)}")
        elif isinstance(event, PhaseStarted) and not self.live:
            pass
        elif isinstance(event, JobFinished):
            self._clear()

    def shutdown(self) -> None:
        self._clear()


class Summary(EventHandler):
    """Prints ``render(result)`` lines on stdout when the job finishes; a result that tested
    nothing is one ``Error:`` line on stderr instead."""

    def __init__(self, render: Callable[[Any], list], *, footer: Callable[[Any], list] = lambda r: []):
        self.render, self.footer = render, footer

    def handle_event(self, event: Event) -> None:
        if not isinstance(event, JobFinished):
            return
        result = event.result
        if getattr(result, "problem", None) and not result.findings and event.exit_code == 2:
            click.echo(f"Error: {result.problem}", err=True)
            return
        for line in self.render(result):
            click.echo(line)
        if getattr(result, "problem", None):
            click.echo(f"Error: {result.problem}", err=True)
        for line in self.footer(result):
            click.echo(line)


def check_output_paths(paths: dict[str, Optional[str]]) -> None:
    from fuzzer.cli.errors import check_writable_file

    for name, path in paths.items():
        if path:
            check_writable_file(path, f"--{name}")


def writer_handlers(paths: dict[str, Optional[str]]) -> list[EventHandler]:
    from fuzzer.reports import WRITERS

    return [WRITERS[name](path) for name, path in paths.items() if path]


def run_command(job: Job, handlers: Sequence[EventHandler], *, reports: Optional[dict] = None,
                after: Callable[[Any], list] = lambda final: []) -> None:
    """Run ``job`` with ``handlers`` (+ the report writers for ``reports``: option name -> path),
    print ``after(final)`` lines, and exit with the job's status."""
    final = run_job(job, [*writer_handlers(reports or {}), *handlers])
    for name, path in (reports or {}).items():
        if path:
            click.echo(f"{name}: {path}")
    for line in after(final):
        click.echo(line)
    click.get_current_context().exit(final.exit_code)


__all__ = ["ProgressLines", "Summary", "check_output_paths", "run_command", "writer_handlers"]
