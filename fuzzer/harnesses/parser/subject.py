"""The parser harness's half of a campaign (``fuzz campaign``): the engine's one loop over a
:class:`ParserSubject`.

What is the parser's own: its units are the tools (each probed for the formats the target reads
before it is fuzzed, the next one's probes built ahead in a thread); an order is a planned set of
sample families its worker builds, runs and judges (:mod:`fuzzer.harnesses.parser.orders`); a turn
between rounds may go to the coverage-guided exploration arm, and a share of the time to the slow
probe. A failure is keyed by its oracle's signature, then:

* a rejection keyed without its format joins the finding of its signature only once it is shown to
  fail for the same reason in both formats (:mod:`fuzzer.harnesses.parser.across_formats`);
* a corruption filed under a finding keyed by where the damage was made is traced first (the same
  damage on another path is another bug), and a confirmed corruption is re-keyed by its path
  (:mod:`fuzzer.harnesses.parser.path_routing`);
* a failure that needs earlier inputs is filed with the finding of state kept between calls;
* a hang stuck where another one is, or shown to be a super-linear growth met too late, is that
  finding (:mod:`fuzzer.harnesses.parser.slow_findings`).

Budget, rounds, confirming in a fresh worker, the shrink window, announcing and Ctrl-C are the
engine's (:class:`fuzzer.engine.campaign.CampaignJob`), the same as every harness's.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Any, Callable, Iterator, Optional

from corpus.signature import format_less, history_signature, same_hang
from fuzzer.engine.confirm import FLAKY, HISTORY, UNKNOWN
from fuzzer.engine.events import FormatsProbed, Phase, StopReason
from fuzzer.engine.subject import Failure, Subject
from fuzzer.harnesses.parser.across_formats import AcrossFormats, FormatRoutes
from fuzzer.harnesses.parser.drawn import ENGINE, PLANNING, WORKERS, large, order_size
from fuzzer.harnesses.parser.explore import Explorer, source_tokens
from fuzzer.harnesses.parser.findings import Finding
from fuzzer.harnesses.parser.damage import coarse_damage
from fuzzer.harnesses.parser.oracle import Oracle, Verdict
from fuzzer.harnesses.parser.orders import check_generated, prepare_for_workers, text_of
from fuzzer.harnesses.parser.path_routing import PathRouting, keeps_path_of
from fuzzer.harnesses.parser.shrink import FindingShrinker, size_key
from fuzzer.harnesses.parser.slow_findings import SlowFindings, SlowShare
from fuzzer.harnesses.parser.tool import ToolCampaign, includes_valid, resolve_operators
from fuzzer.harnesses.parser.tools_ahead import ToolsAhead

#: Most passing inputs re-run per order to catch nondeterminism.
RERUNS_PER_BATCH = 8
#: Verdicts that depend on the truth: a history-dependent one is keyed by "history", not damage.
_TRUTH_VERDICTS = (Verdict.CORRUPTION, Verdict.FALSE_REJECT, Verdict.MISSED_ANOMALY)
#: Verdicts not confirmed by running the input again: a hang costs a timeout, a nondeterminism is
#: about two runs already, a slow finding was measured at several sizes.
_NOT_CONFIRMED = (Verdict.HANG, Verdict.NONDETERMINISM, Verdict.SLOW)


class ParserSubject(AcrossFormats, Subject):
    """``fuzz campaign``'s subject (see the module docstring). ``tool_campaign``: called for the
    class that fuzzes one tool (a hook for tests that watch what it executes)."""

    kind = "parser"
    probes = True
    nothing_to_generate = "no selected anomaly class or operator applies to these calls"

    def __init__(self, registry: Any, settings: Any, pool: Any, result: Any,
                 tool_campaign: Callable[[], type] = lambda: ToolCampaign):
        self.registry, self.settings, self.pool, self.result = registry, settings, pool, result
        self.label = settings.target
        self.tool_campaign = tool_campaign
        self.oracles = {level: Oracle(registry, level)
                        for level in {settings.level} | {settings.of(t, "level") for t in settings.tools}}
        self.operators = resolve_operators(settings.anomalies)
        self.include_valid = includes_valid(settings.anomalies)
        self.job: Any = None
        self.shrinkers: dict = {}
        self.tool: Optional[ToolCampaign] = None  # the tool being fuzzed
        self.explorer: Optional[Explorer] = None
        self._ahead: Any = None  # ToolsAhead: the next tool, its probes being built
        self._ahead_started = False
        self.slowness = SlowFindings(self)
        self._slow: Any = None  # the slow probe of the tool being fuzzed
        self._slow_share: Optional[SlowShare] = None
        self._arm = "structured"
        self._before = (0, 0)  # (findings, lines reached) before the round or turn running
        self.paths = PathRouting(self.oracles)  # corruptions filed by the path that made them
        #: where the rejections of each (format-less signature, format) go
        self._formats = FormatRoutes()
        self._formats.learn(settings.known)

    def size(self, case: Any) -> Any:
        return size_key(case)

    def shown_rank(self, finding: Any, case: Any) -> Any:
        """Smaller first; but a corruption is shown on a valid output when it happens on one,
        however small an anomalous one is: an anomaly may be rejected, so a parser that starts
        rejecting the anomalous input stored for it would pass replay with the bug still there."""
        anomalous = finding.verdict is Verdict.CORRUPTION and getattr(case, "anomaly_class", None) is not None
        return (anomalous, size_key(case))

    @property
    def order_size(self) -> int:
        """Samples per structured order: the batch size, more on a large pool
        (:func:`~fuzzer.harnesses.parser.drawn.order_size`; the pool's workers are known once it started)."""
        return order_size(self.settings.batch_size, getattr(self.pool, "workers", 1))

    @property
    def planning(self) -> str:
        """How orders are planned past the scheduler's first pass (:mod:`fuzzer.harnesses.parser.drawn`):
        by the workers on a large pool, by the engine's scheduler on a small one, unless the
        settings say otherwise."""
        chosen = self.settings.planning
        if chosen is not None:
            if chosen not in PLANNING:
                raise ValueError(f"planning must be one of {', '.join(PLANNING)}, not {chosen!r}")
            return chosen
        return WORKERS if large(getattr(self.pool, "workers", 1)) else ENGINE

    def settings_json(self) -> dict:
        s = self.settings
        return {"tools": list(s.tools), "level": s.level, "formats": s.formats, "anomalies": s.anomalies}

    # -- the campaign's shape ----------------------------------------------------------------------
    def units(self) -> list[str]:
        return list(self.settings.tools)

    def limits(self, unit: str) -> dict:
        own = self.settings.per_tool.get(unit, {})
        return {key: own[key] for key in ("budget_s", "max_examples") if key in own}

    def start(self, job: Any) -> None:
        self.job = job
        self.shrinkers = {level: FindingShrinker(job.settle_run, oracle, self.registry)
                          for level, oracle in self.oracles.items()}
        if not getattr(self.pool, "started", True):  # (a pool started before: nothing to inherit)
            prepare_for_workers(self.registry, list(self.settings.tools))  # inherited by every worker forked

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.take(-1)  # a thread still building the next tool's probes: done with it

    def new_tool_campaign(self, index: int, name: str) -> ToolCampaign:
        s = self.settings
        level = s.of(name, "level")
        return self.tool_campaign()(registry=self.registry, tool_name=name, level=level,
                                    formats=s.of(name, "formats"), operators=self.operators,
                                    include_valid=self.include_valid, seed=s.of(name, "seed") + index,
                                    oracle=self.oracles[level], run=self.pool.run, tally=self.job.tally,
                                    on_failure=self.on_failure)

    def _explorer(self, name: str, index: int) -> Explorer:
        from fuzzer.harnesses.parser.harness import module_file

        module = self.settings.target.split(":", 1)[0]
        path = module_file(module, os.getcwd()) if not module.startswith("git:") else None
        explorer = Explorer(seed=self.settings.seed + index, tool=name, dictionary=source_tokens(path))
        explorer.lines = self.result.lines  # one coverage set for every tool of the job
        return explorer

    def replay(self, items: list, job: Any) -> list:
        from fuzzer.harnesses.parser.harness import replay_entries

        self._formats.learn(e for _, e in items)
        deadline = job.budget.deadline

        def run(texts: list, **kwargs: Any) -> list:
            """The pool's run within the budget (--budget is a limit: a corpus of hangs costs a
            timeout each); entries not reached are unjudged."""
            kwargs["deadline"] = kwargs.get("deadline") or deadline
            return self.pool.run(texts, **kwargs)

        return replay_entries(items, run=run, registry=self.registry, level=self.settings.level,
                              timeout=self.pool.spec.timeout)

    def begin(self, unit: str, job: Any) -> Iterator[Any]:
        """Probe the formats ``unit`` (a tool) is read in, run the recorded seeds of it, and plan
        its structured arm; None, or why nothing of it can be fuzzed."""
        s, r = self.settings, self.result
        index = s.tools.index(unit)
        deadline, examples = job.slice_end(index)
        tool = self._ahead.take(index) if self._ahead is not None else None
        if tool is None:
            tool = self.new_tool_campaign(index, unit)
        explorer = self._explorer(unit, index) if s.explore else None
        tool.explorer, tool.class_weights, tool.planning = explorer, s.class_weights, self.planning
        self.tool, self.explorer, self._ahead_started = tool, explorer, examples is not None
        report = tool.probe(deadline, None if examples is None else max(0, examples - job.tally.executions))
        prefix = f"{unit}: " if len(s.tools) > 1 else ""
        r.supported.update({f"{prefix}{k}": v for k, v in report.supported.items()})
        r.unsupported.update({f"{prefix}{k}": v for k, v in report.unsupported.items()})
        r.failing.update({f"{prefix}{k}": v for k, v in report.failing.items()})
        r.assumed += [line for line in report.assumed if line not in r.assumed]
        yield FormatsProbed(supported=dict(report.supported), unsupported=dict(report.unsupported), label=unit)
        yield from job.settle()
        yield job.progress(Phase.PROBING, unit)  # the bar counts the probes and what they found
        if report.contract_problem:
            return report.contract_problem
        if not report.supported:
            if job.budget.time_up():
                job.stop_reason = StopReason.BUDGET
                return "the budget ran out while probing the formats"
            probed = ", ".join(report.unsupported) or "none"
            first = f"; first rejection: {report.first_rejection}" if report.first_rejection else ""
            return f"no supported format: every valid probe was rejected or answered with no call ({probed}){first}"
        seeds = [seed for seed in s.seeds if seed.tool in ("", unit)]
        for start in range(0, len(seeds), s.batch_size):
            tool.execute(seeds[start:start + s.batch_size], job.budget.deadline, 0)
            yield from job.settle()
        if explorer is not None:
            for seed in seeds:
                explorer.add_seed(seed.text, seed.format)
            for replayed in r.replayed:
                explorer.add_seed(replayed.entry.text, replayed.entry.format or "raw")
        tool.visit(report)
        self.slowness.dictionary = list(explorer.dictionary) if explorer is not None else []
        self._slow = self.slowness.probe(job, seed=s.seed + index) if s.slow else None
        self._slow_share = SlowShare(s.slow_share)
        return None

    def _prepare_next(self, unit: str) -> None:
        """Build the next tool's probes in a thread while this tool's orders run: the engine
        mostly waits for the workers then, and otherwise they would wait for it (a twentieth of a
        54-tool campaign). Not under an execution limit, whose probes depend on what is left."""
        self._ahead_started = True
        tools = self.settings.tools
        after = tools.index(unit) + 1
        if after >= len(tools):
            return
        if self._ahead is None:
            self._ahead = ToolsAhead()
        self._ahead.start(after, self.new_tool_campaign(after, tools[after]))

    def plan(self, unit: str, count: int, number: int, room: Optional[int] = None) -> Any:
        return self.tool.order(count, number, RERUNS_PER_BATCH if room is None else min(RERUNS_PER_BATCH, room))

    def file(self, order: Any, result: Any, job: Any) -> int:
        check_generated(result)
        return self.tool._take(result, order)

    def file_lost(self, order: Any, lost: Any, job: Any) -> int:
        return self.tool._take_lost(lost)

    def round_done(self, unit: str, orders: list, results: list, job: Any) -> None:
        self.tool.feedback(orders, results)
        if not self._ahead_started:
            self._prepare_next(unit)

    def turn(self, unit: str, job: Any, left: Optional[int]) -> Optional[int]:
        """The exploration arm's turn, when it wants one (coverage feedback, seeds, havoc)."""
        explorer = self.explorer
        self._before = (len(job.book), len(explorer.lines) if explorer is not None else 0)
        if explorer is None or not explorer.wants_turn():
            self._arm = "structured"
            return None
        self._arm = "exploration"
        size = self.settings.batch_size
        batch = explorer.batch(size if left is None else min(left, size))
        return self.tool.execute(batch, job.budget.deadline, 0) if batch else 0

    def after_round(self, unit: str, job: Any, ran: int) -> Optional[str]:
        """Credit the arm that ran with what it reached; give the slow probe its share of time."""
        explorer, slow, share = self.explorer, self._slow, self._slow_share
        if explorer is None:
            return None
        found, reached = self._before
        explorer.credit(self._arm, ran, len(explorer.lines) - reached + len(job.book) - found)
        if slow is not None and explorer.seeds and share.has_time() and not job.budget.time_up():
            started = time.monotonic()
            self.slowness.probe_once(job, slow, explorer, unit)
            share.spent += time.monotonic() - started
        return None

    def end(self, unit: str, job: Any) -> None:
        if self.explorer is not None:
            self.result.exploration_share[unit] = self.explorer.share()

    # -- filing a failure ----------------------------------------------------------------------
    def on_failure(self, failure: Any) -> None:
        """A tool's failure (a :class:`fuzzer.harnesses.parser.tool.Failure`): keyed by its oracle,
        routed across formats, offered to the finding book."""
        sample, outcome, judgment = failure.sample, failure.outcome, failure.judgment
        level = self.settings.of(sample.tool, "level") if sample.tool else self.settings.level
        signature = failure.signature  # (as the worker's oracle keyed it: the same oracle)
        if signature is None:
            signature = self.oracles[level].signature(sample, judgment, outcome)
        offered = Failure(sample, outcome, judgment.verdict, signature, judgment.reason, history=failure.history,
                          count=failure.count, extra=(judgment, level, None))
        if format_less(signature) and self._across_formats(offered):
            return
        self.job.offer(offered)

    def new_finding(self, failure: Failure, job: Any) -> Finding:
        sample, signature = failure.case, failure.signature
        judgment, level, match_id = failure.extra
        s = self.settings
        finding = Finding(signature=signature, verdict=judgment.verdict, reason=judgment.reason, sample=sample,
                          outcome=failure.outcome, target=s.target, level=level, reject_on=tuple(s.reject_on),
                          reproduce_dir=s.reproduce_dir, match_id=match_id,
                          formats=[sample.format] if judgment.verdict is Verdict.FALSE_REJECT else [],
                          variants=[sample.variant] if judgment.verdict is Verdict.FALSE_REJECT else [],
                          timeout=self.pool.spec.timeout if judgment.verdict is Verdict.HANG else None)
        if format_less(signature):
            self._formats.decide(signature.id, sample.format, signature.id)
        return finding

    def same_as(self, failure: Failure, job: Any) -> Optional[Finding]:
        """One stuck loop caught in a helper it calls, or a hang shown to be a slow growth: one finding."""
        frames = failure.outcome.frames
        if failure.verdict is not Verdict.HANG or not frames:
            return None
        return next((f for f in job.book.values() if f.verdict is Verdict.HANG
                     and same_hang(f.outcome.frames, frames)), None) or self.slowness.grown_hang(frames)

    def divert(self, found: Any, failure: Failure, job: Any) -> bool:
        self._note_variant(found, failure.case)
        return found.signature.id != failure.signature.id and "|path|" in found.signature.key and \
            self.paths.suspect(found, failure)

    def ignored(self, failure: Failure) -> frozenset:
        """The tool's own ignore list; and this failure's signature when the one it had before keys
        left out what a message copies of the input and a rejection's format is ignored (an ignore
        list written then still silences the bug it names)."""
        sample = failure.case
        own = frozenset(self.settings.of(sample.tool, "ignore") or ()) if sample.tool else frozenset()
        ignore = own | frozenset(self.settings.ignore)
        if not ignore or failure.signature.id in ignore:
            return own
        judgment, level, _ = failure.extra
        legacy = self.oracles[level].legacy_signature(sample, judgment, failure.outcome)
        return own | {failure.signature.id} if legacy.id in ignore else own

    def before_settling(self, job: Any) -> None:
        self._check_formats(job)
        self.paths.trace_suspects(job)

    def after_settling(self, job: Any) -> None:
        self._check_formats(job)

    def settling_due(self, job: Any) -> bool:
        return bool(self.paths.suspects or self._formats.pending)

    # -- showing a finding again ---------------------------------------------------------------
    def confirmable(self, finding: Finding) -> bool:
        return finding.verdict not in _NOT_CONFIRMED

    def payload(self, sample: Any) -> str:
        return sample.text

    def history(self, finding: Finding, history: tuple, job: Any) -> tuple:
        if finding.verdict in _TRUTH_VERDICTS and job.book.find(history_signature(finding.verdict.value).id):
            # A state bug of this verdict is already explained: a failure that does not happen
            # alone joins it (one fresh run), without replaying thousands of earlier inputs again.
            return ()
        return tuple(text_of(item) for item in history)

    def same(self, finding: Finding, sample: Any, oracle_id: Optional[str] = None) -> Callable[[Any], bool]:
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

    def confirmed(self, finding: Finding, status: str, earlier: tuple, job: Any) -> Optional[str]:
        if status == HISTORY:
            finding.history = earlier
            finding.notes.append(f"history-dependent: fails only after {len(earlier)} earlier input(s) in the "
                                 "same process (they are part of the reproducer)")
            if finding.verdict in _TRUTH_VERDICTS:
                self._rekey(finding, self._state_signature(finding, job), job)
        elif status == FLAKY:
            finding.notes.append("not reproducible alone: it did not fail again in a fresh worker, nor after the "
                                 "inputs that ran before it (state kept from longer ago, or nondeterminism)")
            finding.reason += " (not reproducible in a fresh worker)"
            finding.shrink_note = finding.shrink_note or "not shrunk: it did not happen again when it ran again"
            if finding.verdict in _TRUTH_VERDICTS:
                self._rekey(finding, self._state_signature(finding, job), job)
        elif status != UNKNOWN and finding.verdict is Verdict.CORRUPTION:  # it fails alone: filed by where
            from fuzzer.harnesses.parser.harness import keyed_by_maker

            oracle = self.oracles[finding.level]
            judgment = oracle.judge(finding.sample, finding.outcome)
            keyed, by_maker = keyed_by_maker(oracle, finding.sample, judgment, finding.outcome, job.settle_run,
                                             deadline=job.budget.deadline)
            twin = self.paths.same_maker(keyed, by_maker, job.book, besides=finding) \
                if "|path|" in keyed.key and job.book.find(keyed.id) is None else None
            self._rekey(finding, twin.signature if twin is not None else keyed, job)  # (merged there: one bug)
        return None

    def _state_signature(self, finding: Finding, job: Any) -> Any:
        """Where a failure that needs earlier inputs is filed: with the finding of state kept between
        calls of its kind (reduced to the inputs it needs, or not reproducible from the recent ones),
        if there is one — one bug (a cache, a global buffer), whatever each input it spoils comes
        back as, a corruption here, a rejection there."""
        known = next((f for f in job.book.values() if f is not finding and f.signature.key.endswith("|history")
                      and bool(f.history) == bool(finding.history)), None)
        return known.signature if known is not None else history_signature(finding.verdict.value,
                                                                            alone=not finding.history)

    @staticmethod
    def _rekey(finding: Finding, signature: Any, job: Any) -> None:
        """File ``finding`` under ``signature`` (merged into the finding already there); shrinking
        keeps the oracle's signature it had."""
        if signature.id != finding.signature.id:
            finding.match_id = finding.match_id or finding.signature.id
            job.book.rekey(finding, signature)

    # -- shrinking -----------------------------------------------------------------------------
    def shrink(self, finding: Finding, job: Any, window: float) -> bool:
        if finding.verdict is Verdict.HANG and self.slowness.hang_grows(finding, job):
            return False  # a slow finding (announced as such), not a hang
        return self._shrink(finding, finding.sample, finding.outcome, job, window)

    def improve(self, finding: Finding, candidate: tuple, job: Any, window: float) -> bool:
        return self._shrink(finding, *candidate, job, window)

    def _shrink(self, finding: Finding, sample: Any, outcome: Any, job: Any, window: float) -> bool:
        """Shrink ``finding`` (or a smaller candidate for it); True when the shown input changed."""
        if finding.history:
            finding.shrink_note = "not shrunk: it is history-dependent (its earlier inputs were reduced instead)"
            return False
        if finding.verdict is Verdict.SLOW:
            return False  # the probe already reduced the fragment
        oracle = self.oracles[finding.level]
        match = finding.oracle_id
        if sample is not finding.sample and finding.match_id is not None:
            # a candidate filed here by where it failed may carry another oracle signature: shrink
            # it towards its own, and keep that one if it is adopted
            judgment = oracle.judge(sample, outcome)
            if judgment.failed:
                match = oracle.signature(sample, judgment, outcome).id
        keeps_path = keeps_path_of(finding, oracle, job)
        if keeps_path is not None and sample is not finding.sample and not keeps_path(sample, outcome):
            return False  # a smaller input of the same damage on another path (not traced before): not this bug's
        shrunk = self.shrinkers[finding.level].shrink(sample, outcome, finding.verdict, match, budget_s=window,
                                                      hang_timeout=finding.timeout, also=keeps_path)
        if finding.minimized is not None and self.shown_rank(finding, shrunk.sample) >= \
                self.shown_rank(finding, finding.best):
            return False
        alone, traceback = self._fails_alone(finding, shrunk.sample, match, job)
        if not alone:
            if finding.minimized is None:
                finding.shrink_note = (
                    "not minimized: the budget ran out before the smaller input could be run alone"
                    if job.budget.time_up() else
                    "not minimized: the smaller inputs shrinking found fail only after other inputs in the same "
                    "process (the target keeps state between calls); the input shown fails alone")
            return False
        if sample is not finding.sample:
            finding.sample, finding.outcome = sample, outcome  # report the input it came from
            if finding.match_id is not None:
                finding.match_id = match
        finding.adopt_minimized(shrunk.sample, shrunk.observation, oracle, complete=shrunk.complete,
                                note=shrunk.note, one_minimal=shrunk.one_minimal)
        if traceback:
            # formatted by the fresh worker that ran the minimized input: the report's traceback
            # is the input shown, not the first one that crashed at that place
            finding.traceback = traceback
        return True

    def _fails_alone(self, finding: Finding, sample: Any, match: str, job: Any) -> tuple[bool, Optional[str]]:
        """Does a shrunk input still fail (the same way) in a fresh worker? Shrinking runs its
        candidates in the campaign's workers, where a target that keeps state (a cache, a buffer)
        can fail on a candidate only because of what ran before it: such a "minimal" input shows
        nothing when its reproduce command runs it alone. Not checked where one run costs a
        timeout (hang, slow) or the finding is not about one input alone; when the budget leaves
        no time to run it, the smaller input is not shown either. With the answer, the traceback
        the fresh run formatted (None when it was not run or did not crash)."""
        if not self.settings.confirm or sample.text == finding.sample.text or finding.verdict in _NOT_CONFIRMED:
            return True, None
        outcome = job.settle_run([sample.text], deadline=job.budget.deadline, fresh=True)[0]
        if outcome is None or not self.same(finding, sample, match)(outcome):
            return False, None  # another outcome alone, or no time left to tell
        return True, getattr(outcome, "traceback", None)

    def after_shrink(self, finding: Finding, job: Any) -> None:
        """Filed by the functions its minimized input runs: the input the corpus stores, which
        replay and `corpus add` trace, and which another run (a gate's) shrinks the same bug to —
        the input found first runs whatever else it happened to hold."""
        if "|path|" not in finding.signature.key:
            return
        from fuzzer.harnesses.parser.harness import shown_path_signature

        keyed = shown_path_signature(self.oracles[finding.level], finding, job.settle_run,
                                     deadline=job.budget.deadline)
        if keyed is not None:  # else not traced in time: it keeps the key it has
            self._rekey(finding, keyed, job)

    def fold(self, pending: list, why: str, job: Any) -> None:
        """Corruptions the budget left unconfirmed are keyed by the exact characters altered (only
        confirming files one by where it happens), so one bug that damages many inputs — a stale
        cache, a repair pass — showed as dozens of findings. Those of one tool, level and kind of
        damage are folded into the first (counted there, and said so)."""
        first_of: dict = {}  # (tool, level, kind of damage) -> the first such finding
        folded: dict = {}  # id(first) -> [first, words, how many were folded into it]
        for finding in list(pending):
            if finding.verdict is not Verdict.CORRUPTION or "|path|" in finding.signature.key or finding.history \
                    or finding.merged_into is not None:
                continue
            judgment = self.oracles[finding.level].judge(finding.sample, finding.outcome)
            kind, words = coarse_damage(judgment.key, judgment.reason)
            first = first_of.setdefault((finding.sample.tool, finding.level, kind), finding)
            if first is not finding:
                job.book.merge(finding, first)
                folded.setdefault(id(first), [first, words, 0])[2] += 1
        for first, words, n in folded.values():
            first.notes.append(f"{n} other failure(s) with the same kind of damage ({words}) are counted here: "
                               f"they were not confirmed before {why}, so it is not known whether they are this bug")

    def wrap_up(self, job: Any) -> None:
        from fuzzer.harnesses.parser.hints import reject_on_hints

        r = self.result
        r.lines.update(getattr(job.pool, "lines", ()))  # also what confirming and shrinking reached
        r.lines.update(getattr(job._own_settle_pool, "lines", ()))
        r.hints = reject_on_hints(r.findings, self.settings.target, self.settings.reject_on)


__all__ = ["ParserSubject", "RERUNS_PER_BATCH"]
