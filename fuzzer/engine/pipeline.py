"""The pipeline every command runs on: a job yields events, handlers consume them.

::

    job = CampaignJob(...)                     # engine: decides, never prints or exits
    final = run_job(job, [ConsoleHandler(...), JsonReportHandler(...), CorpusWriter(...)])
    ctx.exit(final.exit_code)                  # cli: only parses options and attaches handlers

* :class:`Job` turns its subclass's :meth:`Job.run` generator into the full event stream: Ctrl-C
  (wherever it lands — in the job or in a handler) becomes one :class:`~fuzzer.engine.events.Interrupted`
  event, :meth:`Job.wrap_up` then announces every finding not yet announced (nothing is lost), and
  the stream always ends with :class:`~fuzzer.engine.events.JobFinished`, whose ``exit_code`` comes from
  the pure function :meth:`Job.exit_code` over the result.
* :class:`EventHandler` has ``start`` / ``handle_event`` / ``shutdown`` (STYLE.md: Schemathesis's
  handlers); :func:`run_job` calls ``shutdown`` in ``finally``, so a report is flushed and a live
  display is cleared even when a handler or the job fails.
* A job made of other jobs (the gate: replay, then a short campaign) runs them with
  :meth:`Job.delegate`, which forwards their events but keeps their ``JobFinished`` to itself.
"""

from __future__ import annotations

from typing import Any, Generator, Iterable, Iterator, Optional, Sequence

from fuzzer.engine.events import Event, ExitCode, Interrupted, JobFinished, JobStarted, StopReason
from fuzzer.engine.interrupts import BALANCED, ctrl_c_waits_for_books


class EventHandler:
    """Consumes a job's events. Subclasses override what they need."""

    def start(self) -> None:
        """Before the first event (open files, start a live display)."""

    def handle_event(self, event: Event) -> None:
        """Every event, in order."""

    def shutdown(self) -> None:
        """After the last event, or after a failure: always called (in ``finally``)."""


class Job:
    """An engine-level job. Subclasses implement :meth:`run` (a generator of events), :meth:`result`
    and :meth:`exit_code`; they set :attr:`stop_reason` when they stop for a reason other than
    having done everything."""

    #: The command's name, used in JobStarted and in reports.
    name = "job"

    def __init__(self) -> None:
        self.stop_reason: StopReason = StopReason.DONE
        self._interrupted = False

    # -- what subclasses implement ---------------------------------------------------------------
    def run(self) -> Iterator[Event]:
        raise NotImplementedError

    def wrap_up(self, interrupted: bool) -> Iterator[Event]:
        """After :meth:`run` ended (``interrupted``: by Ctrl-C): announce what is still pending.
        Never drop a finding here; shrinking is allowed only when not interrupted."""
        return iter(())

    def result(self) -> Any:
        """The result so far (complete after :meth:`run`; partial when interrupted)."""
        raise NotImplementedError

    def exit_code(self, result: Any) -> int:
        """The exit status ``result`` earns (a pure decision; see :mod:`fuzzer.engine.decisions`)."""
        raise NotImplementedError

    # -- the stream ------------------------------------------------------------------------------
    @property
    def interrupted(self) -> bool:
        return self._interrupted

    def events(self) -> Iterator[Event]:
        """:meth:`run`, then :meth:`wrap_up`, then exactly one :class:`JobFinished`."""
        try:
            yield from self.run()
        except KeyboardInterrupt:
            self._interrupt()
            yield Interrupted()
        try:
            yield from self.wrap_up(self._interrupted)
        except KeyboardInterrupt:  # a second Ctrl-C: stop wrapping up, still finish the result
            self._interrupt()
        yield self.finished()

    def _interrupt(self) -> None:
        self._interrupted = True
        self.stop_reason = StopReason.INTERRUPTED

    def finished(self) -> JobFinished:
        result = self.result()
        return JobFinished(result=result, stop_reason=self.stop_reason, exit_code=int(self.exit_code(result)))

    def delegate(self, job: "Job") -> Generator[Event, None, Any]:
        """Run a sub-job inside this one: forward its events except its JobFinished; return its
        result. A Ctrl-C inside it interrupts this job too (it is re-raised after the sub-job
        finished its own result, so nothing it found is lost)."""
        final: Optional[JobFinished] = None
        for event in job.events():
            if isinstance(event, JobFinished):
                final = event
            elif isinstance(event, (Interrupted, JobStarted)):
                continue  # this job announced itself, and announces the interruption itself
            else:
                yield event
        assert final is not None
        if job.interrupted:
            # The sub-job kept its partial result (the caller holds the job and reads
            # ``job.result()``); now this job stops too.
            raise KeyboardInterrupt
        return final.result


def run_job(job: Job, handlers: Sequence[EventHandler] = ()) -> JobFinished:
    """Feed every event of ``job`` to every handler; return the final event.

    A Ctrl-C that lands while a handler runs is delivered into the job (``throw``), so the job
    stops and wraps up exactly as if it had been interrupted itself. One that lands while the job
    books a failure waits until the books balance (:mod:`fuzzer.engine.interrupts`).
    """
    with ctrl_c_waits_for_books():
        return _run_job(job, handlers)


def _run_job(job: Job, handlers: Sequence[EventHandler]) -> JobFinished:
    stream = job.events()
    final: Optional[JobFinished] = None
    for handler in handlers:
        handler.start()
    try:
        pending: Optional[BaseException] = None
        while True:
            try:
                event = stream.throw(pending) if pending is not None else next(stream)
            except StopIteration:
                break
            except KeyboardInterrupt:  # thrown in where the job cannot catch it: finish for it
                job._interrupt()
                event = job.finished()
            pending = None
            if isinstance(event, JobFinished):
                _finish(handlers, event)
                final = event
                break
            try:
                _dispatch(handlers, event)
            except KeyboardInterrupt as exc:
                pending = exc
    finally:
        stream.close()
        for handler in handlers:
            handler.shutdown()
    assert final is not None, "a job's event stream ended without JobFinished"
    return final


def _dispatch(handlers: Iterable[EventHandler], event: Event) -> None:
    for handler in handlers:
        handler.handle_event(event)


def _finish(handlers: Iterable[EventHandler], event: JobFinished) -> None:
    """Hand every handler the job's end with Ctrl-C held off: the result and the exit status are
    decided, and what the handlers do with them is the run's outcome — the reports, the summary.
    A Ctrl-C that landed here (a user pressing it as the budget ended) used to stop the report
    writer mid-way, print no summary, and turn the decided status into click's "Aborted!"."""
    for handler in handlers:
        try:
            with BALANCED:
                handler.handle_event(event)
        except KeyboardInterrupt:
            continue  # the job has finished: nothing is left to interrupt, and the next handler still runs


def interrupted_exit(result_failed: bool, interrupted: bool) -> int:
    """The common tail of every exit decision: failures win; an interrupted run that found
    nothing proves nothing (130, never the all-clear 0)."""
    if result_failed:
        return ExitCode.FAILURES
    return ExitCode.INTERRUPTED if interrupted else ExitCode.OK


__all__ = ["EventHandler", "Job", "run_job", "interrupted_exit"]
