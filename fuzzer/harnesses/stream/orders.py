"""Streams drawn, run and judged in the workers: the stream campaign's orders.

A :class:`StreamOrder` is a seed, a count of streams and a :class:`Plan` (what to draw: parser
outputs in the formats probed, or chunk plans; the tools; the cut patterns that showed new
behaviour so far). The worker draws the streams from it with :func:`draw_streams` — outputs, each
with its splits, the whole output first — runs each with the :class:`~.worker.StreamServer` its
zygote built (pinned first, so a hang or a death is blamed on exactly that stream), judges it,
and sends back an :class:`OrderResult`: counts by class, the smallest stream of each signature
new in the order with its outcome, and the new behaviour it saw. The engine draws the same
streams again from the seed when it needs one (a stream its worker was lost on), and files results
in order number, so the number of workers changes nothing a seed's run finds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from fuzzer.engine.orders import Order
from fuzzer.harnesses.stream import cases as gen
from strategies._internal.source import RandomSource

#: What an order pins each of its streams with (the pool's Lost carries it back).
TAG = "stream"
#: Share of passing streams run a second time to catch nondeterminism.
RERUN_FRACTION = 0.01
#: Draws that gave no output (an operator with nothing to mutate) before an order gives up drawing.
EMPTY_DRAWS = 200


@dataclass(frozen=True)
class Plan:
    """What an order's streams are drawn from (small: it travels with every order)."""

    mode: str = "parser"  # parser | consumer
    tools: tuple = ()
    formats: tuple = ()
    shape: str = "openai"
    #: Cut patterns that showed new behaviour (the ``interesting`` split family replays them).
    interesting: tuple = ()


def draw_streams(source: Any, registry: Any, plan: Plan, count: int) -> list:
    """``[(case without cuts, [(family, cuts), ...])]`` of ``count`` streams in all: outputs, each
    with its splits (the whole output first), the last output's splits cut to fit."""
    groups: list = []
    total = empty = 0
    tools, interesting = list(plan.tools), list(plan.interesting)
    while total < count and empty < EMPTY_DRAWS:
        if plan.mode == "parser":
            sample = gen.draw_output(source, registry, tools, list(plan.formats))
            if sample is None:
                empty += 1
                continue
            base = gen.case_of(sample, registry)
            splits = gen.splits_for(source, base.text, base.markers, interesting)
        else:
            base = gen.consumer_output(source, registry, tools)
            splits = gen.consumer_splits(source, base, plan.shape)
        splits = splits[:count - total]
        groups.append((base, splits))
        total += len(splits)
    return groups


def stream_at(groups: list, index: int) -> Optional[Any]:
    """The ``index``-th stream of ``groups`` (as an order ran them), or None."""
    for base, splits in groups:
        if index < len(splits):
            family, cuts = splits[index]
            return replace(base, cuts=tuple(cuts), family=family)
        index -= len(splits)
    return None


def class_of(case: Any) -> str:
    """The class a stream is counted under (the report's ``by_class``): its anomaly class, or the
    accumulator's chunk anomaly; ``valid`` otherwise."""
    if case.format == "chunks":
        return case.operator or "valid"
    return case.anomaly_class or "valid"


def features(run: Any) -> frozenset:
    """The event pattern of a run — which kind of event ends one step and begins the next, how
    many events a step gives: a cheap stand-in for line coverage that needs no tracer in the hot
    loop. A split whose run shows a feature no stream showed before is *interesting*."""
    out, previous = set(), "^"
    for events in run.steps + [run.finish]:
        head = events[0][0] if events else "-"
        out.add((previous, head, min(len(events), 3)))
        previous = events[-1][0] if events else previous
    return frozenset(out)


@dataclass
class OrderResult:
    """What a worker sends back for one order: ``streams`` run and ``outputs`` drawn;
    ``by_class``: class -> [streams, failing streams]; ``failures``: per signature new in this
    order, (index in the order, the smallest case that showed it, its violation, its outcome,
    how many streams showed it); ``novel``: (features, cuts) of splits whose run showed
    behaviour new to this order; ``contract``: the target broke the contract (stop: exit 2)."""

    streams: int = 0
    outputs: int = 0
    by_class: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    novel: list = field(default_factory=list)
    contract: Optional[str] = None


#: Cut patterns longer than this are not sent back as interesting (they travel with every order).
INTERESTING_CUTS = 24


class StreamOrder(Order):
    """"Draw ``count`` streams from ``seed`` with ``plan``, run and judge them"; a stream its
    worker hung or died on is skipped when the order runs again (its streams are a function of
    its seed)."""

    __slots__ = ("plan",)

    #: Streams one order may lose and still be sent again at once (each hang costs --timeout).
    RESUMES = 4

    def __init__(self, seed: int, count: int, number: int, plan: Plan):
        super().__init__(seed, count, number)
        self.plan = plan

    def run(self, runner: Any) -> OrderResult:
        from fuzzer.harnesses.stream.checks import nondeterminism, violations_of
        from fuzzer.harnesses.stream.worker import StreamOutcome

        served = runner.served
        groups = draw_streams(RandomSource(self.seed), served.registry, self.plan, self.count)
        result, skip = OrderResult(), self.skip
        found: dict = {}
        seen: set = set()
        rnd = random.Random(self.seed)
        index = -1
        for base, splits in groups:
            result.outputs += 1
            whole = None
            for family, cuts in splits:
                index += 1
                if skip and index in skip:
                    continue  # it hung or killed a worker: the engine holds it
                case = replace(base, cuts=tuple(cuts), family=family)
                runner.enter(TAG, index)
                run = served.execute(case)
                if run.contract is not None:
                    result.contract = run.contract
                    return result
                result.streams += 1
                if not cuts:
                    whole = run
                violations = violations_of(case, run, whole if cuts else None)
                if not violations and rnd.random() < RERUN_FRACTION:
                    again = nondeterminism(run, served.execute(case))
                    if again is not None:
                        violations.append(again)
                stats = result.by_class.setdefault(class_of(case), [0, 0])
                stats[0] += 1
                stats[1] += bool(violations)
                for v in violations:
                    sid = v.signature.id
                    known = found.get(sid)
                    if known is None:
                        found[sid] = [index, case, v, run, 1]
                        continue
                    known[4] += 1
                    if (len(case.text), len(case.cuts)) < (len(known[1].text), len(known[1].cuts)):
                        known[:4] = [index, case, v, run]
                if cuts and len(cuts) <= INTERESTING_CUTS:
                    pattern = features(run)
                    if not pattern <= seen:
                        seen |= pattern
                        result.novel.append((pattern, tuple(cuts)))
        # outcomes only for what is sent back: folding every stream here would cost as much again
        result.failures = [(i, case, v, StreamOutcome.of(run, [v]), n) for i, case, v, run, n in found.values()]
        return result


__all__ = ["INTERESTING_CUTS", "OrderResult", "Plan", "StreamOrder", "TAG", "class_of", "draw_streams", "features",
           "stream_at"]
