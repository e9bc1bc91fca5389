"""Which sample to generate next: every operator early, then every class its fair share.

The first pass walks every (operator, format) arm once, so even a one-second campaign tries every
anomaly class; after that each anomaly class gets an equal share of the samples (and valid samples a
fixed share), split evenly among the class's operators, so a class with two operators is not starved
by one with twelve. Arms that cannot build a sample for this tool and format are retired after a
few attempts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Optional

from strategies._internal.build import Unbuildable, build_sample
from strategies._internal.mutations import OPERATORS
from strategies._internal.source import RandomSource

#: Share of samples that are valid outputs once the first pass is over.
VALID_SHARE = 0.15
#: Relative share of a class after the first pass (default 1). Oversized inputs cost milliseconds
#: each (megabyte texts), so they get a small share: still tried early and regularly, never starved.
CLASS_WEIGHTS = {"oversized_input": 0.1}
#: Failed builds of an arm (with no success) before it is retired.
RETIRE_AFTER = 12


@dataclass(frozen=True)
class Variation:
    """A format plus the support choices a parser may legitimately not make."""

    format: str
    chatter: bool = False
    multi: bool = False

    @property
    def label(self) -> str:
        extras = [name for name, on in (("prose", self.chatter), ("several calls", self.multi)) if on]
        return f"{self.format}" + (f" ({', '.join(extras)})" if extras else "")


class Scheduler:
    def __init__(self, *, seed: int, formats: dict[str, tuple[bool, bool]], arms: dict[str, list[str]],
                 operator_class: dict[str, str]):
        """``formats``: format -> (prose allowed, several calls allowed);
        ``arms``: format -> operators applicable there; ``operator_class``: operator -> class."""
        self._random = random.Random(seed ^ 0x5EED)
        self._formats = formats
        self._operator_class = operator_class
        self._by_format_class: dict[str, dict[str, list[str]]] = {}
        for fmt, ops in arms.items():
            groups: dict[str, list[str]] = {}
            for op in ops:
                groups.setdefault(operator_class[op], []).append(op)
            self._by_format_class[fmt] = groups
        self._first_pass: list[tuple[str, Optional[str]]] = []
        fmts = sorted(formats)
        for i, op in enumerate(sorted({op for ops in arms.values() for op in ops})):
            usable = [f for f in fmts if op in arms.get(f, ())]
            if usable:
                self._first_pass.append((usable[i % len(usable)], op))
        for fmt in fmts:
            self._first_pass.append((fmt, None))
        self._first_pass.reverse()  # popped from the end
        self._failures: dict[tuple[str, str], int] = {}
        self._successes: set[tuple[str, str]] = set()

    def next(self) -> tuple[Variation, Optional[str]]:
        """The variation and operator (None = valid) of the next sample."""
        rnd = self._random
        if self._first_pass:
            fmt, op = self._first_pass.pop()
        else:
            fmt = rnd.choice(sorted(self._formats))
            groups = self._by_format_class.get(fmt, {})
            if not groups or rnd.random() < VALID_SHARE:
                op = None
            else:
                classes = sorted(groups)
                weights = [CLASS_WEIGHTS.get(c, 1.0) for c in classes]
                ops = groups[rnd.choices(classes, weights)[0]]
                op = rnd.choice(ops)
        prose, several = self._formats[fmt]
        variation = Variation(fmt, chatter=prose and rnd.random() < 0.3, multi=several and rnd.random() < 0.15)
        return variation, op

    def built(self, fmt: str, op: Optional[str]) -> None:
        if op is not None:
            self._successes.add((fmt, op))

    def failed_to_build(self, fmt: str, op: Optional[str]) -> None:
        if op is None or (fmt, op) in self._successes:
            return
        count = self._failures[(fmt, op)] = self._failures.get((fmt, op), 0) + 1
        if count >= RETIRE_AFTER:
            groups = self._by_format_class.get(fmt, {})
            cls = self._operator_class[op]
            if op in groups.get(cls, []):
                groups[cls].remove(op)
                if not groups[cls]:
                    del groups[cls]


class SampleStream:
    """Samples of one tool in the given formats, as the scheduler orders them, in batches.

    ``formats`` maps each usable format to (prose allowed, several calls allowed). Every sample is
    drawn from one recording :class:`RandomSource`, so it carries the recipe that regenerates it.
    """

    def __init__(self, *, registry: Any, tool: Any, formats: dict[str, tuple[bool, bool]], operators: list[str],
                 include_valid: bool, seed: int, source: Optional[RandomSource] = None):
        self.registry, self.tool = registry, tool
        self.include_valid = include_valid or not operators
        self.source = source if source is not None else RandomSource(seed)
        arms = {fmt: [op for op in operators if OPERATORS[op].applies(tool, fmt)] for fmt in formats}
        self.scheduler = Scheduler(seed=seed, formats=formats, arms=arms,
                                   operator_class={n: o.anomaly_class for n, o in OPERATORS.items()})

    def batch(self, size: int) -> list:
        samples: list = []
        attempts = 0
        source, scheduler = self.source, self.scheduler
        while len(samples) < size and attempts < size * 4:
            attempts += 1
            variation, op = scheduler.next()
            if op is None and not self.include_valid:
                continue
            source.reset()
            try:
                sample = build_sample(source, registry=self.registry, tool=self.tool, format=variation.format,
                                      operator=op, chatter=variation.chatter, multi=variation.multi)
            except Unbuildable:
                scheduler.failed_to_build(variation.format, op)
                continue
            scheduler.built(variation.format, op)
            samples.append(sample)
        return samples
