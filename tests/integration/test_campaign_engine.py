"""The campaign job (:class:`fuzzer.harnesses.parser.campaign.CampaignJob`) driven directly, with a real WorkerPool.

These check what the CLI's output cannot show: the order samples are scheduled in, what the engine
re-runs, and that a finding's minimized sample still fails the same way when judged again from
scratch. ``Recording`` subclasses the per-tool engine only to look at the samples the workers draw
(``keep_drawn``: each order's result lists them); it changes nothing they contain.
"""

from __future__ import annotations

import collections
import os
import signal
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings
from fuzzer.harnesses.parser.tool import ToolCampaign
from fuzzer.harnesses.parser.outcome import TargetSpec
from fuzzer.isolation import WorkerPool
from fuzzer.engine.events import StopReason
from fuzzer.engine.pipeline import run_job
from fuzzer.harnesses.parser.damage import coarse_damage
from fuzzer.harnesses.parser.oracle import Oracle, Verdict
from strategies._internal.build import build_family
from strategies._internal.mutations import OPERATORS
from strategies._internal.source import RandomSource
from strategies._internal.tools import load_registry
from tests.conftest import ROOT
from tests.integration.targets import torture

REGISTRY = load_registry(None)
TOOLS = REGISTRY.names()


class RecordingTool(ToolCampaign):
    """The per-tool engine, keeping for each order the (operator, class) of each sample drawn."""

    batches: list = []
    keep_drawn = True

    def _take(self, result: Any, order: Any) -> int:
        if getattr(result, "drawn", None) is not None:
            RecordingTool.batches.append(result.drawn)
        return super()._take(result, order)


class Recording(CampaignJob):
    tool_campaign = RecordingTool

    @property
    def batches(self) -> list:
        return RecordingTool.batches

    def first_samples(self, n: int) -> list:
        """The first ``n`` fuzzing samples, whatever the orders were."""
        return [s for batch in RecordingTool.batches for s in batch][:n]


def run_campaign(pool: Any, cls: type = CampaignJob, **settings: Any) -> CampaignJob:
    settings.setdefault("budget_s", 30.0)
    settings["tools"] = [settings.pop("tool")]
    shrink_budget = settings.pop("shrink_budget_s", None)
    if shrink_budget is not None:
        settings["shrink_cap_s"] = shrink_budget
    RecordingTool.batches = []
    campaign = cls(REGISTRY, CampaignSettings(target=pool.spec.target, **settings), pool)
    final = run_job(campaign)
    campaign.result_ = final.result
    return campaign


def pool_for(target: str, timeout: float = 2.0) -> WorkerPool:
    return WorkerPool(TargetSpec(target, cwd=str(ROOT), timeout=timeout))


@pytest.fixture(scope="module")
def reference_pool():
    with pool_for("fuzzer.targets.reference:parse") as pool:
        yield pool


@pytest.fixture(scope="module")
def naive_pool():
    with pool_for("fuzzer.targets.naive:parse") as pool:
        yield pool


def applicable(campaign: CampaignJob, tool: str) -> set[str]:
    formats = set(campaign.result_.supported)
    return {name for name, op in OPERATORS.items() if any(op.applies(REGISTRY[tool], f) for f in formats)}


def commonly_buildable(tool: str, formats: list[str], attempts: int = 8, rate: float = 0.25) -> set[str]:
    """Operators that can mutate at least ``rate`` of this tool's drawn calls in the formats.

    ``Operator.applies`` only says the tool's schema allows an operator; whether a drawn call has
    something to mutate (an optional argument present, a number with two digits to cut) is only
    known by building. An operator that rarely finds anything is retired by the scheduler on
    purpose, so only the common ones must show up early."""
    built: collections.Counter = collections.Counter()
    tried: collections.Counter = collections.Counter()
    source = RandomSource(20261130)
    for fmt in sorted(formats):
        ops = sorted(n for n, op in OPERATORS.items() if op.applies(REGISTRY[tool], fmt))
        for _ in range(attempts):
            source.reset()
            family = build_family(source, registry=REGISTRY, tool=REGISTRY[tool], format=fmt, operators=ops,
                                  chatter=False, multi=False)
            for op, sample in zip(ops, family):
                tried[op] += 1
                built[op] += sample is not None
    return {op for op in tried if built[op] >= rate * tried[op]}


