"""The campaign: one control loop for every harness.

``fuzz campaign``, ``fuzz executor``, ``fuzz agent``, ``fuzz stream`` and the gate's short
campaigns are all a :class:`CampaignJob` over a harness's :class:`~fuzzer.engine.subject.Subject`:

1. start the workers (start-up is reported as ``setup_s``, not charged to ``--budget``), replay the
   corpus given with ``--corpus``;
2. per unit (a share of the budget: the parser's tools; one for the others), let the subject
   prepare it (the parser probes its formats), then run *rounds*: a round is a few orders per
   worker (:mod:`fuzzer.engine.orders`), drawn, run and judged in the workers, filed here in order
   number (:class:`~fuzzer.engine.orders.OrderLine`), so a seed's run is the same for any number of
   workers; a subject may take turns with another arm (the parser's coverage-guided exploration);
3. every failure goes to the one :class:`~fuzzer.engine.book.FindingBook` (one finding per
   signature); between rounds — or, under a time budget, *beside* them, in a worker of their own
   while the rounds go on (:class:`~fuzzer.engine.rounds_beside.RoundsBeside`) — new findings are
   confirmed in a fresh worker (:class:`~fuzzer.engine.confirm.Confirmer`: a failure that does not
   happen again is reported as such), shrunk within the budget's shrink window
   (:class:`~fuzzer.engine.budget.Budget`), and announced (:class:`~fuzzer.engine.events.FindingRecorded`);
4. whatever the budget or Ctrl-C leaves pending is announced unshrunk, marked not minimized —
   never dropped.

``--budget`` is a limit for all of it, shrinking included (each unit gets its part:
:func:`~fuzzer.engine.budget.unit_parts`); ``--max-examples`` counts every execution;
``--max-failures`` stops after that many distinct findings. What a campaign reports is
:mod:`fuzzer.engine.campaign_result`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from fuzzer.engine.book import FindingBook
from fuzzer.engine.budget import SHRINK_CAP_S, SHRINK_SHARE, Budget, unit_parts, units_total
from fuzzer.engine.confirm import FLAKY, UNKNOWN, Confirmer
from fuzzer.engine.decisions import campaign_exit_code
from fuzzer.engine.events import JobStarted, NonFatalError, Phase, PhaseStarted, Progress, StopReason
from fuzzer.engine.interrupts import BALANCED
from fuzzer.engine.orders import OrderLine
from fuzzer.engine.campaign_result import CampaignResult, Tally
from fuzzer.engine.pipeline import Job
from fuzzer.engine.rounds_beside import RoundsBeside
from fuzzer.engine.subject import Failure

#: Seconds between Progress events.
PROGRESS_EVERY = 1.0
#: Consecutive rounds that ran nothing after which a unit stops (nothing can be generated).
EMPTY_ROUNDS = 3
#: Orders in one round (two are in flight per worker; between rounds the job confirms, shrinks,
#: reports). The same for up to 8 workers, so the number of workers does not change a seed's run;
#: more workers get two orders each. Sixteen, not eight: with two workers a round of eight lasted
#: ~35 ms and each ended with one worker waiting for the other's last order.
ROUND_ORDERS = 16


@dataclass
class CampaignSettings:
    """What every harness's campaign is bounded and steered by (a harness keeps its own settings
    — formats, policy, shapes — in its subject)."""

    seed: int = 0
    budget_s: Optional[float] = 60.0
    max_examples: Optional[int] = None
    shrink: bool = True
    shrink_share: float = SHRINK_SHARE
    shrink_cap_s: float = SHRINK_CAP_S
    confirm: bool = True
    max_failures: Optional[int] = None
    ignore: frozenset = frozenset()
    #: Under a time budget, confirm and shrink findings in a worker of their own while the
    #: workers go on fuzzing (:class:`~fuzzer.engine.rounds_beside.RoundsBeside`); False: between
    #: rounds, the workers waiting.
    beside: bool = True


class CampaignJob(Job):
    """Fuzz ``subject`` (see the module docstring). ``corpus``: a :class:`corpus.store.Store`
    whose entries of the subject's kind are replayed first. ``owns_pool``: close the subject's pool
    at the end. ``started_at``: when the command began (``time.monotonic()``), so ``elapsed_s``
    and ``setup_s`` include loading the tools as well as starting the workers."""

    name = "campaign"

    def __init__(self, subject: Any, settings: CampaignSettings, *, corpus: Any = None, owns_pool: bool = True,
                 started_at: Optional[float] = None):
        super().__init__()
        self.subject, self.settings, self.corpus, self.owns_pool = subject, settings, corpus, owns_pool
        self.name = subject.result.job or self.name
        self.pool = subject.pool
        units = subject.units()
        self.units = units
        self.budget = Budget(seconds=units_total(settings.budget_s, units, subject, "budget_s"),
                             max_examples=units_total(settings.max_examples, units, subject, "max_examples"),
                             shrink_share=settings.shrink_share, shrink_cap_s=settings.shrink_cap_s)
        self._slices = (unit_parts(settings.budget_s, units, subject, "budget_s"),
                        unit_parts(settings.max_examples, units, subject, "max_examples"))
        self.book = FindingBook(ignore=settings.ignore, max_failures=settings.max_failures, size=subject.size,
                                rank=subject.shown_rank)
        self.result_ = subject.result
        self.result_.seed = settings.seed
        self.tally: Tally = self.result_.tally
        self.confirmer = Confirmer(self.settle_run)
        #: The pool confirming and shrinking run their inputs in while rounds go on beside them
        #: (RoundsBeside); None: the campaign's pool.
        self._settling_pool: Any = None
        self._own_settle_pool: Any = None
        self._histories: dict[str, tuple] = {}
        self._t0 = started_at if started_at is not None else time.monotonic()
        self._last_progress = 0.0
        self._line = OrderLine()
        self._planned = 0  # orders planned so far (their numbers)
        self._withdrawn: list = []  # notes of findings confirming withdrew, to say
        self._ahead: Optional[tuple] = None  # (unit, counts, orders): the next round, planned ahead

    # -- time ------------------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    # -- running inputs outside the rounds ---------------------------------------------------------
    def settle_run(self, payloads: list, **kwargs: Any) -> list:
        """``pool.run`` for confirming and shrinking: the campaign's pool, or the settle pool while
        rounds run in the campaign's pool beside them. Never past the budget's deadline."""
        if self.budget.seconds is not None and kwargs.get("deadline") is None:
            kwargs["deadline"] = self.budget.deadline
        return self.running_pool.run(payloads, **kwargs)

    @property
    def running_pool(self) -> Any:
        """The pool an input run outside the rounds goes to now: the settle pool while rounds run
        beside the settling, else the campaign's."""
        return self._settling_pool or self.pool

    def _settle_pool(self) -> Any:
        """One worker of the subject's spec for settling beside the rounds (forked before the
        campaign starts any thread; it inherits what the subject prepared, as those workers do).
        Always on this machine, whatever back end runs the rounds (:func:`fuzzer.backends.settling_pool`)."""
        if self._own_settle_pool is None:
            from fuzzer.backends import settling_pool

            self._own_settle_pool = settling_pool(self.pool)
            self._own_settle_pool.start()
        return self._own_settle_pool

    def _settles_beside(self, examples: Optional[int]) -> bool:
        """Settle findings while the workers go on fuzzing: under a time budget, where the rounds
        run meanwhile only add executions. Not when the unit has a number of executions: its run
        stays the same for a seed, and rounds beside could not stop at the number; there, findings
        are settled between rounds, the workers waiting."""
        return (examples is None and self.budget.seconds is not None and self.settings.beside
                and hasattr(self.pool, "spec"))

    def _settling_due(self) -> bool:
        """Whether :meth:`_settle` has anything it would do now."""
        return bool(self.book.pending or (self.book.improve and self.budget.shrink_window() > 0)
                    or self.subject.settling_due(self))

    # -- filing ----------------------------------------------------------------------------------
    def offer(self, failure: Failure) -> None:
        """A failure, into the finding book: counted into its signature's finding, or a new one."""
        book, subject = self.book, self.subject
        found = book.find(failure.signature.id)
        if found is None:
            found = subject.same_as(failure, self)
            if found is not None:
                book.alias(failure.signature.id, found)
        if found is not None:
            if subject.divert(found, failure, self):
                return
            book.count(found, failure.count)
            book.offer(found, failure.case, failure.outcome)
            return
        finding = subject.new_finding(failure, self)
        finding.count = failure.count
        finding.found_at_s = self.elapsed()
        if book.open(finding, ignore=subject.ignored(failure)):
            self._histories[failure.signature.id] = failure.history()
        elif book.ignored_signature(failure.signature.id, subject.ignored(failure)):
            self.result_.ignored = book.ignored

    def open_finding(self, finding: Any, history: tuple = ()) -> bool:
        """File a finding the subject made itself (a slow probe's): to confirm, shrink, announce."""
        finding.found_at_s = self.elapsed()
        if self.book.open(finding):
            self._histories[finding.signature.id] = history
            return True
        self.result_.ignored = self.book.ignored
        return False

    def _max_failures_reached(self) -> bool:
        if self.book.full():
            self.stop_reason = StopReason.MAX_FAILURES
            return True
        return False

    # -- rounds ----------------------------------------------------------------------------------
    def _plan(self, unit: str, counts: list, room: Optional[int] = None) -> list:
        orders = []
        for count in counts:
            orders.append(self.subject.plan(unit, count, self._planned, room))
            self._planned += 1
        return orders

    def run_round(self, unit: str, counts: list, stop_sending: Optional[float], *, room: Optional[int] = None,
                  on_sent: Optional[Callable[[], None]] = None, file: bool = True,
                  stop_when: Optional[Callable[[], bool]] = None) -> Any:
        """Plan a round of orders (``counts`` cases each) into the line, run what waits in it, and
        file the results that can be filed, in order. ``room``: executions each order may run
        beyond its cases (None: no execution limit). Returns the executions filed — or, with
        ``file`` False (a round run beside the settling, in another thread), ``(orders, results)``
        for :meth:`file_round` in the campaign's thread."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[:2] == (unit, tuple(counts)):
            planned = ahead[2]
        else:
            planned = self._plan(unit, counts, room)
        for order in planned:
            self._line.add(order)
        orders = self._line.waiting()
        plan_ahead = self.subject.plans_ahead and file and room is None
        ran = 0

        def take_arrived(results: list) -> None:
            """Note what arrived and file what can be filed (the line says what); then plan the
            next round, while the workers run this one."""
            nonlocal ran
            for order, result in zip(orders, results):
                if result is not None:
                    self._line.arrived(order, result)
            if file:
                ran += self._file(self._line.ready())
            if plan_ahead and self._ahead is None:
                self._ahead = (unit, tuple(counts), self._plan(unit, counts))

        results = self.pool.run_orders(orders, deadline=self.budget.deadline, stop_sending=stop_sending,
                                       on_result=take_arrived, on_sent=on_sent, stop_when=stop_when)
        take_arrived(results)
        if not file:
            return orders, results
        self.subject.round_done(unit, orders, results, self)
        return ran

    def file_round(self, unit: str, orders: list, results: list) -> int:
        """File a round :meth:`run_round` ran without filing; returns its executions."""
        for order, result in zip(orders, results):
            if result is not None:
                self._line.arrived(order, result)
        ran = self._file(self._line.ready())
        self.subject.round_done(unit, orders, results, self)
        return ran

    def _file(self, ready: list) -> int:
        """File what the line let out, whole: a Ctrl-C waits until it is (a few orders' filing), or
        what came back would be in no count."""
        ran = 0
        with BALANCED:
            for order, lost, result in ready:
                for one in lost:
                    ran += self.subject.file_lost(order, one, self)
                if result is not None:
                    ran += self.subject.file(order, result, self)
            for order, lost in self._line.given_up:
                self.result_.notes.append(
                    f"a worker died between the inputs of order {order.number} every time it ran "
                    f"({getattr(lost.outcome, 'detail', None) or 'it ended'}); its inputs were not run or counted")
            self._line.given_up.clear()
        return ran

    def _settle_beside(self, unit: str, counts: list, stop_sending: Optional[float],
                       on_sent: Optional[Callable[[], None]]) -> Iterator[Any]:
        """Confirm and shrink the pending findings in the settle pool while rounds of ``counts``
        run in the campaign's pool in a thread; then file those rounds, in order, here. Returns
        their executions."""
        rounds = RoundsBeside(self, unit, counts, stop_sending, on_sent)
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
                ran = sum(self.file_round(unit, orders, results) for orders, results in done)
            if error is not None:
                raise error
        return ran

    # -- settling: confirm, shrink, announce -------------------------------------------------------
    def _confirm(self, finding: Any) -> Optional[str]:
        """Run the finding's input again in a fresh worker (and, if it passes there, after the
        inputs that ran before it); returns the confirmer's status (None: not confirmed here)."""
        subject = self.subject
        if not self.settings.confirm or not subject.confirmable(finding):
            return None
        history = subject.history(finding, self._histories.pop(finding.signature.id, ()), self)
        started = time.monotonic()
        status, earlier = self.confirmer.confirm(subject.payload(finding.case), history,
                                                 subject.same(finding, finding.case), self.budget.deadline)
        self.budget.spent_shrinking(time.monotonic() - started)  # confirming is part of the shrink share
        if status != UNKNOWN:
            finding.confirmed = status
            withdrawn = subject.confirmed(finding, status, earlier, self)
            if withdrawn:
                self.book.withdraw(finding)
                self.result_.notes.append(withdrawn)
                self._withdrawn.append(withdrawn)
        return status

    def _shrink(self, finding: Any) -> bool:
        if not self.settings.shrink:
            finding.shrink_note = finding.shrink_note or "not minimized: --no-shrink"
            return False
        window = self.budget.shrink_window()
        if window <= 0:
            finding.shrink_note = finding.shrink_note or "not minimized: the budget's shrink share was used up"
            return False
        started = time.monotonic()
        try:
            return self.subject.shrink(finding, self, window)
        finally:
            self.budget.spent_shrinking(time.monotonic() - started)

    def _settle(self) -> Iterator[Any]:
        """Confirm, shrink and announce the findings discovered since the last call (within budget)."""
        self.subject.before_settling(self)
        book = self.book
        if book.pending and not self.budget.time_up():
            yield PhaseStarted(Phase.CONFIRMING, self.subject.label)
        while book.pending and not self.budget.time_up():
            finding = book.pending.pop(0)
            status = self._confirm(finding)
            if status == UNKNOWN:  # the budget ended first: wrap_up says so
                book.pending.insert(0, finding)
                break
            while self._withdrawn:
                yield NonFatalError(self._withdrawn.pop(0))
            if finding.signature.id not in book.findings and finding.merged_into is None:
                continue  # withdrawn: no finding
            if finding.merged_into is not None:
                continue  # the same bug as a finding already announced: counted there
            if status != FLAKY and self._shrink(finding):  # (a flaky predicate makes any minimizer lie)
                self.subject.after_shrink(finding, self)
            if finding.merged_into is not None:
                continue
            yield book.announce(finding)
        for finding in list(book.improve):
            if self.budget.time_up() or self.budget.shrink_window() <= 0:
                break
            if any(f is finding for f in book.pending):
                continue
            book.improve.remove(finding)
            if finding.merged_into is not None:
                continue  # its bug is another finding's now
            candidate, finding.candidate = finding.candidate, None
            if candidate is None or book.size(candidate[0]) >= book.size(finding.best):
                continue
            started = time.monotonic()
            try:
                better = self.subject.improve(finding, candidate, self, self.budget.shrink_window())
            finally:
                self.budget.spent_shrinking(time.monotonic() - started)
            if better:
                self.subject.after_shrink(finding, self)
                if finding.merged_into is None:
                    yield book.announce(finding, improved=True)
        self.subject.after_settling(self)

    def settle(self) -> Iterator[Any]:
        """Confirm, shrink and announce what is pending now (a subject's :meth:`~Subject.begin`
        settles what its probes found before the fuzzing starts)."""
        return self._settle()

    def progress(self, phase: Phase, label: str) -> Progress:
        """A Progress event now (the timeline gets a point)."""
        return self._progress(phase, label)

    def _progress(self, phase: Phase, label: str) -> Progress:
        self.result_.timeline.append((self.elapsed(), self.tally.executions))
        return Progress(self.tally.executions, self.elapsed(), self.book.by_verdict(), phase, label,
                        self.settings.budget_s)

    # -- the job ---------------------------------------------------------------------------------
    def events(self) -> Iterator[Any]:
        try:
            yield from super().events()
        finally:
            if self.owns_pool and self.pool is not None:
                self.pool.close()
            if self._own_settle_pool is not None:
                self._own_settle_pool.close()
            self.subject.close()

    def run(self) -> Iterator[Any]:
        subject, s = self.subject, self.settings
        yield JobStarted(job=self.name, label=subject.label, budget_s=s.budget_s,
                         settings={"seed": s.seed, "budget_s": s.budget_s, "max_examples": s.max_examples,
                                   **getattr(subject, "settings_json", dict)()})
        yield PhaseStarted(Phase.LOADING, subject.label)
        self.result_.timeline.append((0.0, 0))
        subject.start(self)
        self.pool.start()
        if any(self._settles_beside(n) for n in self._slices[1] or [None]):
            self._settle_pool()  # forked now, before the campaign starts any thread
        self.budget.start()
        self.result_.setup_s = self.elapsed()
        yield from subject.started(self)
        if self.result_.problem is not None:
            self.stop_reason = StopReason.NOTHING_TESTED
            return
        if self.corpus is not None:
            yield from self._replay_corpus()
        problems: dict[str, str] = {}
        fuzzed = False
        for index, unit in enumerate(self.units):
            if self.budget.time_up() or self._max_failures_reached():
                break
            problem = yield from self._fuzz_unit(index, unit)
            if problem is None:
                fuzzed = True
            else:
                problems[unit] = problem
            if self.stop_reason is StopReason.MAX_FAILURES:
                break
        if not fuzzed and not self.book.findings:
            self.result_.problem = "; ".join(f"{n}: {why}" if len(problems) > 1 else why
                                             for n, why in problems.items()) or "nothing was tested"
            if self.stop_reason is StopReason.DONE:
                self.stop_reason = StopReason.NOTHING_TESTED
        elif problems:
            for unit, why in problems.items():
                self.result_.notes.append(f"{unit}: {why}")
                yield NonFatalError(f"{unit}: not fuzzed: {why}")

    def _replay_corpus(self) -> Iterator[Any]:
        yield PhaseStarted(Phase.REPLAYING, str(getattr(self.corpus, "path", "corpus")))
        items = self.corpus.entries()
        for problem in self.corpus.problems:
            yield NonFatalError(f"skipped {problem}")
        others = [(p, e) for p, e in items if e.kind != self.subject.kind]
        for path, entry in others:
            yield NonFatalError(f"not replayed by this campaign: {path} is a {entry.kind} entry "
                                f"(fuzz replay --corpus replays every kind)")
        mine = [(p, e) for p, e in items if e.kind == self.subject.kind]
        self.result_.known = {e.signature: e for _, e in items}
        if mine:
            self.result_.replayed = self.subject.replay(mine, self)

    def slice_end(self, index: int) -> tuple[Optional[float], Optional[int]]:
        """When unit ``index``'s part of the budget ends: (deadline, cumulative executions)."""
        seconds, examples = self._slices
        self.budget.start()
        deadline = self.budget.started + sum(seconds[:index + 1]) if seconds is not None else None
        return deadline, (sum(examples[:index + 1]) if examples is not None else None)

    def _round_counts(self, left: Optional[int], first: bool) -> list[int]:
        """The sizes of one round's new orders (:data:`ROUND_ORDERS` of ``order_size`` cases, less
        the orders still in line; a unit's first round is one order, so the subject learns what its
        first pass built before it plans more), fewer and smaller when only ``left`` executions
        remain to plan."""
        size = max(1, int(self.subject.order_size))
        orders = 1 if first else max(ROUND_ORDERS, 2 * getattr(self.pool, "workers", 1)) - len(self._line.waiting())
        whole = max(0, orders) * size
        total = whole if left is None else max(0, min(left, whole))
        return [min(size, total - start) for start in range(0, total, size)]

    def _fuzz_unit(self, index: int, unit: str) -> Iterator[Any]:
        """Prepare and fuzz one unit; returns None, or why nothing could be fuzzed."""
        subject, budget = self.subject, self.budget
        deadline, examples = self.slice_end(index)
        yield PhaseStarted(Phase.PROBING if len(self.units) > 1 or subject.probes else Phase.FUZZING, unit)
        problem = yield from subject.begin(unit, self)
        yield from self._settle()
        if problem is not None:
            return problem
        yield PhaseStarted(Phase.FUZZING, unit)
        empty = 0
        ran_any = False
        first = True
        rate = 0.0  # executions per second of the last round
        while True:
            reason = budget.stop_reason(self.tally.executions)
            if reason is not None:
                self.stop_reason = reason
                break
            if deadline is not None and time.monotonic() >= deadline:
                break  # this unit's slice is over; the next unit gets its own
            if examples is not None and self.tally.executions >= examples:
                break
            if self._max_failures_reached():
                break
            left = (examples - self.tally.executions - self._line.outstanding()) if examples is not None else None
            ran = subject.turn(unit, self, left)
            settle_now = True
            if ran is None:
                counts = self._round_counts(left, first)
                if deadline is not None and examples is None and rate:
                    # this unit's slice of the budget: a round that would outlast it is cut to fit
                    fits = int(rate * (deadline - time.monotonic()) / max(1, subject.order_size)) + 1
                    counts = counts[:max(1, fits)]
                room = None if left is None else max(0, left - sum(counts)) // max(1, len(counts))
                started_round = time.monotonic()
                if not first and self._settling_due() and self._settles_beside(examples):
                    ran = yield from self._settle_beside(unit, counts, deadline, None)
                else:
                    # the budget's deadline is hard; this unit's share ends once its orders running finish
                    ran = self.run_round(unit, counts, deadline, room=room)
                first = False
                rate = ran / max(1e-3, time.monotonic() - started_round)
                # what this round found is settled beside the next one, the workers busy meanwhile
                settle_now = not self._settles_beside(examples)
            empty = 0 if ran else empty + 1
            if empty >= EMPTY_ROUNDS:
                break
            ran_any = ran_any or bool(ran)
            problem = subject.after_round(unit, self, ran)
            if problem is not None and not ran_any:
                return problem
            if settle_now:
                yield from self._settle()
            if self.elapsed() - self._last_progress >= PROGRESS_EVERY:
                self._last_progress = self.elapsed()
                yield self._progress(Phase.FUZZING, unit)
        self._file(self._line.drain())  # what came back behind an order cut off is filed too
        yield from self._settle()  # what the last rounds found
        subject.end(unit, self)
        if not ran_any and empty >= EMPTY_ROUNDS:
            return f"nothing to generate: {subject.nothing_to_generate}"
        return None

    def wrap_up(self, interrupted: bool) -> Iterator[Any]:
        if interrupted:
            # what the line holds when a Ctrl-C cut a round: an input a worker hung or died on
            # (it cost its timeout) in an order sent again, results behind an unfinished order
            self._file(self._line.drain())
        else:
            yield from self._settle()
        why = "interrupted" if interrupted else "the budget ran out"
        self.subject.fold(self.book.pending, "the run was interrupted" if interrupted else why, self)
        for finding in self.book.pending:
            finding.shrink_note = f"not confirmed or minimized: {why} first"
            self.result_.unconfirmed += 1
        self.book.pending.clear()
        for finding in self.book.unannounced():
            yield self.book.announce(finding)

    def result(self) -> CampaignResult:
        r = self.result_
        r.executions = self.tally.executions
        r.elapsed_s = self.elapsed()
        r.ignored = self.book.ignored
        if r.timeline and r.timeline[-1][1] != r.executions:
            r.timeline.append((r.elapsed_s, r.executions))
        r.findings = self.book.values()
        r.stop_reason = self.stop_reason
        if self.pool is not None:
            from fuzzer.backends import describe, notes

            r.backend = describe(self.pool)
            r.notes += [note for note in notes(self.pool) if note not in r.notes]  # (said once)
        if r.executions == 0 and r.problem is None and not r.findings and self.stop_reason not in (
                StopReason.INTERRUPTED, StopReason.NOTHING_TESTED) and not r.replayed:
            r.problem = "nothing ran (the budget ended before anything could be tested)"
        self.subject.wrap_up(self)
        return r

    def exit_code(self, result: CampaignResult) -> int:
        return campaign_exit_code(findings=len(result.findings), corpus_failing=bool(result.corpus_failing),
                                  nothing_tested=result.problem, interrupted=self.interrupted)


__all__ = ["CampaignJob", "CampaignSettings"]
