"""``fuzz campaign`` as a job: replay the corpus, then per tool probe, fuzz, confirm, shrink, announce.

One :class:`CampaignJob` covers every selected tool (they share the budget in equal slices) and
keeps one finding per signature across them (one bug seen through several tools is one finding).
Findings are confirmed in a fresh worker (:mod:`fuzzer.engine.confirm`), shrunk within the budget's
shrink share (:mod:`fuzzer.engine.budget`, :mod:`fuzzer.harnesses.parser.shrink`), and announced as
:class:`~fuzzer.engine.events.FindingRecorded`; whatever the budget or Ctrl-C leaves pending is announced
unshrunk, marked not minimized — never dropped.
"""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Optional

from fuzzer.backends import describe as describe_backend, notes as backend_notes
from fuzzer.engine.budget import Budget
from fuzzer.engine.confirm import FLAKY, HISTORY, UNKNOWN, Confirmer
from fuzzer.engine.decisions import campaign_exit_code
from fuzzer.engine.interrupts import BALANCED
from fuzzer.harnesses.parser.tool import Failure, Tally, ToolCampaign, includes_valid, resolve_operators
from fuzzer.engine.events import (FindingRecorded, FormatsProbed, JobStarted, NonFatalError, Phase, PhaseStarted,
                           Progress, StopReason)
from fuzzer.harnesses.parser.explore import EXPLORATION, TOKEN_PROBE_EVERY, Explorer, SlowProbe, source_tokens
from fuzzer.harnesses.parser.outcome import Outcome
from corpus.signature import format_less, history_signature, same_hang, slow_signature
from fuzzer.harnesses.parser.across_formats import FormatRoutes
from strategies._internal.sample import Sample
from fuzzer.harnesses.parser.findings import Finding
from fuzzer.harnesses.parser.oracle import Oracle, Verdict, coarse_damage
from fuzzer.harnesses.parser.orders import prepare_for_workers, text_of
from fuzzer.engine.pipeline import Job
from fuzzer.engine.results import FAILED, PASSED, SKIPPED, JobResult, TestCase, finding_detail
from fuzzer.harnesses.parser.shrink import FindingShrinker, size_key

#: Seconds between Progress events.
PROGRESS_EVERY = 1.0
#: Consecutive empty batches after which a tool's fuzzing stops (every selected operator refused).
EMPTY_BATCHES = 3
#: Most passing inputs re-run per batch (or order) to catch nondeterminism.
RERUNS_PER_BATCH = 8
#: Orders in one round of the structured arm (two are in flight per worker; between rounds the
#: job confirms, shrinks, reports, and plans the next round from what this one built). The same
#: for up to 8 workers, so the number of workers does not change a seed's run; more workers get
#: two orders each. Sixteen, not eight: with two workers a round of eight lasted ~35 ms and each
#: ended with one worker waiting for the other's last order.
ROUND_ORDERS = 16


#: Failures of each path-keyed corruption traced before they count towards it (each smaller one
#: is too): enough to tell apart the paths one kind of damage takes, cheap (one traced run each).
PATH_CHECKS = 8
MAX_SUSPECTS = 64


@dataclass
class CampaignSettings:
    tools: list
    target: str
    level: str = "parse"
    formats: Optional[list] = None  # None: probe every format
    anomalies: Optional[list] = None  # classes or operator names; None: all
    seed: int = 0
    budget_s: Optional[float] = 60.0
    max_examples: Optional[int] = None
    batch_size: int = 256
    shrink: bool = True
    shrink_share: float = 0.3
    shrink_cap_s: float = 10.0
    reject_on: tuple = ()
    reproduce_dir: Optional[str] = None
    max_failures: Optional[int] = None
    ignore: frozenset = frozenset()
    confirm: bool = True
    #: Coverage-guided exploration (the pool's spec must trace: TargetSpec(coverage=True)).
    explore: bool = True
    #: Look for super-linear time (the slow verdict).
    slow: bool = True
    #: Share of the fuzzing time the slow probe may use.
    slow_share: float = 0.08
    #: Under a time budget, confirm and shrink findings in a worker of their own while the
    #: workers go on fuzzing (CampaignJob._settle_beside); False: between rounds, the workers waiting.
    beside: bool = True
    #: Per-tool overrides from the config file: tool -> {level, formats, seed, budget_s,
    #: max_examples, ignore}. A tool's budget or max_examples replaces its equal share.
    per_tool: dict = field(default_factory=dict)
    #: Recorded production outputs run first (``--seeds-from``): Samples, truth known where the
    #: record vouches for the parse; they also seed the exploration.
    seeds: list = field(default_factory=list)
    #: Anomaly class -> weight for the scheduler (``--weights-from``).
    class_weights: Optional[dict] = None

    def of(self, tool: str, key: str) -> Any:
        """The setting ``key`` for ``tool``: its override, else the job's."""
        return self.per_tool.get(tool, {}).get(key, getattr(self, key))


@dataclass
class CampaignResult(JobResult):
    job: str = "campaign"
    tool: str = ""
    target: str = ""
    level: str = "parse"
    seed: int = 0
    tally: Tally = field(default_factory=Tally)
    supported: dict = field(default_factory=dict)
    unsupported: dict = field(default_factory=dict)
    #: variants of supported formats that failed on every probe (their failures are findings)
    failing: dict = field(default_factory=dict)
    #: what the user declared unsupported (``--format hermes:single``), one line per format
    assumed: list = field(default_factory=list)
    replayed: list = field(default_factory=list)  # fuzzer.engine.harness.Replayed of the corpus entries
    known: dict = field(default_factory=dict)  # signature -> corpus Entry (what the corpus held)
    hints: list = field(default_factory=list)
    timeline: list = field(default_factory=list)  # (elapsed_s, executions), for plots
    ignored: int = 0  # failing executions whose signature is on the ignore list
    setup_s: float = 0.0  # worker start-up (the target's import): in elapsed_s, not charged to the budget
    lines: set = field(default_factory=set)  # (file, line) of the target reached (with coverage)
    exploration_share: dict = field(default_factory=dict)  # tool -> final share of exploration batches
    #: Where the work ran (fuzzer.backends.describe): the back end, its workers or actors, and on a
    #: cluster the actors lost and the orders run again because of it.
    backend: dict = field(default_factory=dict)

    @property
    def by_class(self) -> dict:
        return self.tally.by_class

    @property
    def corpus_failing(self) -> list:
        return [r for r in self.replayed if r.status not in ("pass", "unjudged")]

    @property
    def corpus_passing(self) -> list:
        return [r for r in self.replayed if r.status == "pass"]

    def test_cases(self) -> list[TestCase]:
        cases = []
        found = {f.signature.id for f in self.findings}
        for r in self.replayed:
            status = {"pass": PASSED, "unjudged": SKIPPED}.get(r.status, FAILED)
            if status == FAILED and (r.signature or r.entry.signature) in found:
                continue  # failing again and re-found by this campaign: one bug, one test case (the finding's)
            cases.append(TestCase("toolfuzz.corpus", f"{r.entry.signature} ({r.entry.status})", status,
                                  r.unjudged or (f"{r.status}: {r.entry.title}" if status == FAILED else ""),
                                  r.entry.text if status == FAILED else ""))
        for f in self.findings:
            cases.append(TestCase(f"toolfuzz.{self.job}", f.signature.id, FAILED, f.title, finding_detail(f)))
        run = self.run_case(self.tool or "campaign", "executions")
        return cases + ([run] if run is not None else [])

    def to_report(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "target": self.target,
            "level": self.level,
            "seed": self.seed,
            "executions": self.executions,
            "elapsed_s": round(self.elapsed_s, 3),
            "setup_s": round(self.setup_s, 3),
            "execs_per_s": round(self.execs_per_s, 1),
            "failures": [f.to_report() for f in self.findings],
            "by_class": {name: {"executions": s.executions, "failures": s.failures}
                         for name, s in sorted(self.by_class.items())},
            "ignored": self.ignored,  # failing executions of ignored signatures (in by_class's failures)
            "formats": {"supported": self.supported, "unsupported": self.unsupported, "failing": self.failing,
                        "assumed": self.assumed},
            "stop_reason": self.stop_reason.value,
            "problem": self.problem,
            "hints": self.hints,
            "counts": self.counts(),
            "corpus": [{"signature": r.entry.signature, "status": r.status, "entry_status": r.entry.status,
                        "now": r.signature, "file": r.path, "unjudged": r.unjudged} for r in self.replayed],
            "timeline": [[round(t, 3), n] for t, n in self.timeline],
            "coverage": self.coverage_report(),
            "backend": self.backend,
        }

    def coverage_report(self) -> Optional[dict]:
        if not self.lines:
            return None
        files: dict[str, int] = {}
        for file, _line in self.lines:
            files[file] = files.get(file, 0) + 1
        return {"lines": len(self.lines), "files": dict(sorted(files.items())),
                "exploration_share": {k: round(v, 3) for k, v in self.exploration_share.items()}}


