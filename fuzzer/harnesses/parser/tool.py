"""The campaign engine for one tool: probe the formats, then generate, execute and judge.

The hot loop draws samples with a recording :class:`RandomSource` (no Hypothesis per-example
overhead), sends them to the worker pool in batches, and judges each outcome. It decides nothing
about reporting: every failure goes to the job's :class:`FindingBook` (one finding per signature),
and the job (:mod:`fuzzer.harnesses.parser.campaign`) confirms, shrinks and announces them.
"""

from __future__ import annotations

import itertools
import os
import pickle
import random
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from fuzzer.engine.campaign_result import ClassStats, Tally
from fuzzer.engine.interrupts import BALANCED
from fuzzer.engine.orders import order_seed
from fuzzer.isolation.pool import Lost
from fuzzer.harnesses.parser.drawn import ENGINE, WORKERS, DrawOrder, steady_plan
from fuzzer.harnesses.parser.oracle import Judgment, Oracle, brief, declined, rerun_judgment
from fuzzer.harnesses.parser.orders import (HISTORY, RERUN_FRACTION, FuzzOrder, Visit, pinned_sample, samples_of,
                                            text_of)
from fuzzer.harnesses.parser.recall import Recalled, recall_texts
from fuzzer.harnesses.parser.schedule import Cut, SampleStream, Variation
from strategies._internal.build import Unbuildable, build_sample
from strategies._internal.formats import FORMATS
from strategies._internal.formats.versions import select as select_formats
from strategies._internal.mutations import OPERATORS
from strategies._internal.sample import ANOMALY_CLASSES, Sample
from strategies._internal.source import RandomSource
from strategies._internal.tools import registry_digest

#: Valid samples per probed variation (DESIGN.md: probe each format instead of flooding false_reject).
PROBE_SAMPLES = 12
#: Most of an execution limit (``--max-examples``) probing may use: the rest is for fuzzing.
PROBE_SHARE = 0.25
#: Tells one tool visit from another in the workers' caches (a pool outlives a campaign).
_VISITS = itertools.count()
#: Orders of a visit kept to recall the inputs that ran before a failure (:mod:`~fuzzer.harnesses.parser.recall`):
#: a worker's last HISTORY inputs span its last few orders, the pool's last rounds.
KEPT_ORDERS = 4096


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


@dataclass(frozen=True)
class Failure:
    """One failing execution: what the job's finding book receives."""

    sample: Sample
    outcome: Any
    judgment: Judgment
    #: The inputs run before it (Samples, Cuts or texts, oldest first); called only for a new signature.
    history: Callable[[], tuple] = tuple
    #: Failures of this signature it stands for (a worker's order sends one per signature).
    count: int = 1
    #: Its oracle's signature, when the worker that judged it computed it (None: not yet).
    signature: Any = None


@dataclass
class ProbeReport:
    supported: dict = field(default_factory=dict)  # format -> [variation labels the target read]
    #: format -> (prose, several calls, reasoning) to generate: every variant the format has unless
    #: the user declared it unsupported (``hermes:single``) — never dropped because it failed.
    support: dict = field(default_factory=dict)
    unsupported: dict = field(default_factory=dict)  # format -> why (the whole format)
    #: variation label -> why: variants of a supported format that failed on every probe. Their
    #: failures are findings (false_reject keyed by the variant), not a reason to skip them.
    failing: dict = field(default_factory=dict)
    #: What the user declared unsupported, one line per format (``hermes: no several calls (declared)``).
    assumed: list = field(default_factory=list)
    first_rejection: Optional[str] = None  # e.g. "ValueError: could not parse (json)"
    contract_problem: Optional[str] = None  # the target returns something that is not calls


#: Why a format (or a variation of it) counts as unsupported: the target declined every valid probe.
DECLINED_ALL = "every valid probe was cleanly rejected or answered with no call"


