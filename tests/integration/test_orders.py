"""Orders (fuzzer/harnesses/parser/orders.py, WorkerPool.run_orders): inputs a worker draws and runs itself are pinned,
counted and filed exactly like the texts the engine sends, and a seed's run stays the same.

The orders here are small classes of this module (the worker unpickles them by name, as it
does :class:`fuzzer.harnesses.parser.orders.FuzzOrder`); the targets are real ones run in real workers.
"""

from __future__ import annotations

import collections
import zlib
from typing import Any

import pytest

from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings
from fuzzer.harnesses.parser.outcome import TargetSpec
from fuzzer.harnesses.parser.tool import ToolCampaign
from fuzzer.isolation import WorkerPool
from fuzzer.isolation.spec import PIN_BYTES, PIN_HEADER, PIN_STRUCT
from fuzzer.isolation.pool import Lost
from fuzzer.isolation.worker import read_pin
from fuzzer.engine.pipeline import run_job
from strategies._internal.tools import load_registry
from tests.conftest import ROOT
from tests.integration.targets.torture import RARITY

REGISTRY = load_registry(None)


class TextsOrder:
    """Run these texts in the worker; the result is (worker index, [(kind, exception) ...])."""

    def __init__(self, texts: list):
        self.texts = texts

    @property
    def size(self) -> int:
        return len(self.texts)

    def run(self, runner: Any) -> tuple:
        return runner.slot, [(o.kind, o.exception) for o in (runner(t, f"tag{i}", i) for i, t in enumerate(self.texts))]


def a_rare_text(prefix: str = "") -> str:
    """A text the torture targets misbehave on (see tests/integration/targets/torture.py)."""
    return next(t for t in (f'{prefix}{{"name": "get_weather", "arguments": {{"city": "c{i}"}}}}' for i in range(100_000))
                if zlib.crc32(t.encode()) % RARITY == 7)


def pool_for(target: str, workers: int = 1, timeout: float = 2.0) -> WorkerPool:
    return WorkerPool(TargetSpec(target, cwd=str(ROOT), timeout=timeout), workers=workers)


def test_an_order_runs_in_one_worker_and_its_result_comes_back():
    with pool_for("fuzzer.targets.reference:parse", workers=2) as pool:
        results = pool.run_orders([TextsOrder(['{"name": "get_weather", "arguments": {}}', "{"])] * 5)
    assert [r[1] for r in results] == [[("returned", None), ("rejected", "ValueError")]] * 5
    assert {r[0] for r in results} <= {0, 1}  # whichever worker was free


def test_raw_results_are_what_the_workers_sent_for_a_relay_to_pass_on():
    """A pool that relays results to another process (a Ray actor's) gets them as the worker sent
    them: an order's result pickled, a text's outcome as its row, a death as its Outcome."""
    import pickle

    from fuzzer.harnesses.parser.outcome import outcome_of

    order = TextsOrder(['{"name": "get_weather", "arguments": {}}', "{"])
    texts = ['{"name": "a", "arguments": {}}', "BOOM", "{"]
    with WorkerPool(TargetSpec("tests.integration.torture_targets:exit3", cwd=str(ROOT)), workers=1) as pool:
        (raw,) = pool.run_orders([order], raw=True)
        (plain,) = pool.run_orders([order])
        rows = pool.run(texts, raw=True)
        outcomes = pool.run(texts)
    assert isinstance(raw, bytes) and pickle.loads(raw) == plain
    assert [type(r).__name__ for r in rows] == ["tuple", "Outcome", "tuple"]
    from dataclasses import replace

    def untimed(items: list) -> list:
        return [replace(o, elapsed=0.0) for o in items]

    assert untimed(outcome_of(r) if isinstance(r, tuple) else r for r in rows) == untimed(outcomes)
    assert [o.kind for o in outcomes] == ["returned", "died", "rejected"]


@pytest.mark.parametrize("target, kind", [("tests.integration.targets.torture:hard_exit", "died"),
                                          ("tests.integration.targets.torture:segfault", "died"),
                                          ("tests.integration.targets.torture:hang_python", "hung")])
