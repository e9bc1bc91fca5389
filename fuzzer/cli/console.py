"""Console handlers: progress on stderr while a job runs (:mod:`fuzzer.cli.live`), its summary on
stdout when it ends.

``run_command`` is the one way a command runs a job: it checks every output path before any work,
says first which settings the run took from the config file (:class:`ConfigNote`), attaches the
reproducer writer, the corpus writer, the report writers and the console, runs the
job, and exits with the status the job's final event carries.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Optional, Sequence

import click

from fuzzer.engine.events import Event, JobFinished, JobStarted, Phase, PhaseStarted
from fuzzer.engine.pipeline import EventHandler, Job, run_job

def progress(*, quiet: bool = False) -> EventHandler:
    """The live display of a job (a rich bar on a terminal, plain lines in CI logs)."""
    from fuzzer.cli.live import LiveProgressHandler

    return LiveProgressHandler(quiet=quiet)


class Summary(EventHandler):
    """The one console summary: prints the result's own lines (``result.summary_lines()``: each
    job and harness says what its result shows, :meth:`fuzzer.engine.results.JobResult.summary_lines`)
    on stdout when the job finishes; a result that tested nothing is one ``Error:`` line on stderr
    instead. ``render``: lines of a result that has none of its own yet (the parser campaign's)."""

    def __init__(self, render: Optional[Callable[[Any], list]] = None, *,
                 footer: Callable[[Any], list] = lambda r: [], problem_line: bool = True):
        self.render, self.footer, self.problem_line = render, footer, problem_line

    def handle_event(self, event: Event) -> None:
        if not isinstance(event, JobFinished):
            return
        result = event.result
        if getattr(result, "problem", None) and not result.findings and event.exit_code == 2:
            click.echo(f"Error: {result.problem}", err=True)
            return
        for line in (self.render(result) if self.render is not None else result.summary_lines()):
            click.echo(line)
        if getattr(result, "problem", None) and self.problem_line:  # unless render said it already
            click.echo(f"Error: {result.problem}", err=True)
        if getattr(result, "write_error", None):  # results first, then why they could not be saved
            click.echo(f"Error: {result.write_error}", err=True)
        for line in self.footer(result):
            click.echo(line)


class ConfigNote(EventHandler):
    """Prints, before anything else the job says, which settings it took from the config file
    (:func:`fuzzer.cli.config_cmd.settle`): a file's corpus or bounds applied to a run without a
    word wrote findings into another target's corpus. Printed once the target has loaded: a run
    that ends in a usage error while loading shows that one ``Error:`` line alone (it names the
    file and key itself when the bad value came from the file)."""

    def __init__(self) -> None:
        from fuzzer.cli.config_file import config_note

        self.lines = config_note()

    def handle_event(self, event: Event) -> None:
        if not self.lines or isinstance(event, JobStarted) or (
                isinstance(event, PhaseStarted) and event.phase is Phase.LOADING):
            return
        lines, self.lines = self.lines, []
        for line in lines:
            click.echo(line, err=True)


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
    from fuzzer.reports.markdown import step_summary_handler

    summary = step_summary_handler()
    final = run_job(job, [ConfigNote(), *writer_handlers(reports or {}), *([summary] if summary else []),
                          *handlers])
    with _ctrl_c_ignored():  # the result is written and its exit status decided: another Ctrl-C must not change it
        for name, path in (reports or {}).items():
            if path:
                click.echo(f"{name}: {path}")
        for line in after(final):
            click.echo(line)
    click.get_current_context().exit(final.exit_code)


@contextlib.contextmanager
def _ctrl_c_ignored() -> Iterator[None]:
    """SIGINT ignored for the block (main thread only), then as it was: a Ctrl-C while the last
    lines print turned a decided exit status into click's 'Aborted!' and 1."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


__all__ = ["ConfigNote", "Summary", "check_output_paths", "progress", "run_command", "writer_handlers"]
