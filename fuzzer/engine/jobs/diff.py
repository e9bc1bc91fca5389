"""The differential runner: what does the new parser do differently from the old one?

Both targets run the same samples (corpus entries first, then fresh samples of every format and
anomaly class), each isolated in its own worker pool. Each sample is classified:

* ``same`` — both judged alike and answered alike;
* ``fixed`` — the old target failed, the new one passes;
* ``regression`` — the old target passed, the new one fails;
* ``changed`` — both pass or both fail, but the calls returned, the rejection's exception type or
  the failure differ (a different repair, a different crash; a rejection raised elsewhere in the
  target with the same type is the same).

Outcomes are compared relative to their target (:mod:`fuzzer.engine.relative`): two versions in two module
files raise ``myparser_v1.ParseError`` and ``myparser_v2.ParseError``, one class under two names.

A version that never returns a call for any valid sample tests nothing: the diff says which one
and exits 2 (unless there is a regression to report), as a campaign that could test nothing does.

Every distinct regression and change is shrunk on the structured sample (its recipe) so that the
same difference persists, so the example is small and its truth still right.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Optional

from fuzzer.engine.budget import Budget
from fuzzer.engine.decisions import DiffDecision, change_kind
from fuzzer.engine.diff_result import VersionDiffResult
from fuzzer.harnesses.parser.tool import includes_valid, resolve_operators
from fuzzer.engine.events import JobStarted, Notice, Phase, PhaseStarted, Progress, StopReason
from fuzzer.engine.harness import ReplayContext
from fuzzer.harnesses.parser.oracle import Oracle, outcome_fingerprint
from fuzzer.engine.pipeline import Job
from fuzzer.engine.relative import TargetModule
from fuzzer.engine.results import FAILED, SKIPPED, TestCase
from fuzzer.engine.text import compact, preview
from fuzzer.harnesses.parser.schedule import SampleStream
from fuzzer.harnesses.parser.shrink import shrink_structured, size_key
from strategies._internal.formats import FORMATS

@dataclass
class Side:
    """One side's view of a sample: its outcome, verdict and signature (as that version's own
    campaign would name it), and the same relative to its target, which is what compares."""

    outcome: Any
    verdict: str
    signature: Optional[str]
    relative: Any = None  #: the outcome relative to its target (None: the outcome itself)
    relative_signature: Optional[str] = None

    @property
    def compared(self) -> tuple:
        """What must be equal for two sides to be the same: the relative outcome and signature."""
        outcome = self.relative if self.relative is not None else self.outcome
        signature = self.relative_signature if self.relative is not None else self.signature
        return outcome, signature

    def describe(self) -> dict[str, Any]:
        from fuzzer.harnesses.parser.findings import jsonable

        o = self.outcome
        data: dict[str, Any] = {"outcome": o.kind, "verdict": self.verdict, "signature": self.signature}
        if o.kind == "returned":
            data["calls"] = jsonable(o.calls)
        elif o.kind in ("rejected", "raised"):
            data["exception"] = o.exception
        elif o.detail:
            data["detail"] = o.detail
        return data


@dataclass
class Difference:
    kind: str
    sample: Any
    old: Side
    new: Side
    count: int = 1
    minimized: Any = None
    min_old: Optional[Side] = None
    min_new: Optional[Side] = None

    @property
    def key(self) -> tuple:
        """One difference per pair of judgments, whichever operator made the input: the same
        regression reached by twenty operators is one entry (counted twenty times), not twenty
        (the per-class and per-format tables keep where it showed)."""
        return (self.kind, self.old.verdict, self.new.verdict, self.old.compared[1], self.new.compared[1])

    def to_report(self) -> dict[str, Any]:
        best = self.minimized or self.sample
        return {"kind": self.kind, "anomaly_class": self.sample.anomaly_class, "operator": self.sample.operator,
                "format": self.sample.format, "tool": self.sample.tool, "input": best.text,
                "original_input": self.sample.text, "truth": best.calls if best.truth_known else None,
                "old": (self.min_old or self.old).describe(), "new": (self.min_new or self.new).describe(),
                "count": self.count}


@dataclass
class DiffResult(VersionDiffResult):
    """A parser diff's result: the samples compared, counted by anomaly class and by format."""

    job: str = "diff"
    samples: int = 0
    by_format: dict = field(default_factory=dict)

    def test_cases(self) -> list[TestCase]:
        cases = [TestCase("toolfuzz.diff", f"{d.kind} {d.sample.anomaly_class or 'valid'}/{d.sample.operator or ''} "
                          f"in {d.sample.format}", FAILED if d.kind == "regression" else SKIPPED,
                          f"{d.kind}: old {d.old.verdict}, new {d.new.verdict}", (d.minimized or d.sample).text)
                 for d in self.differences]
        return cases + self.nothing_tested_cases()

    def summary_lines(self) -> list[str]:
        lines = [f"{self.samples:,} samples: {self.kinds_line()}"]
        lines += self.table_lines("anomaly class", self.by_class) + self.table_lines("format", self.by_format)
        for i, d in enumerate(self.differences, 1):
            best = d.minimized or d.sample
            old, new = d.min_old or d.old, d.min_new or d.new
            lines += ["", self.difference_heading(i, d, d.sample),
                      f"    input: {preview(best.text)}", f"    old:   {_side_line(old)}", f"    new:   {_side_line(new)}"]
        return lines

    def to_report(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "samples": self.samples, "counts": self.kinds,
                "by_class": self.by_class, "by_format": self.by_format,
                "differences": [d.to_report() for d in self.differences],
                "elapsed_s": round(self.elapsed_s, 3), "stop_reason": self.stop_reason.value,
                "problem": self.problem}