def test_a_death_or_hang_inside_an_order_is_pinned_on_the_input_that_caused_it(target, kind):
    culprit = a_rare_text()
    orders = [TextsOrder(["{", "[", culprit, "{"]), TextsOrder(["{"])]
    with pool_for(target, timeout=0.3) as pool:
        lost, after = pool.run_orders(orders)
        again = pool.run_orders([TextsOrder(["{"])])  # the worker was replaced
    assert isinstance(lost, Lost)
    assert (lost.outcome.kind, lost.text, lost.tag, lost.whole, lost.index) == (kind, culprit, "tag2", True, 2)
    assert after[1] == [("rejected", "ValueError")]  # the order queued behind it still ran
    assert again[0][1] == [("rejected", "ValueError")]


def test_a_text_longer_than_the_pin_buffer_keeps_its_beginning():
    culprit = a_rare_text(prefix=" " * PIN_BYTES)
    with pool_for("tests.integration.targets.torture:hard_exit") as pool:
        (lost,) = pool.run_orders([TextsOrder([culprit])])
    assert lost.outcome.kind == "died" and not lost.whole
    assert culprit.startswith(lost.text) and len(lost.text) >= PIN_BYTES - PIN_HEADER - 10


def test_the_pin_is_read_only_for_the_input_it_belongs_to():
    text = "é" * 10  # two bytes each: a cut inside one must still decode
    data = f"t\x00{text}".encode()
    pin = bytearray(PIN_HEADER + len(data))
    pin[PIN_HEADER:] = data
    pin[:PIN_HEADER] = PIN_STRUCT.pack(41, 5, len(data), len(data))
    assert read_pin(memoryview(pin), 41) == ("t", text, True, 5)
    assert read_pin(memoryview(pin), 42) is None  # the worker died before pinning input 42
    pin[:PIN_HEADER] = PIN_STRUCT.pack(41, 5, len(data) - 1, len(data) + 100)
    tag, cut, whole, _ = read_pin(memoryview(pin), 41)
    assert (tag, whole) == ("t", False) and cut.startswith("é" * 9)


class SkippingOrder(TextsOrder):
    """A TextsOrder that, like FuzzOrder, is sent again without an input its worker was lost on."""

    def __init__(self, texts: list):
        super().__init__(texts)
        self.skip, self.lost = set(), []

    def __getstate__(self) -> dict:
        return {"texts": self.texts, "skip": self.skip, "lost": []}

    def resume(self, lost: Any) -> bool:
        self.lost.append(lost)
        self.skip.add(lost.index)
        return True

    def run(self, runner: Any) -> tuple:
        return runner.slot, [(i, runner(t, "", i).kind) for i, t in enumerate(self.texts) if i not in self.skip]


def test_an_order_that_can_resume_is_sent_again_without_each_input_that_hung():
    first, second = a_rare_text(), a_rare_text(prefix="[")
    order = SkippingOrder(["{", first, "{", second, "{"])
    with pool_for("tests.integration.targets.torture:hang_python", timeout=0.3) as pool:
        (result,) = pool.run_orders([order])
    assert result[1] == [(0, "rejected"), (2, "rejected"), (4, "rejected")]  # every other input ran
    assert [(lost.index, lost.text, lost.outcome.kind) for lost in order.lost] == [(1, first, "hung"), (3, second, "hung")]


def test_a_campaign_against_a_parser_that_hangs_often_keeps_searching():
    """Each hang costs its --timeout and is one execution; the rest of its order still runs (a
    lost order used to take its samples and their findings with it)."""
    from fuzzer.harnesses.parser.oracle import Verdict

    settings = CampaignSettings(tools=["get_weather"], target="tests.integration.targets.buggy:hang_on_bracket_text",
                                seed=1, max_examples=1500, budget_s=120.0, shrink_cap_s=1.0)
    with pool_for(settings.target, timeout=0.2) as pool:
        result = run_job(CampaignJob(REGISTRY, settings, pool)).result
    verdicts = collections.Counter(f.verdict for f in result.findings)
    assert verdicts[Verdict.HANG] >= 1, verdicts
    assert result.executions >= 1200  # the budget of executions was spent searching, not lost
    assert verdicts[Verdict.CRASH] >= 1, verdicts  # the planted crash behind the hangs was found


