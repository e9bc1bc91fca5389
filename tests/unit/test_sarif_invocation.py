"""The SARIF invocation of a run says whether it ran to its end (fuzzer/reports/sarif.py).

An interrupted campaign or gate wrote ``"executionSuccessful": true`` beside no results: a SARIF
reader (code scanning) took the cut-short run for a complete analysis that found nothing."""

from __future__ import annotations

from fuzzer.engine.decisions import GateDecision
from fuzzer.engine.events import StopReason
from fuzzer.engine.jobs.gate import GateResult
from fuzzer.engine.jobs.replay import ReplayResult
from fuzzer.engine.results import JobResult
from fuzzer.reports.sarif import sarif_log


def invocation(stop_reason: StopReason, tmp_path) -> dict:
    campaign = JobResult(job="campaign", label="m:parse", executions=1_000, stop_reason=stop_reason)
    result = GateResult(label="m:parse", executions=1_000, stop_reason=stop_reason, decision=GateDecision(),
                        replay=ReplayResult(), campaigns=[campaign])
    return sarif_log(result, root=str(tmp_path))["runs"][0]["invocations"][0]


def test_an_interrupted_run_is_no_successful_execution(tmp_path):
    inv = invocation(StopReason.INTERRUPTED, tmp_path)
    assert inv["executionSuccessful"] is False
    assert inv["properties"]["stop_reason"] == "interrupted"


def test_a_run_that_reached_its_budget_is_a_successful_execution(tmp_path):
    assert invocation(StopReason.BUDGET, tmp_path)["executionSuccessful"] is True
