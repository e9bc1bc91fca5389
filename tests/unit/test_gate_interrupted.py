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


def test_a_gate_interrupted_before_its_campaign_ran_is_no_empty_suite():
    # Ctrl-C while the corpus was being replayed: no campaign ran, no entry was judged. The JUnit file was an
    # empty suite (tests="0" failures="0"), which CI readers show as nothing failed
    cut = GateResult(label="m:parse", stop_reason=StopReason.INTERRUPTED, decision=GateDecision(),
                     replay=ReplayResult(), campaigns=[])
    cases = cut.test_cases()
    assert [c.status for c in cases] == [SKIPPED]
    assert "interrupted" in cases[0].message
    assert cut.counts()["skipped"] == 1


def test_a_gate_interrupted_as_its_campaign_started_is_no_empty_suite():
    campaign = JobResult(job="campaign", label="m:parse", executions=0, stop_reason=StopReason.INTERRUPTED)
    cut = GateResult(label="m:parse", stop_reason=StopReason.INTERRUPTED, decision=GateDecision(),
                     replay=ReplayResult(), campaigns=[campaign])
    assert [c.status for c in cut.test_cases()] == [SKIPPED]
