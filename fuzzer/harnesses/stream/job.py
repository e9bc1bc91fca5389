"""``fuzz stream`` as a job, built only from the engine's pieces (to be replaced by the generic loop).

Thin on purpose: generation is :mod:`.cases`, running and judging is :mod:`.worker` (orders in
the :class:`~fuzzer.isolation.WorkerPool`), the oracles :mod:`.checks`, the finding
:mod:`.findings`. The loop: draw outputs and their splits, send them as orders, file each
signature once (the smallest stream that showed it), confirm it alone in a fresh worker
(:class:`fuzzer.engine.confirm.Confirmer`), shrink it on both axes (the output's choices, so its
truth is recomputed; then the split: fewest cuts, earliest) within the budget's shrink window, and
announce it. A parser's cost is probed once (``slow``). A target that breaks the contract (not a
factory, no ``feed``, events of no known shape, a consumer returning a generator) stops the job
with a one-line problem: exit 2.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Optional

from fuzzer.engine.budget import Budget
from fuzzer.engine.confirm import ALONE, Confirmer
from fuzzer.engine.events import FindingRecorded, JobStarted, Phase, PhaseStarted, Progress, StopReason
from fuzzer.engine.pipeline import Job, interrupted_exit
from fuzzer.engine.results import JobResult
from fuzzer.harnesses.stream import cases as gen
from fuzzer.harnesses.stream.checks import Run, StreamCase, judge, variance
from fuzzer.harnesses.stream.findings import StreamFinding
from fuzzer.harnesses.stream.splits import clip, every_two_way, shrink_split
from fuzzer.harnesses.stream.worker import (ENV, WORKER_TARGET, Settings, StreamOrder, StreamResult, case_text,
                                            run_from_json)
from fuzzer.isolation.pool import Lost, Started
from strategies._internal.source import RandomSource
from strategies.errors import TargetError

#: Outputs per order (each run under its splits: about 8 streams an output).
OUTPUTS_PER_ORDER = 12
#: Share of the budget shrinking may use (a finding without its minimal output and split says little).
SHRINK_SHARE = 0.45
#: Seconds one finding's shrinking may take.
SHRINK_CAP_S = 4.0
#: Exponent of time over output length above which the cost probe reports ``slow``.
SLOW_EXPONENT = 1.5
#: The largest probe must take at least this long, or the timings say nothing.
SLOW_MIN_S = 0.02


@dataclass
class StreamSettings:
    target: Settings
    tools: tuple = ()
    formats: tuple = ()
    seed: int = 0
    budget_s: Optional[float] = 30.0
    max_examples: Optional[int] = None
    timeout: float = 2.0
    workers: int = 1
    memory_limit_mb: Optional[int] = 4096
    shrink: bool = True


@dataclass
class StreamCampaignResult(JobResult):
    job: str = "stream"
    outputs: int = 0
    formats: list = field(default_factory=list)
    unsupported: dict = field(default_factory=dict)
    setup_s: float = 0.0

    def to_report(self) -> dict:
        return {"target": self.label, "executions": self.executions, "outputs": self.outputs,
                "elapsed_s": round(self.elapsed_s, 3), "execs_per_s": round(self.execs_per_s, 1),
                "formats": self.formats, "unsupported": self.unsupported, "stop_reason": self.stop_reason.value,
                "problem": self.problem, "counts": self.counts(),
                "failures": [f.to_report() for f in self.findings]}


class StreamPool(Started):
    """The worker pool running streams of one target: a probe on start (a target that does not
    load or keep the contract is a :class:`TargetError`), single cases (confirm, shrink), orders."""

    def __init__(self, settings: StreamSettings):
        from fuzzer.harnesses.parser.outcome import TargetSpec
        from fuzzer.isolation import WorkerPool

        self.settings = settings
        self.line = settings.target.line()
        self.pool = WorkerPool(TargetSpec(target=WORKER_TARGET, cwd=settings.target.cwd, timeout=settings.timeout,
                                          memory_limit_mb=settings.memory_limit_mb, audit=False),
                               workers=settings.workers, environ={ENV: self.line})

    def start(self) -> None:
        self.pool.start()
        outcome = self.pool.run([case_text(self.line, None)])[0]
        first = outcome.calls[0] if outcome.kind == "returned" and outcome.calls else None
        if first is not None and first["name"] == "loaded":
            return
        self.close()
        if first is not None and first["name"] == "error":
            raise TargetError(first["arguments"]["message"])
        raise TargetError(f"{self.settings.target.reference!r}: loading it failed "
                          f"({outcome.detail or outcome.exception or outcome.kind})")

    def close(self) -> None:
        self.pool.close()

    def runs(self, cases: list, *, deadline: Optional[float] = None, fresh: bool = False) -> list:
        """A :class:`Run` per case (None past ``deadline``; the pool's Outcome when it hung or died)."""
        outcomes = self.pool.run([case_text(self.line, c) for c in cases], deadline=deadline, fresh=fresh)
        return [_run_of(o) for o in outcomes]


def _run_of(outcome: Any) -> Any:
    if outcome is None:
        return None
    first = outcome.calls[0] if outcome.kind == "returned" and outcome.calls else None
    if first is not None and first["name"] == "run":
        return run_from_json(json.loads(first["arguments"]["json"]))
    if first is not None and first["name"] == "error":
        return Run(contract=first["arguments"]["message"])
    return outcome  # hung / died


def signatures_of(case: StreamCase, run: Any, whole: Any = None) -> dict:
    """Signature id -> Violation of one run (and its variance from the whole output's run)."""
    from corpus.signature import crash_signature, hang_signature
    from fuzzer.harnesses.stream.checks import Violation

    if run is None:
        return {}
    if not isinstance(run, Run):
        sig = hang_signature(frames=run.frames) if run.kind == "hung" else \
            crash_signature(exception=None, frames=run.frames, detail=run.detail)
        return {sig.id: Violation(run.kind == "hung" and "hang" or "crash", sig, run.detail or run.kind)}
    found = {v.signature.id: v for v in judge(case, run)}
    if whole is not None and isinstance(whole, Run) and not case.truth_known:
        extra = variance(case, run, whole)
        if extra is not None:
            found[extra.signature.id] = extra
    return found


class StreamCampaign(Job):
    name = "stream"

    def __init__(self, settings: StreamSettings, registry: Any):
        super().__init__()
        self.settings, self.registry = settings, registry
        self.budget = Budget(seconds=settings.budget_s, max_examples=settings.max_examples,
                             shrink_share=SHRINK_SHARE, shrink_cap_s=SHRINK_CAP_S)
        self._result = StreamCampaignResult(label=settings.target.reference)
        self.findings: dict = {}
        self.interesting: list = []
        self.pool: Optional[StreamPool] = None
        self._started = 0.0

    # -- the job -----------------------------------------------------------------------------------
    def run(self) -> Iterator[Any]:
        s, result = self.settings, self._result
        yield JobStarted(job="stream", label=s.target.reference, budget_s=s.budget_s,
                         settings={"parser_api": s.target.api, "shape": s.target.shape, "seed": s.seed})
        self._started = time.monotonic()
        self.pool = StreamPool(s)
        self.pool.start()
        try:
            result.setup_s = time.monotonic() - self._started
            self.budget.start()
            tools = list(s.tools) or [t.name for t in self.registry]
            if s.target.parser:
                yield PhaseStarted(Phase.PROBING)
                formats = list(s.formats) or self._probe_formats(tools)
                result.formats = formats
                if not formats:
                    result.problem = (f"no format the parser streams: every format probed gave no call "
                                      f"({', '.join(f'{k}: {v}' for k, v in list(result.unsupported.items())[:3])})")
                    self.stop_reason = StopReason.NOTHING_TESTED
                    return
            else:
                formats = []
            yield PhaseStarted(Phase.FUZZING)
            yield from self._fuzz(tools, formats)
            if s.target.parser and not result.problem and not self.budget.time_up():
                yield from self._cost(tools, formats)
        finally:
            result.elapsed_s = time.monotonic() - self._started
            self.pool.close()

    def _probe_formats(self, tools: list) -> list:
        """Formats in which the parser gives the right calls for at least one of a few valid outputs,
        whole or one character per delta (a format it does not stream is skipped, not flooded)."""
        from strategies._internal.build import Unbuildable, build_sample
        from strategies._internal.formats import FORMATS

        supported, source = [], RandomSource(self.settings.seed ^ 0x5EED)
        for fmt in FORMATS:
            cases = []
            for k in range(3):
                try:
                    sample = build_sample(source, registry=self.registry, tool=self.registry[tools[k % len(tools)]],
                                          format=fmt, chatter=False, multi=False)
                except Unbuildable:
                    continue
                base = gen.case_of(sample, self.registry)
                cases += [replace(base, cuts=cuts, family=f) for f, cuts in gen.standard_splits(sample.text)]
            runs = self.pool.runs(cases) if cases else []
            contract = next((r.contract for r in runs if isinstance(r, Run) and r.contract), None)
            if contract:
                self._result.problem = contract
                return []
            from fuzzer.harnesses.stream.fold import fold

            ok = False
            for case, run in zip(cases, runs):
                if isinstance(run, Run) and run.error is None:
                    calls = fold(run.steps, run.finish).calls
                    ok = ok or any(c["name"] == t["name"] for c in calls for t in case.truth or ())
            if ok:
                supported.append(fmt)
            else:
                self._result.unsupported[fmt] = "no call streamed"
        return supported

    def _orders(self, tools: list, formats: list, number: int) -> list:
        s = self.settings
        orders = []
        for k in range(max(1, s.workers) * 2):
            seed = (s.seed * 1_000_003 + number * 97 + k) & 0xFFFFFFFF
            source = RandomSource(seed)
            groups = []
            while len(groups) < OUTPUTS_PER_ORDER:
                if s.target.parser:
                    sample = gen.draw_output(source, self.registry, tools, formats)
                    if sample is None:
                        continue
                    base = gen.case_of(sample, self.registry)
                    groups.append((base, gen.splits_for(source, base.text, base.markers, self.interesting)))
                else:
                    base = gen.consumer_output(source, self.registry, tools)
                    groups.append((base, gen.consumer_splits(source, base, s.target.shape)))
            orders.append(StreamOrder(self.pool.line, groups, seed))
        return orders

    def _fuzz(self, tools: list, formats: list) -> Iterator[Any]:
        result, number = self._result, 0
        while True:
            why = self.budget.stop_reason(result.executions)
            if why is not None:
                self.stop_reason = why
                return
            orders = self._orders(tools, formats, number)
            number += 1
            answers = self.pool.pool.run_orders(orders, deadline=self.budget.deadline)
            new: list = []
            for order, answer in zip(orders, answers):
                for lost in order.lost:
                    new += self._file_lost(order, lost)
                if isinstance(answer, Lost):
                    new += self._file_lost(order, answer)
                    continue
                if not isinstance(answer, StreamResult):
                    continue
                result.executions += answer.streams
                result.outputs += answer.outputs
                if answer.contract:
                    result.problem = answer.contract
                    self.stop_reason = StopReason.NOTHING_TESTED
                    return
                self.interesting = (self.interesting + answer.interesting)[-64:]
                for failure in answer.failures:
                    new += self._file(failure.verdict, failure.signature, failure.reason, failure.case, failure.run,
                                      failure.count)
            yield Progress(executions=result.executions, elapsed_s=time.monotonic() - self._started,
                           failures=self._by_verdict(), budget_s=self.settings.budget_s)
            for finding in new:
                self._settle(finding)
                yield FindingRecorded(finding)

    def _file_lost(self, order: StreamOrder, lost: Lost) -> list:
        case = order.case_at(lost.index) if lost.index >= 0 else None
        if case is None:
            return []
        found = signatures_of(case, lost.outcome)
        return [f for sig, v in found.items() for f in self._file(v.verdict, v.signature, v.reason, case, None, 1)]

    def _file(self, verdict: str, signature: Any, reason: str, case: StreamCase, run: Any, count: int) -> list:
        known = self.findings.get(signature.id)
        if known is not None:
            known.count += count
            if (len(case.text), len(case.cuts)) < (len(known.case.text), len(known.case.cuts)) and known.minimized is None:
                known.case, known.reason = case, reason
            return []
        exception = None
        frames: tuple = ()
        if isinstance(run, Run) and run.error is not None:
            exception = f"{run.error[0]}: {run.error[1]}"
            frames = run.error[2]
        finding = StreamFinding(signature, verdict, reason, case=case, settings=self.settings.target,
                                exception=exception, frames=frames)
        self.findings[signature.id] = finding
        self._result.findings.append(finding)
        return [finding]

    def _by_verdict(self) -> dict:
        out: dict = {}
        for f in self._result.findings:
            out[f.verdict_name] = out.get(f.verdict_name, 0) + 1
        return out

    # -- confirm and shrink ------------------------------------------------------------------------
    def _same(self, case: StreamCase, signature_id: str, runs: Optional[list] = None) -> bool:
        whole = None
        if not case.truth_known and case.cuts:
            whole_case = replace(case, cuts=(), family="whole")
            runs_ = self.pool.runs([whole_case, case])
            whole, run = runs_[0], runs_[1]
        else:
            run = self.pool.runs([case])[0]
        return signature_id in signatures_of(case, run, whole)

    def _settle(self, finding: StreamFinding) -> None:
        if finding.verdict_name in ("slow",):
            return
        window = self.budget.shrink_window()
        deadline = time.monotonic() + max(window, 1.0)
        sig = finding.signature.id
        if finding.verdict_name in ("hang", "crash") and finding.exception is None:
            finding.confirmed = "not confirmed (the worker hung or died)"
        else:
            confirmer = Confirmer(lambda texts, deadline=None, fresh=False: self.pool.pool.run(
                texts, deadline=deadline, fresh=fresh))
            status, _history = confirmer.confirm(case_text(self.pool.line, finding.case), (),
                                                 lambda outcome: sig in signatures_of(finding.case, _run_of(outcome)),
                                                 deadline)
            finding.confirmed = status
            if status != ALONE and finding.case.truth_known:
                finding.shrink_note = f"not reproduced alone in a fresh worker ({status})"
        if not self.settings.shrink or window <= 0:
            if window <= 0:
                finding.shrink_note = finding.shrink_note or "not minimized: the budget ran out"
            return
        started = time.monotonic()
        try:
            best = self._shrink(finding, deadline)
        finally:
            self.budget.spent_shrinking(time.monotonic() - started)
        if best is not None and (len(best.text), len(best.cuts)) <= (len(finding.case.text), len(finding.case.cuts)):
            finding.minimized = best
            finding.shrink_stopped = time.monotonic() >= deadline

    def _shrink(self, finding: StreamFinding, deadline: float) -> Optional[StreamCase]:
        sig = finding.signature.id
        case = finding.case
        if finding.verdict_name in ("hang",) or not isinstance(case, StreamCase):
            return None

        def split_test(candidates: list, base: StreamCase) -> list:
            if time.monotonic() >= deadline:
                return [False] * len(candidates)
            variants = [replace(base, cuts=tuple(c)) for c in candidates]
            whole = None
            if not base.truth_known:
                whole = self.pool.runs([replace(base, cuts=())])[0]
            runs = self.pool.runs(variants, deadline=deadline)
            return [sig in signatures_of(v, r, whole) for v, r in zip(variants, runs)]

        case = replace(case, cuts=shrink_split(case.cuts, lambda c: split_test(c, case)), family=case.family)
        if case.recipe is not None:
            smaller = self._shrink_output(case, sig, deadline)
            if smaller is not None:
                case = replace(smaller, cuts=shrink_split(smaller.cuts, lambda c: split_test(c, smaller)))
        return case

    def _shrink_output(self, case: StreamCase, sig: str, deadline: float) -> Optional[StreamCase]:
        """A smaller output whose stream fails the same way under some split: the output's recipe
        choices are shrunk (so its truth is recomputed), each candidate tried under the split that
        failed (clipped), the whole output, one character per delta and every two-way split."""
        from corpus.minimize import NotInteresting, shrink_choices
        from strategies._internal.build import replay_recipe
        from strategies._internal.sample import Recipe

        recipe = Recipe.from_json(case.recipe)
        found: dict = {}

        def candidate(choices: tuple) -> Optional[StreamCase]:
            try:
                sample = replay_recipe(replace(recipe, choices=tuple(choices)), self.registry)
            except Exception:  # noqa: BLE001 - a replay that no longer builds is just not smaller
                return None
            return gen.case_of(sample, self.registry)

        def test(candidates: list) -> list:
            keys = []
            for choices in candidates:
                if time.monotonic() >= deadline:
                    keys.append(None)
                    continue
                base = candidate(choices)
                if base is None:
                    keys.append(None)
                    continue
                splits = [clip(case.cuts, len(base.text)), ()] + (every_two_way(base.text) if len(base.text) <= 160 else [])
                variants = [replace(base, cuts=c, family="shrunk") for c in dict.fromkeys(splits)]
                runs = self.pool.runs(variants, deadline=deadline)
                whole = runs[1] if len(runs) > 1 else None
                hit = next((v for v, r in zip(variants, runs) if sig in signatures_of(v, r, whole)), None)
                if hit is None:
                    keys.append(None)
                    continue
                found[tuple(choices)] = hit
                keys.append((len(hit.text), len(hit.cuts), hit.text))
            return keys

        try:
            best = shrink_choices(recipe.choices, test, budget_s=max(0.0, deadline - time.monotonic()))
        except NotInteresting:
            return None
        return found.get(tuple(best))

    # -- cost ----------------------------------------------------------------------------------------
    def _cost(self, tools: list, formats: list) -> Iterator[Any]:
        """Stream outputs whose longest string argument is 1x, 2x, 4x, 8x as long, one character per
        delta, and fit the time's exponent over the output's length."""
        from corpus.signature import slow_signature
        from strategies._internal.build import build_sample
        from strategies._internal.formats import render

        source = RandomSource(self.settings.seed ^ 0xC057)
        sample = build_sample(source, registry=self.registry, tool=self.registry[tools[0]], format=formats[0],
                              chatter=False, multi=False)
        call = sample.calls[0]
        strings = [k for k, v in call["arguments"].items() if isinstance(v, str)]
        if not strings:
            return
        key = strings[0]
        cases, sizes = [], []
        for factor in (1, 2, 4, 8):
            arguments = dict(call["arguments"], **{key: ("streaming " * 12 * factor).strip()})
            text = render(formats[0], [{"name": call["name"], "arguments": arguments}], RandomSource(0), chatter=False).text
            cases.append(StreamCase(text=text, cuts=tuple(range(1, len(text))), family="char", format=formats[0],
                                    truth=[{"name": call["name"], "arguments": arguments}], tool=call["name"]))
            sizes.append(len(text))
        runs = self.pool.runs(cases, deadline=self.budget.deadline)
        times = [sum(r.times) if isinstance(r, Run) and r.error is None else None for r in runs]
        if any(t is None for t in times) or times[-1] < SLOW_MIN_S or times[0] <= 0:
            return
        exponent = math.log(times[-1] / times[0]) / math.log(sizes[-1] / sizes[0])
        if exponent <= SLOW_EXPONENT:
            return
        signature = slow_signature(frames=(), fragment_kind=f"stream of {formats[0]}")
        words = ", ".join(f"{n} chars {t * 1000:.1f} ms" for n, t in zip(sizes, times))
        reason = f"time grows as n^{exponent:.1f} over one-character deltas ({words})"
        for finding in self._file("slow", signature, reason, cases[0], None, 1):
            finding.minimized = None
            yield FindingRecorded(finding)

    # -- the result ----------------------------------------------------------------------------------
    def result(self) -> StreamCampaignResult:
        self._result.stop_reason = self.stop_reason
        return self._result

    def exit_code(self, result: StreamCampaignResult) -> int:
        if result.problem and not result.findings:
            return 2
        if not result.findings and not result.executions and not self.interrupted:
            return 2
        return interrupted_exit(bool(result.findings), self.interrupted)


__all__ = ["StreamCampaign", "StreamCampaignResult", "StreamPool", "StreamSettings", "signatures_of"]