# -- every class early ----------------------------------------------------------------------

# The first 256 fuzzing samples plus the format probes; ten batches more for the operators.
FIRST_BATCH_ONLY = 256
TEN_BATCHES = 2560


@pytest.mark.parametrize("tool", TOOLS)
def test_every_class_is_tried_in_the_first_batch(reference_pool, tool):
    for seed in range(3):
        campaign = run_campaign(reference_pool, Recording, tool=tool, seed=seed, max_examples=400 + FIRST_BATCH_ONLY)
        assert campaign.result_.findings == []
        classes = {OPERATORS[op].anomaly_class for op in applicable(campaign, tool)}
        first = {cls for _, cls in campaign.first_samples(FIRST_BATCH_ONLY)}
        assert classes <= first, (seed, sorted(classes - first))
        assert None in first  # valid samples too


@pytest.mark.parametrize("tool", TOOLS)
def test_every_applicable_operator_is_tried_within_ten_batches(reference_pool, tool):
    campaign = run_campaign(reference_pool, Recording, tool=tool, seed=0, max_examples=400 + TEN_BATCHES)
    tried = {op for batch in campaign.batches for op, _ in batch}
    missing = commonly_buildable(tool, list(campaign.result_.supported)) - tried
    assert not missing, sorted(missing)


def test_every_applicable_operator_is_tried_in_the_first_batch(reference_pool):
    missing = {}
    for tool in TOOLS:
        for seed in range(3):
            campaign = run_campaign(reference_pool, Recording, tool=tool, seed=seed,
                                    max_examples=400 + FIRST_BATCH_ONLY)
            first = {op for op, _ in campaign.first_samples(FIRST_BATCH_ONLY)}
            gap = commonly_buildable(tool, list(campaign.result_.supported)) - first
            if gap:
                missing[(tool, seed)] = sorted(gap)
    assert not missing, missing


# -- nondeterminism -------------------------------------------------------------------------


def test_a_target_that_answers_differently_on_reruns_is_a_nondeterminism_finding():
    # Re-runs are drawn among passing inputs (1 in 100), and a re-run of a valid one differs one time
    # in three: 3,000 examples gave about five such re-runs, missed by some seeds; 20,000 give ~35.
    with pool_for("tests.integration.targets.buggy:flaky") as pool:
        campaign = run_campaign(pool, tool="get_weather", seed=1, max_examples=20000)
    verdicts = collections.Counter(f.verdict for f in campaign.result_.findings)
    assert verdicts[Verdict.NONDETERMINISM] >= 1, verdicts
    # the flaky answer is "no call" on a valid output; nothing else is wrong with this target
    assert set(verdicts) <= {Verdict.NONDETERMINISM, Verdict.FALSE_REJECT}, verdicts
    for finding in campaign.result_.findings:
        if finding.verdict is Verdict.NONDETERMINISM:
            assert "the same input gave" in finding.reason


def test_a_deterministic_target_gets_no_nondeterminism_finding(naive_pool):
    campaign = run_campaign(naive_pool, tool="get_weather", seed=2, max_examples=20000)
    assert campaign.result_.findings
    assert all(f.verdict is not Verdict.NONDETERMINISM for f in campaign.result_.findings)


# -- a Ctrl-C keeps the books balanced ---------------------------------------------------------


class CtrlCAtFailure(CampaignJob):
    """Sends itself a real SIGINT as its ``at``-th failing execution is booked: the moment a
    Ctrl-C does the most harm, after the failure is counted in its class, before its finding."""

    at = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.booked = 0
        book = self.subject.on_failure  # what every tool hands its failures to

        def on_failure(failure: Any) -> None:
            self.booked += 1
            if self.booked == self.at:
                os.kill(os.getpid(), signal.SIGINT)
            book(failure)

        self.subject.on_failure = on_failure


@pytest.mark.parametrize("at", [1, 9, 60])
def test_a_ctrl_c_while_a_failure_is_booked_leaves_class_failures_equal_to_finding_counts(naive_pool, at):
    CtrlCAtFailure.at = at
    campaign = run_campaign(naive_pool, CtrlCAtFailure, tool="get_weather", seed=3, max_examples=20000)
    result = campaign.result_
    assert result.stop_reason is StopReason.INTERRUPTED
    assert campaign.booked >= at
    in_classes = sum(s.failures for s in result.by_class.values())
    in_findings = sum(f.count for f in result.findings if f.verdict not in (Verdict.NONDETERMINISM, Verdict.SLOW))
    assert in_classes == in_findings > 0


