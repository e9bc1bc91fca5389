"""Feeds synthetic job events to the live display, for the tmux test (``python -m
tests.integration.live_demo STOP_FILE``): a probing phase, then fuzzing with Progress events and
two findings, until STOP_FILE exists; then the job finishes. The events are the real event types;
only their values are made up."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

from corpus.signature import Signature
from fuzzer.engine.events import FindingRecorded, JobFinished, JobStarted, Phase, PhaseStarted, Progress, StopReason
from fuzzer.cli.live import LiveProgressHandler
from fuzzer.engine.results import JobResult


@dataclass
class DemoFinding:
    signature: Signature
    verdict_name: str
    count: int = 1


def main(stop_file: str) -> None:
    handler = LiveProgressHandler()
    handler.start()
    try:
        handler.handle_event(JobStarted(job="campaign", label="demo.parser:parse", budget_s=120.0))
        handler.handle_event(PhaseStarted(Phase.PROBING, label="get_weather"))
        time.sleep(0.3)
        handler.handle_event(PhaseStarted(Phase.FUZZING, label="get_weather"))
        crash = DemoFinding(Signature("crash-0123456789ab", "crash: KeyError in parse \x1b[31mred\x1b[0m", "k"), "crash")
        handler.handle_event(FindingRecorded(crash))
        started, executions = time.monotonic(), 0
        while not os.path.exists(stop_file) and time.monotonic() - started < 60:
            executions += 5000
            elapsed = 1.0 + time.monotonic() - started
            handler.handle_event(Progress(executions=executions, elapsed_s=elapsed,
                                          failures={"crash": 1, "corruption": 2}, phase=Phase.FUZZING,
                                          label="get_weather", budget_s=120.0))
            time.sleep(0.1)
        result = JobResult(job="campaign", label="demo.parser:parse", executions=executions, elapsed_s=2.0)
        handler.handle_event(JobFinished(result=result, stop_reason=StopReason.DONE, exit_code=1))
    finally:
        handler.shutdown()
    print("demo finished", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