class ToolCampaign:
    """Probing and the fuzzing loop for one tool. ``run(texts, deadline)`` is the pool's run,
    ``run_orders(orders, deadline)`` its :meth:`~fuzzer.isolation.WorkerPool.run_orders`."""

    #: Have the workers send back what they drew (tests of the schedule read it in :meth:`_take`).
    keep_drawn = False
    #: How orders are planned past the scheduler's first pass (:mod:`fuzzer.harnesses.parser.drawn`:
    #: ENGINE, SNAPSHOTS or WORKERS); the subject sets it.
    planning = ENGINE

    def __init__(self, *, registry: Any, tool_name: str, level: str, formats: Optional[list[str]],
                 operators: list[str], include_valid: bool, seed: int, oracle: Oracle,
                 run: Callable[..., list], tally: Tally, on_failure: Callable[[Failure], None],
                 run_orders: Optional[Callable[..., list]] = None):
        self.registry = registry
        self.tool = registry[tool_name]
        self.level, self.formats, self.operators, self.include_valid = level, formats, operators, include_valid
        self.seed = seed
        self.oracle = oracle
        self.run, self.run_orders = run, run_orders
        self.tally = tally
        self.on_failure = on_failure
        self.source = RandomSource(seed)
        self._rerun_random = random.Random(seed ^ 0xD1CE)
        self._recent: deque = deque(maxlen=HISTORY)
        #: The formats (and their variants) to probe and fuzz: ``--format`` selectors resolved
        #: (``mistral`` is every version, ``hermes:single`` turns several calls off).
        self.selection = select_formats(formats)
        self.formats = self.selection.formats if formats else None
        self.stream: Optional[SampleStream] = None
        #: Orders planned in this visit so far (:meth:`order`).
        self.planned = 0
        #: The exploration arm (coverage feedback, seeds, havoc), when coverage is on.
        self.explorer: Any = None
        #: Anomaly class -> relative weight for the scheduler (``--weights-from``).
        self.class_weights: Optional[dict] = None
        self._probes: Optional[tuple] = None  # built ahead (prepare_probes)
        #: This visit's orders by number, the latest ones, to recall what ran before a failure.
        self._orders: "OrderedDict[int, Any]" = OrderedDict()
        #: [the scheduler's snapshot past its first pass (schedule.Arms), it pickled for DrawOrders
        #: or None]; None: taken again at the next order (a round's feedback may have changed it)
        self._arms: Optional[list] = None
        self._visit_object: Any = None

    # -- probing ---------------------------------------------------------------------------------
    def probe(self, deadline: Optional[float], examples: Optional[int] = None) -> ProbeReport:
        """Which formats the target supports, and which of their variants (prose, several calls,
        reasoning) it reads.

        A format whose bare single call every probe got cleanly declined is unsupported (skipped,
        unless ``--format`` named it by itself: a family's name, ``--format deepseek``, declares
        that the target reads some of its versions, not each one). A supported format is fuzzed in every variant it has,
        except those the user declared unsupported (``hermes:single``): a variant the target fails
        on is a finding (false_reject keyed by the variant), never a reason to skip it. Probes are
        judged like any sample. With an execution limit (``examples`` for this tool), each variation
        gets fewer samples so probing uses at most ``PROBE_SHARE`` of it (one at least)."""
        report = ProbeReport(assumed=self.selection.assumptions())
        names = self.formats or list(FORMATS)
        declared = self.selection.named if self.formats else set()
        variations, batch, owner, unwritable = self._probes if self._probes is not None and examples is None \
            else self.build_probes(examples)
        self._probes = None
        outcomes = self._run_probes(batch, deadline)
        if self.explorer is not None:
            self.explorer.observe(batch, outcomes)
        ran = [i for i, o in enumerate(outcomes) if o is not None]
        probed = {owner[i] for i in ran}
        every_declined = {v: True for v in probed}
        invalid = {v: True for v in probed}
        results: dict[Variation, list] = {v: [] for v in probed}
        for i in ran:
            v, sample, outcome = owner[i], batch[i], outcomes[i]
            results[v].append((sample, outcome))
            if not declined(outcome):
                every_declined[v] = False
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
        judged: set = set()
        for name in names:
            bare = Variation(name)
            if name in unwritable:
                report.unsupported[name] = f"cannot write the tool name {self.tool.name!r}"
                continue
            if bare not in probed:
                report.unsupported[name] = "not probed: the budget ran out first"
                continue
            if every_declined[bare] and name not in declared:
                report.unsupported[name] = DECLINED_ALL
                continue
            mine = [v for v in variations if v.format == name and v in probed]
            report.supported[name] = [v.label for v in mine if not every_declined[v]]
            report.support[name] = self.variants_of(name)
            for v in mine:
                judged.add(v)
                if every_declined[v] and v != bare:
                    report.failing[v.label] = DECLINED_ALL + " (reported as false_reject)"
        for v in sorted(judged, key=variations.index):
            for sample, outcome in results[v]:
                self._judge(sample, outcome)
                if self.explorer is not None:
                    self.explorer.add_seed(sample.text, sample.format)
        return report

    def variants_of(self, name: str) -> tuple:
        """(prose, several calls, reasoning) the format ``name`` is generated with: each variant it
        has, unless the user declared it unsupported."""
        allows = self.selection.allows
        fmt = FORMATS[name]
        can = fmt.variants  # None: every variant the format has the syntax for

        def writes(variant: str) -> bool:
            return can is None or variant in can

        return (allows(name, "prose") and writes("prose"), allows(name, "several") and writes("several"),
                fmt.reasoning is not None and writes("reasoning") and allows(name, "reasoning"))

    def build_probes(self, examples: Optional[int] = None) -> tuple:
        """The probe samples :meth:`probe` runs: (variations, samples, each sample's variation, the
        formats that cannot write this tool's name). The campaign builds the next tool's ahead
        (:meth:`prepare_probes`) while this one's orders run, so the worker does not wait for them."""
        names = self.formats or list(FORMATS)
        variations = []
        for f in names:
            prose, several, reasoning = self.variants_of(f)
            variations.append(Variation(f))
            variations += [v for v, on in ((Variation(f, chatter=True), prose), (Variation(f, multi=True), several),
                                           (Variation(f, reasoning=True), reasoning)) if on]
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
                                              format=v.format, chatter=v.chatter, multi=v.multi,
                                              reasoning=v.reasoning or None))
                    owner.append(v)
                except Unbuildable:  # the format cannot write this tool's name
                    unwritable.add(v.format)
                    break
        return variations, batch, owner, unwritable

    def prepare_probes(self) -> None:
        """Build the probes now (another thread may), for a :meth:`probe` without an execution
        limit: the same samples it would build, from the same source, so a seed's run stays the same."""
        self._probes = self.build_probes()

    def start_stream(self, report: ProbeReport) -> SampleStream:
        """The structured arm, drawn here (see :meth:`order` for drawing it in the workers)."""
        self.stream = SampleStream(registry=self.registry, tool=self.tool, formats=dict(report.support),
                                   operators=self.operators, include_valid=self.include_valid,
                                   seed=self.seed, source=self.source, cuts=True, class_weights=self.class_weights)
        return self.stream

    def visit(self, report: ProbeReport) -> None:
        """Plan this visit's structured arm here and have the workers build it (:meth:`order`)."""
        self.start_stream(report)
        from strategies._internal.formats.chat_template import sources

        visit = Visit(registry=self.registry, tool=self.tool.name, operators=list(self.operators), level=self.level,
                      keep_drawn=self.keep_drawn, registry_key=registry_digest(self.registry),
                      formats=sources(report.support))
        self._visit = (f"{self.tool.name}#{self.seed}#{os.getpid()}#{next(_VISITS)}",
                       pickle.dumps(visit, pickle.HIGHEST_PROTOCOL))
        self.planned = 0

    def order(self, count: int, number: int, reruns: int) -> FuzzOrder:
        """Order ``number`` of the campaign: ``count`` samples of this visit's structured arm (with
        up to ``reruns`` re-runs for nondeterminism), built, run and judged by a worker
        (:mod:`fuzzer.harnesses.parser.orders`). Planned here by the scheduler while its first pass
        lasts, and after it as :attr:`planning` says: by the scheduler still (ENGINE), or from its
        snapshot and the order's seed (:func:`~fuzzer.harnesses.parser.drawn.steady_plan`) — here
        (SNAPSHOTS) or in the worker (WORKERS, :class:`~fuzzer.harnesses.parser.drawn.DrawOrder`):
        the same samples either way."""
        key, visit = self._visit
        self.planned += 1
        seed = order_seed(self.seed, number)
        scheduler = self.stream.scheduler
        if scheduler.in_first_pass or self.planning == ENGINE:
            return self._keep(FuzzOrder(key, visit, self.stream.plan(count), seed, count, reruns, number))
        scheduler.close_first_pass()
        if self._arms is None:
            self._arms = [self.stream.arms(), None]
        snapshot = self._arms
        if self.planning == WORKERS:
            if snapshot[1] is None:
                snapshot[1] = pickle.dumps(snapshot[0], pickle.HIGHEST_PROTOCOL)
            return self._keep(DrawOrder(key, visit, snapshot[1], seed, count, reruns, number))
        return self._keep(FuzzOrder(key, visit, steady_plan(snapshot[0], seed, count), seed, count, reruns, number))

    def _keep(self, order: FuzzOrder) -> FuzzOrder:
        orders = self._orders
        orders[order.number] = order
        while len(orders) > KEPT_ORDERS:
            orders.popitem(last=False)
        return order

    def recall(self, runs: tuple) -> tuple:
        """The texts of the inputs ``runs`` name (what a worker ran before a failure, by reference:
        :class:`~fuzzer.harnesses.parser.recall.Trail`), drawn again from the orders kept."""
        if self._visit_object is None:
            self._visit_object = pickle.loads(self._visit[1])
        visit = self._visit_object
        return recall_texts(runs, self._orders.get, lambda order: samples_of(order, visit), text_of)

    def feedback(self, orders: list, results: list) -> None:
        """Tell the scheduler what a round's orders could build (at a fixed point of the run: after
        the round, so a seed's run stays the same whatever finished first)."""
        for order, result in zip(orders, results):
            if result is not None and not isinstance(result, Lost):
                built = result.built
                if built.__class__ is dict:  # planned in the worker: per arm (drawn.DrawOrder)
                    if built:
                        self.stream.tally(built)
                        self._arms = None
                    continue
                for family, flags in zip(order.plan, built):
                    self.stream.feedback(family, flags)
                    self._arms = None

    def _take(self, result: Any, order: Any) -> int:
        """File one order's result; returns the executions it counts (the inputs it hung or killed
        a worker on are filed by :meth:`_take_lost`). What it built reaches the scheduler in
        :meth:`feedback`, at a fixed point."""
        ran = 0
        tally = self.tally
        with BALANCED:  # its failures are in their classes and in the finding book, or in neither
            for cls, (executions, failures) in result.by_class.items():
                tally.add(cls, executions, failures)
            for sample, outcome, judgment, count, smallest, history, signature in result.failures:
                earlier = Recalled(history, self.recall) if history else ()
                if smallest is not None:  # the same bug in a smaller input: offered for shrinking
                    self.on_failure(Failure(sample, outcome, judgment, lambda earlier=earlier: earlier,
                                            signature=signature))
                    small, small_outcome, small_judgment, small_signature = smallest
                    self.on_failure(Failure(small, small_outcome, small_judgment, count=count - 1,
                                            signature=small_signature))
                else:
                    self.on_failure(Failure(sample, outcome, judgment, lambda earlier=earlier: earlier, count=count,
                                            signature=signature))
        if result.seeds and self.explorer is not None:
            self.explorer.observe_seeds(result.seeds)
        return ran + result.executions

    def _take_lost(self, lost: Any) -> int:
        """Judge an input an order's worker hung or died on (1 execution; 0 when nothing was pinned)."""
        if not lost.tag and not lost.text:
            return 0  # its worker died between inputs, again and again: nothing to pin it on
        why = f"its worker {lost.outcome.kind}" + ("" if lost.whole else " (the input's beginning only)")
        self._judge(pinned_sample(lost.tag, lost.text, self.tool.name, why), lost.outcome)
        return 1

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
                    if declined(outcome) and not outcome.unsafe:
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

    def _run_probes(self, batch: list, deadline: Optional[float]) -> list:
        """The probes' outcomes. Which formats are supported is known only once all have run, but
        a crash, a hang or an unsafe act is a finding in any format: on Ctrl-C those that arrived
        are judged before it is raised (a parser that hung on every probe showed "0 executions,
        interrupted before anything was found" after seconds of hangs)."""
        arrived: list = []

        def keep(results: list) -> None:  # the list the pool fills, as outcomes arrive
            arrived[:] = [results]

        try:
            return self.run([s.text for s in batch], deadline=deadline, on_result=keep)
        except KeyboardInterrupt:
            for sample, outcome in zip(batch, arrived[0] if arrived else ()):
                if outcome is not None and (outcome.kind in ("raised", "hung", "died") or outcome.unsafe):
                    self._judge(sample, outcome)
            raise

    def _judge(self, sample: Sample, outcome: Any) -> bool:
        """Judge, count, hand a failure to the book; True when it failed."""
        judgment = self.oracle.judge(sample, outcome)
        if not judgment.failed:
            self.tally.count(sample.anomaly_class, False)
            return False
        recent = self._recent
        with BALANCED:  # counted in its class and in its finding, or in neither
            self.tally.count(sample.anomaly_class, True)
            self.on_failure(Failure(sample, outcome, judgment, lambda: tuple(recent)))
        return True

    def check_determinism(self, pairs: list[tuple[Sample, Any]], deadline: Optional[float]) -> list[bool]:
        """Re-run inputs; a different answer is a nondeterminism failure. Returns which differed."""
        outcomes = self.run([s.text for s, _ in pairs], deadline=deadline)
        differed = []
        for (sample, first), second in zip(pairs, outcomes):
            if second is None:
                differed.append(False)
                continue
            self.tally.count(sample.anomaly_class, False)
            judgment = rerun_judgment(first, second)
            differed.append(judgment is not None)
            if judgment is not None:
                self.on_failure(Failure(sample, second, judgment))
        return differed


__all__ = ["ClassStats", "Failure", "ProbeReport", "Tally", "ToolCampaign", "applicable_somewhere", "brief",
           "includes_valid", "resolve_operators"]
