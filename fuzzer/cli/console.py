"""Console output of long-running commands: a live line on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from fuzzer.events import CampaignFinished, FindingRecorded, FormatsProbed, Interrupted, Progress

#: Seconds between plain progress lines when stderr is not a terminal (CI logs).
PLAIN_EVERY = 10.0


class ConsoleHandler:
    """Prints progress to stderr; findings and the summary are printed by the command."""

    def __init__(self, *, label: str, quiet: bool = False):
        self.label = label
        self.quiet = quiet
        self.live = sys.stderr.isatty()
        self._last_plain = 0.0
        self._dirty = False

    def _line(self, text: str) -> None:
        if self.quiet:
            return
        if self.live:
            click.echo("\r\033[2K" + text, nl=False, err=True)
            self._dirty = True
        else:
            click.echo(text, err=True)

    def _clear(self) -> None:
        if self._dirty:
            click.echo("\r\033[2K", nl=False, err=True)
            self._dirty = False

    def handle(self, event: Any) -> None:
        if self.quiet:
            return
        if isinstance(event, Progress):
            now = time.monotonic()
            if not self.live and now - self._last_plain < PLAIN_EVERY:
                return
            self._last_plain = now
            rate = event.executions / event.elapsed_s if event.elapsed_s else 0
            failures = ", ".join(f"{n} {v}" for v, n in sorted(event.failures.items())) or "no failures"
            self._line(f"{self.label}: {event.executions:,} executions, {rate:,.0f}/s, {failures} "
                       f"[{event.elapsed_s:.0f}s]")
        elif isinstance(event, FindingRecorded):
            if event.improved:
                return
            f = event.finding
            self._clear()
            click.echo(f"{self.label}: found {f.verdict.value} {f.signature.id} ({f.signature.title})", err=True)
        elif isinstance(event, FormatsProbed):
            self._clear()
            if event.unsupported:
                click.echo(f"{self.label}: not supported by the target (skipped): "
                           f"{', '.join(event.unsupported)}", err=True)
        elif isinstance(event, Interrupted):
            self._clear()
            click.echo(f"{self.label}: interrupted, finishing the report", err=True)
        elif isinstance(event, CampaignFinished):
            self._clear()
