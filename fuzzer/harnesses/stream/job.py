"""The stream campaign: streams drawn, run and judged in the workers; the engine's one campaign
loop (:class:`fuzzer.engine.campaign.CampaignJob`) over a :class:`StreamSubject`.

::

    job = StreamCampaign(settings, registry=registry)
    final = run_job(job, [console, JsonReportHandler(path), CorpusWriter(...)])

What is the stream harness's own: probing which formats a parser streams (a format it does not
stream is skipped, not flooded with findings), the orders (:class:`~.orders.StreamOrder`: a seed,
a count of streams and what to draw them from; drawn, run and judged in the worker), filing their
results (counts by class, the smallest stream of each signature, the cut patterns that showed new
behaviour, which later orders replay), showing a finding again (its stream in a fresh worker; a
hang too: a stream that finishes in time when run again is no hang), shrinking it on both axes
(:mod:`.shrink`: the output as structure, then the split) and the cost probe (``slow``: time over
output length, one character per delta). Budget, confirmation, the shrink window, announcing,
the corpus and Ctrl-C are the engine's, the same as every harness's.

A target that breaks the contract (not a factory, no ``feed``, events of no known shape, a
consumer returning a generator) is a usage error: one line naming ``--parser`` / ``--consumer``,
exit 2 — found while loading, while probing, or in the first stream that shows it.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Optional

from fuzzer.engine.budget import shrink_stopped_note
from fuzzer.engine.campaign import CampaignJob, CampaignResult, CampaignSettings
from fuzzer.engine.events import NonFatalError, Phase, PhaseStarted
from fuzzer.engine.orders import order_seed
from fuzzer.engine.probed_formats import ProbedFormats
from fuzzer.engine.subject import Failure, Subject
from fuzzer.harnesses.stream import cases as gen
from fuzzer.harnesses.stream.checks import StreamCase, fault_violation
from fuzzer.harnesses.stream.contract import ContractError
from fuzzer.harnesses.stream.findings import StreamFinding
from fuzzer.harnesses.stream.orders import OrderResult, Plan, StreamOrder, class_of, draw_streams, stream_at
from fuzzer.harnesses.stream.shrink import shrink_case, size
from fuzzer.harnesses.stream.worker import Settings, StreamFault, StreamOutcome, StreamSpec
from strategies._internal.source import RandomSource

#: Streams per order (about 8 per output: whole, one character per delta, drawn splits).
ORDER_STREAMS = 64
#: Share of the budget shrinking may use, and seconds per finding: a stream finding without its
#: minimal output and split says little, and the streams are cheap.
SHRINK_SHARE, SHRINK_CAP_S = 0.45, 6.0
#: Exponent of time over output length above which the cost probe reports ``slow``.
SLOW_EXPONENT = 1.5
#: The largest probe must take at least this long, or the timings say nothing.
SLOW_MIN_S = 0.02
#: Cut patterns kept for the ``interesting`` split family (they travel with every order).
INTERESTING_KEPT = 16
#: Valid outputs per format when probing which formats a parser streams.
PROBE_OUTPUTS = 3


@dataclass(kw_only=True)
class StreamSettings(CampaignSettings):
    """The engine's campaign settings (seed, budget, ``--max-examples``, shrinking, ``--ignore``
    ...), with the stream harness's shrink share, and the stream harness's own: what is streamed
    into, what is drawn, how and where each stream runs."""

    target: Settings
    tools: tuple = ()  # tool names (default: every tool)
    formats: tuple = ()  # parser formats (default: those the parser is probed to stream)
    shrink_share: float = SHRINK_SHARE
    shrink_cap_s: float = SHRINK_CAP_S
    timeout: float = 2.0
    workers: int = 1
    memory_limit_mb: Optional[int] = 4096
    backend: str = "local"  # where the orders run (fuzzer.backends): local workers, or Ray actors
    ray_address: Optional[str] = None  # the cluster a ray back end joins (None: a Ray instance of its own)

    def spec(self) -> StreamSpec:
        from fuzzer.engine.warmup import warmup_limit
        from fuzzer.isolation.spec import load_timeout

        warmup = warmup_limit(self.timeout)
        return StreamSpec(settings=self.target, cwd=self.target.cwd or os.getcwd(), timeout=self.timeout,
                          memory_limit_mb=self.memory_limit_mb,
                          load_timeout=load_timeout(self.budget_s) + warmup, warmup_s=warmup)


def open_pool(settings: StreamSettings) -> Any:
    """The stream target's workers on the settings' back end (not started): local worker
    processes, or Ray actors each holding one (``workers`` auto: one per CPU of wherever they
    run). Loading the target in their zygote reports a broken contract as one line
    (:class:`~strategies.errors.TargetError`) when the pool starts. Confirming and shrinking run
    on this machine whatever the back end (:func:`fuzzer.backends.settling_pool`)."""
    from fuzzer.backends import make_pool, workers_of

    spec = settings.spec()
    return make_pool(settings.backend, spec, workers_of(settings.workers), address=settings.ray_address,
                     load_timeout=spec.load_timeout)


@dataclass
class StreamCampaignResult(CampaignResult, ProbedFormats):
    """What a stream campaign found; every count the writers print comes from here. The formats
    streamed are :attr:`supported` (each "streamed"), those the parser was probed not to stream
    :attr:`unsupported`."""

    job: str = "stream"
    units_word: str = "streams"
    mode: str = "parser"
    api: str = "events"
    shape: str = "openai"
    outputs: int = 0
    tools: list = field(default_factory=list)

    def to_report(self) -> dict:
        return {**self.base_report(), "job": self.job, "target": self.label, "mode": self.mode,
                "parser_api": self.api if self.mode == "parser" else None,
                "consumer_shape": self.shape if self.mode == "consumer" else None, "streams": self.executions,
                "outputs": self.outputs, "tools": self.tools, "formats": self.formats_report()}


class StreamSubject(Subject):
    """The stream harness's half of a campaign (see the module docstring)."""

    kind = "stream"
    order_size = ORDER_STREAMS

    def __init__(self, settings: StreamSettings, *, registry: Any, pool: Any = None):
        from strategies._internal.schema import unsupported_tools

        self.settings, self.registry = settings, registry
        target = settings.target
        self.label = target.reference
        self.pool = pool if pool is not None else open_pool(settings)
        self.broken = unsupported_tools(registry)
        self.tools = [n for n in (settings.tools or registry.names()) if n not in self.broken]
        self.formats = list(settings.formats)
        self.result = StreamCampaignResult(label=target.reference, mode=target.mode, api=target.api,
                                           shape=target.shape, seed=settings.seed, tools=list(self.tools))
        self.interesting: list = []
        self._features: set = set()
        self._costed = False

    def settings_json(self) -> dict:
        t = self.settings.target
        return {"mode": t.mode, "reference": t.reference, "parser_api": t.api, "consumer_shape": t.shape,
                "tools": list(self.tools), "formats": list(self.settings.formats)}

    def size(self, case: StreamCase) -> tuple:
        return size(case)

    def _contract(self, message: str) -> ContractError:
        """A broken contract, as the one line the user reads (naming the option)."""
        t = self.settings.target
        return ContractError(message if message.startswith("--") else f"{t.option} {t.reference!r}: {message}")

    # -- the campaign's shape ----------------------------------------------------------------------
    def started(self, job: Any) -> Iterator[Any]:
        from fuzzer.engine.warmup import WarmUp, warmup_limit

        for name, why in self.broken.items():
            yield NonFatalError(f"{name}: skipped, cannot generate its arguments: {why}")
        if not self.tools:
            self.result.problem = "no tool whose calls can be generated"
            return
        warmup = (self.pool.info or {}).get("warmup")
        note = WarmUp(**warmup).note(f"{self.settings.target.option} {self.label!r}",
                                     warmup_limit(self.settings.timeout)) if warmup else None
        if note:
            self.result.notes.append(note)
            yield NonFatalError(note)

    def replay(self, items: list, job: Any) -> list:
        """The ``--corpus`` entries of kind stream, streamed into this campaign's target first (an
        entry found with the other mode is unjudged: say which option replays it)."""
        from fuzzer.engine.harness import Replayed
        from fuzzer.harnesses.stream.findings import case_of_entry
        from fuzzer.harnesses.stream.replaying import OPTIONS, replay_with
        from strategies.errors import ToolfuzzError

        mode = self.settings.target.mode
        out: list = [None] * len(items)
        mine = []
        for i, (path, entry) in enumerate(items):
            found_with = (entry.scenario or {}).get("mode", "parser")
            try:
                case_of_entry(entry)
            except ToolfuzzError as exc:
                out[i] = Replayed(path, entry, verdict="unjudged", signature=None, unjudged=str(exc))
                continue
            if found_with != mode:
                out[i] = Replayed(path, entry, verdict="unjudged", signature=None,
                                  unjudged=f"found with --{found_with}: fuzz replay {OPTIONS.get(found_with, '')} "
                                           f"M:A replays it")
                continue
            mine.append(i)
        run = lambda cases: job.settle_run(cases, deadline=job.budget.deadline)  # noqa: E731
        for i, r in zip(mine, replay_with(run, [items[i] for i in mine], self.settings.target)):
            out[i] = r
        return out

    def begin(self, unit: str, job: Any) -> Iterator[Any]:
        if self.settings.target.mode == "parser" and not self.formats:
            yield PhaseStarted(Phase.PROBING, unit)
            self.formats = self._probe_formats(job)
            if not self.formats:
                why = ", ".join(f"{k}: {v}" for k, v in list(self.result.unsupported.items())[:3])
                return f"no format the parser streams: every format probed gave no call ({why}, ...)"
        self.result.supported = dict.fromkeys(self.formats, "streamed")
        return None

    def _probe_formats(self, job: Any) -> list:
        run = lambda cases: job.settle_run(cases, deadline=job.budget.deadline)  # noqa: E731
        supported, unsupported, contract = probe_formats(run, self.registry, self.tools, self.settings.seed)
        if contract is not None:
            raise self._contract(contract)
        self.result.unsupported.update(unsupported)
        return supported

    def plan(self, unit: str, count: int, number: int, room: Optional[int] = None) -> StreamOrder:
        t = self.settings.target
        plan = Plan(mode=t.mode, tools=tuple(self.tools), formats=tuple(self.formats), shape=t.shape,
                    interesting=tuple(self.interesting))
        return StreamOrder(order_seed(self.settings.seed, number), count, number, plan)

    # -- filing ----------------------------------------------------------------------------------
    def file(self, order: StreamOrder, result: OrderResult, job: Any) -> int:
        if result.contract is not None:
            raise self._contract(result.contract)
        for cls, (streams, failing) in result.by_class.items():
            job.tally.add(cls, streams, failing)
        self.result.outputs += result.outputs
        for pattern, cuts in result.novel:
            if not pattern <= self._features:
                self._features |= pattern
                self.interesting = (self.interesting + [cuts])[-INTERESTING_KEPT:]
        for _index, case, v, outcome, count in result.failures:
            job.offer(Failure(case, outcome, v.verdict, v.signature, v.reason, count=count))
        return result.streams

    def file_lost(self, order: StreamOrder, lost: Any, job: Any) -> int:
        """A stream its worker hung or died on: drawn again here from its order's seed, judged by
        how its worker was lost."""
        if lost.index < 0:
            return 0
        case = stream_at(draw_streams(RandomSource(order.seed), self.registry, order.plan, order.count), lost.index)
        if case is None:
            return 0
        fault = lost.outcome
        v = fault_violation(fault.kind, fault.frames, fault.detail)
        job.tally.add(class_of(case), 1, 1)
        job.offer(Failure(case, fault, v.verdict, v.signature, v.reason))
        return 1

    def after_round(self, unit: str, job: Any, ran: int) -> Optional[str]:
        if not self._costed and ran and self.settings.target.mode == "parser" and not job.budget.time_up():
            self._costed = True
            self._cost(job)
        return None

    def _cost(self, job: Any) -> None:
        """Stream outputs whose longest string argument is 1x, 2x, 4x, 8x as long, one character per
        delta, and fit the time's exponent over the output's length (``slow``)."""
        from corpus.signature import slow_signature
        from strategies._internal.build import Unbuildable, build_sample
        from strategies._internal.formats import render

        fmt = self.formats[0]
        try:
            sample = build_sample(RandomSource(self.settings.seed ^ 0xC057), registry=self.registry,
                                  tool=self.registry[self.tools[0]], format=fmt, chatter=False, multi=False)
        except Unbuildable:
            return
        call = sample.calls[0]
        strings = [k for k, v in call["arguments"].items() if isinstance(v, str)]
        if not strings:
            return
        cases, sizes = [], []
        for factor in (1, 2, 4, 8):
            arguments = dict(call["arguments"], **{strings[0]: ("streaming " * 12 * factor).strip()})
            calls = [{"name": call["name"], "arguments": arguments}]
            text = render(fmt, calls, RandomSource(0), chatter=False).text
            cases.append(StreamCase(text=text, cuts=tuple(range(1, len(text))), family="char", format=fmt,
                                    truth=calls, tool=call["name"]))
            sizes.append(len(text))
        answers = job.settle_run(cases, deadline=job.budget.deadline)
        times = [a[1].seconds if isinstance(a, tuple) and a[0] == "run" and a[1].error is None else None
                 for a in answers]
        if any(t is None for t in times) or times[-1] < SLOW_MIN_S or times[0] <= 0:
            return
        exponent = math.log(times[-1] / times[0]) / math.log(sizes[-1] / sizes[0])
        if exponent <= SLOW_EXPONENT:
            return
        signature = slow_signature(frames=(), fragment_kind=f"stream of {fmt}")
        words = ", ".join(f"{n} chars {t * 1000:.1f} ms" for n, t in zip(sizes, times))
        reason = f"time grows as n^{exponent:.1f} over one-character deltas ({words})"
        finding = StreamFinding(signature, "slow", reason, case=cases[0], outcome=answers[0][1],
                                settings=self.settings.target)
        finding.shrink_note = "not shrunk: what it shows is time over the output's length"
        job.open_finding(finding)

    def wrap_up(self, job: Any) -> None:
        self.result.supported = dict.fromkeys(self.formats, "streamed")

    # -- findings ------------------------------------------------------------------------------
    def new_finding(self, failure: Failure, job: Any) -> StreamFinding:
        return StreamFinding(failure.signature, failure.verdict, failure.reason, case=failure.case,
                             outcome=failure.outcome, settings=self.settings.target)

    def confirmable(self, finding: Any) -> bool:
        return finding.verdict_name != "slow"  # a hang too: what does not hang again is no hang

    def same(self, finding: Any, case: Any) -> Callable[[Any], bool]:
        return lambda outcome: shows(outcome, finding.signature.id, finding.verdict_name)

    def confirmed(self, finding: Any, status: str, earlier: tuple, job: Any) -> Optional[str]:
        return self.hang_that_did_not_hang(finding, status, self.settings.timeout, verb="streamed") or \
            super().confirmed(finding, status, earlier, job)

    def shrink(self, finding: Any, job: Any, window: float) -> bool:
        return self._shrink_from(finding, finding.case, job, window)

    def improve(self, finding: Any, candidate: tuple, job: Any, window: float) -> bool:
        return self._shrink_from(finding, candidate[0], job, window)

    def _shrink_from(self, finding: Any, case: StreamCase, job: Any, window: float) -> bool:
        if finding.verdict_name in ("hang", "slow"):
            return False  # each try costs a timeout, or a timing
        deadline = time.monotonic() + window
        wanted, verdict = finding.signature.id, finding.verdict_name

        def test(cases: list) -> list:
            if time.monotonic() >= deadline:
                return [None] * len(cases)
            answers = job.settle_run(cases, deadline=deadline)
            return [_outcome(a) if shows(a, wanted, verdict) else None for a in answers]

        (best, outcome), stopped = shrink_case(case, test, registry=self.registry, deadline=deadline,
                                               shape=self.settings.target.shape)
        if best is None or size(best) >= size(finding.best):
            if stopped and finding.minimized is None:
                finding.shrink_note = finding.shrink_note or "not minimized: the shrink window ran out"
            return False
        finding.minimized, finding.minimized_outcome = best, outcome
        # the "why" and the title a reader sees describe the stream shown (the minimized one), not
        # the first: the same signature, its words taken from this stream (as the parser harness does)
        shown = next((v for v in getattr(outcome, "violations", ()) if v.signature.id == wanted), None)
        if shown is not None:
            finding.reason, finding.signature = shown.reason, shown.signature
        finding.shrink_stopped = stopped
        if stopped:
            finding.shrink_note = shrink_stopped_note(window) if time.monotonic() >= deadline else \
                "shrinking stopped at its limit of streams tried: the input shown may shrink further"
        return True


