"""A gate stopped with Ctrl-C says so: never "gate: passed", never a passing campaign test case.

Its exit status is 130 (fuzzer.engine.decisions), but the console's last line and the JUnit file
are what a CI reader looks at: an interrupted gate printed "gate: passed" and a JUnit suite of
no failure, its short campaign a passing test case, though it was cut short.
"""

from __future__ import annotations

from fuzzer.engine.decisions import GateDecision
from fuzzer.engine.events import StopReason
from fuzzer.engine.jobs.gate import GateResult
from fuzzer.engine.jobs.replay import ReplayResult
from fuzzer.engine.results import PASSED, SKIPPED, JobResult


def gate(stop_reason: StopReason) -> GateResult:
    campaign = JobResult(job="campaign", label="m:parse", executions=82_928, stop_reason=stop_reason)
    return GateResult(label="m:parse", executions=82_928, stop_reason=stop_reason, decision=GateDecision(),
                      replay=ReplayResult(), campaigns=[campaign])


def test_an_interrupted_gate_does_not_say_it_passed():
    last = gate(StopReason.INTERRUPTED).summary_lines()[-1]
    assert last.startswith("gate: interrupted") and "passed" not in last.replace("not passed", "")


def test_an_interrupted_gate_s_campaign_is_no_passing_test_case():
    cases = [c for c in gate(StopReason.INTERRUPTED).test_cases() if c.classname == "toolfuzz.gate.campaign"]
    assert [c.status for c in cases] == [SKIPPED]
    assert "interrupted" in cases[0].message


def test_a_gate_that_ran_to_its_end_passes_as_before():
    finished = gate(StopReason.BUDGET)
    assert finished.summary_lines()[-1] == "gate: passed"
    assert [c.status for c in finished.test_cases() if c.classname == "toolfuzz.gate.campaign"] == [PASSED]
