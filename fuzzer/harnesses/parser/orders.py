"""Generation in the worker: the structured arm's samples are drawn, run and judged where the target runs.

Why: with the engine drawing every sample and judging every outcome, the engine process was the
bottleneck (py-spy: its generating thread ~70% and its judging thread ~40% of a core, sharing
one GIL), so a second worker added nothing and the one worker idled half the time. A
:class:`FuzzOrder` is a few hundred bytes: the families the engine's scheduler planned (format,
operators; :meth:`fuzzer.harnesses.parser.schedule.SampleStream.plan`) and a seed. The worker builds them
(:func:`~fuzzer.harnesses.parser.schedule.build_planned`, the expensive part), runs each sample with the
:class:`~fuzzer.isolation.worker.OrderRunner` (which pins each input, so a hang or a death is
still pinned on the exact input), judges it with the same :class:`~fuzzer.harnesses.parser.oracle.Oracle`, re-runs
a few to catch nondeterminism, and sends back only an :class:`OrderResult`: counts by class, one
failure per signature (with its count and the smallest input showing it), and the inputs that
reached code new to the worker (exploration's seeds), and which planned operators could build.
The engine files those exactly as it files the failures it judges itself, and tells its
scheduler what was built before it plans the next round
(:meth:`fuzzer.harnesses.parser.tool.ToolCampaign.fuzz`).

An order's samples are a function of its plan and seed alone, never of the worker that runs it,
so the worker count changes none of them (only, with coverage on, which inputs a worker finds
reaching new lines: its tracer knows only its own).
"""

from __future__ import annotations

import pickle
import random
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Optional

from fuzzer.engine.orders import Order
from fuzzer.harnesses.parser.outcome import declined_quietly, outcome_of
from fuzzer.harnesses.parser.oracle import Oracle, declined, rerun_judgment
from fuzzer.harnesses.parser.explore import MAX_SEED_CHARS
from fuzzer.harnesses.parser.recall import HISTORY, Trail
from fuzzer.harnesses.parser.schedule import TRUNCATION_SWEEP, Cut, build_planned
from strategies._internal.mutations import OPERATORS
from strategies._internal.sample import Sample
from strategies._internal.source import RandomSource
from strategies._internal.tools import registry_digest

#: Fraction of passing inputs re-run to catch nondeterminism.
RERUN_FRACTION = 0.01
#: Tool visits a worker keeps the state of (a campaign visits its tools one after another).
VISITS = 4
#: Registries a worker keeps, by content: compiled argument generators and validators are cached
#: on their tool objects, so every visit after the first reuses the registry the worker has.
REGISTRIES = 2
#: Separates an input's tag fields (format, operator) in the pin buffer.
TAG_SEP = "\x1f"


@dataclass(frozen=True)
class Visit:
    """What a worker needs to build and judge one tool's samples (pickled once per visit)."""

    registry: Any
    tool: str
    operators: list
    level: str
    #: Send back the (operator, class) of every sample drawn (for tests of the schedule).
    keep_drawn: bool = False
    #: :func:`~strategies._internal.tools.registry_digest` of ``registry``: equal keys, equal registries.
    registry_key: str = ""
    #: The chat template formats the visit's samples may be in (their
    #: :class:`~strategies._internal.formats.chat_template.TemplateSource`): a worker forked after
    #: they were registered has them; one that was not (spawned: Ray, macOS) registers them first.
    formats: tuple = ()


@dataclass
class OrderResult:
    """What a worker sends back for one order. ``failures``: per signature new in this order,
    (sample, outcome, judgment, count, the smallest (sample, outcome, judgment, signature) or None, the inputs
    that ran before it — by reference, :meth:`~fuzzer.harnesses.parser.recall.Trail.before` — or
    None: sent the first time the worker saw the signature, and its oracle's signature). ``seeds``: (text,
    format, lines) of the inputs that reached target lines new to the worker (the text "" when too
    long to be a seed)."""

    by_class: dict = field(default_factory=dict)  # class -> [executions, failures]
    failures: list = field(default_factory=list)
    seeds: list = field(default_factory=list)
    built: list = field(default_factory=list)  # per planned family built, whether each op built
    drawn: Optional[list] = None  # (operator, class) of each sample, with Visit.keep_drawn
    #: toolfuzz's own code failed while building this order's samples (the traceback): never the
    #: target's doing, and never to be read as "nothing to generate" (see :class:`GenerationFailed`).
    generation_error: Optional[str] = None

    @property
    def executions(self) -> int:
        return sum(counts[0] for counts in self.by_class.values())


