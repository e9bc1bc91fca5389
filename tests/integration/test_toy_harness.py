"""A harness written from this file alone: "parse a number from text".

The code under test is ``M:A(text) -> int``; a case is a generated number text with its truth (the
int it denotes); a failure is a wrong number, a crash or a hang. Everything a new harness writes
is here — its verdicts, its workers' spec and served object, its order, its Subject, its finding
and its one ``register_harness`` call — and nothing else: the engine's campaign loop, the corpus
writer, replay, the gate and ``fuzz reproduce`` run it unchanged.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Optional

from corpus.signature import crash_signature, hang_signature, verdict_signature
from corpus.store import CorpusStore, Entry
from fuzzer.engine.campaign import CampaignJob, CampaignSettings
from fuzzer.engine.campaign_result import CampaignResult
from fuzzer.engine.corpus_writer import CorpusWriter
from fuzzer.engine.harness import Harness, ReplayContext, Replayed, register_harness
from fuzzer.engine.jobs.gate import GateJob
from fuzzer.engine.jobs.replay import ReplayJob
from fuzzer.engine.jobs.reproduce import ReproduceJob
from fuzzer.engine.orders import Order, order_seed
from fuzzer.engine.pipeline import run_job
from fuzzer.engine.references import load_target
from fuzzer.engine.results import ShrunkFinding
from fuzzer.engine.subject import Failure, Subject
from fuzzer.engine.verdicts import describe, verdict
from fuzzer.isolation import Fault, WorkerPool, WorkerSpec
from fuzzer.reports.sarif import sarif_log
from tests.conftest import ROOT

KIND = "number"
WRONG_NUMBER = "The parser returned another number than the text denotes."
verdict("wrong_number", WRONG_NUMBER, harness=KIND)
verdict("crash", "The parser raised while reading a number.", harness=KIND)
verdict("hang", "The parser did not return within the timeout.", harness=KIND, timed=True)


# -- the code under test: a number parser with three bugs, and its fixed version -------------------

def parse_v1(text: str) -> int:
    """Drops the sign, cannot read thousands separators, loops on zero-padded numbers."""
    text = text.strip()
    while text.startswith("00"):
        pass
    return int(text.lstrip("+-"))


def parse_v2(text: str) -> int:
    return int(text.strip().replace(",", ""))


V1, V2 = f"{__name__}:parse_v1", f"{__name__}:parse_v2"


# -- the harness -----------------------------------------------------------------------------------

def draw(seed: int, count: int) -> list[tuple[str, int]]:
    """``count`` cases (text, truth) drawn from ``seed``: the same in the worker and here."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        value = rng.randint(-10 ** 6, 10 ** 6)
        shape = rng.random()
        text = f"{value:,}" if shape < 0.2 else f"{value:08d}" if shape < 0.22 else str(value)
        cases.append((" " * rng.randint(0, 2) + text, value))
    return cases


@dataclass(frozen=True)
class NumberSpec(WorkerSpec):
    serve: str = f"{__name__}:serve"
    target: str = ""


class Served:
    """In the worker: run the parser on one text; plain data back."""

    def __init__(self, parse: Any):
        self.parse = parse

    def run(self, text: str, options: Any) -> tuple:
        try:
            value = self.parse(text)
        except Exception as exc:  # noqa: BLE001 - a crash is a result
            return ("raised", type(exc).__name__, exc.__traceback__.tb_frame.f_code.co_name)
        return ("returned", value if type(value) is int else repr(value))


def serve(spec: NumberSpec) -> Served:
    return Served(load_target(spec.target, cwd=spec.cwd))


class NumberOrder(Order):
    __slots__ = ()

    def run(self, runner: Any) -> list:
        return [(i, runner(text, KIND, i)) for i, (text, _) in enumerate(draw(self.seed, self.count))
                if i not in self.skip]


def judge(case: tuple, outcome: Any) -> Optional[tuple]:
    """(verdict, signature, reason) of a failing outcome, or None."""
    text, truth = case
    if isinstance(outcome, Fault):
        return "hang", hang_signature(frames=outcome.frames), f"no result within the timeout ({outcome.kind})"
    if outcome[0] == "raised":
        return "crash", crash_signature(exception=outcome[1], frames=[("parser", outcome[2])]), f"raised {outcome[1]}"
    if outcome[1] != truth:
        what = "the sign was dropped" if outcome[1] == -truth else "another number"
        return ("wrong_number", verdict_signature("wrong_number", anomaly_class=None, operator=None, format=None,
                                                  key=what), f"{outcome[1]!r} for {truth}")
    return None


@dataclass
class NumberFinding(ShrunkFinding):
    kind = KIND
    first_input = "case"
    case: tuple = ()
    outcome: Any = None

    def to_report(self) -> dict[str, Any]:
        return {"signature": self.signature.id, "title": self.title, "verdict": self.verdict, "reason": self.reason,
                "input": self.case[0], "minimized_input": None, "minimized": False, "truth": self.case[1],
                "reproduce": "", "count": self.count}

    def to_entry(self, *, target: str, version: Optional[str]) -> Entry:
        return Entry(kind=KIND, text=self.case[0], signature=self.signature.id, verdict=self.verdict,
                     title=self.title, what=self.signature.what, scenario={"truth": self.case[1]}, minimized=False,
                     target=target, target_version=version)

    def location(self) -> None:
        return None