def campaign(target: str, workers: int, seed: int, examples: int, job: type = CampaignJob, timeout: float = 2.0,
             **more: Any) -> Any:
    """A seeded campaign. The oracle that reads the clock (slow) is off and shrinking has time
    enough, so that nothing the run finds depends on how loaded the machine is (a CI run under
    load once cut one shrink short at a 2 s cap). ``more``: other settings."""
    settings = CampaignSettings(tools=["get_weather"], target=target, seed=seed, max_examples=examples,
                                budget_s=120.0, shrink_cap_s=30.0, slow=False, **more)
    with pool_for(target, workers=workers, timeout=timeout) as pool:
        return run_job(job(REGISTRY, settings, pool)).result


def summary(result: Any) -> tuple:
    return (result.executions, {k: (v.executions, v.failures) for k, v in result.tally.by_class.items()},
            sorted((f.signature.id, f.count, f.best.text) for f in result.findings))


def test_a_seed_gives_the_same_run_with_two_workers():
    first = campaign("fuzzer.targets.naive:parse", 2, seed=5, examples=4000)
    second = campaign("fuzzer.targets.naive:parse", 2, seed=5, examples=4000)
    assert first.executions <= 4000 and len(first.findings) >= 3
    assert summary(first) == summary(second)


class CountingTool(ToolCampaign):
    """Counts the orders planned, by class (the test below must see the workers plan some)."""

    planned_by: collections.Counter = collections.Counter()

    def order(self, count: int, number: int, reruns: int) -> Any:
        order = super().order(count, number, reruns)
        CountingTool.planned_by[type(order).__name__] += 1
        return order


class CountingJob(CampaignJob):
    tool_campaign = CountingTool


def test_a_seed_gives_the_same_run_whether_the_engine_or_the_workers_plan_the_orders():
    """Past the scheduler's first pass, a large pool's orders are planned from the scheduler's
    snapshot and each order's seed (fuzzer/harnesses/parser/drawn.py): by the engine or by the
    worker, the same samples run, with the same ground truth, and the run finds the same."""
    CountingTool.planned_by.clear()
    engine = campaign("fuzzer.targets.naive:parse", 2, seed=5, examples=6000, job=CountingJob, timeout=20.0,
                      planning="snapshots")  # (a timeout no load reaches: no load-made hang on either side)
    assert CountingTool.planned_by["DrawOrder"] == 0 and CountingTool.planned_by["FuzzOrder"] >= 10
    CountingTool.planned_by.clear()
    workers = campaign("fuzzer.targets.naive:parse", 2, seed=5, examples=6000, job=CountingJob, timeout=20.0,
                       planning="workers")
    assert CountingTool.planned_by["DrawOrder"] >= 10, CountingTool.planned_by  # most orders were planned there
    assert len(engine.findings) >= 3
    assert summary(engine) == summary(workers)


def test_counts_from_the_workers_add_up_and_each_failure_is_filed_once():
    result = campaign("fuzzer.targets.naive:parse", 2, seed=3, examples=3000)
    assert result.executions == sum(s.executions for s in result.tally.by_class.values()) <= 3000
    failures = sum(s.failures for s in result.tally.by_class.values())
    # every failing execution is counted by exactly one finding (the naive parser is deterministic:
    # no re-run failed)
    assert sum(f.count for f in result.findings) == failures > 0
    kinds = collections.Counter(f.verdict.value for f in result.findings)
    assert kinds["crash"] >= 1 and kinds["corruption"] >= 1, kinds


def test_a_worker_keeps_one_registry_for_the_visits_that_bring_the_same_one():
    """Compiled generators and validators are cached on tool objects: a visit must not bring a
    fresh copy of a registry the worker already holds (each copy's tools were compiled again)."""
    import pickle

    from fuzzer.harnesses.parser.orders import FuzzOrder, Visit, _state_for
    from strategies._internal.tools import registry_digest as registry_key

    def state(registry: Any, tool: str, key: str) -> Any:
        visit = Visit(registry=registry, tool=tool, operators=[], level="parse", registry_key=registry_key(registry))
        return _state_for(FuzzOrder(key, pickle.dumps(visit), [], 0, 0, 0), None)

    first, second = state(REGISTRY, "get_weather", "v1"), state(REGISTRY, "calculate", "v2")
    assert first.visit.registry is second.visit.registry
    assert first.tool is second.visit.registry["get_weather"]
    other = load_registry(str(ROOT / "tests" / "data" / "tools_50.json"))
    third = state(other, other.names()[0], "v3")
    assert third.visit.registry is not first.visit.registry
    assert third.visit.registry.names() == other.names()
    assert registry_key(REGISTRY) != registry_key(other)