class RoundsBeside(threading.Thread):
    """Rounds of a tool's structured arm, run in a thread while the campaign's thread confirms and
    shrinks findings in the settle pool. Nothing is filed here (the finding book is the campaign
    thread's): each round's orders and results wait, in order, for :meth:`finish`. The thread owns
    the campaign's pool and the tool's sample stream until then."""

    def __init__(self, tool: Any, counts: list, reruns: int, deadline: Optional[float],
                 stop_sending: Optional[float], on_sent: Optional[Callable[[], None]] = None):
        super().__init__(name="toolfuzz-rounds", daemon=True)
        self.tool, self.counts, self.reruns = tool, counts, reruns
        self.deadline, self.stop_sending, self.on_sent = deadline, stop_sending, on_sent
        self.rounds: list = []
        self.error: Optional[BaseException] = None
        self._halt = threading.Event()  # no new round
        self._cut = threading.Event()  # and no more orders of the round running

    def run(self) -> None:
        try:
            while not self._halt.is_set():
                now = time.monotonic()
                if any(end is not None and now >= end for end in (self.deadline, self.stop_sending)):
                    return
                on_sent, self.on_sent = self.on_sent, None
                self.rounds.append(self.tool.fuzz(self.counts, self.deadline, self.reruns,
                                                  stop_sending=self.stop_sending, on_sent=on_sent, file=False,
                                                  stop_when=self._cut.is_set))
        except BaseException as exc:  # noqa: BLE001 - raised again in the campaign's thread
            self.error = exc

    def cut(self) -> None:
        """A Ctrl-C or an error in the campaign's thread: the orders running finish (what they ran
        is filed), the rest of the round is not sent."""
        self._cut.set()
        self._halt.set()

    def finish(self) -> tuple[list, Optional[BaseException]]:
        """Stop after the round running; every round's (orders, results), and what the thread
        raised, if anything (to raise once those rounds are filed)."""
        self._halt.set()
        self.join()
        return self.rounds, self.error


