"""The gate's last console line says what the gate decided, and an interrupted gate decided
nothing (tests/unit/test_gate_interrupted.py): only a gate that ran to its end with nothing
blocking is called passed, and a blocking gate is BLOCKED whether it was interrupted or not."""

from __future__ import annotations

import pytest

from fuzzer.engine.decisions import GateDecision
from fuzzer.engine.events import StopReason
from fuzzer.engine.jobs.gate import GateResult
from fuzzer.engine.jobs.replay import ReplayResult


def _result(decision: GateDecision, stop: StopReason) -> GateResult:
    return GateResult(decision=decision, replay=ReplayResult(), stop_reason=stop)


@pytest.mark.parametrize("stop", [StopReason.BUDGET, StopReason.MAX_EXAMPLES, StopReason.DONE])
def test_a_gate_that_ran_to_its_end_with_nothing_blocking_passed(stop):
    assert _result(GateDecision(), stop).summary_lines()[-1] == "gate: passed"


@pytest.mark.parametrize("stop", [StopReason.INTERRUPTED, StopReason.BUDGET])
def test_a_blocking_gate_is_blocked_interrupted_or_not(stop):
    assert _result(GateDecision(unreadable=("corp/x.json: not JSON",)), stop).summary_lines()[-1] == "gate: BLOCKED"
