"""The live display when the output is not a terminal: plain periodic lines (paced by the job's
own clock), one line per finding, and never an escape code."""

from __future__ import annotations

import io
import re

import pytest

from corpus.signature import Signature
from fuzzer.cli.live import LiveProgressHandler, findings_text
from fuzzer.engine.events import (FindingRecorded, Interrupted, JobFinished, JobStarted, Phase, PhaseStarted, Progress,
                           StopReason)
from fuzzer.engine.results import JobResult
from tests.integration.live_demo import DemoFinding


def _run(events, **kwargs):
    stream = io.StringIO()
    handler = LiveProgressHandler(stream=stream, **kwargs)
    handler.start()
    try:
        for event in events:
            handler.handle_event(event)
    finally:
        handler.shutdown()
    return handler, stream.getvalue()


def _progress(t, n, failures=None):
    return Progress(executions=n, elapsed_s=t, failures=failures or {}, phase=Phase.FUZZING, budget_s=60.0)


HOSTILE = DemoFinding(Signature("crash-0123456789ab", "crash: ValueError \x1b[2J\x1b]0;pwned\x07 in parse", "k"), "crash")


def test_not_a_terminal_gives_plain_lines_paced_by_job_time_and_no_escape_codes():
    events = [JobStarted(job="campaign", label="m:parse", budget_s=60.0), PhaseStarted(Phase.FUZZING, "get_weather"),
              _progress(0.5, 100), _progress(5.0, 1000), FindingRecorded(HOSTILE),
              _progress(10.6, 2000, {"crash": 1}), _progress(15.0, 3000, {"crash": 1}),
              _progress(21.0, 4200, {"crash": 1, "corruption": 2}), Interrupted(),
              JobFinished(JobResult(job="campaign", executions=4300, elapsed_s=21.5), StopReason.INTERRUPTED, 1)]
    handler, out = _run(events, plain_every=10.0)
    assert not handler.live
    assert "\x1b" not in out and "\x07" not in out
    lines = out.splitlines()
    progress = [line for line in lines if "executions (" in line]
    assert [line.split(": ", 1)[1].split(" executions")[0] for line in progress] == ["100", "2,000", "4,200", "4,300"]
    assert progress[0] == "[campaign m:parse] fuzzing get_weather: 100 executions (200/s), no failures, 0s of 1m00s (59s left)"
    assert "1 crash · 2 corruption" not in out and "2 corruption · 1 crash" in progress[2]
    assert r"[campaign m:parse] found crash crash-0123456789ab (crash: ValueError \x1b[2J\x1b]0;pwned\x07 in parse)" in lines
    assert any(line.endswith("interrupted: finishing the report (Ctrl-C again to stop shrinking)") for line in lines)


def test_without_a_budget_the_line_counts_toward_max_examples():
    events = [JobStarted(job="gate", label="m:parse", settings={"max_examples": 5000}),
              Progress(executions=1000, elapsed_s=2.0, failures={}, phase=Phase.REPLAYING)]
    _, out = _run(events)
    assert out == "[gate m:parse] replaying: 1,000 executions (500/s), no failures, 2s, 1,000 of 5,000 executions\n"


def test_forced_live_mode_draws_the_bar_with_escape_codes():
    events = [JobStarted(job="campaign", label="m:parse", budget_s=60.0), _progress(30.0, 9000, {"hang": 1})]
    handler, out = _run(events, live=True)
    assert "\x1b[" in out and "━" in out and "1 hang" in out and "fuzzing" in out
    assert re.search(r"(29|30)s left", out)  # 60 s budget, 30 s elapsed (and counting down)


def test_findings_text_orders_verdicts_and_skips_zeros():
    assert findings_text({"hang": 1, "crash": 2, "corruption": 0}) == "2 crash · 1 hang"
    assert findings_text({}) == "no failures"


@pytest.mark.parametrize("job, unit", [("executor", "scenarios"), ("agent", "episodes"), ("campaign", "executions")])
def test_the_progress_line_counts_in_the_words_of_the_job_s_summary(job, unit):
    events = [JobStarted(job=job, label="m:f", settings={"max_examples": 500}),
              Progress(executions=100, elapsed_s=2.0, failures={})]
    _, out = _run(events)
    assert out == f"[{job} m:f] fuzzing: 100 {unit} (50/s), no failures, 2s, 100 of 500 {unit}\n"


def test_a_ctrl_c_while_the_last_lines_print_cannot_change_a_decided_exit_status():
    """run_command prints the report paths and summary lines after the job's result is final: a
    Ctrl-C there is ignored (it became click's 'Aborted!' and exit 1), and the handler is put back."""
    import os
    import signal

    from fuzzer.cli.console import _ctrl_c_ignored

    before = signal.getsignal(signal.SIGINT)
    with _ctrl_c_ignored():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGINT)  # ignored: no KeyboardInterrupt
    assert signal.getsignal(signal.SIGINT) is before