# -- shrinking keeps the signature -----------------------------------------------------------


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=2**31 - 1), tool=st.sampled_from(["get_weather", "book_hotel"]))
def test_minimized_samples_fail_with_the_same_signature_when_judged_again(naive_pool, seed, tool):
    campaign = run_campaign(naive_pool, tool=tool, seed=seed, max_examples=6000, shrink_budget_s=6.0)
    # nondeterminism and slow are judged over several runs, never one; a finding the shrink window
    # (seconds: a loaded machine shrinks fewer) left unminimized has nothing to judge again
    findings = [f for f in campaign.result_.findings if f.verdict not in (Verdict.NONDETERMINISM, Verdict.SLOW)
                and f.minimized is not None]
    assert len(findings) >= 3
    oracle = Oracle(REGISTRY, "parse")
    outcomes = naive_pool.run([f.best.text for f in findings])
    for finding, outcome in zip(findings, outcomes):
        assert len(finding.best.text) <= len(finding.sample.text)
        judgment = oracle.judge(finding.best, outcome)
        assert judgment.verdict is finding.verdict, (finding.signature, judgment)
        # (the oracle's signature: a finding filed by its format or path keeps the one it matched)
        assert oracle.signature(finding.best, judgment, outcome).id == finding.oracle_id
        if finding.verdict in (Verdict.CORRUPTION, Verdict.FALSE_REJECT) and finding.sample.recipe is not None:
            # built from a recipe, shrunk structurally: the truth was recomputed, not guessed for an
            # edited text (exploration's havoc has no recipe and shrinks as text)
            assert finding.best.truth_known and finding.best.recipe is not None


def test_an_unsafe_first_call_does_not_make_another_bug_look_state_dependent():
    """A fresh worker's first call builds the target's model (marshal data: unsafe, its own
    finding); confirming the dropped argument alone in a fresh worker must still count as alone."""
    with pool_for("tests.integration.targets.buggy:lazy_model_drops_unit") as pool:
        campaign = run_campaign(pool, tool="get_weather", seed=0, max_examples=1500, formats=["json"],
                                shrink_budget_s=2.0)
    findings = campaign.result_.findings
    assert any(f.verdict is Verdict.UNSAFE for f in findings), [f.title for f in findings]
    dropped = [f for f in findings if f.verdict is Verdict.CORRUPTION and "unit" in f.title]
    assert dropped and all(not f.history and "earlier inputs" not in f.title for f in dropped), \
        [(f.title, f.notes) for f in findings]


# -- what the engine re-runs -----------------------------------------------------------------


def test_shrinking_a_hang_does_not_rerun_the_same_hanging_text():
    hung: collections.Counter = collections.Counter()
    # A wall-clock timeout: at 0.25 s, a worker starved of CPU by the rest of a parallel suite on
    # 2 cores was once taken for hung on an ordinary input.
    with pool_for("tests.integration.targets.torture:hang_python", timeout=0.6) as pool:
        class Watched:
            """The pool, counting how often each hanging text is run."""

            spec, workers = pool.spec, pool.workers
            start, close = pool.start, pool.close

            @staticmethod
            def run_orders(orders: list, **kw: Any) -> list:
                results = pool.run_orders(orders, **kw)
                for order in orders:  # a hang in a worker's own samples: pinned on its input
                    for lost in order.lost:
                        if lost.outcome.kind == "hung":
                            hung[lost.text] += 1
                return results

            @staticmethod
            def run(texts: list, **kw: Any) -> list:
                outcomes = pool.run(texts, **kw)
                for text, outcome in zip(texts, outcomes):
                    if text.__class__ is tuple:  # a cut-off sent as (index of its base text, end)
                        text = texts[text[0]][:text[1]]
                    if outcome is not None and outcome.kind == "hung":
                        hung[text] += 1
                return outcomes

        run_campaign(Watched, tool="get_weather", seed=0, max_examples=1500, budget_s=30, shrink_budget_s=2.0)
    assert hung, "the hang target never hung"
    assert all(torture.rare(text) for text in hung)  # every hang was pinned on a triggering input
    # found once, then at most one re-check by each of the two shrinking stages, and one run at
    # twice the timeout: the input kept must hang with margin (fuzzer.engine.hangs)
    assert max(hung.values()) <= 4, hung.most_common(3)