def probe_formats(run: Callable[[list], list], registry: Any, tools: list, seed: int) -> tuple:
    """(formats the parser streams, {format: why not} for the others, a broken contract's message
    or None): a format is streamed when the right call names come out of at least one of a few
    valid outputs, whole, one character per delta, each marker a delta of its own, or each marker
    whole and the text between in pieces (as a tokenizer streams). ``run(cases)``: a started pool's."""
    from fuzzer.harnesses.stream.splits import clip, marker_atomic, marker_spans
    from strategies._internal.build import Unbuildable, build_sample
    from strategies._internal.formats import FORMATS

    source = RandomSource(seed ^ 0x5EED)
    cases: list = []
    for fmt in FORMATS:
        for k in range(PROBE_OUTPUTS):
            try:
                sample = build_sample(source, registry=registry, tool=registry[tools[k % len(tools)]], format=fmt,
                                      chatter=False, multi=False, keep_rendered=True)
            except Unbuildable:
                continue
            base = gen.case_of(sample, registry)
            cases += [replace(base, cuts=cuts, family=f) for f, cuts in gen.standard_splits(sample.text)]
            edges = clip((c for a, b in marker_spans(base.text, base.markers) for c in (a, b)), len(base.text))
            cases.append(replace(base, cuts=edges, family="marker_edges"))
            cases.append(replace(base, cuts=marker_atomic(source, base.text, base.markers), family="marker_atomic"))
    supported: dict = {}
    for case, answer in zip(cases, run(cases)):
        if isinstance(answer, tuple) and answer[0] == "contract":
            return [], {}, answer[1]
        outcome = answer[1] if isinstance(answer, tuple) and answer[0] == "run" else None
        calls = outcome.calls if outcome is not None and outcome.calls else []
        hit = any(c["name"] == t["name"] for c in calls for t in case.truth or ())
        supported[case.format] = supported.get(case.format, False) or hit
    return ([f for f, ok in supported.items() if ok], {f: "no call streamed" for f, ok in supported.items() if not ok},
            None)


