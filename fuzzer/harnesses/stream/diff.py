"""``fuzz stream --diff OLD``: what does the new streaming parser (or accumulator) do differently?

Both versions get exactly the same streams — the ``--corpus`` entries of kind ``stream`` first,
then fresh outputs, each under the same splits (:func:`~.orders.draw_streams` from the seed) —
each version in its own worker pool, judged there by the same oracles. Each stream is classified
by its violations' signatures and what it folded into (:meth:`~.worker.StreamOutcome.result`):

* ``same`` — the same violations (or none) and the same calls, content and reasoning;
* ``fixed`` — the old version failed, the new one passes;
* ``regression`` — the old version passed, the new one fails;
* ``changed`` — both fail but differently, or both pass with different results (an output whose
  truth is unknown, read two ways).

One difference is kept per (kind, old signatures, new signatures), the smallest stream that showed
it, with a regression's split shrunk to its fewest cuts. A version that never streamed a call for
any valid output tests nothing: the diff says which and exits 2 (unless there is a regression to
report), as a campaign that could test nothing does; exit 1 on a regression, else 0
(:class:`fuzzer.engine.decisions.DiffDecision`).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, replace
from typing import Any, Iterator

from fuzzer.engine.budget import Budget
from fuzzer.engine.decisions import DiffDecision
from fuzzer.engine.diff_result import KINDS, VersionDiffResult
from fuzzer.engine.events import JobStarted, NonFatalError, Phase, PhaseStarted, Progress, StopReason
from fuzzer.engine.orders import order_seed
from fuzzer.engine.pipeline import Job
from fuzzer.engine.results import FAILED, SKIPPED, TestCase
from fuzzer.harnesses.stream.orders import Plan, class_of, draw_streams
from fuzzer.harnesses.stream.shrink import size
from fuzzer.harnesses.stream.splits import deltas, shrink_split
from strategies._internal.source import RandomSource

#: Streams drawn per batch sent to both versions.
BATCH = 256
#: Streams one regression's split shrink may run on each version.
SHRINK_TESTS = 200


def classify(old: Any, new: Any) -> str:
    """The kind of one stream's pair of outcomes (a worker's answer: ``("run", StreamOutcome)``,
    or a :class:`~.worker.StreamFault`)."""
    old_sigs, new_sigs = _signatures(old), _signatures(new)
    if old_sigs and not new_sigs:
        return "fixed"
    if new_sigs and not old_sigs:
        return "regression"
    if old_sigs != new_sigs or _result(old) != _result(new):
        return "changed"
    return "same"


def _signatures(answer: Any) -> frozenset:
    from fuzzer.harnesses.stream.checks import fault_violation
    from fuzzer.harnesses.stream.worker import StreamFault

    if isinstance(answer, StreamFault):
        return frozenset({fault_violation(answer.kind, answer.frames, answer.detail).signature.id})
    return answer[1].signatures() if isinstance(answer, tuple) and answer[0] == "run" else frozenset()


def _result(answer: Any) -> Any:
    if isinstance(answer, tuple) and answer[0] == "run":
        return answer[1].result()
    return getattr(answer, "kind", answer)


def describe(answer: Any) -> dict:
    from fuzzer.harnesses.stream.worker import StreamFault

    if isinstance(answer, StreamFault):
        return {"outcome": answer.kind, "detail": answer.detail, "signatures": sorted(_signatures(answer))}
    outcome = answer[1]
    data: dict = {"signatures": sorted(outcome.signatures()),
                  "verdicts": sorted({v.verdict for v in outcome.violations})}
    if outcome.error is not None:
        data.update(outcome="raised", exception=outcome.exception)
    else:
        data.update(outcome="streamed", calls=outcome.calls, content=outcome.content)
    return data


@dataclass
class Difference:
    kind: str
    case: Any
    old: Any
    new: Any
    count: int = 1

    @property
    def key(self) -> tuple:
        return (self.kind, _signatures(self.old), _signatures(self.new))

    def to_report(self) -> dict:
        return {"kind": self.kind, "anomaly_class": self.case.anomaly_class, "operator": self.case.operator,
                "format": self.case.format, "tool": self.case.tool, "input": self.case.text,
                "deltas": deltas(self.case.text, self.case.cuts), "cuts": list(self.case.cuts),
                "truth": self.case.truth if self.case.truth_known else None, "old": describe(self.old),
                "new": describe(self.new), "count": self.count}


@dataclass
class StreamDiffResult(VersionDiffResult):
    """A stream diff's result: the streams compared (the corpus entries' first), counted by class."""

    job: str = "stream_diff"
    streams: int = 0
    corpus_entries: int = 0

    def test_cases(self) -> list[TestCase]:
        cases = [TestCase("toolfuzz.stream_diff", f"{d.kind} {d.case.anomaly_class or 'valid'} in {d.case.format} "
                          f"({len(d.case.cuts)} cut(s))", FAILED if d.kind == "regression" else SKIPPED,
                          f"{d.kind}: old {sorted(_signatures(d.old)) or 'pass'}, new {sorted(_signatures(d.new)) or 'pass'}",
                          repr(deltas(d.case.text, d.case.cuts)))
                 for d in self.differences]
        return cases + self.nothing_tested_cases()

    def to_report(self) -> dict:
        return {"job": self.job, "old": self.old, "new": self.new, "samples": self.streams, "streams": self.streams,
                "corpus_entries": self.corpus_entries, "counts": self.kinds, "by_class": self.by_class,
                "differences": [d.to_report() for d in self.differences], "elapsed_s": round(self.elapsed_s, 3),
                "stop_reason": self.stop_reason.value, "problem": self.problem}


class StreamDiffJob(Job):
    """``settings``: the new version and how to stream (a :class:`~.job.StreamSettings`); ``old``:
    the old version's reference (``M:A`` or ``git:REF:M:A``); ``corpus``: a store whose stream
    entries of the same mode are streamed first."""

    name = "stream_diff"

    def __init__(self, settings: Any, *, old: str, registry: Any, corpus: Any = None):
        super().__init__()
        self.settings, self.old, self.registry, self.corpus = settings, old, registry, corpus
        self.result_ = StreamDiffResult(old=old, new=settings.target.reference, label=settings.target.reference)
        self.budget = Budget(seconds=settings.budget_s, max_examples=settings.max_examples)
        self._found: dict = {}
        self._valid = [0, 0, 0]  # valid outputs compared; of which old, new streamed a call
        self._t0 = time.monotonic()

    def run(self) -> Iterator[Any]:
        from fuzzer.harnesses.stream.job import open_pool

        s, r = self.settings, self.result_
        yield JobStarted(job=self.name, label=f"{self.old} -> {r.new}", budget_s=s.budget_s,
                         settings={"seed": s.seed, "old": self.old, "new": r.new})
        yield PhaseStarted(Phase.LOADING, r.new)
        with contextlib.ExitStack() as stack:
            old_settings = replace(s, target=self._old_target(stack))
            pools = []
            for these in (old_settings, s):
                pool = open_pool(these)
                stack.callback(pool.close)
                pool.start()
                pools.append(pool)
            self.budget.start()
            yield from self._corpus(pools)
            plan = yield from self._plan(pools)
            if plan is None:
                return
            yield PhaseStarted(Phase.FUZZING, r.new)
            number = 0
            while True:
                why = self.budget.stop_reason(r.streams)
                if why is not None:
                    self.stop_reason = why
                    break
                count = BATCH if s.max_examples is None else min(BATCH, s.max_examples - r.streams)
                groups = draw_streams(RandomSource(order_seed(s.seed, number)), self.registry, plan, count)
                number += 1
                cases = [replace(base, cuts=tuple(cuts), family=family) for base, splits in groups
                         for family, cuts in splits]
                if not cases:
                    r.problem = "nothing to stream: no output could be drawn"
                    return
                if not self._compare(pools, cases):
                    self.stop_reason = StopReason.BUDGET
                    break
                yield Progress(r.streams, time.monotonic() - self._t0, {k: v for k, v in r.kinds.items() if v},
                               Phase.FUZZING, r.new, s.budget_s)
            yield from self._shrink(pools)

    def _old_target(self, stack: contextlib.ExitStack) -> Any:
        from fuzzer.gitref import checkout, split_git_target

        t = self.settings.target
        git = split_git_target(self.old)
        reference, cwd = (self.old, t.cwd) if git is None else (git[1], stack.enter_context(checkout(git[0], t.cwd)))
        return replace(t, parser=reference if t.parser else None, consumer=reference if t.consumer else None, cwd=cwd)

    def _corpus(self, pools: list) -> Iterator[Any]:
        if self.corpus is None:
            return
        from fuzzer.harnesses.stream.findings import case_of_entry
        from strategies.errors import ToolfuzzError

        yield PhaseStarted(Phase.REPLAYING, str(getattr(self.corpus, "path", "corpus")))
        for problem in self.corpus.problems:
            yield NonFatalError(f"skipped {problem}")
        cases = []
        for path, entry in self.corpus.entries():
            if entry.kind != "stream" or (entry.scenario or {}).get("mode", "parser") != self.settings.target.mode:
                continue
            try:
                cases.append(case_of_entry(entry))
            except ToolfuzzError as exc:
                yield NonFatalError(f"skipped {path}: {exc}")
        self.result_.corpus_entries = len(cases)
        if cases:
            self._compare(pools, cases)

    def _plan(self, pools: list) -> Iterator[Any]:
        """What to draw: the formats given, else those either version streams (probed)."""
        s = self.settings
        from strategies._internal.schema import unsupported_tools

        broken = unsupported_tools(self.registry)
        tools = tuple(n for n in (s.tools or self.registry.names()) if n not in broken)
        formats = tuple(s.formats)
        if s.target.mode == "parser" and not formats:
            yield PhaseStarted(Phase.PROBING, self.result_.new)
            formats = tuple(dict.fromkeys(f for pool in pools for f in self._probe(pool, tools)))
            if not formats:
                self.result_.problem = "no format either version streams: every format probed gave no call"
                return None
        return Plan(mode=s.target.mode, tools=tools, formats=formats, shape=s.target.shape)

    def _probe(self, pool: Any, tools: tuple) -> list:
        from fuzzer.harnesses.stream.contract import ContractError
        from fuzzer.harnesses.stream.job import probe_formats

        run = lambda cases: pool.run(cases, deadline=self.budget.deadline)  # noqa: E731
        supported, _unsupported, contract = probe_formats(run, self.registry, list(tools), self.settings.seed)
        if contract is not None:
            raise ContractError(f"{self.settings.target.option} {pool.spec.settings.reference!r}: {contract}")
        return supported

    def _compare(self, pools: list, cases: list) -> bool:
        """Stream ``cases`` into both versions and file each; False when the budget ended first."""
        r = self.result_
        deadline = self.budget.deadline
        old, new = (pool.run(cases, deadline=deadline) for pool in pools)
        done = True
        for case, a, b in zip(cases, old, new):
            if a is None or b is None:
                done = False
                continue
            for answer in (a, b):
                if isinstance(answer, tuple) and answer[0] == "contract":
                    from fuzzer.harnesses.stream.contract import ContractError

                    side = self.old if answer is a else r.new
                    raise ContractError(f"{self.settings.target.option} {side!r}: {answer[1]}")
            r.streams += 1
            kind = classify(a, b)
            r.count(kind, (r.by_class, class_of(case)))
            self._count_valid(case, a, b)
            if kind == "same":
                continue
            diff = Difference(kind, case, a, b)
            known = self._found.get(diff.key)
            if known is None:
                self._found[diff.key] = diff
                r.differences.append(diff)
            else:
                known.count += 1
                if size(case) < size(known.case):
                    known.case, known.old, known.new = case, a, b
        return done

    def _count_valid(self, case: Any, a: Any, b: Any) -> None:
        if case.anomaly_class is not None or not case.truth_known or not case.truth:
            return
        self._valid[0] += 1
        for i, answer in enumerate((a, b), 1):
            if isinstance(answer, tuple) and answer[0] == "run" and answer[1].calls:
                self._valid[i] += 1

    def _shrink(self, pools: list) -> Iterator[Any]:
        """Each regression's split to its fewest cuts (the difference kept the same)."""
        regressions = [d for d in self.result_.differences if d.kind == "regression" and d.case.cuts]
        if not regressions or self.budget.time_up():
            return
        yield PhaseStarted(Phase.SHRINKING, self.result_.new)
        for d in regressions:
            def test(candidates: list, d: Difference = d) -> list:
                cases = [replace(d.case, cuts=tuple(c)) for c in candidates]
                old, new = (pool.run(cases, deadline=self.budget.deadline) for pool in pools)
                ok = []
                for case, a, b in zip(cases, old, new):
                    same = a is not None and b is not None and Difference(classify(a, b), case, a, b).key == d.key
                    ok.append(same)
                    if same and size(case) < size(d.case):
                        d.case, d.old, d.new = case, a, b
                return ok

            shrink_split(d.case.cuts, test, max_tests=SHRINK_TESTS)

    def result(self) -> StreamDiffResult:
        r = self.result_
        r.elapsed_s = time.monotonic() - self._t0
        r.stop_reason = self.stop_reason
        if r.problem is None:
            valid, old, new = self._valid
            idle = [side for side, n in (("old", old), ("new", new)) if valid and not n]
            if idle:
                label = {"old": self.old, "new": r.new}
                r.problem = (f"could test nothing: the {' and the '.join(idle)} version "
                             f"{', '.join(label[s] for s in idle)} streamed no call for any of the {valid:,} valid outputs")
            elif not r.streams and not self.interrupted:
                r.problem = "nothing was compared (the budget ended first)"
        return r

    def exit_code(self, result: StreamDiffResult) -> int:
        return DiffDecision(regressions=result.kinds["regression"], interrupted=self.interrupted,
                            nothing_tested=result.problem).exit_code


def diff_lines(result: StreamDiffResult) -> list:
    """The console summary of a stream diff."""
    lines = [f"{result.streams:,} streams ({result.corpus_entries} corpus entries): {result.kinds_line()}"]
    lines += result.table_lines("class", result.by_class)
    for i, d in enumerate(result.differences, 1):
        old, new = describe(d.old), describe(d.new)
        lines += ["", result.difference_heading(i, d, d.case),
                  f"    deltas: {deltas(d.case.text, d.case.cuts)!r}"[:2000],
                  f"    old:    {_side(old)}", f"    new:    {_side(new)}"]
    if result.problem:
        lines.append(f"nothing tested: {result.problem}")
    return lines


def _side(data: dict) -> str:
    import json

    what = ", ".join(data.get("signatures", ())) or "pass"
    if data.get("outcome") == "streamed":
        return f"{what}: {json.dumps(data.get('calls'), ensure_ascii=False)[:200]}"
    return f"{what}: {data.get('exception') or data.get('detail') or data.get('outcome')}"


__all__ = ["Difference", "KINDS", "StreamDiffJob", "StreamDiffResult", "classify", "diff_lines"]