class GenerationFailed(RuntimeError):
    """toolfuzz's own code failed while a worker built samples (a bug in a format, an operator or
    the schema compiler, never in the code under test). Raised by the engine with the worker's
    traceback: the families of that order would otherwise have built nothing, and a campaign
    whose every order failed so said "nothing to generate" — a bug of ours shown as the user's."""


def check_generated(result: Any) -> None:
    """Raise :class:`GenerationFailed` when ``result`` says its order's samples could not be built."""
    error = getattr(result, "generation_error", None)
    if error:
        raise GenerationFailed("toolfuzz failed while building samples in a worker (a bug in toolfuzz, not in "
                               "the code under test; please report it with this traceback):\n" + error)


def text_of(item: Any) -> str:
    """A remembered input as its text: a Sample, a cut-off of one (``Cut``), or a text (what a
    worker's order remembers, and what confirmation replays as the history of a finding)."""
    if item.__class__ is str:
        return item
    base = getattr(item, "base", None)
    return base.text[:item.end] if base is not None else item.text


class FuzzOrder(Order):
    """"Build and run these planned families of visit ``key``": at most ``count`` samples, plus at
    most ``reruns`` re-runs. ``size``: the sequence numbers the order may use (the pool's stride).

    When its worker hangs or dies on an input, the pool calls :meth:`resume`: the order is sent
    again at once without that input (its samples are a function of plan and seed, so the new
    worker builds the same ones, and runs all but the skipped), as a text batch is run again
    without the input that killed its worker. ``lost`` (engine side only) keeps those inputs."""

    __slots__ = ("key", "visit", "plan", "reruns")

    #: Inputs one order may lose and still be sent again at once (each cost a --timeout).
    RESUMES = 64

    def __init__(self, key: str, visit: bytes, plan: list, seed: int, count: int, reruns: int, number: int = 0):
        super().__init__(seed, count, number)
        self.key, self.visit, self.plan, self.reruns = key, visit, plan, reruns

    @property
    def size(self) -> int:
        # each family announces itself (its build is not an input's time), then its samples run
        return self.count + self.reruns + len(self.plan)

    def run(self, runner: Any) -> OrderResult:
        """In the worker: build, execute, judge."""
        state = _state_for(self, runner)
        result = OrderResult()
        by_class, groups = result.by_class, {}
        oracle, seeds = state.oracle, result.seeds
        judge, signature = oracle.judge, oracle.signature
        rerun: list = []
        allowance, rnd = self.reruns, random.Random(self.seed ^ 0xD1CE)
        tags = state.tags
        served = runner.served
        lean, frames, enter = served.lean, served.frames, runner.enter
        drawn: Optional[list] = [] if state.visit.keep_drawn else None
        left = self.count
        skip, index = self.skip, -1
        trail = state.trail.start(self.number)  # [number, first, end]: the inputs run, for histories
        families = self.draw(state, runner)
        while left > 0:
            try:
                family = next(families, None)
            except Exception:  # noqa: BLE001 - toolfuzz's own bug: sent back, raised by the engine
                import traceback

                result.generation_error = traceback.format_exc()
                break
            if family is None:
                break
            plan, samples, built = family
            self.built(result, plan, built, state)
            samples = samples[:left]
            left -= len(samples)
            if drawn is not None:
                drawn.extend((sample.operator, sample.anomaly_class) for sample in samples)
            for sample in samples:
                index += 1
                if skip and index in skip:
                    # it hung or killed a worker: the engine holds it; the trail goes on after it
                    trail = state.trail.start(self.number, index + 1)
                    continue
                cut = sample.__class__ is Cut
                base = sample.base if cut else sample
                key = (base.format, sample.operator)
                tag = tags.get(key)
                if tag is None:
                    tag = tags[key] = f"{base.format}{TAG_SEP}{sample.operator or ''}"
                cls = sample.anomaly_class or "valid"
                counts = by_class.get(cls)
                if counts is None:
                    counts = by_class[cls] = [0, 0]
                counts[0] += 1
                if cut:  # truth None: only a declined answer passes; judge fully only what fails
                    cut_text = base.text[:sample.end]
                    if not runner.enter_prefix(base.text, sample.end, tag, index):
                        enter(tag, index, cut_text)
                    row = lean(cut_text, runner.trace)
                    if declined_quietly(row):
                        trail[2] = index + 1
                        continue
                    outcome = outcome_of(row)
                    if outcome.lines:
                        seeds.append((seed_text(cut_text), base.format, outcome.lines))
                    if declined(outcome) and not outcome.unsafe:
                        trail[2] = index + 1
                        continue
                    sample = sample.materialize()
                else:
                    enter(tag, index, sample.text)
                    outcome = outcome_of(lean(sample.text, runner.trace))
                    if outcome.lines:
                        seeds.append((seed_text(sample.text), base.format, outcome.lines))
                judgment = judge(sample, outcome)
                if judgment.failed:
                    counts[1] += 1
                    outcome = frames(outcome)
                    state.file(groups, sample, outcome, judgment, signature(sample, judgment, outcome))
                elif len(rerun) < allowance and rnd.random() < RERUN_FRACTION:
                    rerun.append((sample, outcome, tag))
                trail[2] = index + 1
        for number, (sample, first, tag) in enumerate(rerun, self.count):
            if skip and number in skip:
                continue
            enter(tag, number, sample.text)
            second = outcome_of(lean(sample.text, runner.trace))
            by_class[sample.anomaly_class or "valid"][0] += 1
            judgment = rerun_judgment(first, second)
            if judgment is not None:
                second = frames(second)
                state.file(groups, sample, second, judgment, signature(sample, judgment, second))
        result.failures = [tuple(group) for group in groups.values()]
        result.drawn = drawn
        return result

    def draw(self, state: "_VisitState", runner: Any) -> Iterator[tuple]:
        """This order's samples, family by family, as (what was planned, its samples, what built):
        a function of the order alone (the engine draws them again to recall what ran before a
        failure: :func:`samples_of`). ``runner``: told before each build (None: not in a worker)."""
        source, cut_random = RandomSource(self.seed), random.Random(self.seed ^ 0xC075)
        registry, tool, sweep = state.visit.registry, state.tool, state.sweep
        for family in self.families(state):
            if runner is not None:
                runner.busy()
            samples, built = build_planned(*family, registry=registry, tool=tool, source=source,
                                           cut_random=cut_random, cuts=sweep)
            yield family, samples, built

    def families(self, state: "_Drawing") -> list:
        """The families this order builds: those the engine planned."""
        return self.plan

    def built(self, result: OrderResult, family: Any, built: list, state: "_VisitState") -> None:
        """Note what building ``family`` found (the engine's scheduler hears of it after the round)."""
        result.built.append(built)


