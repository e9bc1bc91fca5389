"""The gate's --budget is its short campaigns' together: each gets an equal share (a parser and an
executor each used to get all of it: 8 s became 16 s and more). Checked on the budgets the gate
hands its campaigns, with stand-in campaigns: no worker, no clock."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from corpus.store import InMemoryStore
from fuzzer.engine.jobs import gate
from fuzzer.engine.events import JobStarted
from fuzzer.engine.harness import ReplayContext, load_harnesses
from fuzzer.engine.pipeline import Job, run_job
from fuzzer.engine.results import JobResult


class StandIn(Job):
    """A campaign that runs nothing and reports its budget as its label."""

    name = "campaign"

    def __init__(self, budget_s: Any):
        super().__init__()
        self.budget_s = budget_s

    def run(self):
        yield JobStarted(self.name, "stand-in", budget_s=self.budget_s)

    def result(self) -> JobResult:
        return JobResult(job="campaign", label=str(self.budget_s), executions=1)

    def exit_code(self, result: Any) -> int:
        return 0


@pytest.mark.parametrize("kinds, budget, each", [
    (("parser", "executor"), 8.0, 4.0),
    (("parser", "executor", "agent"), 9.0, 3.0),
    (("parser",), 8.0, 8.0),
    (("parser", "executor"), None, None),
])
def test_each_short_campaign_gets_an_equal_share_of_the_gate_s_budget(monkeypatch, kinds, budget, each):
    harnesses = load_harnesses()
    given: list = []

    def stand_in(reference: str, context: ReplayContext) -> Job:
        given.append(context.budget_s)
        return StandIn(context.budget_s)

    monkeypatch.setattr(gate, "load_harnesses",
                        lambda: {kind: replace(harnesses[kind], campaign_job=stand_in) for kind in kinds})
    job = gate.GateJob(InMemoryStore(), {kind: f"m_{kind}:f" for kind in kinds}, ReplayContext(budget_s=budget))
    final = run_job(job)
    assert given == [each] * len(kinds)
    assert [c.label for c in final.result.campaigns] == [str(each)] * len(kinds)
