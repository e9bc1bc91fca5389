"""The executor harness in the generic corpus machinery: entries of kind executor replay against
an executor (fail on the naive one, pass on the robust one), and two executors compare."""

from __future__ import annotations

from corpus.store import CorpusStore
from fuzzer.engine.corpus_writer import CorpusWriter
from fuzzer.harnesses.executor.harness import classify, compare_executors
from fuzzer.harnesses.executor.job import ExecutorCampaign, ExecutorSettings
from fuzzer.harnesses.executor.policy import Policy
from fuzzer.engine.harness import ReplayContext, load_harnesses
from fuzzer.engine.pipeline import run_job
from strategies._internal.tools import builtin_registry
from tests.conftest import ROOT

NAIVE = "fuzzer.targets.executor_naive:make_executor"
ROBUST = "fuzzer.targets.executor_robust:make_executor"
REGISTRY = builtin_registry()


def test_corpus_entries_replay_through_the_registered_harness(tmp_path):
    settings = ExecutorSettings(executor=NAIVE, max_examples=60, seed=2, cwd=str(ROOT))
    writer = CorpusWriter(CorpusStore(tmp_path / "corpus"), target=NAIVE)
    final = run_job(ExecutorCampaign(settings, registry=REGISTRY, policy=Policy()), [writer])
    items = CorpusStore(tmp_path / "corpus").entries()
    assert len(items) == len(final.result.findings) > 3 and writer.changes["added"] == len(items)
    harness = load_harnesses()["executor"]
    assert harness.option == "--executor"
    context = ReplayContext(registry=REGISTRY, cwd=str(ROOT))
    again = harness.replay(items, NAIVE, context)
    assert [r.status for r in again] == ["fail"] * len(items)
    fixed = harness.replay(items, ROBUST, context)
    assert {r.status for r in fixed} == {"pass"}
    gate = harness.campaign_job(ROBUST, ReplayContext(registry=REGISTRY, cwd=str(ROOT), max_examples=20))
    assert run_job(gate).exit_code == 0


def test_an_entry_without_a_usable_scenario_is_unjudged_not_passed(tmp_path):
    from corpus.store import Entry

    entry = Entry(kind="executor", text="?", signature="crash-000000000000", verdict="crash",
                  scenario={"steps": [{"name": "get_weather", "schedule": {"faults": [{"kind": "http_999"}]}}]})
    [replayed] = load_harnesses()["executor"].replay([("x.json", entry)], NAIVE,
                                                     ReplayContext(registry=REGISTRY, cwd=str(ROOT)))
    assert replayed.status == "unjudged" and "unknown fault kind 'http_999'" in replayed.unjudged


def test_two_executors_on_the_same_scenarios():
    diff = compare_executors(NAIVE, ROBUST, context=ReplayContext(registry=REGISTRY, cwd=str(ROOT), seed=1), count=80)
    assert diff.scenarios == 80 and sum(diff.counts.values()) == 80
    assert diff.counts["fixed"] > 10 and diff.counts["regression"] == 0
    assert all(d.kind == "fixed" and d.old and not d.new for d in diff.differences if d.kind == "fixed")
    assert diff.to_report()["counts"] == diff.counts
    assert [classify(a, b) for a, b in ((["x"], ["x"]), (["x"], []), ([], ["y"]), (["x"], ["y"]))] == [
        "same", "fixed", "regression", "changed"]


def test_an_entry_replays_with_the_tools_and_policy_it_was_found_with(tmp_path):
    """A campaign run with its own tools file and policy stores both in each entry: replay
    without --tools / --executor-policy judges by them (it said "pass", and --update "fixed", for
    bugs still there, judged by the built-in tools and the default policy)."""
    import json

    from fuzzer.harnesses.executor.policy import load_policy
    from strategies._internal.tools import load_registry

    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "lookup_order", "description": "an order by id", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}]))
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text("max_attempts = 3\n")
    policy, registry = load_policy(str(policy_file)), load_registry(str(tools))
    settings = ExecutorSettings(executor=NAIVE, tools_file=str(tools), policy_file=str(policy_file),
                                max_examples=80, seed=2, cwd=str(ROOT))
    run_job(ExecutorCampaign(settings, registry=registry, policy=policy), [CorpusWriter(CorpusStore(tmp_path / "c"),
                                                                                       target=NAIVE)])
    items = CorpusStore(tmp_path / "c").entries()
    assert items and all(entry.scenario["tools"] == str(tools) for _p, entry in items)
    assert {entry.scenario["policy"]["max_attempts"] for _p, entry in items} == {3}
    again = load_harnesses()["executor"].replay(items, NAIVE, ReplayContext(cwd=str(ROOT)))
    assert [r.status for r in again] == ["fail"] * len(items), [(r.status, r.unjudged) for r in again]
    assert [r.signature for r in again] == [entry.signature for _p, entry in items]
    # an entry whose tools cannot be found is not judged, never passed
    for _path, entry in items:
        entry.scenario["tools"] = None
    unjudged = load_harnesses()["executor"].replay(items, NAIVE, ReplayContext(cwd=str(ROOT)))
    assert any(r.unjudged and "lookup_order" in r.unjudged for r in unjudged), [r.unjudged for r in unjudged]
    assert all(r.unjudged or r.status == "fail" for r in unjudged), [(r.status, r.unjudged) for r in unjudged]


def test_a_pass_under_another_policy_than_the_entry_s_is_no_fix(tmp_path):
    """``replay --executor-policy lax.toml`` judges by a policy that may promise less than the one
    an entry was found under: its pass says so, and ``--update`` does not mark the entry fixed
    (a trial's lax policy passed both entries of a bug still there). Under the entry's own policy,
    given again, a pass is a fix as usual."""
    from fuzzer.engine.jobs.replay import ReplayJob, entry_lines
    from fuzzer.harnesses.executor.policy import load_policy

    found_under = tmp_path / "policy.toml"
    found_under.write_text("max_attempts = 3\n")
    other = tmp_path / "other.toml"
    other.write_text("max_attempts = 5\n")
    settings = ExecutorSettings(executor=NAIVE, policy_file=str(found_under), max_examples=60, seed=2, cwd=str(ROOT))
    store = CorpusStore(tmp_path / "c")
    run_job(ExecutorCampaign(settings, registry=REGISTRY, policy=load_policy(str(found_under))),
            [CorpusWriter(store, target=NAIVE)])
    assert store.entries()

    def replay(policy_file, update: bool):
        context = ReplayContext(registry=REGISTRY, cwd=str(ROOT), extra={"executor_policy": str(policy_file)})
        return run_job(ReplayJob(store, {"executor": ROBUST}, context, update=update)).result

    held = replay(other, update=True)
    assert {r.status for r in held.replayed} == {"pass"} and not held.updates
    assert all(r.held and "--executor-policy" in r.held for r in held.replayed)
    assert all("not the policy it was found under" in line for line in entry_lines(held.replayed))
    assert {e.status for _p, e in store.entries()} == {"open"}

    own = replay(found_under, update=True)
    passed = {r.entry.signature for r in own.replayed if r.status == "pass"}
    assert passed and not any(r.held for r in own.replayed)
    assert {s for s, _old, new in own.updates if new == "fixed"} == passed
