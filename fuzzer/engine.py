"""The campaign engine: generate, execute (isolated, batched), judge, confirm, shrink, record.

It yields :mod:`fuzzer.events` and never prints or exits. The hot loop draws samples with a
recording :class:`RandomSource` (no Hypothesis per-example overhead), sends them to the worker pool
in batches, and judges each outcome; only the first failure of each signature leaves the loop for
confirmation (a re-run: a different answer is a nondeterminism finding) and shrinking.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from fuzzer.events import (CampaignFinished, CampaignStarted, FindingRecorded, FormatsProbed,
                           Interrupted, Progress)
from fuzzer.findings import Finding
from fuzzer.oracle import Judgment, Oracle, Verdict, outcome_fingerprint
from fuzzer.schedule import Cut, Prefetcher, SampleStream, Variation
from fuzzer.shrink import FindingShrinker
from corpus.signature import verdict_signature
from strategies._internal.build import Unbuildable, build_sample
from strategies._internal.formats import FORMATS
from strategies._internal.mutations import OPERATORS
from strategies._internal.sample import ANOMALY_CLASSES, Sample
from strategies._internal.source import RandomSource
from strategies.errors import UnknownName

#: Valid samples per probed variation (DESIGN.md: probe each format instead of flooding false_reject).
PROBE_SAMPLES = 12
#: Fraction of passing inputs re-run to catch nondeterminism.
RERUN_FRACTION = 0.01
#: Seconds after the budget in which findings still waiting are shrunk (then reported as found).
FINAL_GRACE_S = 5.0
#: Consecutive empty batches after which the campaign stops (every selected operator refused).
EMPTY_BATCHES = 3
#: Seconds spent shrinking a smaller input found later for a known signature.
IMPROVE_BUDGET_S = 2.0
#: Seconds between Progress events.
PROGRESS_EVERY = 1.0


@dataclass
class CampaignSettings:
    tool: str
    level: str = "parse"
    formats: Optional[list[str]] = None  # None: probe every format
    anomalies: Optional[list[str]] = None  # classes or operator names; None: all
    seed: int = 0
    budget_s: Optional[float] = 60.0
    max_examples: Optional[int] = None
    batch_size: int = 256
    shrink: bool = True
    shrink_budget_s: float = 10.0


@dataclass
class ClassStats:
    executions: int = 0
    failures: int = 0


@dataclass
class CampaignResult:
    tool: str
    level: str
    seed: int
    executions: int = 0
    elapsed_s: float = 0.0
    findings: list = field(default_factory=list)  # Finding, in discovery order
    by_class: dict = field(default_factory=dict)  # class or "valid" -> ClassStats
    supported: dict = field(default_factory=dict)
    unsupported: dict = field(default_factory=dict)
    stop_reason: str = ""

    @property
    def execs_per_s(self) -> float:
        return self.executions / self.elapsed_s if self.elapsed_s > 0 else 0.0


def applicable_somewhere(tool: Any, operators: list[str], include_valid: bool) -> bool:
    """Can anything selected be generated for ``tool`` in some format? (Static check.)"""
    return include_valid or any(OPERATORS[op].applies(tool, fmt) for op in operators for fmt in FORMATS)


def resolve_operators(anomalies: Optional[list[str]]) -> list[str]:
    """Operator names selected by ``--anomaly`` values (class names or operator names)."""
    if not anomalies:
        return sorted(OPERATORS)
    chosen: list[str] = []
    for name in anomalies:
        if name in ANOMALY_CLASSES:
            chosen.extend(op.name for op in OPERATORS.values() if op.anomaly_class == name)
        elif name in OPERATORS:
            chosen.append(name)
        elif name == "valid":
            continue
        else:
            import difflib

            close = difflib.get_close_matches(name, list(ANOMALY_CLASSES) + list(OPERATORS), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UnknownName(f"unknown anomaly class or operator {name!r}{hint}")
    return sorted(set(chosen))


class Campaign:
    """One campaign against one tool. ``run`` is ``pool.run``: texts -> outcomes, isolated."""

    def __init__(self, registry: Any, settings: CampaignSettings, run: Callable[[list[str]], list[Any]],
                 *, target_label: str = ""):
        self.registry = registry
        self.settings = settings
        self.tool = registry[settings.tool]
        self.run = run
        self.target_label = target_label
        self.oracle = Oracle(registry, settings.level)
        self.shrinker = FindingShrinker(run, self.oracle, registry)
        self.result = CampaignResult(tool=settings.tool, level=settings.level, seed=settings.seed)
        self.findings: dict[str, Finding] = {}
        self._pending: list[Finding] = []
        self._improve: list[Finding] = []  # findings with a smaller failing input to shrink
        self._announced: set[str] = set()  # signatures already sent out as FindingRecorded
        self._started = 0.0
        self._source = RandomSource(settings.seed)
        self._rerun_random = random.Random(settings.seed ^ 0xD1CE)
        if settings.formats:
            for name in settings.formats:
                if name not in FORMATS:
                    raise UnknownName(f"unknown format {name!r}; known: {', '.join(FORMATS)}")
        self.operators = resolve_operators(settings.anomalies)
        self.include_valid = not settings.anomalies or "valid" in settings.anomalies

    # -- bookkeeping -------------------------------------------------------------------------
    def _elapsed(self) -> float:
        return time.monotonic() - self._started

    def _out_of_budget(self) -> Optional[str]:
        s = self.settings
        if s.max_examples is not None and self.result.executions >= s.max_examples:
            return "max_examples"
        if s.budget_s is not None and self._elapsed() >= s.budget_s:
            return "budget"
        return None

    def _count(self, sample: Sample, failed: bool) -> None:
        stats = self.result.by_class.setdefault(sample.anomaly_class or "valid", ClassStats())
        stats.executions += 1
        if failed:
            stats.failures += 1

    def _progress(self, phase: str = "fuzzing") -> Progress:
        by_verdict: dict[str, int] = {}
        for f in self.findings.values():
            by_verdict[f.verdict.value] = by_verdict.get(f.verdict.value, 0) + 1
        return Progress(self.result.executions, self._elapsed(), by_verdict, phase)

    def _record(self, sample: Sample, outcome: Any, judgment: Judgment) -> None:
        signature = self.oracle.signature(sample, judgment, outcome)
        found = self.findings.get(signature.id)
        if found is not None:
            found.count += 1
            # The same bug shown by a smaller input (another operator, simpler calls): shrink that
            # one too, later, and keep whichever result is smaller.
            if len(sample.text) < len(found.best.text) and (found.candidate is None
                                                           or len(sample.text) < len(found.candidate[0].text)):
                if not any(f is found for f in self._improve):
                    self._improve.append(found)
                found.candidate = (sample, outcome)
            return
        finding = Finding(signature=signature, verdict=judgment.verdict, reason=judgment.reason,
                          sample=sample, outcome=outcome)
        self.findings[signature.id] = finding
        self._pending.append(finding)

    def _execute(self, samples: list) -> None:
        """Run a batch (samples, and cut-offs sent as references to their base text), judge, record."""
        texts: list = []
        position: dict[int, int] = {}
        for sample in samples:
            if sample.__class__ is Cut:
                base = position.get(id(sample.base))
                texts.append((base, sample.end) if base is not None else sample.base.text[:sample.end])
            else:
                position[id(sample)] = len(texts)
                texts.append(sample.text)
        outcomes = self.run(texts)
        rerun: list[tuple[Sample, Any]] = []
        cut_stats = self.result.by_class.setdefault(Cut.anomaly_class, ClassStats())
        for sample, outcome in zip(samples, outcomes):
            self.result.executions += 1
            if sample.__class__ is Cut:
                # Truth None: only a declined answer passes. Judge fully only what fails.
                cut_stats.executions += 1
                if outcome.kind == "rejected" or (outcome.kind == "returned" and not outcome.calls):
                    continue
                sample = sample.materialize()
                judgment = self.oracle.judge(sample, outcome)
                cut_stats.failures += 1
                self._record(sample, outcome, judgment)
                continue
            judgment = self.oracle.judge(sample, outcome)
            self._count(sample, judgment.failed)
            if judgment.failed:
                self._record(sample, outcome, judgment)
            elif outcome.kind != "hung" and self._rerun_random.random() < RERUN_FRACTION:
                rerun.append((sample, outcome))
        if rerun:
            self._check_determinism(rerun)

    def _check_determinism(self, pairs: list[tuple[Sample, Any]]) -> list[bool]:
        """Re-run inputs; a different answer records a nondeterminism finding. Returns which differed."""
        outcomes = self.run([s.text for s, _ in pairs])
        differed = []
        for (sample, first), second in zip(pairs, outcomes):
            self.result.executions += 1
            same = second.kind == "hung" or first.kind == "hung" or \
                outcome_fingerprint(first) == outcome_fingerprint(second)
            differed.append(not same)
            if not same:
                judgment = Judgment(Verdict.NONDETERMINISM,
                                    f"the same input gave {_brief(first)} then {_brief(second)}")
                signature = verdict_signature(Verdict.NONDETERMINISM.value, anomaly_class=sample.anomaly_class,
                                              operator=sample.operator, format=sample.format)
                found = self.findings.get(signature.id)
                if found is not None:
                    found.count += 1
                else:
                    finding = Finding(signature=signature, verdict=Verdict.NONDETERMINISM,
                                      reason=judgment.reason, sample=sample, outcome=second)
                    self.findings[signature.id] = finding
                    self._pending.append(finding)
        return differed

    def _settle(self, *, final: bool = False) -> Iterator[FindingRecorded]:
        """Confirm and shrink the findings discovered since the last call, then announce them.

        After the budget (``final``), all remaining findings share a short grace period; those it
        does not reach are announced as found, unshrunk, never dropped."""
        grace_end = time.monotonic() + FINAL_GRACE_S
        while self._pending:
            finding = self._pending.pop(0)
            if final and time.monotonic() >= grace_end:
                finding.shrink_note = "not shrunk: the budget ran out"
                yield self._announce(finding)
                continue
            if finding.verdict is not Verdict.NONDETERMINISM and finding.verdict is not Verdict.HANG:
                differed = self._check_determinism([(finding.sample, finding.outcome)])
                if differed and differed[0]:
                    # The original finding stays: it did happen; the nondeterminism one explains it.
                    finding.reason += " (not reproducible: see the nondeterminism finding)"
            if self.settings.shrink:
                remaining = (self.settings.budget_s - self._elapsed()) if self.settings.budget_s else None
                budget = self.settings.shrink_budget_s
                if remaining is not None:
                    budget = min(budget, max(1.0, remaining / 2))
                if final:
                    budget = min(budget, 2.0, max(0.0, grace_end - time.monotonic()))
                minimized, outcome, note = self.shrinker.shrink(
                    finding.sample, finding.outcome, finding.verdict, finding.signature.id, budget_s=budget)
                finding.minimized, finding.minimized_outcome, finding.shrink_note = minimized, outcome, note
            yield self._announce(finding)
        if not final:
            yield from self._improve_findings()

    def _announce(self, finding: Finding, improved: bool = False) -> FindingRecorded:
        self._announced.add(finding.signature.id)
        return FindingRecorded(finding, improved=improved)

    def announce_the_rest(self) -> Iterator[FindingRecorded]:
        """Every finding not yet announced (interrupted while shrinking one): never lose one."""
        self._pending.clear()
        for finding in self.findings.values():
            if finding.signature.id not in self._announced:
                yield self._announce(finding)

    def _improve_findings(self) -> Iterator[FindingRecorded]:
        """Shrink the smaller inputs found for known signatures (briefly: this is a refinement)."""
        waiting = [f for f in self._improve if any(f is p for p in self._pending)]
        ready = [f for f in self._improve if not any(f is p for p in self._pending)]
        self._improve = waiting  # still to be shrunk the first time: improve them afterwards
        while ready and not self._out_of_budget() and self.settings.shrink:
            finding = ready.pop(0)
            if finding.candidate is None or len(finding.candidate[0].text) >= len(finding.best.text):
                finding.candidate = None
                continue
            sample, outcome = finding.candidate
            finding.candidate = None
            budget = min(IMPROVE_BUDGET_S, max(0.5, (self.settings.budget_s or 60) / 20))
            minimized, min_outcome, note = self.shrinker.shrink(
                sample, outcome, finding.verdict, finding.signature.id, budget_s=budget)
            if len(minimized.text) < len(finding.best.text):
                # Report the input this came from, so input, class, operator and format agree.
                finding.sample, finding.outcome = sample, outcome
                finding.minimized, finding.minimized_outcome, finding.shrink_note = minimized, min_outcome, note
                yield self._announce(finding, improved=True)  # the corpus keeps the smaller one
        self._improve.extend(ready)  # the budget ran out: keep them for later

    # -- the campaign ------------------------------------------------------------------------
    def probe(self) -> dict[str, tuple[bool, bool]]:
        """Which formats (and prose / several-calls variations) the target supports."""
        names = self.settings.formats or list(FORMATS)
        # Declared formats are supported by definition (a clean rejection of them is a
        # false_reject), but prose around the call and several calls per output are still support
        # choices, probed like the rest.
        declared = bool(self.settings.formats)
        variations = [Variation(f, c, m) for f in names for c, m in ((False, False), (True, False), (False, True))]
        batch: list[Sample] = []
        owner: list[Variation] = []
        unwritable: set[str] = set()
        for v in variations:
            for _ in range(PROBE_SAMPLES):
                self._source.reset()
                try:
                    batch.append(build_sample(self._source, registry=self.registry, tool=self.tool,
                                              format=v.format, chatter=v.chatter, multi=v.multi))
                    owner.append(v)
                except Unbuildable:  # the format cannot write this tool's name
                    unwritable.add(v.format)
                    break
        # Run format by format, so a target that hangs on everything cannot spend the whole
        # budget (and more) on probes.
        outcomes: list = []
        chunk = PROBE_SAMPLES * 3
        for start in range(0, len(batch), chunk):
            if self._out_of_budget() == "budget":
                break
            outcomes.extend(self.run([s.text for s in batch[start:start + chunk]]))
        batch, owner = batch[:len(outcomes)], owner[:len(outcomes)]
        probed = set(owner)
        variations = [v for v in variations if v in probed]
        declined: dict[Variation, bool] = {v: True for v in variations}
        results: dict[Variation, list] = {v: [] for v in variations}
        for v, sample, outcome in zip(owner, batch, outcomes):
            results[v].append((sample, outcome))
            if not (outcome.kind == "rejected" or (outcome.kind == "returned" and not outcome.calls)):
                declined[v] = False
        supported: dict[str, tuple[bool, bool]] = {}
        for name in names:
            bare, prose, several = (Variation(name, False, False), Variation(name, True, False),
                                    Variation(name, False, True))
            if name in unwritable:
                self.result.unsupported[name] = f"cannot write the tool name {self.tool.name!r}"
                continue
            if bare not in probed:
                self.result.unsupported[name] = "not probed: the budget ran out first"
                continue
            if declined[bare] and not declared:
                self.result.unsupported[name] = "every valid probe was cleanly rejected"
                continue
            ok = {v: v in probed and not declined[v] for v in (prose, several)}
            supported[name] = (ok[prose], ok[several])
            self.result.supported[name] = [bare.label] + [v.label for v in (prose, several) if ok[v]]
            for v in (prose, several):
                if not ok[v]:
                    self.result.unsupported[v.label] = ("every valid probe was cleanly rejected" if v in probed
                                                        else "not probed: the budget ran out first")
        # Judge the probes of supported variations: a wrong answer on a probe is a finding.
        for v in variations:
            if declined[v] and not (declared and not v.chatter and not v.multi):
                continue
            for sample, outcome in results[v]:
                judgment = self.oracle.judge(sample, outcome)
                self.result.executions += 1
                self._count(sample, judgment.failed)
                if judgment.failed:
                    self._record(sample, outcome, judgment)
        return supported

    def events(self) -> Iterator[Any]:
        self._started = time.monotonic()
        settings = self.settings
        yield CampaignStarted(tool=settings.tool, target=self.target_label, level=settings.level,
                              seed=settings.seed, operators=len(self.operators))
        stop_reason = "done"
        try:
            supported = self.probe()
            yield FormatsProbed(supported=dict(self.result.supported), unsupported=dict(self.result.unsupported))
            yield from self._settle()
            if not supported:
                stop_reason = "no supported format"
            else:
                stream = SampleStream(registry=self.registry, tool=self.tool, formats=supported,
                                      operators=self.operators, include_valid=self.include_valid,
                                      seed=settings.seed, source=self._source, cuts=True)
                prefetcher = Prefetcher(stream, settings.batch_size)
                try:
                    last_progress = 0.0
                    empty = 0
                    while True:
                        reason = self._out_of_budget()
                        if reason:
                            stop_reason = reason
                            break
                        batch = prefetcher.get()
                        if settings.max_examples is not None:
                            batch = batch[:settings.max_examples - self.result.executions]
                        empty = 0 if batch else empty + 1
                        if empty >= EMPTY_BATCHES:
                            stop_reason = "nothing to generate: no selected operator applies to these calls"
                            break
                        if batch:
                            self._execute(batch)
                        yield from self._settle()
                        if self._elapsed() - last_progress >= PROGRESS_EVERY:
                            last_progress = self._elapsed()
                            yield self._progress()
                finally:
                    prefetcher.close()
        except KeyboardInterrupt:
            stop_reason = "interrupted"
            yield Interrupted()
        # Findings discovered but not yet announced are never lost: announce them (shrinking
        # briefly unless interrupted).
        if stop_reason == "interrupted":
            yield from self.announce_the_rest()
        else:
            try:
                yield from self._settle(final=True)
            except KeyboardInterrupt:
                stop_reason = "interrupted"
            yield from self.announce_the_rest()
        yield CampaignFinished(result=self.snapshot(stop_reason), stop_reason=stop_reason)

    def snapshot(self, stop_reason: str) -> CampaignResult:
        """The result so far (used when the campaign is interrupted outside the engine's own code)."""
        self.result.elapsed_s = self._elapsed()
        self.result.findings = list(self.findings.values())
        self.result.stop_reason = stop_reason
        return self.result


def _brief(outcome: Any) -> str:
    if outcome.kind == "returned":
        return f"{len(outcome.calls or [])} call(s)"
    if outcome.kind in ("rejected", "raised"):
        return f"{outcome.kind} {outcome.exception}"
    return outcome.kind


def merge_results(results: list[CampaignResult]) -> CampaignResult:
    """One result for a campaign over several tools (each tool ran its own engine)."""
    if len(results) == 1:
        return results[0]
    merged = CampaignResult(tool=",".join(r.tool for r in results), level=results[0].level, seed=results[0].seed)
    by_signature: dict[str, Finding] = {}
    for r in results:
        merged.executions += r.executions
        merged.elapsed_s += r.elapsed_s
        for finding in r.findings:  # one bug found through several tools is one finding
            known = by_signature.get(finding.signature.id)
            if known is None:
                by_signature[finding.signature.id] = finding
                merged.findings.append(finding)
                continue
            known.count += finding.count
            if len(finding.best.text) < len(known.best.text):
                known.sample, known.outcome = finding.sample, finding.outcome
                known.minimized, known.minimized_outcome = finding.minimized, finding.minimized_outcome
        for name, stats in r.by_class.items():
            into = merged.by_class.setdefault(name, ClassStats())
            into.executions += stats.executions
            into.failures += stats.failures
        for name, value in r.supported.items():
            merged.supported[f"{r.tool}: {name}"] = value
        for name, value in r.unsupported.items():
            merged.unsupported[f"{r.tool}: {name}"] = value
        merged.stop_reason = r.stop_reason if r.stop_reason == "interrupted" else merged.stop_reason or r.stop_reason
    return merged
