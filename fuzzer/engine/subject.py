"""The harness's half of a campaign: one reference under test, and how to test it.

The engine (:class:`fuzzer.engine.campaign.CampaignJob`) runs the same loop for every harness —
budget, rounds of orders, the finding book, confirmation in a fresh worker, the shrink window,
announcing, Ctrl-C — and asks a :class:`Subject` only what differs between harnesses: what its
workers serve, how an order of work is drawn and what its result holds, how a failure becomes a
finding, how a finding is shown again and shrunk. A new harness subclasses :class:`Subject`,
overrides what it needs, and registers a :class:`~fuzzer.engine.harness.Harness` that builds it:
no edit to the engine.

Words (DESIGN.md): a *case* is one input of the harness (a model output, a scenario, a script, a
stream); an *outcome* is what running it gave (decoded on the engine's side by the worker spec); a
:class:`Failure` is a failing case with its verdict and signature; a *unit* is a share of the
budget (the parser harness: one tool).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from fuzzer.engine.confirm import FLAKY, HISTORY


@dataclass(frozen=True)
class Failure:
    """One failing case, as a harness files it: what the finding book receives."""

    case: Any
    outcome: Any
    verdict: Any  # the verdict's word (a str, or a str Enum)
    signature: Any  # corpus.signature.Signature
    reason: str = ""
    #: The inputs run before it in its worker (payloads, oldest first); called only for a new signature.
    history: Callable[[], tuple] = tuple
    #: Failures of this signature it stands for (an order sends one per signature with a count).
    count: int = 1
    #: What else the harness keeps with it (the parser: its oracle's judgment).
    extra: Any = None


class Subject:
    """Defaults for every hook; a harness overrides what it needs (see the module docstring).

    Attributes the engine reads: ``kind`` (the harness, = corpus entry kind), ``label`` (the
    reference under test), ``pool`` (the worker pool or back end: ``start``, ``close``, ``run``,
    ``run_orders``, ``workers``), ``result`` (the harness's
    :class:`~fuzzer.engine.campaign_result.CampaignResult`), ``order_size`` (cases per order)."""

    kind = "subject"
    label = ""
    order_size = 32
    #: Plan the next round's orders while this round's run (the plan is costly, and the workers
    #: would wait for it); the plan must not depend on this round's results then.
    plans_ahead = False
    #: ``begin`` probes what the reference reads (the phase says "probing" even for one unit).
    probes = False
    #: Why a unit whose every round built nothing could not be fuzzed ("nothing to generate: ...").
    nothing_to_generate = "no selected input kind applies"

    def size(self, case: Any) -> Any:
        """The order of inputs "smaller first" (any comparable value), or None: then a smaller input
        of a bug already found is not kept to shrink again (:meth:`improve`)."""
        return None

    def shown_rank(self, finding: Any, case: Any) -> Any:
        """The order of the inputs ``finding`` may show, best first: by default :meth:`size`."""
        return self.size(case)

    # -- the campaign's shape ----------------------------------------------------------------------
    def units(self) -> list[str]:
        """The shares of the budget, visited one after another (the parser: its tools)."""
        return [self.label]

    def limits(self, unit: str) -> dict:
        """A unit's own ``budget_s`` / ``max_examples`` (replacing its equal share), if it has any."""
        return {}

    def start(self, job: Any) -> None:
        """Before the workers start (they inherit what is prepared here)."""

    def close(self) -> None:
        """The job is over, however it ended (the engine closes the pool itself)."""

    def started(self, job: Any) -> Iterator[Any]:
        """After the workers started, before any unit: events to yield (checks of what loaded).
        A problem that makes the run test nothing is set on ``job.result_.problem``."""
        return iter(())

    def replay(self, items: list, job: Any) -> list:
        """Replay corpus entries of this harness's kind through the running pool, within the
        budget (a ``--corpus`` given to the campaign); one Replayed each."""
        return []

    def begin(self, unit: str, job: Any) -> Iterator[Any]:
        """Prepare a unit (the parser: probe the formats); returns None, or why nothing of the unit
        can be fuzzed (a generator: it may yield events)."""
        return None
        yield  # pragma: no cover - a generator

    def plan(self, unit: str, count: int, number: int, room: Optional[int] = None) -> Any:
        """Order ``number`` of the campaign: ``count`` cases of ``unit``. ``room``: executions the
        order may run beyond its cases (re-runs), None when no execution limit applies."""
        raise NotImplementedError

    def file(self, order: Any, result: Any, job: Any) -> int:
        """File one order's result: count its executions (``job.tally``), hand its failures to
        ``job.offer``. Returns the executions it counts."""
        raise NotImplementedError

    def file_lost(self, order: Any, lost: Any, job: Any) -> int:
        """A case an order's worker hung or died on (the pool's Lost): judge it, offer its
        failure. Returns the executions it counts (1; 0 when nothing was pinned)."""
        return 0

    def round_done(self, unit: str, orders: list, results: list, job: Any) -> None:
        """After a round's results are filed (the parser tells its scheduler what was built)."""

    def turn(self, unit: str, job: Any, left: Optional[int]) -> Optional[int]:
        """Another arm's turn instead of a round of orders (the parser's coverage-guided
        exploration): the executions it ran, or None when it does not want one now."""
        return None

    def after_round(self, unit: str, job: Any, ran: int) -> Optional[str]:
        """After each round or turn (the parser's slow probe). A reason returned ends the unit as
        one that could test nothing (an agent loop no episode of which could run)."""
        return None

    def end(self, unit: str, job: Any) -> None:
        """After the unit's last round."""

    # -- findings ------------------------------------------------------------------------------
    def new_finding(self, failure: Failure, job: Any) -> Any:
        """The finding of a signature seen for the first time."""
        raise NotImplementedError

    def same_as(self, failure: Failure, job: Any) -> Optional[Any]:
        """A finding this failure belongs to although its signature differs (one stuck loop caught
        in another helper), or None."""
        return None

    def divert(self, found: Any, failure: Failure, job: Any) -> bool:
        """True when the failure is taken aside before it counts into ``found`` (the parser traces
        a path-keyed corruption's failures first: the same damage on another path is another bug)."""
        return False

    def ignored(self, failure: Failure) -> frozenset:
        """Signatures ignored for this failure beyond the job's (a tool's own ignore list)."""
        return frozenset()

    def before_settling(self, job: Any) -> None:
        """Before the pending findings are confirmed (the parser files what it took aside)."""

    def after_settling(self, job: Any) -> None:
        """After the pending findings were confirmed and shrunk (the parser decides what waited
        for a finding's smallest input)."""

    def settling_due(self, job: Any) -> bool:
        """Whether :meth:`before_settling` has work waiting (then the engine settles soon)."""
        return False

    def confirmable(self, finding: Any) -> bool:
        """Whether to run the finding's input again before it is reported (not a hang: that costs
        a timeout; not a nondeterminism: it is about two runs already)."""
        from fuzzer.engine.verdicts import info

        verdict = info(finding.verdict_name, self.kind)
        return verdict is None or not verdict.timed

    def payload(self, case: Any) -> Any:
        """What the workers run for ``case`` (confirming and shrinking send it alone)."""
        return case

    def same(self, finding: Any, case: Any) -> Callable[[Any], bool]:
        """Whether an outcome of ``case`` is ``finding``'s failure again."""
        raise NotImplementedError

    def history(self, finding: Any, history: tuple, job: Any) -> tuple:
        """The earlier inputs confirmation may replay before the finding's (payloads, oldest first)."""
        return history

    def confirmed(self, finding: Any, status: str, earlier: tuple, job: Any) -> Optional[str]:
        """What confirming said (``fuzzer.engine.confirm``): a failure that does not happen again
        is reported as such — never dropped, never a silent pass. The one exception is a subject's
        to make, returned as a note: the failure was no failure of the code under test (a hang that
        finished in time when run again: the engine withdraws it and says so in that note)."""
        if status == HISTORY:
            finding.history = earlier
            finding.notes.append(f"history-dependent: fails only after {len(earlier)} earlier input(s) in the "
                                 "same process (they are part of the reproducer)")
        elif status == FLAKY:
            finding.reproducible = False
            finding.notes.append("not reproducible: it did not fail again when its input ran again in a fresh worker")
            finding.shrink_note = finding.shrink_note or "not shrunk: it did not happen again when it ran again"
        return None

    def hang_that_did_not_hang(self, finding: Any, status: str, timeout: float, *, verb: str = "run") -> Optional[str]:
        """A hang whose input finished in time when run again (FLAKY) is no hang — a first run's
        one-time costs, a loaded machine: the note that withdraws it (:meth:`confirmed`), else None."""
        if status != FLAKY or finding.verdict_name != "hang":
            return None
        return (f"{finding.count} input(s) went past --timeout ({timeout:g} s) but finished in time when {verb} again: "
                f"not reported as a hang ({finding.signature.title})")

    def shrink(self, finding: Any, job: Any, window: float) -> bool:
        """Shrink ``finding`` within ``window`` seconds; True when the input it shows changed."""
        return False

    def improve(self, finding: Any, candidate: tuple, job: Any, window: float) -> bool:
        """Shrink a smaller input of the same bug (``candidate``: (case, outcome)); True when the
        finding now shows a smaller input."""
        return False

    def after_shrink(self, finding: Any, job: Any) -> None:
        """After a finding was shrunk (the parser re-keys a corruption by what its shown input runs)."""

    def fold(self, pending: list, why: str, job: Any) -> None:
        """Before the findings left unconfirmed are announced at the end (the parser folds
        corruptions of one kind of damage into one)."""

    def wrap_up(self, job: Any) -> None:
        """The run is over: fill what the harness's result reports beyond the engine's counts."""


__all__ = ["Failure", "Subject"]