def _side_line(side: Any) -> str:
    o = side.outcome
    if o.kind == "returned":
        what = f"returned {compact(o.calls, 120)}"
    elif o.kind in ("rejected", "raised"):
        # where: two crashes of one type that differ only in their site (a helper renamed, a
        # check moved) would otherwise print as the same line on both sides
        frames = [frame for frame in (o.frames or ()) if len(frame) >= 2]
        where = f" in {os.path.basename(str(frames[-1][0]))}:{frames[-1][1]}" if frames else ""
        what = f"{o.kind} {o.exception}{where}"
    else:
        what = o.detail or o.kind
    return f"{side.verdict:<14} {what}"


def classify(old: Side, new: Side) -> str:
    """A rejection is compared by what a caller sees, its verdict and exception type: where in
    the target it was raised is in its signature (the campaign files rejections by site), and a
    refactor that renames or moves a helper made every one of them "changed". Both sides compare
    relative to their targets (:attr:`Side.compared`)."""
    (old_outcome, old_signature), (new_outcome, new_signature) = old.compared, new.compared
    same = (outcome_fingerprint(old_outcome) == outcome_fingerprint(new_outcome) and old.verdict == new.verdict
            # the same answer, but another crash site, another kind of damage ... is a change
            and (old_signature == new_signature or old_outcome.kind == "rejected"))
    return change_kind(same=same, before_ok=old.verdict == "pass", now_ok=new.verdict == "pass")


@dataclass
class ReturnedCalls:
    """Whether each version ever returned a call for a valid sample. One that never did tests
    nothing — a parser that always rejects, or always returns no call, agrees with itself on every
    sample ("511 same") and differs from a working one only trivially ("511 changed"): a diff that
    exits 0 on that is a false pass."""

    valid: int = 0
    returned: list = field(default_factory=lambda: [0, 0])  #: valid samples each side returned calls for
    first: list = field(default_factory=lambda: [None, None])  #: what each side did with the first valid one

    def count(self, sample: Any, old: Any, new: Any) -> None:
        if sample.anomaly_class is not None or not sample.truth_known or not sample.calls:
            return
        self.valid += 1
        for i, outcome in enumerate((old, new)):
            if outcome.kind == "returned" and outcome.calls:
                self.returned[i] += 1
            elif self.first[i] is None:
                self.first[i] = outcome

    def problem(self, old_label: str, new_label: str) -> Optional[str]:
        """One line naming the version(s) that tested nothing, or None (also when no valid sample
        was compared: ``--anomaly`` without ``valid`` leaves nothing to tell by)."""
        if not self.valid:
            return None
        idle = [(side, label, first) for side, label, returned, first
                in zip(("old", "new"), (old_label, new_label), self.returned, self.first) if not returned]
        n = f"{self.valid:,} valid sample{'s' if self.valid != 1 else ''} compared"
        if len(idle) == 2:
            return (f"could test nothing: neither version returned a call for any of the {n} ("
                    + "; ".join(f"{side} {label}, first: {_did(first)}" for side, label, first in idle) + ")")
        if idle:
            side, label, first = idle[0]
            return (f"could test nothing: the {side} version {label} returned no call for any of the {n} "
                    f"(the first: {_did(first)})")
        return None