def test_a_tool_s_share_of_the_budget_ends_without_restarting_a_worker():
    """Each tool gets a share of --budget; at its end the orders still running finish (their
    workers stay warm) instead of being killed, and every tool still gets fuzzed."""
    names = REGISTRY.names()
    settings = CampaignSettings(tools=names, target="fuzzer.targets.reference:parse", budget_s=len(names) * 0.6,
                                formats=["json"], explore=False, slow=False, confirm=False)
    with pool_for("fuzzer.targets.reference:parse", workers=1) as pool:
        result = run_job(CampaignJob(REGISTRY, settings, pool)).result
        assert pool.restarts <= 1, pool.restarts  # (the last tool's orders, at the hard deadline)
    assert result.executions > 1000
    assert result.stop_reason.value == "budget"  # it was the budget that ended the campaign


class HeldRegistryOrder:
    """Report what this worker holds before any visit: the registries kept, and for each, the
    tools whose generator and validator are already compiled."""

    size = 1
    lost: list = []

    def run(self, runner: Any) -> Any:
        from fuzzer.harnesses.parser import orders
        from strategies._internal.schema import compiler, validators

        held = {}
        for key, registry in orders._REGISTRIES.items():
            held[key] = sorted(tool.name for tool in registry
                               if compiler._TOOL_CACHE.get((tool.name, id(tool)), (None,))[0] is tool
                               and validators._VALIDATORS.get(id(tool), (None,))[0] is tool)
        return held

    def resume(self, lost: Any) -> bool:
        return False


def test_every_worker_a_campaign_starts_inherits_its_tools_compiled():
    """The campaign compiles its tools before its pool forks the zygote, so a worker, even one
    started again later, does not compile each tool on its first visit (a few ms a tool, and up to
    seconds for a hypothesis-jsonschema pool)."""
    from contextlib import closing

    from strategies._internal.tools import registry_digest

    registry = load_registry(str(ROOT / "tests" / "data" / "tools_50.json"))
    names = registry.names()[:5]
    settings = CampaignSettings(tools=names, target="fuzzer.targets.reference:parse", max_examples=200,
                                formats=["json"], explore=False, slow=False, confirm=False, shrink=False)
    with closing(WorkerPool(TargetSpec("fuzzer.targets.reference:parse", cwd=str(ROOT)), workers=1)) as pool:
        run_job(CampaignJob(registry, settings, pool))  # it starts the pool
        pool.run(["{}"], fresh=True)  # a worker that has run no visit
        held = pool.run_orders([HeldRegistryOrder()])[0]
    assert held.get(registry_digest(registry)) == sorted(names), held


def test_a_cut_off_input_that_was_declined_but_did_something_unsafe_is_judged_unsafe():
    """A cut-off of a valid output may only be declined, and a decline is counted without judging
    it — unless the target did something unsafe meanwhile: every cut-off here is a failure."""
    import pickle

    from fuzzer.harnesses.parser.orders import FuzzOrder, Visit
    from fuzzer.harnesses.parser.schedule import TRUNCATION_SWEEP, Variation
    from strategies._internal.tools import registry_digest

    visit = Visit(registry=REGISTRY, tool="get_weather", operators=[TRUNCATION_SWEEP], level="parse",
                  registry_key=registry_digest(REGISTRY))
    plan = [(Variation("json"), [None], 0)] * 6  # valid samples, each followed by its cut-offs
    with pool_for("tests.integration.targets.torture:system_on_broken_json") as pool:
        (result,) = pool.run_orders([FuzzOrder("cuts", pickle.dumps(visit), plan, 7, 1000, 0)])
    executions, failures = result.by_class["truncated_output"]
    assert executions >= 6 * 10 and failures == executions
    assert result.by_class["valid"] == [6, 0]
    (failure,) = result.failures
    sample, outcome, judgment, count = failure[:4]
    assert (judgment.verdict, sample.operator, count) == ("unsafe", TRUNCATION_SWEEP, executions)
    assert outcome.kind == "rejected" and outcome.unsafe[0][0] == "os.system"