def seed_text(text: str) -> str:
    """The text of an input that reached new lines, as it travels: none when exploration would not
    keep it as a seed (:data:`~fuzzer.harnesses.parser.explore.MAX_SEED_CHARS`); its lines count."""
    return text if len(text) <= MAX_SEED_CHARS else ""


def samples_of(order: FuzzOrder, visit: "Visit") -> list:
    """Every sample ``order`` draws, in the order its worker runs them (index for index): what the
    engine draws again to tell the texts of a history given by reference (:mod:`~fuzzer.harnesses.parser.recall`)."""
    state = _Drawing(_kept_registry(visit))
    out: list = []
    for _family, samples, _built in order.draw(state, None):
        out.extend(samples[:max(0, order.count - len(out))])
        if len(out) >= order.count:
            break
    return out


class _Drawing:
    """What drawing a visit's samples needs (in a worker, or in the engine recalling them)."""

    def __init__(self, visit: Visit):
        self.visit = visit
        self.tool = visit.registry[visit.tool]
        self.sweep = TRUNCATION_SWEEP in visit.operators
        #: the scheduler's snapshots orders planned in the worker brought (drawn.DrawOrder), decoded
        self.kept: dict = {}


class _VisitState(_Drawing):
    """A worker's state for one tool visit: its oracle, the inputs it ran lately (by reference:
    :class:`~fuzzer.harnesses.parser.recall.Trail`) and the signatures it has reported (with
    their history) so far."""

    def __init__(self, visit: Visit):
        super().__init__(visit)
        self.oracle = Oracle(visit.registry, visit.level, cached=False)  # fresh calls: see Promise
        self.trail = Trail()
        self.reported: set = set()
        self.tags: dict = {}

    def file(self, groups: dict, sample: Any, outcome: Any, judgment: Any, signature: Any) -> None:
        """One failure into this order's groups: the first of its signature in full (with the
        inputs that ran before it, by reference, if the worker never reported it), later ones as
        a count and the smallest."""
        signature_id = signature.id
        group = groups.get(signature_id)
        if group is None:
            history = None
            if signature_id not in self.reported:
                self.reported.add(signature_id)
                history = self.trail.before()
            groups[signature_id] = [sample, outcome, judgment, 1, None, history, signature]
            return
        group[3] += 1
        smallest = group[4][0] if group[4] is not None else group[0]
        if len(sample.text) < len(smallest.text):
            group[4] = (sample, outcome, judgment, signature)