def test_one_stuck_loop_is_one_hang_whichever_helper_its_stack_was_caught_in():
    """A loop that spins calling a helper is dumped sometimes in the loop, sometimes in the helper;
    the two stacks are one hang (one extends the other), filed once and counted there."""
    with pool_for("tests.integration.targets.buggy:stuck_scanner", timeout=0.3) as pool:
        campaign = run_campaign(pool, tool="get_weather", seed=1, max_examples=3000, formats=["hermes"],
                                shrink_budget_s=2.0)
    hangs = [f for f in campaign.result_.findings if f.verdict is Verdict.HANG]
    assert len(hangs) == 1, [(f.title, f.outcome.frames) for f in hangs]
    assert hangs[0].count >= 2 and hangs[0].outcome.frames[-1][1] in ("stuck_scanner", "_skip_spaces")
    # replayed from the corpus, it is the same entry whichever of the two frames the dump catches
    from fuzzer.engine.harness import ReplayContext, load_harnesses

    entry = hangs[0].to_entry(target="tests.integration.targets.buggy:stuck_scanner")
    for frames in ([["buggy.py", "stuck_scanner"]], [["buggy.py", "stuck_scanner"], ["buggy.py", "_skip_spaces"]]):
        entry.scenario = {**(entry.scenario or {}), "frames": frames}
        (replayed,) = load_harnesses()["parser"].replay([("e.json", entry)], "tests.integration.targets.buggy:stuck_scanner",
                                                       ReplayContext(registry=REGISTRY, cwd=str(ROOT), timeout=0.3))
        assert (replayed.status, replayed.signature) == ("fail", entry.signature), replayed


def test_a_target_that_keeps_state_gets_findings_that_reproduce_alone():
    """Shrinking runs candidates in warm workers: for a target that keeps state, a candidate can
    fail only because of what ran before it. Every input a finding shows as failing on its own
    must fail on its own (here: in a fresh worker, as a reproduce command runs it); and
    corruptions the budget left unconfirmed are not one finding per pair of characters altered."""
    target = "tests.integration.targets.buggy:cached_by_length"
    settings = CampaignSettings(tools=["get_weather"], target=target, budget_s=10.0, seed=2, formats=["hermes"],
                                explore=False, slow=False)
    oracle = Oracle(REGISTRY, "parse")
    with pool_for(target) as pool:
        result = run_job(CampaignJob(REGISTRY, settings, pool)).result
        shown_alone = [f for f in result.findings if f.minimized is not None and not f.history
                       and "|history" not in f.signature.key
                       and f.verdict not in (Verdict.NONDETERMINISM, Verdict.HANG, Verdict.SLOW)]
        assert shown_alone, [f.signature.title for f in result.findings]
        for finding in shown_alone:
            (outcome,) = pool.run([finding.best.text], fresh=True)
            assert oracle.judge(finding.best, outcome).failed, (finding.signature.title, finding.notes, finding.shrink_note, finding.found_at_s, finding.best.text == finding.sample.text)
    unconfirmed = [f for f in result.findings if f.verdict is Verdict.CORRUPTION and f.minimized is None
                   and "|path|" not in f.signature.key and "|history" not in f.signature.key]
    # how many the budget leaves unconfirmed depends on the machine's speed; what may not happen
    # is two of them with one kind of damage (a stale cache altered 29 strings: 29 findings)
    kinds = [(f.sample.tool, f.level, coarse_damage(*_judged(oracle, f))[0]) for f in unconfirmed]
    assert len(kinds) == len(set(kinds)), [f.signature.title for f in unconfirmed]


def _judged(oracle, finding):
    judgment = oracle.judge(finding.sample, finding.outcome)
    return judgment.key, judgment.reason


class ProbesRecordingTool(ToolCampaign):
    """Records, per probe build, the tool, whether it ran in the engine's main thread, and the texts."""

    builds: list = []

    def build_probes(self, examples: Any = None) -> tuple:
        import threading

        built = super().build_probes(examples)
        ProbesRecordingTool.builds.append((self.tool.name, threading.current_thread() is threading.main_thread(),
                                           [s.text for s in built[1]]))
        return built


