"""The campaign engine for one tool: probe the formats, then generate, execute and judge.

The hot loop draws samples with a recording :class:`RandomSource` (no Hypothesis per-example
overhead), sends them to the worker pool in batches, and judges each outcome. It decides nothing
about reporting: every failure goes to the job's :class:`FindingBook` (one finding per signature),
and the job (:mod:`fuzzer.campaign`) confirms, shrinks and announces them.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from fuzzer.oracle import Judgment, Oracle, Verdict, outcome_fingerprint
from fuzzer.schedule import Cut, SampleStream, Variation
from strategies._internal.build import Unbuildable, build_sample
from strategies._internal.formats import FORMATS
from strategies._internal.mutations import OPERATORS
from strategies._internal.sample import ANOMALY_CLASSES, Sample
from strategies._internal.source import RandomSource

#: Valid samples per probed variation (DESIGN.md: probe each format instead of flooding false_reject).
PROBE_SAMPLES = 12
#: Most of an execution limit (``--max-examples``) probing may use: the rest is for fuzzing.
PROBE_SHARE = 0.25
#: Fraction of passing inputs re-run to catch nondeterminism.
RERUN_FRACTION = 0.01
#: Inputs remembered before each one, to explain a finding that only happens after others.
HISTORY = 4096


def resolve_operators(anomalies: Optional[list[str]]) -> list[str]:
    """Operator names selected by ``--anomaly`` values (class names, operator names, ``valid``).
    The one place that reads ``--anomaly``."""
    if not anomalies:
        return sorted(OPERATORS)
    chosen: list[str] = []
    for name in anomalies:
        if name in ANOMALY_CLASSES:
            chosen.extend(op.name for op in OPERATORS.values() if op.anomaly_class == name)
        elif name == "valid":
            continue
        else:
            chosen.append(OPERATORS[name].name if name in OPERATORS else _unknown_anomaly(name))
    return sorted(set(chosen))


def _unknown_anomaly(name: str) -> str:
    import difflib

    from strategies.errors import UnknownName

    close = difflib.get_close_matches(name, list(ANOMALY_CLASSES) + list(OPERATORS) + ["valid"], n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownName(f"unknown anomaly class or operator {name!r}{hint}")


def includes_valid(anomalies: Optional[list[str]]) -> bool:
    return not anomalies or "valid" in anomalies


def applicable_somewhere(tool: Any, operators: list[str], include_valid: bool) -> bool:
    """Can anything selected be generated for ``tool`` in some format? (Static check.)"""
    return include_valid or any(OPERATORS[op].applies(tool, fmt) for op in operators for fmt in FORMATS)


@dataclass
class ClassStats:
    executions: int = 0
    failures: int = 0


@dataclass
class Tally:
    """Executions by anomaly class: the one source of every count a report prints. ``executions``
    is always the sum over classes (re-runs for nondeterminism count under their sample's class)."""

    by_class: dict = field(default_factory=dict)

    @property
    def executions(self) -> int:
        return sum(s.executions for s in self.by_class.values())

    def count(self, anomaly_class: Optional[str], failed: bool) -> None:
        stats = self.by_class.get(anomaly_class or "valid")
        if stats is None:
            stats = self.by_class[anomaly_class or "valid"] = ClassStats()
        stats.executions += 1
        if failed:
            stats.failures += 1


@dataclass(frozen=True)
class Failure:
    """One failing execution: what the job's finding book receives."""

    sample: Sample
    outcome: Any
    judgment: Judgment
    #: The inputs run before it (Samples or Cuts, oldest first); called only for a new signature.
    history: Callable[[], tuple] = tuple


@dataclass
class ProbeReport:
    supported: dict = field(default_factory=dict)  # format -> [variation labels]
    support: dict = field(default_factory=dict)  # format -> (prose supported, several calls supported)
    unsupported: dict = field(default_factory=dict)  # format or variation -> why
    first_rejection: Optional[str] = None  # e.g. "ValueError: could not parse (json)"
    contract_problem: Optional[str] = None  # the target returns something that is not calls


class ToolCampaign:
    """Probing and the fuzzing loop for one tool. ``run(texts, deadline)`` is the pool's run."""

    def __init__(self, *, registry: Any, tool_name: str, level: str, formats: Optional[list[str]],
                 operators: list[str], include_valid: bool, seed: int, oracle: Oracle,
                 run: Callable[..., list], tally: Tally, on_failure: Callable[[Failure], None]):
        self.registry = registry
        self.tool = registry[tool_name]
        self.level, self.formats, self.operators, self.include_valid = level, formats, operators, include_valid
        self.seed = seed
        self.oracle = oracle
        self.run = run
        self.tally = tally
        self.on_failure = on_failure
        self.source = RandomSource(seed)
        self._rerun_random = random.Random(seed ^ 0xD1CE)
        self._recent: deque = deque(maxlen=HISTORY)
        if formats:
            for name in formats:
                FORMATS[name]  # unknown format: UnknownName with close matches
        self.stream: Optional[SampleStream] = None
        #: The exploration arm (coverage feedback, seeds, havoc), when coverage is on.
        self.explorer: Any = None
        #: Anomaly class -> relative weight for the scheduler (``--weights-from``).
        self.class_weights: Optional[dict] = None

    # -- probing ---------------------------------------------------------------------------------
    def probe(self, deadline: Optional[float], examples: Optional[int] = None) -> ProbeReport:
        """Which formats (and prose / several-calls variations) the target supports.

        Declared formats (``--format``) are supported by definition, but prose around the call and
        several calls per output are still probed. Probes are judged like any sample: a wrong
        answer on a probe is a finding. With an execution limit (``examples`` for this tool), each
        variation gets fewer samples so probing uses at most ``PROBE_SHARE`` of it (one at least)."""
        report = ProbeReport()
        names = self.formats or list(FORMATS)
        declared = bool(self.formats)
        variations = [Variation(f, c, m) for f in names for c, m in ((False, False), (True, False), (False, True))]
        per_variation = PROBE_SAMPLES if examples is None else \
            max(1, min(PROBE_SAMPLES, int(examples * PROBE_SHARE) // len(variations)))
        batch: list[Sample] = []
        owner: list[Variation] = []
        unwritable: set[str] = set()
        for v in variations:
            for _ in range(per_variation):
                self.source.reset()
                try:
                    batch.append(build_sample(self.source, registry=self.registry, tool=self.tool,
                                              format=v.format, chatter=v.chatter, multi=v.multi))
                    owner.append(v)
                except Unbuildable:  # the format cannot write this tool's name
                    unwritable.add(v.format)
                    break
        outcomes = [o for o in self.run([s.text for s in batch], deadline=deadline)]
        if self.explorer is not None:
            self.explorer.observe(batch, outcomes)
        ran = [i for i, o in enumerate(outcomes) if o is not None]
        probed = {owner[i] for i in ran}
        declined = {v: True for v in probed}
        invalid = {v: True for v in probed}
        results: dict[Variation, list] = {v: [] for v in probed}
        for i in ran:
            v, sample, outcome = owner[i], batch[i], outcomes[i]
            results[v].append((sample, outcome))
            if not (outcome.kind == "rejected" or (outcome.kind == "returned" and not outcome.calls)):
                declined[v] = False
            if outcome.kind != "invalid":
                invalid[v] = False
            if report.first_rejection is None and outcome.kind == "rejected":
                message = (outcome.message or "").strip().splitlines()
                report.first_rejection = (f"{outcome.exception}: {message[0][:160]}" if message
                                          else str(outcome.exception)) + f" (on valid {v.label})"
        if probed and all(invalid.values()):
            first = next(o for o in outcomes if o is not None)
            report.contract_problem = (f"the target does not return calls ({first.message}); it must return a "
                                       "list of {name, arguments} calls, one call, or None")
            return report
        for name in names:
            bare, prose, several = (Variation(name, False, False), Variation(name, True, False),
                                    Variation(name, False, True))
            if name in unwritable:
                report.unsupported[name] = f"cannot write the tool name {self.tool.name!r}"
                continue
            if bare not in probed:
                report.unsupported[name] = "not probed: the budget ran out first"
                continue
            if declined[bare] and not declared:
                report.unsupported[name] = "every valid probe was cleanly rejected"
                continue
            ok = {v: v in probed and not declined[v] for v in (prose, several)}
            report.supported[name] = [bare.label] + [v.label for v in (prose, several) if ok[v]]
            report.support[name] = (ok[prose], ok[several])
            for v in (prose, several):
                if not ok[v]:
                    report.unsupported[v.label] = ("every valid probe was cleanly rejected" if v in probed
                                                   else "not probed: the budget ran out first")
        for v in sorted(probed, key=variations.index):
            if declined[v] and not (declared and not v.chatter and not v.multi):
                continue  # an unsupported variation: its rejections are not findings
            for sample, outcome in results[v]:
                self._judge(sample, outcome)
                if self.explorer is not None:
                    self.explorer.add_seed(sample.text, sample.format)
        return report

    def start_stream(self, report: ProbeReport) -> SampleStream:
        self.stream = SampleStream(registry=self.registry, tool=self.tool, formats=dict(report.support),
                                   operators=self.operators, include_valid=self.include_valid,
                                   seed=self.seed, source=self.source, cuts=True, class_weights=self.class_weights)
        return self.stream

    # -- executing -------------------------------------------------------------------------------
    def execute(self, samples: list, deadline: Optional[float], rerun_allowance: int) -> int:
        """Run a batch (samples, and cut-offs sent as references to their base text), judge, record.
        Returns how many ran (the rest were cut off by the deadline)."""
        texts: list = []
        position: dict[int, int] = {}
        for sample in samples:
            if sample.__class__ is Cut:
                base = position.get(id(sample.base))
                texts.append((base, sample.end) if base is not None else sample.base.text[:sample.end])
            else:
                position[id(sample)] = len(texts)
                texts.append(sample.text)
        rerun: list[tuple[Sample, Any]] = []
        judged = 0
        recent = self._recent

        def judge_arrived(outcomes: list) -> None:
            """Judge, in order, the outcomes that have arrived since the last call — while the
            worker runs the next texts (the pool calls this as results come in)."""
            nonlocal judged
            while judged < len(samples):
                outcome = outcomes[judged]
                if outcome is None:
                    return
                sample = samples[judged]
                judged += 1
                if sample.__class__ is Cut:
                    # Truth None: only a declined answer passes. Judge fully only what fails.
                    if outcome.kind == "rejected" or (outcome.kind == "returned" and not outcome.calls):
                        self.tally.count(Cut.anomaly_class, False)
                        recent.append(sample)
                        continue
                    sample = sample.materialize()
                if not self._judge(sample, outcome) and outcome.kind != "hung" \
                        and len(rerun) < rerun_allowance and self._rerun_random.random() < RERUN_FRACTION:
                    rerun.append((sample, outcome))
                recent.append(sample)

        outcomes = self.run(texts, deadline=deadline, on_result=judge_arrived)
        judge_arrived(outcomes)  # the rest (after the first None: cut off by the deadline)
        ran = judged
        if rerun:
            self.check_determinism(rerun, deadline)
        if self.explorer is not None:
            self.explorer.observe(samples[:ran], outcomes[:ran])
        return ran

    def _judge(self, sample: Sample, outcome: Any) -> bool:
        """Judge, count, hand a failure to the book; True when it failed."""
        judgment = self.oracle.judge(sample, outcome)
        self.tally.count(sample.anomaly_class, judgment.failed)
        if judgment.failed:
            recent = self._recent
            self.on_failure(Failure(sample, outcome, judgment, lambda: tuple(recent)))
        return judgment.failed

    def check_determinism(self, pairs: list[tuple[Sample, Any]], deadline: Optional[float]) -> list[bool]:
        """Re-run inputs; a different answer is a nondeterminism failure. Returns which differed."""
        outcomes = self.run([s.text for s, _ in pairs], deadline=deadline)
        differed = []
        for (sample, first), second in zip(pairs, outcomes):
            if second is None:
                differed.append(False)
                continue
            self.tally.count(sample.anomaly_class, False)
            same = second.kind == "hung" or first.kind == "hung" or \
                outcome_fingerprint(first) == outcome_fingerprint(second)
            differed.append(not same)
            if not same:
                judgment = Judgment(Verdict.NONDETERMINISM,
                                    f"the same input gave {brief(first)} then {brief(second)}", check="nondeterminism")
                self.on_failure(Failure(sample, second, judgment))
        return differed


def brief(outcome: Any) -> str:
    if outcome.kind == "returned":
        return f"{len(outcome.calls or [])} call(s)"
    if outcome.kind in ("rejected", "raised"):
        return f"{outcome.kind} {outcome.exception}"
    return outcome.kind


__all__ = ["ClassStats", "Failure", "ProbeReport", "Tally", "ToolCampaign", "applicable_somewhere", "brief",
           "includes_valid", "resolve_operators"]