class NumberSubject(Subject):
    kind = KIND
    order_size = 50

    def __init__(self, reference: str, context: ReplayContext):
        self.label, self.seed = reference, context.seed
        self.pool = WorkerPool(NumberSpec(target=reference, cwd=str(ROOT), timeout=context.timeout))
        self.result = CampaignResult(job=KIND, label=reference)

    def plan(self, unit: str, count: int, number: int, room: Optional[int] = None) -> NumberOrder:
        return NumberOrder(order_seed(self.seed, number), count, number)

    def _file_one(self, case: tuple, outcome: Any, job: Any) -> int:
        failed = judge(case, outcome)
        job.tally.count(None, failed is not None)
        if failed is not None:
            job.offer(Failure(case, outcome, failed[0], failed[1], failed[2]))
        return 1

    def file(self, order: NumberOrder, result: list, job: Any) -> int:
        cases = draw(order.seed, order.count)
        return sum(self._file_one(cases[i], outcome, job) for i, outcome in result)

    def file_lost(self, order: NumberOrder, lost: Any, job: Any) -> int:
        return self._file_one(draw(order.seed, order.count)[lost.index], lost.outcome, job) if lost.index >= 0 else 0

    def new_finding(self, failure: Failure, job: Any) -> NumberFinding:
        return NumberFinding(failure.signature, failure.verdict, failure.reason, case=failure.case,
                             outcome=failure.outcome)

    def payload(self, case: tuple) -> str:
        return case[0]

    def same(self, finding: Any, case: tuple) -> Any:
        return lambda outcome: (judge(case, outcome) or (None, None))[1] == finding.signature


def replay(items: list, reference: str, context: ReplayContext) -> list:
    with WorkerPool(NumberSpec(target=reference, cwd=str(ROOT), timeout=context.timeout)) as pool:
        outcomes = pool.run([entry.text for _, entry in items])
    out = []
    for (path, entry), outcome in zip(items, outcomes):
        failed = judge((entry.text, entry.scenario["truth"]), outcome)
        out.append(Replayed(path, entry, failed[0] if failed else "pass", failed[1].id if failed else None,
                            outcome=outcome, what=failed[1].what if failed else None))
    return out


def campaign_job(reference: str, context: ReplayContext) -> CampaignJob:
    return CampaignJob(NumberSubject(reference, context),
                       CampaignSettings(seed=context.seed, budget_s=context.budget_s,
                                        max_examples=context.max_examples))


register_harness(Harness(kind=KIND, option="--number-parser", description="a number parser: M:A(text) -> int",
                         replay=replay, campaign_job=campaign_job))


# -- the test --------------------------------------------------------------------------------------

def test_a_harness_registered_here_runs_campaign_corpus_replay_gate_and_reproduce(tmp_path):
    context = ReplayContext(seed=0, timeout=1.0, max_examples=300, cwd=str(ROOT))
    store = CorpusStore(tmp_path / "corpus")

    found = run_job(campaign_job(V1, context), [CorpusWriter(store, target=V1)])
    assert found.exit_code == 1
    verdicts = {f.verdict for f in found.result.findings}
    assert verdicts == {"wrong_number", "crash", "hang"}, found.result.findings
    entries = [e for _, e in store.entries()]
    assert not store.problems and {e.kind for e in entries} == {KIND}
    assert sorted(e.signature for e in entries) == sorted(f.signature.id for f in found.result.findings)

    still = run_job(ReplayJob(store, {KIND: V1}, context))
    assert still.exit_code == 1 and {r.status for r in still.result.replayed} == {"fail"}

    fixed = run_job(ReplayJob(store, {KIND: V2}, context, update=True))
    assert fixed.exit_code == 0 and {r.status for r in fixed.result.replayed} == {"pass"}
    assert {e.status for _, e in store.entries()} == {"fixed"}

    passed = run_job(GateJob(store, {KIND: V2}, context))
    assert passed.exit_code == 0 and not passed.result.decision.blocked
    assert len(passed.result.decision.passed) == len(entries) and passed.result.executions > 0

    blocked = run_job(GateJob(store, {KIND: V1}, context))
    assert blocked.exit_code == 1
    assert {r.entry.signature for r in blocked.result.decision.corpus_regressions} == {e.signature for e in entries}

    crash_file = next(path for path, e in store.entries() if e.verdict == "crash")
    assert run_job(ReproduceJob(crash_file, context, reference=V1)).exit_code == 1
    assert run_job(ReproduceJob(crash_file, context, reference=V2)).exit_code == 0

    rules = sarif_log(found.result, root=str(tmp_path))["runs"][0]["tool"]["driver"]["rules"]
    described = {rule["id"]: rule["fullDescription"]["text"] for rule in rules}
    assert described[f"{KIND}.wrong_number"] == describe("wrong_number", KIND) == WRONG_NUMBER
