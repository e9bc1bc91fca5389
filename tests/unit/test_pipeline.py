"""The pipeline: one JobFinished per job, Ctrl-C wherever it lands, handlers always shut down."""

from __future__ import annotations

import pytest

from fuzzer.engine.events import FindingRecorded, Interrupted, JobFinished, JobStarted, Progress, StopReason
from fuzzer.engine.pipeline import EventHandler, Job, run_job


class Counting(Job):
    name = "count"

    def __init__(self, n: int, interrupt_at: int | None = None):
        super().__init__()
        self.n, self.interrupt_at, self.done = n, interrupt_at, 0
        self.announced: list = []

    def run(self):
        yield JobStarted(self.name, "x")
        for i in range(self.n):
            if i == self.interrupt_at:
                raise KeyboardInterrupt
            self.done += 1
            yield Progress(i, 0.0, {})

    def wrap_up(self, interrupted):
        yield FindingRecorded(f"pending after {self.done}")

    def result(self):
        return self.done

    def exit_code(self, result):
        return 130 if self.interrupted else 0


class Recorder(EventHandler):
    def __init__(self, interrupt_on: int | None = None):
        self.events: list = []
        self.started = self.stopped = False
        self.interrupt_on = interrupt_on

    def start(self):
        self.started = True

    def handle_event(self, event):
        self.events.append(event)
        if isinstance(event, Progress) and event.executions == self.interrupt_on:
            raise KeyboardInterrupt

    def shutdown(self):
        self.stopped = True


def test_a_job_ends_with_exactly_one_job_finished():
    h = Recorder()
    final = run_job(Counting(3), [h])
    assert isinstance(final, JobFinished) and final.result == 3 and final.exit_code == 0
    assert [type(e) for e in h.events].count(JobFinished) == 1 and h.events[-1] is final
    assert h.started and h.stopped


@pytest.mark.parametrize("where", ["job", "handler"])
def test_ctrl_c_anywhere_becomes_one_interrupted_event_and_wrap_up_still_runs(where):
    job = Counting(10, interrupt_at=4 if where == "job" else None)
    h = Recorder(interrupt_on=4 if where == "handler" else None)
    final = run_job(job, [h])
    kinds = [type(e) for e in h.events]
    assert kinds.count(Interrupted) == 1 and kinds[-1] is JobFinished
    assert final.stop_reason is StopReason.INTERRUPTED and final.exit_code == 130
    assert any(isinstance(e, FindingRecorded) for e in h.events)  # nothing found is lost
    assert h.stopped


def test_shutdown_runs_when_a_handler_fails():
    class Broken(Recorder):
        def handle_event(self, event):
            raise RuntimeError("disk full")

    h = Broken()
    with pytest.raises(RuntimeError):
        run_job(Counting(2), [h])
    assert h.stopped


def test_delegate_forwards_a_sub_jobs_events_but_not_its_end():
    class Outer(Job):
        def run(self):
            yield JobStarted("outer", "x")
            self.inner = Counting(2)
            self.value = yield from self.delegate(self.inner)

        def result(self):
            return self.value

        def exit_code(self, result):
            return 0

    h = Recorder()
    final = run_job(Outer(), [h])
    assert final.result == 2
    assert [type(e) for e in h.events].count(JobFinished) == 1
    assert [type(e) for e in h.events].count(JobStarted) == 1  # the sub-job's start is its own


def test_a_ctrl_c_while_the_end_is_handled_loses_neither_the_reports_nor_the_status():
    """A Ctrl-C that lands while the handlers take JobFinished (the budget ends, the user presses
    it): every handler still gets the end — the report writer after the console too — and the
    decided status is returned, not raised away as a KeyboardInterrupt."""
    import os
    import signal

    class PressesCtrlC(Recorder):
        def handle_event(self, event):
            super().handle_event(event)
            if isinstance(event, JobFinished):
                os.kill(os.getpid(), signal.SIGINT)  # a real one: delivered between two bytecodes
                self.after = True  # reached: held off until the end is handled

    first, writer = PressesCtrlC(), Recorder()
    try:
        final = run_job(Counting(3), [first, writer])
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C escaped run_job: the reports after the first handler were never written")
    assert final.exit_code == 0 and final.result == 3
    assert first.after and isinstance(writer.events[-1], JobFinished) and writer.stopped