class ProbesRecording(CampaignJob):
    tool_campaign = ProbesRecordingTool


def test_the_next_tool_s_probes_are_built_while_this_one_is_fuzzed_and_are_the_same_samples(reference_pool):
    """The worker would otherwise wait for the engine to build each tool's probes (a twentieth of
    a 54-tool campaign). Built ahead in a thread, they must be exactly the samples the tool builds
    in turn, so a seed's run does not depend on it."""
    tools = TOOLS[:3]
    ProbesRecordingTool.builds = []
    # the next tool is prepared when this one's first round is sent: 3 s a tool, so that probing
    # on a loaded machine (CI: 4 test workers on 2 cores) cannot use up a slice before it (2 s did
    # once, in a full suite run)
    campaign = ProbesRecording(REGISTRY, CampaignSettings(target=reference_pool.spec.target, tools=tools, budget_s=9.0),
                               reference_pool)
    run_job(campaign)
    builds = ProbesRecordingTool.builds
    assert [name for name, _main, _texts in builds] == tools  # each built once
    assert builds[0][1] and not builds[1][1] and not builds[2][1]  # the later ones in the thread
    ProbesRecordingTool.builds = []
    for index, name in enumerate(tools):
        campaign._new_tool_campaign(index, name).build_probes()  # in turn, in the main thread
    assert [texts for _n, _m, texts in ProbesRecordingTool.builds] == [texts for _n, _m, texts in builds]


class Beside(CampaignJob):
    """The campaign, noting the rounds run without filing (beside a settle) and filed later."""

    beside: list = []

    def run_round(self, *args: Any, file: bool = True, **kwargs: Any) -> Any:
        out = super().run_round(*args, file=file, **kwargs)
        if not file:
            Beside.beside.append((threading.current_thread().name, sum(
                r.executions for r in out[1] if r is not None and hasattr(r, "executions"))))
        return out


def test_under_a_budget_findings_are_settled_while_rounds_go_on_and_every_execution_is_counted(naive_pool):
    """Confirming and shrinking run in a worker of their own while the campaign's workers go on
    fuzzing in a thread: under --budget the workers no longer wait for the shrink share. Those
    rounds are filed afterwards, in the campaign's thread: the counts add up, and the findings are
    confirmed and minimized as ever. With --max-examples (a seed's run stays the same) there are
    no such rounds."""
    Beside.beside = []
    campaign = run_campaign(naive_pool, cls=Beside, tool="get_weather", budget_s=6.0)
    result = campaign.result_
    assert Beside.beside and all(name == "toolfuzz-rounds" for name, _n in Beside.beside)
    assert sum(n for _name, n in Beside.beside) > 0
    assert result.executions == sum(stats.executions for stats in result.by_class.values())
    assert len(result.findings) >= 5 and any(f.is_minimized for f in result.findings)
    Beside.beside = []
    run_campaign(naive_pool, cls=Beside, tool="get_weather", budget_s=None, max_examples=3000)
    assert Beside.beside == []


def test_a_tool_with_its_own_number_of_executions_is_not_fuzzed_beside_and_keeps_to_it(naive_pool):
    """A tools file's ``max_examples`` for a tool, under the default time budget: rounds beside a
    settle could not stop at the number, so that tool's findings are settled between rounds."""
    Beside.beside = []
    campaign = run_campaign(naive_pool, cls=Beside, tool="get_weather", budget_s=20.0,
                            per_tool={"get_weather": {"max_examples": 1500}})
    assert Beside.beside == []
    assert 0 < campaign.result_.executions <= 1500
    assert campaign.result_.findings


WAITING = threading.Event()


class InterruptedBeside(Beside):
    """A round beside a settle that is still running when the campaign's thread waits for it,
    and a Ctrl-C that lands during that wait: the round sends it once the campaign's thread has
    begun waiting (:data:`WAITING`, set by the test's wrapper of ``RoundsBeside.finish``)."""

    def run_round(self, *args: Any, file: bool = True, **kwargs: Any) -> Any:
        out = super().run_round(*args, file=file, **kwargs)
        if not file and len(Beside.beside) == 1:
            assert WAITING.wait(120), "the campaign's thread never waited for the round"
            os.kill(os.getpid(), signal.SIGINT)
        return out

    def _settle(self) -> Any:
        if self._settling_pool is not None:
            return  # settled at once: the campaign's thread goes straight to waiting for the round
        yield from super()._settle()


