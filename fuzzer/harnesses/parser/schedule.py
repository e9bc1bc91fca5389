"""Which sample to generate next: every operator early, then every class its fair share.

The first pass walks every (operator, format) arm once, so even a one-second campaign tries every
anomaly class; after that each anomaly class gets an equal share of the samples (and valid samples a
fixed share), split evenly among the class's operators, so a class with two operators is not starved
by one with twelve. Arms that cannot build a sample for this tool and format are retired after a
few attempts.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from typing import Any, Optional

from strategies._internal.build import build_family
from strategies._internal.mutations_syntax import payload_spans
from strategies._internal.sample import Recipe, Sample
from strategies._internal.mutations import OPERATORS
from strategies._internal.source import RandomSource

#: Share of samples that are valid outputs once the first pass is over.
VALID_SHARE = 0.15
#: Relative share of a class after the first pass (default 1). Oversized inputs cost milliseconds
#: each (megabyte texts), so they get a small share: still tried early and regularly, never starved.
CLASS_WEIGHTS = {"oversized_input": 0.1}
#: Samples built from one draw of calls (see strategies' build_family): the calls are drawn and
#: rendered once per family, which is most of what a sample costs.
FAMILY_SIZE = 6
#: Beside every valid sample, this many cut-offs of it (max_tokens truncation at an arbitrary
#: character): a slice each, so they cost almost nothing, and they are what models emit most.
TRUNCATION_SWEEP = "truncate_anywhere"
SWEEP_SIZE = 16
#: Failed builds of an arm (with no success) before it is retired.
RETIRE_AFTER = 12

#: A first-pass operator that finds nothing to mutate in the calls drawn is tried again on other
#: calls, right away (where the family is built), up to twice RETIRE_AFTER times in all: so every
#: operator runs early, even one that finds something to mutate in one draw of four (an enum
#: value in an optional argument): it fails all its tries once in a thousand tools.
FIRST_PASS_RETRIES = 2 * RETIRE_AFTER - 1
#: Tries of a first-pass operator in the format it was planned in before its retries go to the
#: other formats it applies to: an operator the schema allows in a format may rarely find there
#: what it mutates (a JSON truncation in a format that writes arguments as XML tags), and would
#: then not run until the first pass is over.
NATIVE_TRIES = 4


@dataclass(frozen=True)
class Variation:
    """A format plus the variants a parser may declare it does not support (``hermes:single``):
    prose beside the calls, several calls, reasoning before them."""

    format: str
    chatter: bool = False
    multi: bool = False
    reasoning: bool = False

    @property
    def label(self) -> str:
        extras = [name for name, on in (("prose", self.chatter), ("several calls", self.multi),
                                        ("reasoning", self.reasoning)) if on]
        return f"{self.format}" + (f" ({', '.join(extras)})" if extras else "")


@dataclass(frozen=True)
class Arms:
    """A snapshot of the scheduler past its first pass, all that planning an order's families
    needs (:mod:`fuzzer.harnesses.parser.drawn`): the formats and their variants, the arms still
    in play by format and class (retired ones left out), the classes' weights, and the arms known
    to build (a failure to build one of those counts for nothing)."""

    formats: tuple  # ((format, (prose, several[, reasoning])), ...), sorted
    groups: tuple  # ((format, ((class, (operator, ...)), ...)), ...), sorted
    class_weights: tuple  # ((class, weight), ...) from --weights-from
    include_valid: bool
    sweep: bool
    cuts: bool
    successes: frozenset  # (format, operator) of the arms that built at least once


class Scheduler:
    def __init__(self, *, seed: int, formats: dict[str, tuple], arms: dict[str, list[str]],
                 operator_class: dict[str, str], class_weights: Optional[dict] = None):
        """``formats``: format -> (prose allowed, several calls allowed[, reasoning allowed]);
        ``arms``: format -> operators applicable there; ``operator_class``: operator -> class;
        ``class_weights``: class -> relative weight (e.g. how often production showed it), times
        the classes' own cost weights."""
        self._class_weights = dict(class_weights or {})
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
        #: operator -> the formats it applies to, from the one its first pass was planned in on
        self._elsewhere: dict[str, tuple] = {}
        for i, op in enumerate(sorted({op for ops in arms.values() for op in ops})):
            usable = [f for f in fmts if op in arms.get(f, ())]
            if usable:
                start = i % len(usable)
                self._first_pass.append((usable[start], op))
                self._elsewhere[op] = tuple(usable[start + 1:] + usable[:start])
        for fmt in fmts:
            self._first_pass.append((fmt, None))
        self._first_pass.reverse()  # popped from the end
        self._format_names = sorted(formats)
        self._failures: dict[tuple[str, str], int] = {}
        self._successes: set[tuple[str, str]] = set()
        self._succeeded_ops: set[str] = set()
        self._first_pass_open = True  # retried first-pass arms go back in until it is over

    def arms(self) -> tuple:
        """(formats, groups, class weights, successes) as :class:`Arms` holds them."""
        formats = tuple(sorted((f, tuple(v)) for f, v in self._formats.items()))
        groups = tuple(sorted((f, tuple(sorted((c, tuple(ops)) for c, ops in by_class.items() if ops)))
                              for f, by_class in self._by_format_class.items()))
        return formats, groups, tuple(sorted(self._class_weights.items())), frozenset(self._successes)

    @classmethod
    def steady(cls, arms: Arms, seed: int) -> "Scheduler":
        """A scheduler past its first pass with ``arms`` in play, its draws from ``seed``: what an
        order's families are planned with past the first pass (by the engine or a worker)."""
        self = cls.__new__(cls)
        self._class_weights = dict(arms.class_weights)
        self._random = random.Random(seed ^ 0x5EED)
        self._formats = dict(arms.formats)
        self._operator_class = {n: o.anomaly_class for n, o in OPERATORS.items()}
        self._by_format_class = {f: {c: list(ops) for c, ops in by_class} for f, by_class in arms.groups}
        self._first_pass, self._elsewhere = [], {}
        self._format_names = sorted(self._formats)
        self._failures, self._successes, self._succeeded_ops = {}, set(arms.successes), set()
        self._first_pass_open = False
        return self

    def close_first_pass(self) -> None:
        """No first-pass arm goes back in from now on (what drawing a family past the first pass
        does; orders planned from a snapshot draw none here: :mod:`fuzzer.harnesses.parser.drawn`)."""
        self._first_pass_open = False

    def elsewhere(self, ops: list) -> dict:
        """For first-pass operators: the other formats they apply to (their retries' formats)."""
        return {op: self._elsewhere[op] for op in ops if op is not None and self._elsewhere.get(op)}

    @property
    def in_first_pass(self) -> bool:
        """Will the next family come from the first pass (every operator once)?"""
        return bool(self._first_pass)

    def next_family(self, size: int) -> tuple[Variation, list[Optional[str]]]:
        """The variation of the next family of samples and the operator (None = valid) of each."""
        rnd = self._random
        if self._first_pass:
            fmt = self._first_pass[-1][0]
            ops: list[Optional[str]] = []
            while self._first_pass and self._first_pass[-1][0] == fmt and len(ops) < size:
                ops.append(self._first_pass.pop()[1])
        else:
            self._first_pass_open = False
            fmt = rnd.choice(self._format_names)
            groups = self._by_format_class.get(fmt, {})
            classes = sorted(groups)
            weights = [CLASS_WEIGHTS.get(c, 1.0) * self._class_weights.get(c, 1.0) for c in classes]
            ops = []
            for _ in range(size):
                if not groups or rnd.random() < VALID_SHARE:
                    ops.append(None)
                else:
                    ops.append(rnd.choice(groups[rnd.choices(classes, weights)[0]]))
        prose, several, reasoning = (tuple(self._formats[fmt]) + (False,))[:3]
        variation = Variation(fmt, chatter=prose and rnd.random() < 0.3, multi=several and rnd.random() < 0.15,
                              reasoning=reasoning and rnd.random() < 0.25)
        return variation, ops

    def built(self, fmt: str, op: Optional[str]) -> None:
        if op is not None:
            self._successes.add((fmt, op))
            self._succeeded_ops.add(op)

    def failed_to_build(self, fmt: str, op: Optional[str]) -> None:
        if op is None or (fmt, op) in self._successes:
            return
        count = self._failures[(fmt, op)] = self._failures.get((fmt, op), 0) + 1
        if count < RETIRE_AFTER and op not in self._succeeded_ops and self._first_pass_open:
            # Its one first-pass try drew calls it could not mutate: try again with other calls,
            # so every operator really runs early.
            self._first_pass.append((fmt, op))
        if count >= RETIRE_AFTER:
            groups = self._by_format_class.get(fmt, {})
            cls = self._operator_class[op]
            if op in groups.get(cls, []):
                groups[cls].remove(op)
                if not groups[cls]:
                    del groups[cls]