#: Valid samples compared first, spread over the tools and formats (fewer under --max-examples).
VALID_PROBES = 24


def _valid_probes(registry: Any, tools: list, seed: int, limit: Optional[int]) -> list:
    """Valid samples of ``tools``, one format after another, round robin: what every diff
    compares first, so each version's "returns calls" is judged on more than chance's share."""
    from strategies._internal.build import Unbuildable, build_sample
    from strategies._internal.source import RandomSource

    count = VALID_PROBES if limit is None else min(VALID_PROBES, max(1, limit // 4))
    source, out, names = RandomSource(seed ^ 0x5EED), [], sorted(FORMATS)
    for k in range(count * 2):
        if len(out) >= count:
            break
        tool = registry[tools[k % len(tools)]]
        source.reset()
        try:
            out.append(build_sample(source, registry=registry, tool=tool, format=names[k % len(names)]))
        except Unbuildable:
            continue
    return out


def _did(outcome: Any) -> str:
    from fuzzer.harnesses.parser.oracle import brief

    if outcome is None:
        return "no outcome"
    return "returned no call" if outcome.kind == "returned" else brief(outcome)


@contextlib.contextmanager
def target_pool(ref: str, context: ReplayContext) -> Iterator[Any]:
    """A started worker pool for ``M:A``, or for ``git:REF:M:A`` loaded from a temporary worktree
    of REF (removed when the pool closes: :mod:`fuzzer.gitref`). ``context``: the reject types,
    timeout, memory limit, workers and directory; its ``budget_s`` bounds the import too."""
    from fuzzer.gitref import checkout, split_git_target
    from fuzzer.harnesses.parser.harness import target_spec
    from fuzzer.isolation import WorkerPool
    from strategies.errors import TargetError

    git = split_git_target(ref)
    with contextlib.ExitStack() as stack:
        if git is None:
            spec = target_spec(ref, context)
        else:
            git_ref, target = git
            home = stack.enter_context(checkout(git_ref, repo=context.cwd))
            spec = target_spec(target, replace(context, cwd=home))
        pool = WorkerPool(spec, workers=context.workers)
        stack.callback(pool.close)
        try:
            pool.start()
        except TargetError as exc:
            if git is None:
                raise
            raise TargetError(f"{ref}: {exc} (at git ref {git[0]!r})") from None
        yield pool


class DiffJob(Job):
    """Both versions (``old``, ``new``: ``M:A`` or ``git:REF:M:A``) run the same samples, each in
    its own worker pool, opened here (:func:`target_pool`) and closed however the job ends.
    ``corpus_samples`` run first, then fresh samples of every format and class. ``context``: how
    the targets are run (:class:`~fuzzer.engine.harness.ReplayContext`). ``pools``: (old, new)
    pools to use instead, started here and closed by their owner (tests run both in-process)."""

    name = "diff"

    def __init__(self, registry: Any, *, old: str, new: str, context: ReplayContext,
                 level: str = "parse", corpus_samples: Optional[list] = None, tools: Optional[list] = None,
                 anomalies: Optional[list] = None, seed: int = 0, budget_s: Optional[float] = 30.0,
                 max_samples: Optional[int] = None, batch_size: int = 256, pools: Optional[tuple] = None):
        super().__init__()
        old_label, new_label = old, new
        self._given = pools
        self.registry, self.context = registry, replace(context, budget_s=None if max_samples else budget_s)
        self.old_pool: Any = None
        self.new_pool: Any = None
        self._pools = contextlib.ExitStack()
        self.oracle = Oracle(registry, level)
        self.corpus_samples = list(corpus_samples or [])
        self.tools = list(tools or registry.names())
        self.anomalies, self.seed, self.batch_size = anomalies, seed, batch_size
        self.budget = Budget(seconds=budget_s, max_examples=max_samples)
        self.result_ = DiffResult(old=old_label, new=new_label, label=f"{old_label} -> {new_label}")
        self._differences: dict[tuple, Difference] = {}
        self._t0 = time.monotonic()
        self._targets = (TargetModule.of(old_label), TargetModule.of(new_label))
        self._tested = ReturnedCalls()
        self._idle: Optional[str] = None

    def _side(self, sample: Any, outcome: Any, target: TargetModule) -> Side:
        judgment = self.oracle.judge(sample, outcome)
        relative = target.outcome(outcome)
        signature = relative_signature = None
        if judgment.failed:
            signature = self.oracle.signature(sample, judgment, outcome).id
            relative_signature = signature if relative is outcome else \
                self.oracle.signature(sample, judgment, relative).id
        return Side(outcome, judgment.verdict.value, signature, relative, relative_signature)

    def compare(self, samples: list, deadline: Optional[float] = None) -> list[Optional[tuple[str, Any, Side, Side]]]:
        """(kind, sample, old side, new side) per sample; None where the deadline cut it off."""
        texts = [s.text for s in samples]
        olds = self.old_pool.run(texts, deadline=deadline)
        news = self.new_pool.run(texts, deadline=deadline)
        out: list = []
        for sample, o, n in zip(samples, olds, news):
            if o is None or n is None:
                out.append(None)
                continue
            old, new = self._side(sample, o, self._targets[0]), self._side(sample, n, self._targets[1])
            out.append((classify(old, new), sample, old, new))
        return out

    def _count(self, kind: str, sample: Any, old: Side, new: Side) -> None:
        r = self.result_
        r.samples += 1
        r.count(kind, (r.by_class, sample.anomaly_class or "valid"), (r.by_format, sample.format))
        self._tested.count(sample, old.outcome, new.outcome)
        if kind in ("regression", "changed"):
            diff = Difference(kind, sample, old, new)
            found = self._differences.get(diff.key)
            if found is not None:
                found.count += 1
            else:
                self._differences[diff.key] = diff

    def _compare_and_count(self, samples: list) -> int:
        ran = 0
        for item in self.compare(samples, self.budget.deadline):
            if item is not None:
                ran += 1
                self._count(*item)
        return ran

    def events(self) -> Iterator[Any]:
        try:
            yield from super().events()
        finally:
            self._pools.close()  # the workers, and a git worktree with them

    def run(self) -> Iterator[Any]:
        r = self.result_
        yield JobStarted(job=self.name, label=r.label, budget_s=self.budget.seconds,
                         settings={"tools": self.tools, "seed": self.seed, "anomalies": self.anomalies})
        yield PhaseStarted(Phase.LOADING, r.label)
        if self._given is not None:
            self.old_pool, self.new_pool = self._given
            self.old_pool.start()
            self.new_pool.start()
        else:
            self.old_pool = self._pools.enter_context(target_pool(r.old, self.context))
            self.new_pool = self._pools.enter_context(target_pool(r.new, self.context))
        yield Notice(f"diff: {r.old} -> {r.new} ({len(self.corpus_samples)} corpus entries, then fresh samples "
                     f"for {', '.join(self.tools)})")
        self.budget.start()
        yield PhaseStarted(Phase.COMPARING, self.result_.label)
        if self.corpus_samples:
            self._compare_and_count(self.corpus_samples)
        corpus_count = self.result_.samples  # --max-examples counts fresh samples only
        names = resolve_operators(self.anomalies)
        formats = {name: (True, True) for name in FORMATS}
        if includes_valid(self.anomalies):
            # a few valid samples of every format first: whether a version tests nothing (returns
            # no call for any valid one) is told by them, not by the one or two a short run draws
            left = self.budget.executions_left(0)
            self._compare_and_count(_valid_probes(self.registry, self.tools, self.seed, left))
        streams = [SampleStream(registry=self.registry, tool=self.registry[t], formats=formats, operators=names,
                                include_valid=includes_valid(self.anomalies), seed=self.seed + i)
                   for i, t in enumerate(self.tools)]
        turn = empty = 0
        last = 0.0
        while streams:
            reason = self.budget.stop_reason(self.result_.samples - corpus_count)
            if reason is None and self._differences and self._shrink_reserve_reached():
                reason = StopReason.BUDGET  # what is left is the differences' to be shrunk
            if reason is not None:
                self.stop_reason = reason
                break
            left = self.budget.executions_left(self.result_.samples - corpus_count)
            size = self.batch_size if left is None else max(1, min(self.batch_size, left))
            batch = streams[turn % len(streams)].batch(size)
            turn += 1
            empty = 0 if batch else empty + 1
            if empty >= 3 * len(streams):
                self.result_.problem = "nothing to generate: no selected anomaly class or operator applies"
                break
            self._compare_and_count(batch)
            now = time.monotonic() - self._t0
            if now - last >= 1.0:
                last = now
                yield Progress(self.result_.samples, now, {k: v for k, v in self.result_.kinds.items()
                                                           if k in ("regression", "changed") and v},
                               Phase.COMPARING, self.result_.label, self.budget.seconds)
        if not self.interrupted:
            yield PhaseStarted(Phase.SHRINKING, self.result_.label)
            for diff in list(self._differences.values()):
                window = self.budget.shrink_window() if self.budget.seconds is not None else 5.0
                if window <= 0 or self.budget.time_up():
                    break
                started = time.monotonic()
                self._shrink(diff, window)
                self.budget.spent_shrinking(time.monotonic() - started)

    def _shrink_reserve_reached(self) -> bool:
        """Comparing may use the budget but for its shrinking share: a difference is shown
        minimized (the comparing used to run to the end, and no example was ever shrunk)."""
        b = self.budget
        if b.seconds is None:
            return False
        return (b.remaining() or 0.0) <= max(0.0, b.seconds * b.shrink_share - b.shrink_spent)

    def _shrink(self, diff: Difference, budget_s: float) -> None:
        """Shrink the structured sample while the same difference (kind and both judgments) persists."""
        want = diff.key

        def observe(samples: list) -> list:
            return [None if c is None else (c[2], c[3]) for c in self.compare(samples, self.budget.deadline)]

        def keeps(sample: Any, sides: tuple) -> bool:
            old, new = sides
            return Difference(classify(old, new), sample, old, new).key == want

        shrunk = shrink_structured(diff.sample, (diff.old, diff.new), registry=self.registry, observe=observe,
                                   keeps=keeps, budget_s=budget_s, max_tests=3000)
        if size_key(shrunk.sample) < size_key(diff.sample):
            diff.minimized, (diff.min_old, diff.min_new) = shrunk.sample, shrunk.observation

    def result(self) -> DiffResult:
        order = {"regression": 0, "changed": 1}
        r = self.result_
        r.differences = sorted(self._differences.values(), key=lambda d: (order[d.kind], -d.count))
        r.elapsed_s = time.monotonic() - self._t0
        r.executions = r.samples
        r.stop_reason = self.stop_reason
        if not r.samples and not r.problem and not self.interrupted:
            r.problem = "no sample was compared: the budget ended before the first one finished in both versions"
        self._idle = self._tested.problem(r.old, r.new)
        if self._idle:
            r.problem = f"{r.problem}; {self._idle}" if r.problem else self._idle
        return r

    def exit_code(self, result: DiffResult) -> int:
        nothing = result.problem if not result.samples or self._idle else None
        return DiffDecision(regressions=result.kinds["regression"], interrupted=self.interrupted,
                            nothing_tested=nothing).exit_code