def _outcome(answer: Any) -> Any:
    return answer[1] if isinstance(answer, tuple) and answer[0] == "run" else answer


def shows(answer: Any, wanted: str, verdict: str) -> bool:
    """Whether a worker's answer for a stream (``("run", StreamOutcome)``, a :class:`StreamFault`)
    shows the signature ``wanted`` again (a hang: hanging again, wherever it is stuck this time)."""
    if isinstance(answer, tuple) and answer and answer[0] == "run":
        return wanted in answer[1].signatures()
    if isinstance(answer, StreamFault):
        if verdict == "hang":
            return answer.kind == "hung"
        return fault_violation(answer.kind, answer.frames, answer.detail).signature.id == wanted
    return False


class StreamCampaign(CampaignJob):
    """``fuzz stream``: the engine's campaign over a :class:`StreamSubject`."""

    def __init__(self, settings: StreamSettings, *, registry: Any, corpus: Any = None,
                 started_at: Optional[float] = None):
        subject = StreamSubject(settings, registry=registry)
        super().__init__(subject, settings, corpus=corpus, started_at=started_at)
        self.name = "stream"


__all__ = ["StreamCampaign", "StreamCampaignResult", "StreamOutcome", "StreamSettings", "StreamSubject", "open_pool",
           "probe_formats", "shows"]