class Cut:
    """A cut-off of a valid sample, ``base.text[:end]``: the ``truncate_anywhere`` sample of the same
    calls, made without building it. The engine sends it to the worker as a reference to its base
    text and builds the full :class:`Sample` only if it fails. ``choices`` are the two choices the
    operator draws, so ``materialize().recipe`` replays to exactly this text."""

    __slots__ = ("base", "end", "choices")
    anomaly_class = "truncated_output"
    operator = TRUNCATION_SWEEP

    def __init__(self, base: Sample, end: int, choices: tuple):
        self.base, self.end, self.choices = base, end, choices

    def materialize(self) -> Sample:
        base = self.base
        recipe = Recipe(tool=base.recipe.tool, format=base.format, operator=self.operator,
                        choices=base.recipe.choices + self.choices, chatter=base.recipe.chatter,
                        multi=base.recipe.multi, reasoning=base.recipe.reasoning)
        return Sample(text=base.text[:self.end], format=base.format, anomaly_class=self.anomaly_class,
                      operator=self.operator, calls=None, tool=base.tool, recipe=recipe,
                      description=f"cut after {self.end} of {len(base.text)} characters")


def cuts_of(sample: Sample, count: int, rnd: random.Random) -> list:
    """``count`` cut-offs of a freshly built valid sample (see :class:`Cut`)."""
    spans = payload_spans(sample.rendered) if sample.rendered is not None else []
    if not spans:
        return []
    out = []
    r = rnd.random
    for _ in range(count):
        index = int(r() * len(spans))
        start, end = spans[index]
        offset = int(r() * (end - 1))  # integer(1, end - 1) records value - 1
        out.append(Cut(sample, start + 1 + offset, (index, offset)))
    return out