_STATES: "OrderedDict[str, _VisitState]" = OrderedDict()
_REGISTRIES: "OrderedDict[str, Any]" = OrderedDict()


def _state_for(order: FuzzOrder, runner: Any) -> _VisitState:
    state = _STATES.get(order.key)
    if state is None:
        visit = pickle.loads(order.visit)
        if visit.formats:
            from strategies._internal.formats.chat_template import ensure

            for source in visit.formats:
                ensure(source)
        state = _STATES[order.key] = _VisitState(_kept_registry(visit))
        while len(_STATES) > VISITS:
            _STATES.popitem(last=False)
    else:
        _STATES.move_to_end(order.key)
    return state


def prepare_for_workers(registry: Any, tools: list) -> None:
    """Compile ``tools`` (their generators, pattern plans, fallback pools, validators) here, and
    keep ``registry`` as the one orders of an equal registry use, before the pool forks its
    zygote: every worker, and every worker started again after a hang or a crash, then inherits
    them instead of compiling each tool on its first visit (a few milliseconds a tool, and up to
    seconds for a hypothesis-jsonschema pool). A tool that does not compile is left for its turn,
    where its error is reported. (With the ``spawn`` start method nothing is inherited.)"""
    from strategies._internal.schema import compile_tool, tool_validator

    for name in tools:
        try:
            tool = registry[name]
            compile_tool(tool)
            tool_validator(tool)
        except Exception:  # noqa: BLE001 - reported when the tool's turn comes
            continue
    key = registry_digest(registry)
    _REGISTRIES.pop(key, None)  # this one, whose tools were just compiled, not an equal copy
    _keep(key, registry)


def _kept_registry(visit: Visit) -> Visit:
    """``visit`` with the registry this worker already holds under the same key, if any."""
    key = visit.registry_key
    if not key:
        return visit
    kept = _keep(key, visit.registry)
    return visit if kept is visit.registry else replace(visit, registry=kept)


def _keep(key: str, registry: Any) -> Any:
    """The registry kept under ``key`` (``registry`` if none was)."""
    kept = _REGISTRIES.get(key)
    if kept is not None:
        _REGISTRIES.move_to_end(key)
        return kept
    _REGISTRIES[key] = registry
    while len(_REGISTRIES) > REGISTRIES:
        _REGISTRIES.popitem(last=False)
    return registry


def pinned_sample(tag: str, text: str, tool: str, why: str) -> Sample:
    """The sample an order's pinned input stands for (its truth died with the worker: only the
    text-level verdicts, hang and death, apply to it)."""
    fmt, _, operator = tag.partition(TAG_SEP)
    op = OPERATORS.get(operator)
    return Sample(text=text, format=fmt or "raw", anomaly_class=op.anomaly_class if op is not None else None,
                  operator=operator or None, calls=None, tool=tool, truth_known=False,
                  description=f"pinned when {why}")


__all__ = ["FuzzOrder", "HISTORY", "OrderResult", "RERUN_FRACTION", "Visit", "pinned_sample", "samples_of", "seed_text",
           "text_of"]
