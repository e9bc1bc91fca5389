"""Executor campaigns end to end: real worker processes, real tenacity / pybreaker / pydantic code,
the bundled executors and the broken ones of ``tests/integration/executor_targets``.

Campaigns run with ``--max-examples`` and a seed (deterministic); the 30 s / 60 s runs of the
issue's must-show list are for a person to run (README, "Test your tool executor").
"""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

from fuzzer.harnesses.executor.job import ExecutorCampaign, ExecutorSettings
from fuzzer.harnesses.executor.policy import Policy, load_policy
from fuzzer.engine.pipeline import run_job
from strategies._internal.tools import builtin_registry
from tests.conftest import ROOT, cli_env

REGISTRY = builtin_registry()
TARGETS = "tests.integration.executor_targets."


def campaign(executor: str, *, examples: int, seed: int = 0, policy: Policy | None = None, **kwargs):
    settings = ExecutorSettings(executor=executor, max_examples=examples, seed=seed, cwd=str(ROOT), **kwargs)
    final = run_job(ExecutorCampaign(settings, registry=REGISTRY, policy=policy or load_policy(cwd=str(ROOT))))
    return final


def test_the_naive_executor_breaks_at_least_five_promises_each_with_a_minimal_reproducible_schedule():
    final = campaign("fuzzer.targets.executor_naive:make_executor", examples=250)
    result = final.result
    verdicts = {f.verdict for f in result.findings}
    assert final.exit_code == 1
    assert {"crash", "retry_violation", "attempts_exceeded", "backoff_violation", "breaker_violation",
            "unvalidated_execution", "duplicate_side_effect", "leaked_secret"} <= verdicts, verdicts
    for finding in result.findings:
        assert finding.is_minimized, finding.signature.id
        assert len(finding.best.steps) <= len(finding.scenario.steps)
        assert finding.best.size_key() <= finding.scenario.size_key()
        assert finding.count >= 1 and finding.reproduce
        report = finding.to_report()
        assert report["schedule"] and report["minimized_scenario"]["steps"]
    single = [f for f in result.findings if f.verdict in ("unvalidated_execution", "attempts_exceeded")]
    assert all(len(f.best.steps) == 1 for f in single)
    # every reproduce command runs as printed and shows the same signature
    for finding in [f for f in result.findings if f.verdict in ("duplicate_side_effect", "backoff_violation")][:2]:
        proc = subprocess.run(shlex.split(finding.reproduce), cwd=ROOT, env=cli_env(), capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 1, proc.stderr
        assert finding.signature.id in proc.stdout
    assert set(result.to_report()["scenarios_by_verdict"]) == {f.verdict for f in result.findings}
    # "seen in" counts the scenarios scenarios_by_verdict counts (those before a finding was confirmed too):
    # a scenario can show two signatures of one verdict, never a verdict without its signature
    for verdict, scenarios in result.scenarios_by_verdict.items():
        counts = [f.count for f in result.findings if f.verdict == verdict]
        assert max(counts) <= scenarios <= sum(counts), (verdict, scenarios, counts)
    assert result.usage.virtual_s > 100 * result.usage.real_s  # waits are virtual


def test_the_robust_executor_keeps_every_promise():
    final = campaign("fuzzer.targets.executor_robust:make_executor", examples=200, seed=4)
    assert final.exit_code == 0, [f.to_report()["reason"] for f in final.result.findings]
    assert not final.result.findings and final.result.executions == 200
    faults = final.result.usage.faults
    assert {"timeout", "http_429", "http_503", "http_404", "commit_then_timeout", "secret_error"} <= set(faults)
    # the JUnit view: one passing case per check
    assert final.result.counts() == {"passed": 11, "failed": 0, "skipped": 0}


def test_one_planted_bug_is_caught_with_exactly_its_verdict():
    final = campaign(TARGETS + "planted:make_executor", examples=300, seed=1)
    found = [(f.verdict, f.signature.title) for f in final.result.findings]
    assert found == [("retry_violation", "retry_violation: retried a non-transient client error (4xx)")]
    assert "http_404" in final.result.findings[0].schedule_text()


def test_the_same_seed_finds_the_same_violations_on_the_same_scenarios():
    runs = [campaign("fuzzer.targets.executor_naive:make_executor", examples=60, seed=9, shrink=False)
            for _ in range(2)]
    first, second = ([(f.signature.id, f.scenario.wire()) for f in r.result.findings] for r in runs)
    assert first == second and first


def test_an_async_executor_runs_on_virtual_time_too():
    final = campaign(TARGETS + "async_executor:make_executor", examples=150, seed=2)
    verdicts = {f.verdict for f in final.result.findings}
    assert "breaker_violation" in verdicts and "crash" not in verdicts, verdicts
    assert final.result.usage.virtual_s > 60


@pytest.mark.parametrize("factory, verdict, title", [
    ("make_hangs", "hang", "hang: stuck in"),
    ("make_dies", "crash", "crash: the target process died"),
    ("make_spins", "attempts_exceeded", "attempts_exceeded"),
])
def test_hangs_deaths_and_endless_retries_are_findings_and_the_campaign_goes_on(factory, verdict, title):
    examples = 8 if factory == "make_hangs" else 30  # each hang costs the watchdog's timeout
    final = campaign(TARGETS + "broken:" + factory, examples=examples, seed=3, timeout=0.5, shrink=False)
    found = [f for f in final.result.findings if f.verdict == verdict]
    assert found and found[0].signature.title.startswith(title), [f.signature.title for f in final.result.findings]
    assert final.result.executions == examples


def test_a_budget_holds_when_scenarios_spin_forever_and_the_hang_is_shrunk_to_its_call():
    """Every scenario that calls ``calculate`` spins until the watchdog kills it: the budget still
    ends the campaign (scenarios in flight at the end are dropped, not waited for), and
    the hang is shrunk to the one call that hangs within it (its share of the budget is a second)."""
    settings = ExecutorSettings(executor=TARGETS + "broken:make_busy_hangs", budget_s=8.0, seed=3, timeout=0.5,
                                cwd=str(ROOT))
    final = run_job(ExecutorCampaign(settings, registry=REGISTRY, policy=load_policy(cwd=str(ROOT))))
    assert final.result.stop_reason.value == "budget"
    (hang,) = [f for f in final.result.findings if f.verdict == "hang"]
    assert hang.minimized is not None and [s.name for s in hang.best.steps] == ["calculate"], hang.best.describe()
    # each hanging candidate costs the timeout: the schedule's shrinking may be cut off, and says so
    assert hang.is_minimized or hang.shrink_note.startswith("shrinking stopped at its time limit")


def test_the_report_is_json_with_the_design_keys(tmp_path):
    from fuzzer.reports.json_report import JsonReportHandler

    path = tmp_path / "r.json"
    settings = ExecutorSettings(executor="fuzzer.targets.executor_naive:make_executor", max_examples=30, seed=5,
                                cwd=str(ROOT))
    run_job(ExecutorCampaign(settings, registry=REGISTRY, policy=Policy()), [JsonReportHandler(str(path))])
    report = json.loads(path.read_text())
    assert report["executions"] == 30 and report["policy"]["max_attempts"] == 10
    for failure in report["failures"]:
        assert {"signature", "verdict", "title", "reason", "input", "minimized_input", "minimized", "reproduce",
                "count", "schedule", "virtual_waits"} <= set(failure)


def test_a_seed_reports_the_same_with_one_worker_or_two_and_wherever_the_scenarios_are_judged():
    """The workers draw and run the scenarios (fuzzer/harnesses/executor/orders.py); one worker sends every
    trace back to be judged by the engine, two judge what they run and send only what is new.
    Either way, and with two workers that cannot judge, a seed gives the same findings on the
    same scenarios and the same counts."""
    from fuzzer.harnesses.executor import job

    def run(workers: int, workers_judge: bool = True):
        original = job.workers_judge
        if not workers_judge:
            job.workers_judge = lambda pool, policy, registry: False
        try:
            return campaign("fuzzer.targets.executor_naive:make_executor", examples=700, seed=5, shrink=False,
                            workers=workers).result
        finally:
            job.workers_judge = original

    one, two, two_not_judging = run(1), run(2), run(2, workers_judge=False)
    assert len(one.findings) >= 5
    for other in (two, two_not_judging):
        assert [(f.signature.id, f.scenario.wire(), f.count) for f in other.findings] == \
            [(f.signature.id, f.scenario.wire(), f.count) for f in one.findings]
        for field in ("executions", "scenarios_by_verdict"):
            assert getattr(other, field) == getattr(one, field), field
        assert (other.usage.calls, other.usage.faults) == (one.usage.calls, one.usage.faults)
        assert other.usage.virtual_s == pytest.approx(one.usage.virtual_s, rel=1e-9)  # added up in another order
    assert one.executions == 700 and two.usage.cpu_s > 0


def test_a_violation_that_does_not_happen_again_is_still_reported_and_fails_the_run():
    """An executor with state kept between scenarios crashes on a scenario that passes when run
    again: the promise was broken all the same. It is a finding (not shrunk, saying why), the run
    fails, and the JUnit case of its verdict is a failure, as the scenario counts say."""
    final = campaign("tests.integration.executor_targets.stateful:make_executor", examples=200, seed=1)
    result = final.result
    crashes = [f for f in result.findings if f.verdict == "crash"]
    assert crashes and final.exit_code == 1
    assert all("did not happen again" in f.shrink_note for f in crashes)
    assert result.scenarios_by_verdict.get("crash", 0) >= 1
    assert not any(case.name == "crash" and case.status == "passed" for case in result.test_cases())


def test_a_pool_judges_only_with_the_campaign_s_own_policy_and_registry():
    from fuzzer.harnesses.executor.job import open_pool, workers_judge
    from strategies._internal.tools import load_registry

    policy = load_policy(cwd=str(ROOT))
    settings = ExecutorSettings(executor="fuzzer.targets.executor_naive:make_executor", cwd=str(ROOT))
    pool = open_pool(settings, policy, REGISTRY)
    try:
        assert workers_judge(pool, policy, REGISTRY)
        assert not workers_judge(pool, Policy(max_attempts=policy.max_attempts + 1), REGISTRY)
        assert not workers_judge(pool, policy, load_registry(str(ROOT / "tests" / "data" / "tools_50.json")))
    finally:
        pool.close()