class SampleStream:
    """Samples of one tool in the given formats, as the scheduler orders them, in batches.

    ``formats`` maps each usable format to (prose allowed, several calls allowed). Every sample is
    drawn from one recording :class:`RandomSource`, so it carries the recipe that regenerates it.
    """

    def __init__(self, *, registry: Any, tool: Any, formats: dict[str, tuple[bool, bool]], operators: list[str],
                 include_valid: bool, seed: int, source: Optional[RandomSource] = None, cuts: bool = False,
                 class_weights: Optional[dict] = None):
        self.registry, self.tool = registry, tool
        self.include_valid = include_valid or not operators
        self.sweep = TRUNCATION_SWEEP in operators
        self.cuts = cuts  # yield Cut objects for the sweep (the engine) instead of built samples
        self._cut_random = random.Random(seed ^ 0xC075)
        self.source = source if source is not None else RandomSource(seed)
        arms = {fmt: [op for op in operators if OPERATORS[op].applies(tool, fmt)] for fmt in formats}
        self.scheduler = Scheduler(seed=seed, formats=formats, arms=arms,
                                   operator_class={n: o.anomaly_class for n, o in OPERATORS.items()},
                                   class_weights=class_weights)

    def batch(self, size: int) -> list:
        """At least ``size`` samples (whole families), each family built as soon as it is planned,
        so the scheduler hears of every build before it plans the next."""
        samples: list = []
        attempts = 0
        while len(samples) < size and attempts < size:
            attempts += 1
            family = self._next()
            if family is None:
                continue
            built, flags = build_planned(*family, registry=self.registry, tool=self.tool, source=self.source,
                                         cut_random=self._cut_random, cuts=self.sweep and self.cuts)
            self.feedback(family, flags)
            samples.extend(built)
        return samples

    def plan(self, size: int) -> list:
        """Families for about ``size`` samples, planned without building them: the engine plans and
        a worker builds (:func:`build_planned`); :meth:`feedback` then tells the scheduler what
        could be built, before the next plans."""
        families: list = []
        expected = attempts = 0
        while expected < size and attempts < size:
            attempts += 1
            family = self._next()
            if family is not None:
                families.append(family)
                ops = family[1]
                expected += len(ops) + (SWEEP_SIZE * ops.count(None) if self.sweep and self.cuts else 0)
        return families

    def arms(self) -> Arms:
        """A snapshot of this stream's scheduler past its first pass, to plan orders from (:class:`Arms`)."""
        formats, groups, weights, successes = self.scheduler.arms()
        return Arms(formats=formats, groups=groups, class_weights=weights, include_valid=self.include_valid,
                    sweep=self.sweep, cuts=self.cuts, successes=successes)

    @classmethod
    def steady(cls, arms: Arms, seed: int) -> "SampleStream":
        """A stream that plans (:meth:`plan`; it builds nothing) past the first pass with the
        snapshot ``arms`` in play, its draws from ``seed``."""
        self = cls.__new__(cls)
        self.registry = self.tool = None
        self.include_valid, self.sweep, self.cuts = arms.include_valid, arms.sweep, arms.cuts
        self._cut_random = None
        self.source = None
        self.scheduler = Scheduler.steady(arms, seed)
        return self

    def tally(self, built: dict) -> None:
        """What a worker that planned an order's families found building them: (format, operator)
        -> [failures before its first build, whether it built]
        (:meth:`fuzzer.harnesses.parser.drawn.DrawOrder.built`), told to the scheduler as
        :meth:`feedback` tells it each attempt."""
        for (fmt, op), (failed, ok) in built.items():
            for _ in range(failed):
                self.scheduler.failed_to_build(fmt, op)
            if ok:
                self.scheduler.built(fmt, op)

    def feedback(self, family: tuple, built: list) -> None:
        """What building a planned family found: (operator, whether it built[, the format it was
        tried in when not the family's]) per attempt."""
        for op, ok, *where in built:
            fmt = where[0] if where else family[0].format
            if ok:
                self.scheduler.built(fmt, op)
            else:
                self.scheduler.failed_to_build(fmt, op)

    def _next(self) -> Optional[tuple]:
        first = self.scheduler.in_first_pass
        variation, ops = self.scheduler.next_family(FAMILY_SIZE)
        if not self.include_valid:
            ops = [op for op in ops if op is not None]
        if self.sweep and None in ops and not self.cuts:
            ops += [TRUNCATION_SWEEP] * SWEEP_SIZE
        if not ops:
            return None
        return (variation, ops, FIRST_PASS_RETRIES, self.scheduler.elsewhere(ops)) if first else (variation, ops, 0)