class CampaignJob(Job):
    """``pool`` is a :class:`fuzzer.isolation.WorkerPool` (started here, so start-up time is part
    of ``elapsed_s`` but not of the budget); ``corpus`` an optional :class:`corpus.store.Store`
    replayed first."""

    name = "campaign"
    #: The per-tool engine (a hook for tests that watch what it executes).
    tool_campaign = ToolCampaign

    def __init__(self, registry: Any, settings: CampaignSettings, pool: Any, *, corpus: Any = None,
                 owns_pool: bool = False, started_at: Optional[float] = None):
        """``started_at``: when the command began (``time.monotonic()``), so ``elapsed_s`` and
        ``setup_s`` include loading the tools as well as starting the workers."""
        super().__init__()
        self.registry, self.settings, self.pool, self.corpus = registry, settings, pool, corpus
        self.owns_pool = owns_pool
        self.oracles = {level: Oracle(registry, level)
                        for level in {settings.level} | {settings.of(t, "level") for t in settings.tools}}
        self.oracle = self.oracles[settings.level]
        self.operators = resolve_operators(settings.anomalies)
        self.include_valid = includes_valid(settings.anomalies)
        self.budget = Budget(seconds=_total(settings, "budget_s"), max_examples=_total(settings, "max_examples"),
                             shrink_share=settings.shrink_share, shrink_cap_s=settings.shrink_cap_s)
        self._slices = _slices(settings)
        self._ahead: Optional[ToolsAhead] = None  # the next tool, its probes being built
        self.tally = Tally()
        self.findings: dict[str, Finding] = {}
        self.pending: list[Finding] = []
        self.improve: list[Finding] = []
        self.announced: set[str] = set()
        self.shrinkers = {level: FindingShrinker(self._settle_run, oracle, registry)
                          for level, oracle in self.oracles.items()}
        self.confirmer = Confirmer(self._settle_run)
        #: The pool confirming and shrinking run their inputs in while rounds go on beside them
        #: (RoundsBeside); None: the campaign's pool.
        self._settling_pool: Any = None
        self._own_settle_pool: Any = None
        self.result_ = CampaignResult(tool=",".join(settings.tools), target=settings.target, label=settings.target,
                                      level=settings.level, seed=settings.seed, tally=self.tally)
        self._t0 = started_at if started_at is not None else time.monotonic()
        self._histories: dict[str, tuple] = {}
        #: oracle signature id -> the finding's id after re-keying (path, history)
        self._alias: dict[str, str] = {}
        #: failures counted towards a path-keyed corruption by their oracle signature, to trace
        self._suspects: list[tuple] = []
        self._path_checks: dict[str, int] = {}
        #: where the rejections of each (format-less signature, format) go (fuzzer.harnesses.parser.across_formats)
        self._formats = FormatRoutes()
        #: (frames, slow finding) of hangs shown to be a super-linear path met too late
        self._grown_hangs: list = []
        self._dictionary: list = []  # the exploration's dictionary of the tool being fuzzed
        self._slow_probes = 0
        self._token_seeds = random.Random(settings.seed ^ 0x70C)
        self._last_progress = 0.0

    # -- time ------------------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    # -- where settling runs the target ----------------------------------------------------------
    def _settle_run(self, texts: list, **kwargs: Any) -> list:
        """``WorkerPool.run`` for confirming and shrinking: the campaign's pool, or the settle pool
        while rounds run in the campaign's pool beside them (:meth:`_settle_beside`)."""
        return (self._settling_pool or self.pool).run(texts, **kwargs)

    def _settles_beside(self, examples: Optional[int]) -> bool:
        """Settle findings while the workers go on fuzzing: under a time budget, where the rounds
        run meanwhile only add executions. Not when the tool has a number of executions
        (``examples``, from --max-examples or its own ``max_examples``): its run stays the same for
        a seed, and rounds beside could not stop at the number; there, findings are settled
        between rounds, the workers waiting."""
        return examples is None and self.budget.seconds is not None and self.settings.beside

    def _settling_due(self) -> bool:
        """Whether :meth:`_settle` has anything it would do now."""
        return bool(self.pending or self._suspects or self._formats.pending
                    or (self.improve and self.budget.shrink_window() > 0))

    def _settle_pool(self) -> Any:
        """One worker of the campaign's target for settling beside the rounds (started with the
        campaign's pool: it inherits the tools compiled, as those workers do)."""
        if self._own_settle_pool is None:
            from fuzzer.isolation import WorkerPool

            self._own_settle_pool = WorkerPool(self.pool.spec, workers=1)
            self._own_settle_pool.start()
        return self._own_settle_pool

    def _settle_beside(self, tool: ToolCampaign, counts: list, reruns: int, deadline: Optional[float],
                       on_sent: Optional[Callable[[], None]]) -> Iterator[Any]:
        """Confirm and shrink the pending findings in the settle pool while rounds of ``counts``
        run in the campaign's pool in a thread (:class:`RoundsBeside`); then file those rounds, in
        order, here. Returns their executions. Shrinking takes up to the budget's shrink share,
        a third of a campaign with many findings, and the workers used to wait for all of it."""
        rounds = RoundsBeside(tool, counts, reruns, self.budget.deadline, deadline, on_sent)
        self._settling_pool = self._settle_pool()
        rounds.start()
        try:
            yield from self._settle()
        except BaseException:
            rounds.cut()
            raise
        finally:  # a Ctrl-C too: what the rounds ran is counted (and what they found, filed)
            self._settling_pool = None
            with BALANCED:  # another Ctrl-C waits until they are: the thread finishes its orders running
                done, error = rounds.finish()
                ran = sum(tool.file_round(orders, results) for orders, results in done)
            if error is not None:
                raise error
        return ran

    def _progress(self, phase: Phase, label: str) -> Progress:
        by_verdict: dict[str, int] = {}
        for f in self.findings.values():
            by_verdict[f.verdict.value] = by_verdict.get(f.verdict.value, 0) + 1
        self.result_.timeline.append((self.elapsed(), self.tally.executions))
        return Progress(self.tally.executions, self.elapsed(), by_verdict, phase, label, self.settings.budget_s)

    # -- the finding book ------------------------------------------------------------------------
    def _on_failure(self, failure: Failure) -> None:
        sample, outcome, judgment = failure.sample, failure.outcome, failure.judgment
        level = self.settings.of(sample.tool, "level") if sample.tool else self.settings.level
        signature = self.oracles[level].signature(sample, judgment, outcome)
        if format_less(signature) and self._across_formats(signature, failure, level):
            return
        found = self.findings.get(self._alias.get(signature.id, signature.id))
        if found is None and judgment.verdict is Verdict.HANG and outcome.frames:
            found = next((f for f in self.findings.values() if f.verdict is Verdict.HANG
                          and same_hang(f.outcome.frames, outcome.frames)), None) or self._grown_hang(outcome.frames)
            if found is not None:  # one stuck loop, caught in a helper it calls: one finding
                self._alias[signature.id] = found.signature.id
        if found is not None:
            if found.signature.id != signature.id and "|path|" in found.signature.key and \
                    self._suspect(found, failure, level):
                return  # traced before it is counted: the same damage on another path is another bug
            self._count_into(found, sample, outcome, failure.count)
            return
        self._open(signature, failure, level)

    def _across_formats(self, signature: Any, failure: Failure, level: str) -> bool:
        """File a rejection keyed without its format (:mod:`fuzzer.harnesses.parser.across_formats`): where its
        (signature, format) pair was routed; into the finding of the signature when its format is
        one of the finding's; else counted there until :meth:`_check_formats` tells whether the
        reason is the same. False: no finding holds the signature yet (the caller opens it)."""
        fmt = failure.sample.format
        routed = self._formats.route(signature.id, fmt)
        if routed is not None:
            found = self._current(self.findings.get(self._alias.get(routed, routed)))
            if found is None:
                return False
            self._count_into(found, failure.sample, failure.outcome, failure.count)
            return True
        found = self._current(self.findings.get(self._alias.get(signature.id, signature.id)))
        if found is None:
            return False
        if fmt in found.formats:
            self._count_into(found, failure.sample, failure.outcome, failure.count)
            return True
        found.count += failure.count  # counted there until the check says otherwise
        waiting = self._formats.pending.get((signature.id, fmt))
        if waiting is not None:
            waiting[3] += failure.count
        else:
            self._formats.pending[(signature.id, fmt)] = [found, failure, level, failure.count]
        return True

    @staticmethod
    def _current(finding: Optional[Finding]) -> Optional[Finding]:
        while finding is not None and finding.merged_into is not None:
            finding = finding.merged_into
        return finding

    def _check_formats(self) -> None:
        """Decide the (signature, format) pairs waiting: the format joins the finding when the
        reason is the same both ways (:func:`fuzzer.harnesses.parser.across_formats.same_reason`), else its
        rejections become a finding of their own, keyed with the format."""
        from corpus.signature import by_format
        from fuzzer.harnesses.parser.across_formats import same_reason

        for key in list(self._formats.pending):
            if self.budget.time_up():
                return
            found, failure, level, count = self._formats.pending.pop(key)
            found = self._current(found)
            signature_id, fmt = key
            sample, outcome = failure.sample, failure.outcome
            same = same_reason(oracle=self.oracles[level], registry=self.registry, run=self._settle_run,
                               shown=found.best, failing=sample, signature_id=found.oracle_id,
                               deadline=self.budget.deadline)
            if same is None:  # no time left to tell: it stays counted there, the format not listed
                return
            if same:
                self._formats.decide(signature_id, fmt, found.signature.id)
                found.formats.append(fmt)
                self._offer(found, sample, outcome)
                continue
            oracle = self.oracles[level]
            own = by_format(oracle.signature(sample, failure.judgment, outcome), fmt)
            self._formats.decide(signature_id, fmt, own.id)
            with BALANCED:  # the count moves whole, out of one finding into the other
                found.count -= count
                other = self._current(self.findings.get(own.id))
                if other is not None:
                    self._count_into(other, sample, outcome, count)
                else:
                    self._open(own, failure, level, match_id=signature_id)
                    opened = self.findings.get(own.id)
                    if opened is not None:
                        opened.count = count

    def _open(self, signature: Any, failure: Failure, level: str, match_id: Optional[str] = None) -> None:
        """A new finding under ``signature`` (unless it is ignored), to confirm, shrink, announce."""
        sample, judgment = failure.sample, failure.judgment
        if self._ignored(signature, failure, level):
            self.result_.ignored += failure.count
            return
        if self._max_failures_reached():
            return  # one batch can show several new bugs: --max-failures N reports N, not the batch's
        finding = Finding(signature=signature, verdict=judgment.verdict, reason=judgment.reason, sample=sample,
                          outcome=failure.outcome, found_at_s=self.elapsed(), target=self.settings.target,
                          level=level, reject_on=tuple(self.settings.reject_on),
                          reproduce_dir=self.settings.reproduce_dir)
        finding.match_id = match_id
        finding.count = failure.count
        finding.formats = [sample.format] if judgment.verdict is Verdict.FALSE_REJECT else []
        if format_less(signature):
            self._formats.decide(signature.id, sample.format, signature.id)
        if judgment.verdict is Verdict.HANG:
            finding.timeout = self.pool.spec.timeout
        self.findings[signature.id] = finding
        self._histories[signature.id] = failure.history()
        self.pending.append(finding)

    def _ignored(self, signature: Any, failure: Failure, level: str) -> bool:
        """On the ignore list: its signature, or the one the same failure had before keys left out
        what a message copies of the input and a rejection's format (an ignore list written then
        still silences the bug it names)."""
        ignore = set(self.settings.ignore) | set(self.settings.of(failure.sample.tool, "ignore") or ())
        if not ignore:
            return False
        if signature.id in ignore:
            return True
        return self.oracles[level].legacy_signature(failure.sample, failure.judgment, failure.outcome).id in ignore

    def _count_into(self, found: Finding, sample: Any, outcome: Any, count: int = 1) -> None:
        found.count += count
        self._offer(found, sample, outcome)

    def _offer(self, found: Finding, sample: Any, outcome: Any) -> None:
        # The same bug shown by a smaller input (another operator, simpler calls): shrink that
        # one too, later, and keep whichever result is smaller.
        if len(sample.text) < len(found.best.text) and not found.history and \
                (found.candidate is None or len(sample.text) < len(found.candidate[0].text)):
            if not any(f is found for f in self.improve):
                self.improve.append(found)
            found.candidate = (sample, outcome)

    def _suspect(self, found: Finding, failure: Failure, level: str) -> bool:
        """A failure whose damage the oracle files under a corruption keyed by path: the path is
        the bug, so it is traced (in :meth:`_settle`, the pool is busy now) before it counts there
        or becomes its shown input. The first few of each finding, and every smaller one, are."""
        checks = self._path_checks.get(found.signature.id, 0)
        smaller = len(failure.sample.text) < len(found.best.text) and not found.history
        if not (smaller or checks < PATH_CHECKS) or len(self._suspects) >= MAX_SUSPECTS:
            return False
        self._path_checks[found.signature.id] = checks + 1
        found.count += failure.count  # counted there until its path says otherwise (and if it is never traced)
        self._suspects.append((found, failure, level))
        return True

    def _trace_suspects(self) -> None:
        """File each suspect where its path says: the finding it was counted towards, another
        one, or a new finding (then confirmed and shrunk like any other)."""
        from fuzzer.harnesses.parser.harness import keyed_signature

        while self._suspects and not self.budget.time_up():
            found, failure, level = self._suspects.pop(0)
            sample, outcome, judgment = failure.sample, failure.outcome, failure.judgment
            oracle = self.oracles[level]
            keyed = keyed_signature(oracle, sample, judgment, outcome, self._settle_run, deadline=self.budget.deadline)
            other = self.findings.get(keyed.id) if "|path|" in keyed.key else None
            while other is not None and other.merged_into is not None:
                other = other.merged_into
            if "|path|" not in keyed.key or keyed.id == found.signature.id or other is found:
                self._offer(found, sample, outcome)  # it is this finding's (and counted there already)
                continue
            with BALANCED:  # it moves whole: out of one finding's count, into another's
                found.count -= failure.count  # it belongs elsewhere
                if other is not None:
                    self._count_into(other, sample, outcome, failure.count)
                else:
                    self._open(keyed, failure, level, match_id=oracle.signature(sample, judgment, outcome).id)

    def _same(self, finding: Finding, sample: Any, oracle_id: Optional[str] = None) -> Any:
        oracle = self.oracles[finding.level]
        wanted = oracle_id or finding.oracle_id

        def same(outcome: Any) -> bool:
            if outcome.unsafe and finding.verdict is not Verdict.UNSAFE:
                # An unsafe action on this input (a lazily built model reading marshal data in a
                # fresh worker's first call) is its own finding: it must not make this one look
                # as if it did not happen alone, and be filed as state kept between calls.
                outcome = replace(outcome, unsafe=())
            judgment = oracle.judge(sample, outcome)
            ok = judgment.failed and oracle.signature(sample, judgment, outcome).id == wanted
            if ok and finding.traceback is None and getattr(outcome, "traceback", None):
                finding.traceback = outcome.traceback
            return ok
        return same

    def _confirm(self, finding: Finding) -> Optional[str]:
        """Run the finding's input again in a fresh worker (and, if it passes there, after the
        inputs that ran before it); returns the confirmer's status (None: not confirmed here)."""
        if not self.settings.confirm or finding.verdict in (Verdict.HANG, Verdict.NONDETERMINISM, Verdict.SLOW):
            return None
        history = self._histories.pop(finding.signature.id, ())
        if finding.verdict in _TRUTH_VERDICTS and history_signature(finding.verdict.value).id in self.findings:
            # A state bug of this verdict is already explained: a failure that does not happen
            # alone joins it (one fresh run), without replaying thousands of earlier inputs again.
            history = ()
        started = time.monotonic()
        status, earlier = self.confirmer.confirm(finding.sample.text, [text_of(item) for item in history],
                                                 self._same(finding, finding.sample),
                                                 self.budget.deadline)
        self.budget.spent_shrinking(time.monotonic() - started)  # confirming is part of the shrink share
        if status == HISTORY:
            finding.history = earlier
            finding.notes.append(f"history-dependent: fails only after {len(earlier)} earlier input(s) in the "
                                 "same process (they are part of the reproducer)")
            if finding.verdict in _TRUTH_VERDICTS:
                self._rekey(finding, self._state_signature(finding))
        elif status == FLAKY:
            finding.notes.append("not reproducible alone: it did not fail again in a fresh worker, nor after the "
                                 "inputs that ran before it (state kept from longer ago, or nondeterminism)")
            finding.reason += " (not reproducible in a fresh worker)"
            if finding.verdict in _TRUTH_VERDICTS:
                self._rekey(finding, self._state_signature(finding))
        elif status != UNKNOWN and finding.verdict is Verdict.CORRUPTION:  # it fails alone: filed by where
            self._key_by_path(finding)
        return status

    def _state_signature(self, finding: Finding) -> Any:
        """Where a failure that needs earlier inputs is filed: with the finding of state kept between
        calls of its kind (reduced to the inputs it needs, or not reproducible from the recent ones),
        if there is one — one bug (a cache, a global buffer), whatever each input it spoils comes
        back as, a corruption here, a rejection there."""
        known = next((f for f in self.findings.values() if f is not finding and f.signature.key.endswith("|history")
                      and bool(f.history) == bool(finding.history)), None)
        return known.signature if known is not None else history_signature(finding.verdict.value)

    def _key_by_path(self, finding: Finding) -> None:
        """Re-key a corruption by the kind of damage and the target functions its input runs."""
        from fuzzer.harnesses.parser.harness import keyed_signature

        oracle = self.oracles[finding.level]
        judgment = oracle.judge(finding.sample, finding.outcome)
        self._rekey(finding, keyed_signature(oracle, finding.sample, judgment, finding.outcome, self._settle_run,
                                             deadline=self.budget.deadline))

    def _rekey(self, finding: Finding, signature: Any) -> None:
        """File ``finding`` under ``signature``; merge it into the finding already there."""
        old = finding.signature.id
        if signature.id == old:
            return
        finding.match_id = finding.match_id or old
        with BALANCED:  # out of the book under one signature, back in under another or merged: whole
            self._alias[old] = signature.id
            self.findings.pop(old, None)
            known = self.findings.get(signature.id)
            if known is not None and known is not finding:
                known.count += finding.count
                finding.merged_into = known
                return
            finding.signature = signature
            self.findings[signature.id] = finding

    def _shrink(self, finding: Finding, sample: Any = None, outcome: Any = None) -> bool:
        """Shrink ``finding`` (or a smaller candidate for it); True when the shown input changed."""
        if not self.settings.shrink:
            finding.shrink_note = "not minimized: --no-shrink"
            return False
        if finding.history:
            finding.shrink_note = "not shrunk: it is history-dependent (its earlier inputs were reduced instead)"
            return False
        if finding.verdict is Verdict.SLOW:
            return False  # the probe already reduced the fragment
        window = self.budget.shrink_window()
        sample = sample if sample is not None else finding.sample
        outcome = outcome if outcome is not None else finding.outcome
        match = finding.oracle_id
        if sample is not finding.sample and finding.match_id is not None:
            # a candidate filed here by where it failed may carry another oracle signature: shrink
            # it towards its own, and keep that one if it is adopted
            judgment = self.oracles[finding.level].judge(sample, outcome)
            if judgment.failed:
                match = self.oracles[finding.level].signature(sample, judgment, outcome).id
        started = time.monotonic()
        shrunk = self.shrinkers[finding.level].shrink(sample, outcome, finding.verdict, match, budget_s=window,
                                                      hang_timeout=finding.timeout)
        if finding.minimized is not None and size_key(shrunk.sample) >= size_key(finding.best):
            self.budget.spent_shrinking(time.monotonic() - started)
            return False
        alone, traceback = self._fails_alone(finding, shrunk.sample, match)
        self.budget.spent_shrinking(time.monotonic() - started)
        if not alone:
            if finding.minimized is None:
                finding.shrink_note = (
                    "not minimized: the budget ran out before the smaller input could be run alone"
                    if self.budget.time_up() else
                    "not minimized: the smaller inputs shrinking found fail only after other inputs in the same "
                    "process (the target keeps state between calls); the input shown fails alone")
            return False
        if sample is not finding.sample:
            finding.sample, finding.outcome = sample, outcome  # report the input it came from
            if finding.match_id is not None:
                finding.match_id = match
        finding.adopt_minimized(shrunk.sample, shrunk.observation, self.oracles[finding.level], complete=shrunk.complete,
                                note=shrunk.note, one_minimal=shrunk.one_minimal)
        if traceback:
            # formatted by the fresh worker that ran the minimized input: the report's traceback
            # is the input shown, not the first one that crashed at that place
            finding.traceback = traceback
        return True

    def _fails_alone(self, finding: Finding, sample: Any, match: str) -> tuple[bool, Optional[str]]:
        """Does a shrunk input still fail (the same way) in a fresh worker? Shrinking runs its
        candidates in the campaign's workers, where a target that keeps state (a cache, a buffer)
        can fail on a candidate only because of what ran before it: such a "minimal" input shows
        nothing when its reproduce command runs it alone. Not checked where one run costs a
        timeout (hang, slow) or the finding is not about one input alone; when the budget leaves
        no time to run it, the smaller input is not shown either. With the answer, the traceback
        the fresh run formatted (None when it was not run or did not crash)."""
        if not self.settings.confirm or sample.text == finding.sample.text or \
                finding.verdict in (Verdict.HANG, Verdict.NONDETERMINISM, Verdict.SLOW):
            return True, None
        outcome = self._settle_run([sample.text], deadline=self.budget.deadline, fresh=True)[0]
        if outcome is None or not self._same(finding, sample, match)(outcome):
            return False, None  # another outcome alone, or no time left to tell
        return True, getattr(outcome, "traceback", None)

    def _fold_unconfirmed(self, why: str) -> None:
        """Corruptions the budget left unconfirmed are keyed by the exact characters altered (only
        confirming files one by where it happens), so one bug that damages many inputs — a stale
        cache, a repair pass — showed as dozens of findings. Those of one tool, level and kind of
        damage are folded into the first (counted there, and said so)."""
        first_of: dict = {}  # (tool, level, kind of damage) -> the first such finding
        folded: dict = {}  # id(first) -> [first, words, how many were folded into it]
        for finding in list(self.pending):
            if finding.verdict is not Verdict.CORRUPTION or "|path|" in finding.signature.key or finding.history \
                    or finding.merged_into is not None:
                continue
            judgment = self.oracles[finding.level].judge(finding.sample, finding.outcome)
            kind, words = coarse_damage(judgment.key, judgment.reason)
            group = (finding.sample.tool, finding.level, kind)
            first = first_of.setdefault(group, finding)
            if first is finding:
                continue
            with BALANCED:  # its count moves whole into the first's
                first.count += finding.count
                finding.merged_into = first
                self.findings.pop(finding.signature.id, None)
                self._alias[finding.signature.id] = first.signature.id
                self.pending.remove(finding)
                folded.setdefault(id(first), [first, words, 0])[2] += 1
        for first, words, n in folded.values():
            first.notes.append(f"{n} other failure(s) with the same kind of damage ({words}) are counted here: "
                               f"they were not confirmed before {why}, so it is not known whether they are this bug")

    def _settle(self) -> Iterator[FindingRecorded]:
        """Confirm, shrink and announce the findings discovered since the last call (within budget)."""
        self._check_formats()
        self._trace_suspects()
        while self.pending and not self.budget.time_up():
            finding = self.pending.pop(0)
            if self._confirm(finding) == UNKNOWN:  # the budget ended first: wrap_up says so
                self.pending.insert(0, finding)
                break
            if finding.merged_into is not None:
                continue  # the same bug as a finding already announced: counted there
            if finding.verdict is Verdict.HANG and self._hang_grows(finding):
                continue  # a slow finding (announced as such), not a hang
            if self._shrink(finding) and "|path|" in finding.signature.key:
                # Filed by the functions its minimized input runs: the input the corpus stores,
                # which replay and `corpus add` trace, and which another run (a gate's) shrinks
                # the same bug to — the input found first runs whatever else it happened to hold.
                from fuzzer.harnesses.parser.harness import shown_path_signature

                keyed = shown_path_signature(self.oracles[finding.level], finding, self._settle_run,
                                             deadline=self.budget.deadline)
                if keyed is not None:  # else not traced in time: it keeps the key it has
                    self._rekey(finding, keyed)
                if finding.merged_into is not None:
                    continue
            yield self._announce(finding)
        for finding in list(self.improve):
            if self.budget.time_up() or self.budget.shrink_window() <= 0:
                break
            if any(f is finding for f in self.pending):
                continue
            self.improve.remove(finding)
            if finding.merged_into is not None:
                continue  # its bug is another finding's now
            candidate, finding.candidate = finding.candidate, None
            if candidate is not None and size_key(candidate[0]) < size_key(finding.best) \
                    and self._shrink(finding, *candidate):
                yield self._announce(finding, improved=True)

    def _announce(self, finding: Finding, improved: bool = False) -> FindingRecorded:
        self.announced.add(finding.signature.id)
        return FindingRecorded(finding, improved=improved)

    # -- the job ---------------------------------------------------------------------------------
    def events(self) -> Iterator[Any]:
        try:
            yield from super().events()
        finally:
            if self.owns_pool:
                self.pool.close()
            if self._own_settle_pool is not None:
                self._own_settle_pool.close()

    def run(self) -> Iterator[Any]:
        s = self.settings
        yield JobStarted(job=self.name, label=s.target, budget_s=s.budget_s,
                         settings={"tools": list(s.tools), "level": s.level, "seed": s.seed,
                                   "budget_s": s.budget_s, "max_examples": s.max_examples,
                                   "formats": s.formats, "anomalies": s.anomalies})
        yield PhaseStarted(Phase.LOADING, s.target)
        self.result_.timeline.append((0.0, 0))
        if not getattr(self.pool, "started", True):  # (a pool started before: nothing to inherit)
            prepare_for_workers(self.registry, list(s.tools))  # inherited by every worker the pool forks
        self.pool.start()
        if any(self._settles_beside(n) for n in self._slices[1] or [None]):
            self._settle_pool()  # forked now, before the campaign starts any thread
        self.budget.start()
        self.result_.setup_s = self.elapsed()
        if self.corpus is not None:
            yield from self._replay_corpus()
        problems: dict[str, str] = {}
        fuzzed = False
        for index, name in enumerate(s.tools):
            if self.budget.time_up() or self._max_failures_reached():
                break
            outcome = yield from self._fuzz_tool(index, name)
            if outcome is None:
                fuzzed = True
            else:
                problems[name] = outcome
            if self.stop_reason is StopReason.MAX_FAILURES:
                break
        if not fuzzed and not self.findings:
            self.result_.problem = "; ".join(f"{n}: {why}" if len(problems) > 1 else why
                                             for n, why in problems.items()) or "nothing was tested"
            if self.stop_reason is StopReason.DONE:
                self.stop_reason = StopReason.NOTHING_TESTED
        elif problems:
            for name, why in problems.items():
                self.result_.notes.append(f"{name}: {why}")
                yield NonFatalError(f"{name}: not fuzzed: {why}")

    def _replay_corpus(self) -> Iterator[Any]:
        from fuzzer.harnesses.parser.harness import replay_entries

        yield PhaseStarted(Phase.REPLAYING, str(getattr(self.corpus, "path", "corpus")))
        items = self.corpus.entries()
        for problem in self.corpus.problems:
            yield NonFatalError(f"skipped {problem}")
        others = [(p, e) for p, e in items if e.kind != "parser"]
        for path, entry in others:
            yield NonFatalError(f"not replayed by the campaign: {path} is a {entry.kind} entry "
                                f"(fuzz replay --corpus replays every kind)")
        mine = [(p, e) for p, e in items if e.kind == "parser"]
        self.result_.known = {e.signature: e for _, e in items}
        self._formats.learn(e for _, e in items)
        if mine:
            deadline = self.budget.deadline

            def run(texts: list, **kwargs: Any) -> list:
                """The pool's run within the budget (--budget is a limit: a corpus of hangs costs
                a timeout each); entries not reached are unjudged."""
                kwargs["deadline"] = kwargs.get("deadline") or deadline
                return self.pool.run(texts, **kwargs)

            self.result_.replayed = replay_entries(mine, run=run, registry=self.registry, level=self.settings.level,
                                                   timeout=self.pool.spec.timeout)

    def _max_failures_reached(self) -> bool:
        limit = self.settings.max_failures
        if limit is not None and len(self.findings) >= limit:
            self.stop_reason = StopReason.MAX_FAILURES
            return True
        return False

    def _fuzz_tool(self, index: int, name: str) -> Iterator[Any]:
        """Probe and fuzz one tool; returns None, or why nothing could be fuzzed."""
        s, budget = self.settings, self.budget
        count = len(s.tools)
        deadline, examples = self._slice_end(index)
        tool = self._ahead.take(index) if self._ahead is not None else None
        if tool is None:
            tool = self._new_tool_campaign(index, name)
        explorer = self._explorer(name, index) if s.explore else None
        tool.explorer = explorer
        tool.class_weights = s.class_weights
        yield PhaseStarted(Phase.PROBING, name)
        report = tool.probe(deadline, None if examples is None else max(0, examples - self.tally.executions))
        prefix = f"{name}: " if count > 1 else ""
        self.result_.supported.update({f"{prefix}{k}": v for k, v in report.supported.items()})
        self.result_.unsupported.update({f"{prefix}{k}": v for k, v in report.unsupported.items()})
        self.result_.failing.update({f"{prefix}{k}": v for k, v in report.failing.items()})
        for line in report.assumed:
            if line not in self.result_.assumed:
                self.result_.assumed.append(line)
        yield FormatsProbed(supported=dict(report.supported), unsupported=dict(report.unsupported), label=name)
        yield from self._settle()
        yield self._progress(Phase.PROBING, name)  # the bar counts the probes and what they found
        if report.contract_problem:
            return report.contract_problem
        if not report.supported:
            if budget.time_up():
                self.stop_reason = StopReason.BUDGET
                return "the budget ran out while probing the formats"
            probed = ", ".join(report.unsupported) or "none"
            first = f"; first rejection: {report.first_rejection}" if report.first_rejection else ""
            return f"no supported format: every valid probe was rejected or answered with no call ({probed}){first}"
        seeds = [seed for seed in s.seeds if seed.tool in ("", name)]
        if seeds:
            for start in range(0, len(seeds), s.batch_size):
                tool.execute(seeds[start:start + s.batch_size], budget.deadline, 0)
                yield from self._settle()
            if explorer is not None:
                for seed in seeds:
                    explorer.add_seed(seed.text, seed.format)
        yield PhaseStarted(Phase.FUZZING, name)
        if explorer is not None and self.corpus is not None:
            for r in self.result_.replayed:
                explorer.add_seed(r.entry.text, r.entry.format or "raw")
        tool.visit(report)
        self._dictionary = list(explorer.dictionary) if explorer is not None else []
        slow = self._slow_probe(seed=s.seed + index) if s.slow else None
        fuzz_started, slow_spent = time.monotonic(), 0.0
        empty = 0
        ran_any = prepared = False
        rate = 0.0  # executions per second of the structured arm's last round
        while True:
            reason = budget.stop_reason(self.tally.executions)
            if reason is not None:
                self.stop_reason = reason
                break
            if deadline is not None and time.monotonic() >= deadline:
                break  # this tool's slice is over; the next tool gets its own
            if examples is not None and self.tally.executions >= examples:
                break
            if self._max_failures_reached():
                break
            left = (examples - self.tally.executions) if examples is not None else None
            found, reached = len(self.findings), len(explorer.lines) if explorer is not None else 0
            if explorer is not None and explorer.wants_turn():
                arm, batch = "exploration", explorer.batch(s.batch_size if left is None else min(left, s.batch_size))
                ran = tool.execute(batch, budget.deadline, 0) if batch else 0
            else:
                arm, counts = "structured", _order_counts(left, s.batch_size, self.pool.workers, first=not tool.planned)
                if deadline is not None and examples is None and rate:
                    # this tool's slice of the budget: a round that would outlast it is cut to fit
                    fits = int(rate * (deadline - time.monotonic()) / s.batch_size) + 1
                    counts = counts[:max(1, fits)]
                reruns = RERUNS_PER_BATCH if left is None else min(RERUNS_PER_BATCH, max(0, left - sum(counts)) // len(counts))
                started_round = time.monotonic()
                on_sent = None if prepared else lambda: self._prepare_next(index)
                beside = self._settling_due() and tool.planned and self._settles_beside(examples)
                if beside:
                    ran = yield from self._settle_beside(tool, counts, reruns, deadline, on_sent)
                else:
                    # the budget's deadline is hard; this tool's share ends once its orders running finish
                    ran = tool.fuzz(counts, budget.deadline, reruns, stop_sending=deadline, on_sent=on_sent)
                prepared = True
                rate = ran / max(1e-3, time.monotonic() - started_round)
            empty = 0 if ran else empty + 1
            if empty >= EMPTY_BATCHES:
                break
            ran_any = ran_any or bool(ran)
            if explorer is not None:
                explorer.credit(arm, ran, len(explorer.lines) - reached + len(self.findings) - found)
            if slow is not None and explorer is not None and explorer.seeds and \
                    slow_spent < s.slow_share * (time.monotonic() - fuzz_started) and not budget.time_up():
                started = time.monotonic()
                self._probe_slow(slow, explorer, name)
                slow_spent += time.monotonic() - started
            if not (arm == "structured" and self._settles_beside(examples)):
                yield from self._settle()  # (beside the rounds otherwise: at the next round)
            if self.elapsed() - self._last_progress >= PROGRESS_EVERY:
                self._last_progress = self.elapsed()
                yield self._progress(Phase.FUZZING, name)
        yield from self._settle()  # what the last rounds found
        if explorer is not None:
            self.result_.exploration_share[name] = explorer.share()
        if not ran_any and empty >= EMPTY_BATCHES:
            return "nothing to generate: no selected anomaly class or operator applies to these calls"
        return None

    def _new_tool_campaign(self, index: int, name: str) -> ToolCampaign:
        s = self.settings
        level = s.of(name, "level")
        return self.tool_campaign(registry=self.registry, tool_name=name, level=level, formats=s.of(name, "formats"),
                                  operators=self.operators, include_valid=self.include_valid,
                                  seed=s.of(name, "seed") + index, oracle=self.oracles[level], run=self.pool.run,
                                  tally=self.tally, on_failure=self._on_failure, run_orders=self.pool.run_orders)

    def _prepare_next(self, index: int) -> None:
        """Build the next tool's probes in a thread while this tool's orders run: the engine
        mostly waits for the workers then, and otherwise they would wait for it (a twentieth of a
        54-tool campaign). Not under an execution limit, whose probes depend on what is left."""
        after = index + 1
        if after >= len(self.settings.tools) or self._slices[1] is not None:
            return
        if self._ahead is None:
            self._ahead = ToolsAhead()
        self._ahead.start(after, self._new_tool_campaign(after, self.settings.tools[after]))

    def _slice_end(self, index: int) -> tuple[Optional[float], Optional[int]]:
        """When tool ``index``'s part of the budget ends: (deadline, cumulative executions)."""
        seconds, examples = self._slices
        self.budget.start()
        deadline = self.budget.started + sum(seconds[:index + 1]) if seconds is not None else None
        return deadline, (sum(examples[:index + 1]) if examples is not None else None)

    def _explorer(self, name: str, index: int) -> Explorer:
        from fuzzer.harnesses.parser.harness import module_file

        module = self.settings.target.split(":", 1)[0]
        path = module_file(module, os.getcwd()) if not module.startswith("git:") else None
        explorer = Explorer(seed=self.settings.seed + index, tool=name, dictionary=source_tokens(path))
        explorer.lines = self.result_.lines  # one coverage set for every tool of the job
        return explorer

    def _probe_slow(self, slow: SlowProbe, explorer: Explorer, tool: str) -> None:
        """Time repetitions of a fragment of a seed; a super-linear growth becomes a slow finding."""
        text, fmt = explorer.seeds[explorer.random.randrange(len(explorer.seeds))]
        growth = slow.probe(text)
        self._slow_probes += 1
        if growth is None and self._slow_probes % TOKEN_PROBE_EVERY == 0:
            # now and then a token of the dictionary (a fence, a tag) on a seed drawn apart
            text, fmt = explorer.seeds[self._token_seeds.randrange(len(explorer.seeds))]
            growth = slow.probe_token(text)
        if growth is None:
            return
        self._file_growth(slow.reduce(growth), slow, fmt, tool)

    def _file_growth(self, growth: Any, slow: SlowProbe, fmt: str, tool: str) -> Optional[Finding]:
        """The slow finding of a (reduced) super-linear growth: a new one, or the one already
        filed where the time goes (counted once more). None when it is ignored or over the limit."""
        # Filed by where it spends its time: sample the stack of a longer run (again, earlier,
        # if that one finished first on a loaded machine; without frames it would be keyed by
        # the fragment alone).
        pool = self._settling_pool or self.pool
        largest, after_s = growth.sampled(pool.spec.timeout)
        outcome, frames = None, ()
        for share in (1, 4):
            outcome, frames = pool.sample_stack(largest, after_s=max(0.002, after_s / share), options=False,
                                                deadline=self.budget.deadline)
            if frames:
                break
        kind = _fragment_kind(growth.fragment)
        signature = slow_signature(frames=frames, fragment_kind=kind)
        found = self.findings.get(signature.id)
        if found is None and not frames:
            # No stack caught (the run ended first, or the budget did): nothing tells this growth
            # from a slow finding of this tool on the same kind of fragment, which is then the
            # one bug seen again, not a second one keyed by the fragment alone.
            found = next((f for f in self.findings.values() if f.growth is not None and f.sample.tool == tool
                          and _fragment_kind(f.growth.fragment) == kind), None)
        if found is not None:
            found.count += 1
            return found
        if signature.id in self.settings.ignore or self._max_failures_reached():
            return None
        sample = Sample(text=growth.text(growth.counts[0]), format=fmt, anomaly_class=EXPLORATION,
                        operator="repetition", calls=None, tool=tool, truth_known=False,
                        description=f"{growth.fragment!r} repeated {growth.counts[0]} times in a seed")
        outcome = outcome or Outcome(kind="returned", calls=[], frames=frames)
        finding = Finding(signature=signature, verdict=Verdict.SLOW, reason=growth.describe(), sample=sample,
                          outcome=outcome, minimized=sample, minimized_outcome=outcome, found_at_s=self.elapsed(),
                          target=self.settings.target, level=self.settings.of(tool, "level"),
                          reject_on=tuple(self.settings.reject_on), reproduce_dir=self.settings.reproduce_dir,
                          shrink_complete=slow.reduced_fully, growth=growth, one_minimal=slow.reduced_fully,
                          shrink_note="" if slow.reduced_fully else
                          f"not minimized: the reduction of the text around the run stopped ({slow.stopped_because})")
        self.findings[signature.id] = finding
        self.pending.append(finding)
        return finding

    def _slow_probe(self, *, seed: int, run: Optional[Callable[[list], list]] = None) -> SlowProbe:
        """The slow probe of ``tool``'s fuzzing: it repeats the formats' structural tokens and the
        exploration's dictionary as well as single characters."""
        from fuzzer.harnesses.parser.explore import JSON_TOKENS, format_tokens

        dictionary = self._dictionary or [*JSON_TOKENS, *format_tokens()]
        run = run or (lambda texts: self.pool.run(texts, deadline=self.budget.deadline, options=False))
        return SlowProbe(seed=seed, timeout=self.pool.spec.timeout, run=run, fragments=dictionary)

    def _hang_grows(self, finding: Finding) -> bool:
        """A hang met by a super-linear path: probe the hang's input for a fragment whose
        repetition grows faster than linear at sizes far below the timeout (:meth:`SlowProbe.from_hang`);
        when one does, the hang is that slow finding met too late — reported once, as ``slow``,
        with the exponent (the hang counted there, and its stack too: a later hang there is it)."""
        if not self.settings.slow or self.budget.time_up():
            return False
        from strategies._internal.formats import FORMATS

        started = time.monotonic()
        probe = self._slow_probe(seed=self.settings.seed, run=lambda texts: self._settle_run(
            texts, deadline=self.budget.deadline, options=False))
        fmt = FORMATS.get(finding.sample.format) if finding.sample.format in FORMATS else None
        tokens = [t for t in getattr(fmt, "envelope", {}).values() if isinstance(t, str) and t.strip()]
        growth = probe.from_hang(finding.sample.text, tokens)
        slow = None
        if growth is not None:
            slow = self._file_growth(probe.reduce(growth), probe, finding.sample.format, finding.sample.tool)
        self.budget.spent_shrinking(time.monotonic() - started)
        if slow is None:
            return False
        with BALANCED:  # out of the book as a hang, into the slow finding: whole
            self.findings.pop(finding.signature.id, None)
            self._alias[finding.signature.id] = slow.signature.id
            slow.count += finding.count
            finding.merged_into = slow
            if finding.outcome.frames:
                self._grown_hangs.append((finding.outcome.frames, slow))
        slow.notes.append(f"a {len(finding.sample.text):,}-character input of this growth hung past the "
                          f"{self.pool.spec.timeout:g} s timeout; it is counted here")
        return True

    def _grown_hang(self, frames: Any) -> Optional[Finding]:
        """The slow finding a hang stuck in ``frames`` was shown to be (:meth:`_hang_grows`)."""
        return next((slow for stuck, slow in self._grown_hangs if same_hang(stuck, frames)), None)

    def wrap_up(self, interrupted: bool) -> Iterator[Any]:
        if not interrupted:
            yield from self._settle()
        why = "interrupted" if interrupted else "the budget ran out"
        self._fold_unconfirmed("the run was interrupted" if interrupted else why)
        for finding in self.pending:
            finding.shrink_note = f"not confirmed or minimized: {why} first"
        self.pending.clear()
        for finding in self.findings.values():
            if finding.signature.id not in self.announced:
                yield self._announce(finding)

    def result(self) -> CampaignResult:
        r = self.result_
        r.executions = self.tally.executions
        r.elapsed_s = self.elapsed()
        r.lines.update(getattr(self.pool, "lines", ()))  # also what confirming and shrinking reached
        r.lines.update(getattr(self._own_settle_pool, "lines", ()))
        r.backend = describe_backend(self.pool)
        r.notes += [note for note in backend_notes(self.pool) if note not in r.notes]  # (said once)
        if r.timeline and r.timeline[-1][1] != r.executions:
            r.timeline.append((r.elapsed_s, r.executions))
        r.findings = list(self.findings.values())
        r.stop_reason = self.stop_reason
        r.hints = reject_on_hints(r.findings, self.settings.target, self.settings.reject_on)
        return r

    def exit_code(self, result: CampaignResult) -> int:
        return campaign_exit_code(findings=len(result.findings), corpus_failing=bool(result.corpus_failing),
                                  nothing_tested=result.problem, interrupted=self.interrupted)


#: Verdicts that depend on the truth: a history-dependent one is keyed by "history", not damage.
_TRUTH_VERDICTS = (Verdict.CORRUPTION, Verdict.FALSE_REJECT, Verdict.MISSED_ANOMALY)


def _order_counts(left: Optional[int], size: int, workers: int, first: bool = False) -> list[int]:
    """The sizes of one round of orders (:data:`ROUND_ORDERS` of ``size`` samples; a visit's
    first round is one order, so the scheduler learns which operators of its first pass could
    not build before it plans more), fewer and smaller when only ``left`` executions remain."""
    whole = (1 if first else max(ROUND_ORDERS, 2 * workers)) * size
    total = whole if left is None else min(left, whole)
    return [min(size, total - start) for start in range(0, total, size)] or [0]


def _total(settings: CampaignSettings, key: str) -> Any:
    """The job's limit: the sum of the tools' parts when some tool has its own."""
    parts = _parts(settings, key)
    return None if parts is None else sum(parts)


def _parts(settings: CampaignSettings, key: str) -> Optional[list]:
    """Each tool's part of ``budget_s`` / ``max_examples``: its override, or an equal share of
    what the job's limit leaves."""
    overrides = {t: settings.per_tool[t][key] for t in settings.tools if key in settings.per_tool.get(t, {})}
    total = getattr(settings, key)
    if total is None and not overrides:
        return None
    rest = [t for t in settings.tools if t not in overrides]
    if total is None and rest:
        return None  # some tools unlimited: no part is a limit
    left = max(0, (total or 0) - sum(overrides.values())) if total is not None else 0
    share = left / len(rest) if rest else 0
    parts = [overrides.get(t, share) for t in settings.tools]
    if key == "max_examples":
        parts = [int(p) for p in parts]
        if rest and total is not None:  # integer shares that add up exactly
            remainder = max(0, total - sum(overrides.values())) - sum(int(share) for _ in rest)
            for i, t in enumerate(settings.tools):
                if t in rest and remainder > 0:
                    parts[i] += 1
                    remainder -= 1
    return parts


class ToolsAhead:
    """The next tool's :class:`~fuzzer.harnesses.parser.tool.ToolCampaign`, its probes built in a thread.

    Building is pure Python on the tool's own source, so the samples are the ones the tool would
    build when its turn came; a build that raises is thrown away and redone in turn, where its
    error is reported as usual."""

    def __init__(self) -> None:
        self._index: Optional[int] = None
        self._tool: Optional[ToolCampaign] = None
        self._thread: Any = None
        self._failed = False

    def start(self, index: int, tool: ToolCampaign) -> None:
        import threading

        self.take(-1)  # an earlier one nobody took (its tool was skipped)
        self._index, self._tool, self._failed = index, tool, False
        self._thread = threading.Thread(target=self._build, name="toolfuzz-probes-ahead", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        try:
            self._tool.prepare_probes()
        except BaseException:  # noqa: BLE001 - redone in turn, where it is reported
            self._failed = True

    def take(self, index: int) -> Optional[ToolCampaign]:
        """Tool ``index``'s campaign with its probes built (waits for the thread), or None."""
        if self._thread is None:
            return None
        self._thread.join()
        tool, ok = self._tool, self._index == index and not self._failed
        self._index, self._tool, self._thread = None, None, None
        return tool if ok else None


def _slices(settings: CampaignSettings) -> tuple:
    return _parts(settings, "budget_s"), _parts(settings, "max_examples")


def _fragment_kind(fragment: str) -> str:
    """A stable name for a repeated fragment: its distinct characters, classified."""
    if fragment.isspace():
        return "whitespace"
    if all(c.isalnum() for c in fragment):
        return "letters or digits"
    return "".join(sorted(set(c for c in fragment if not c.isalnum())))[:8]


def reject_on_hints(findings: list, target: str, reject_on: tuple) -> list[str]:
    """When most crashes raise one exception class defined in the target's own package, it is
    probably the parser's rejection type: say how to declare it. When --reject-on was given and
    crashes raise ValueError, say that the declared types replace ValueError (a parser that
    raises both reads as crashing on every ValueError)."""
    crashes: dict[str, int] = {}
    for f in findings:
        exc = f.outcome.exception if f.verdict is Verdict.CRASH and f.outcome is not None else None
        if exc:
            crashes[exc] = crashes.get(exc, 0) + f.count
    if not crashes:
        return []
    if reject_on:
        if "ValueError" in crashes and not any(ref.rpartition(":")[2] == "ValueError" for ref in reject_on):
            kinds = sum(1 for f in findings if f.verdict is Verdict.CRASH and f.outcome is not None
                        and f.outcome.exception == "ValueError")
            return [f"{kinds} crash finding(s) raise ValueError, which is not a clean rejection once --reject-on "
                    f"declares other types; if the parser rejects with it too, add --reject-on builtins:ValueError"]
        return []
    top, hits = max(crashes.items(), key=lambda kv: kv[1])
    package = target.split(":", 1)[0].split(".")[0]
    if "." not in top or top.split(".")[0] != package or hits * 2 < sum(crashes.values()):
        return []
    module, _, name = top.rpartition(".")
    return [f"most crashes raise {top}, defined in the target's own package; if it is how the parser rejects "
            f"an output, declare it: --reject-on {module}:{name}"]


__all__ = ["CampaignJob", "CampaignResult", "CampaignSettings", "reject_on_hints"]