def test_a_ctrl_c_while_waiting_for_the_rounds_beside_still_files_what_they_ran(monkeypatch):
    """What the rounds beside a settle ran is counted and its findings filed, even when a Ctrl-C
    lands while the campaign's thread waits for them (it used to leave that wait at once)."""
    from fuzzer.engine.rounds_beside import RoundsBeside

    finish = RoundsBeside.finish

    def waiting(self: Any) -> Any:
        WAITING.set()
        return finish(self)

    WAITING.clear()
    monkeypatch.setattr(RoundsBeside, "finish", waiting)
    Beside.beside = []
    with pool_for("fuzzer.targets.naive:parse") as pool:
        campaign = run_campaign(pool, cls=InterruptedBeside, tool="get_weather", budget_s=20.0)
    result = campaign.result_
    assert result.stop_reason is StopReason.INTERRUPTED
    assert len(Beside.beside) == 1 and Beside.beside[0][1] > 0
    assert result.executions >= Beside.beside[0][1]
    assert result.executions == sum(stats.executions for stats in result.by_class.values())


class SecondCtrlC(CampaignJob):
    """A Ctrl-C right after the first finding is announced, and a second one as soon as the
    wrap-up starts (it stops announcing the rest)."""

    def run(self) -> Any:
        from fuzzer.engine.events import FindingRecorded

        for event in super().run():
            yield event
            if isinstance(event, FindingRecorded):
                raise KeyboardInterrupt

    def wrap_up(self, interrupted: bool) -> Any:
        raise KeyboardInterrupt
        yield  # (a generator)


def test_every_finding_of_the_result_reaches_the_corpus_even_when_a_second_ctrl_c_cuts_the_wrap_up(
        naive_pool, tmp_path):
    from corpus.store import CorpusStore
    from fuzzer.engine.corpus_writer import CorpusWriter

    store = CorpusStore(tmp_path / "corp")
    writer = CorpusWriter(store, target=naive_pool.spec.target)
    job = SecondCtrlC(REGISTRY, CampaignSettings(target=naive_pool.spec.target, tools=["get_weather"],
                                                 budget_s=None, max_examples=3000), naive_pool)
    final = run_job(job, [writer])
    findings = final.result.findings
    assert final.result.stop_reason is StopReason.INTERRUPTED and len(findings) >= 2
    stored = {entry.signature for _path, entry in store.entries()}
    assert {f.signature.id for f in findings} <= stored
    assert writer.changes.get("added") == len(findings)


def test_a_hang_caught_in_an_order_is_booked_even_when_a_ctrl_c_comes_before_its_order_finishes(monkeypatch):
    """A worker hung on an input of an order (it cost its --timeout), the order is sent again
    without it, and a Ctrl-C lands before that order's result comes back: the hang was in no
    count and no finding. What the line holds is filed when the run is interrupted."""
    from fuzzer.harnesses.parser.orders import FuzzOrder

    resume = FuzzOrder.resume

    def resume_then_ctrl_c(self: Any, lost: Any) -> bool:
        again = resume(self, lost)
        os.kill(os.getpid(), signal.SIGINT)
        return again

    monkeypatch.setattr(FuzzOrder, "resume", resume_then_ctrl_c)
    target = "tests.integration.targets.buggy:hang_on_bracket_text"
    settings = CampaignSettings(tools=["get_weather"], target=target, seed=1, max_examples=1500, budget_s=120.0)
    with pool_for(target, timeout=0.2) as pool:
        result = run_job(CampaignJob(REGISTRY, settings, pool)).result
    assert result.stop_reason is StopReason.INTERRUPTED
    hangs = [f for f in result.findings if f.verdict is Verdict.HANG]
    assert hangs, [f.signature.id for f in result.findings]
    in_classes = sum(s.failures for s in result.by_class.values())
    in_findings = sum(f.count for f in result.findings if f.verdict not in (Verdict.NONDETERMINISM, Verdict.SLOW))
    assert in_classes == in_findings