def build_planned(variation: Variation, ops: list, retries: int, elsewhere: Optional[dict] = None, *,
                  registry: Any, tool: Any, source: RandomSource, cut_random: random.Random,
                  cuts: bool) -> tuple[list, list]:
    """Build one planned family: (its samples — each valid one followed by its :class:`Cut` s
    when ``cuts``: the stream's truncation sweep, as cut-offs — and (operator, built[, format])
    per attempt). An operator that found nothing to mutate is tried on newly drawn calls up to
    ``retries`` times: :data:`NATIVE_TRIES` in the family's format, then in turn in the other
    formats ``elsewhere`` gives it (plain: no prose, one call, no reasoning)."""
    samples: list = []
    attempts: list = []
    todo = ops
    for attempt in range(1 + retries):
        groups: dict = {}
        for op in todo:
            others = (elsewhere or {}).get(op) if attempt >= NATIVE_TRIES else None
            fmt = others[(attempt - NATIVE_TRIES) % len(others)] if others else variation.format
            groups.setdefault(fmt, []).append(op)
        failed: list = []
        for fmt, group in groups.items():
            native = fmt == variation.format
            source.reset()
            family = build_family(source, registry=registry, tool=tool, format=fmt, operators=group,
                                  chatter=variation.chatter and native, multi=variation.multi and native,
                                  reasoning=(variation.reasoning and native) or None)
            for op, sample in zip(group, family):
                attempts.append((op, sample is not None) if native else (op, sample is not None, fmt))
                if sample is None:
                    if op is not None:
                        failed.append(op)
                    continue
                samples.append(sample)
                if op is None and cuts:
                    samples.extend(cuts_of(sample, SWEEP_SIZE, cut_random))
                sample.rendered = None  # not needed any more; keeps batches small
        todo = failed
        if not todo:
            break
    return samples, attempts


#: Samples the prefetching thread generates between looks at whether the tool's slice is over.
CHUNK = 64


class Prefetcher:
    """Generates the next batches in a background thread while the worker runs the current one.

    Generation is pure Python and the worker is another process, so while the engine waits for
    results (releasing the GIL in ``select``) this thread keeps the main process's core busy. The
    stream is touched by this thread only, so the samples are the same as without it.

    The thread generates :data:`CHUNK` samples at a time and keeps about one batch ahead (whatever
    is generated when the job stops is thrown away). A batch is whole chunks, at least ``size``
    items (the first batch: one chunk, so the worker starts sooner), so its boundaries depend on
    the stream alone, never on timing: a seed's run stays the same. (The parser campaign no
    longer uses it: its workers build their own samples, :mod:`fuzzer.harnesses.parser.orders`; the agent
    harness's script feed does.)
    """

    def __init__(self, stream: SampleStream, size: int, *, chunk: int = 0, depth: int = 0):
        import queue
        import threading

        self._chunk = max(1, min(size, chunk or CHUNK))
        self._queue: "queue.Queue" = queue.Queue(maxsize=depth or max(1, size // self._chunk))  # chunks
        self._stop = threading.Event()
        self._stream, self._size, self._first = stream, size, True
        self._thread = threading.Thread(target=self._fill, name="toolfuzz-generate", daemon=True)
        # The engine thread must get the GIL back as soon as a batch of results arrives, or the
        # worker idles: the default 5 ms switch interval is half a batch at full speed.
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._interval, 0.0005))
        self._thread.start()

    def _fill(self) -> None:
        import queue

        while not self._stop.is_set():
            try:
                item: Any = self._stream.batch(self._chunk)
            except BaseException as exc:  # surfaced in the engine's thread by get()
                item = exc
            while not self._stop.is_set():
                try:
                    self._queue.put(item, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if isinstance(item, BaseException):
                return

    def get(self) -> list:
        """The next batch; shorter only when the stream produced an empty chunk (nothing it could
        build), which the engine counts towards giving up on the tool."""
        need = self._chunk if self._first else self._size
        self._first = False
        batch: list = []
        while len(batch) < need:
            item = self._queue.get()
            if isinstance(item, BaseException):
                raise item
            if not item:
                break
            batch.extend(item)
        return batch

    def close(self) -> None:
        """Stop generating. Not joined: the thread ends after the batch it is in (its stream is
        this tool visit's alone and is never read again), and waiting for that batch would idle
        the worker for as long — with many tools, a fifth of a short campaign."""
        self._stop.set()
        sys.setswitchinterval(self._interval)
