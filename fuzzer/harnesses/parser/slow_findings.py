"""Slow findings of a parser campaign: super-linear time, found by the slow probe or behind a hang.

Two ways lead here. The *slow probe* (:class:`~fuzzer.harnesses.parser.explore.SlowProbe`), given
a share of the fuzzing time, repeats a fragment of a seed (a character, a fence, a tag) at growing
sizes and fits the time: a growth faster than linear is a slow finding. And a *hang* may be the
same growth met too late: before a hang is shrunk, its input is probed for a fragment whose
repetition grows super-linearly far below the timeout; when one does, the hang is that slow
finding (reported once, as ``slow``, with the exponent; its count and stack go there, so a later
hang stuck in the same place is it too).

A slow finding is filed by where the time goes (a stack sampled from a long run), so one quadratic
loop reached through different fragments is one finding.
"""

from __future__ import annotations

import random
import time
from typing import Any, Optional

from corpus.signature import Signature, same_hang, slow_signature
from fuzzer.harnesses.parser.explore import EXPLORATION, TOKEN_PROBE_EVERY, SlowProbe
from fuzzer.harnesses.parser.findings import Finding
from fuzzer.harnesses.parser.oracle import Verdict
from fuzzer.harnesses.parser.outcome import Outcome
from strategies._internal.sample import Sample


def fragment_kind(fragment: str) -> str:
    """A stable name for a repeated fragment: its distinct characters, classified."""
    if fragment.isspace():
        return "whitespace"
    if all(c.isalnum() for c in fragment):
        return "letters or digits"
    return "".join(sorted(set(c for c in fragment if not c.isalnum())))[:8]


class SlowFindings:
    """The slow probe of a campaign and the slow findings it files into the job's finding book."""

    def __init__(self, subject: Any):
        self.subject = subject
        #: (frames, slow finding) of hangs shown to be a super-linear path met too late
        self._grown_hangs: list = []
        #: the exploration's dictionary of the tool being fuzzed (fragments to repeat)
        self.dictionary: list = []
        self._probes = 0
        self._token_seeds = random.Random(subject.settings.seed ^ 0x70C)

    def probe(self, job: Any, *, seed: int, run: Optional[Any] = None) -> SlowProbe:
        """The slow probe of a tool's fuzzing: it repeats the formats' structural tokens and the
        exploration's dictionary as well as single characters."""
        from fuzzer.harnesses.parser.explore import JSON_TOKENS, format_tokens

        pool = job.pool
        run = run or (lambda texts: pool.run(texts, deadline=job.budget.deadline, options=False))
        return SlowProbe(seed=seed, timeout=pool.spec.timeout, run=run,
                         fragments=self.dictionary or [*JSON_TOKENS, *format_tokens()])

    def probe_once(self, job: Any, slow: SlowProbe, explorer: Any, tool: str) -> None:
        """Time repetitions of a fragment of a seed; a super-linear growth becomes a slow finding."""
        text, fmt = explorer.seeds[explorer.random.randrange(len(explorer.seeds))]
        growth = slow.probe(text)
        self._probes += 1
        if growth is None and self._probes % TOKEN_PROBE_EVERY == 0:
            # now and then a token of the dictionary (a fence, a tag) on a seed drawn apart
            text, fmt = explorer.seeds[self._token_seeds.randrange(len(explorer.seeds))]
            growth = slow.probe_token(text)
        if growth is None:
            return
        self.file_growth(job, slow.reduce(growth), slow, fmt, tool)

    def file_growth(self, job: Any, growth: Any, slow: SlowProbe, fmt: str, tool: str) -> Optional[Finding]:
        """The slow finding of a (reduced) super-linear growth: a new one, or the one already
        filed where the time goes (counted once more). None when it is ignored or over the limit."""
        # Filed by where it spends its time: sample the stack of a longer run (again, earlier,
        # if that one finished first on a loaded machine; without frames it would be keyed by
        # the fragment alone).
        pool, book, settings = job.running_pool, job.book, self.subject.settings
        largest, after_s = growth.sampled(pool.spec.timeout)
        outcome, frames = None, ()
        for share in (1, 4):
            outcome, frames = pool.sample_stack(largest, after_s=max(0.002, after_s / share), options=False,
                                                deadline=job.budget.deadline)
            if frames:
                break
        kind = fragment_kind(growth.fragment)
        signature = slow_signature(frames=frames, fragment_kind=kind)
        found = book.find(signature.id)
        if found is None and not frames:
            # No stack caught (the run ended first, or the budget did): nothing tells this growth
            # from a slow finding of this tool on the same kind of fragment, which is then the
            # one bug seen again, not a second one keyed by the fragment alone.
            found = next((f for f in book.values() if f.growth is not None and f.sample.tool == tool
                          and fragment_kind(f.growth.fragment) == kind), None)
            if found is None:  # nor from the corpus's (a gate's campaign: it would be NEW, and is not)
                signature = _known_slow(settings.known, tool, kind) or signature
        elif found is None and signature.id not in {e.signature for e in settings.known}:
            # a stack caught where the corpus's entry of this growth had none: that entry, seen better
            signature = _known_slow(settings.known, tool, kind, stackless=True) or signature
        if found is not None:
            book.count(found)
            return found
        sample = Sample(text=growth.text(growth.counts[0]), format=fmt, anomaly_class=EXPLORATION,
                        operator="repetition", calls=None, tool=tool, truth_known=False,
                        description=f"{growth.fragment!r} repeated {growth.counts[0]} times in a seed")
        outcome = outcome or Outcome(kind="returned", calls=[], frames=frames)
        finding = Finding(signature=signature, verdict=Verdict.SLOW, reason=growth.describe(), sample=sample,
                          outcome=outcome, minimized=sample, minimized_outcome=outcome, target=settings.target,
                          level=settings.of(tool, "level"), reject_on=tuple(settings.reject_on),
                          reproduce_dir=settings.reproduce_dir, shrink_complete=slow.reduced_fully, growth=growth,
                          one_minimal=slow.reduced_fully,
                          shrink_note="" if slow.reduced_fully else
                          f"not minimized: the reduction of the text around the run stopped ({slow.stopped_because})")
        return finding if job.open_finding(finding) else None

    def hang_grows(self, finding: Finding, job: Any) -> bool:
        """A hang met by a super-linear path: probe the hang's input for a fragment whose
        repetition grows faster than linear at sizes far below the timeout (:meth:`SlowProbe.from_hang`);
        when one does, the hang is that slow finding met too late — reported once, as ``slow``,
        with the exponent (the hang counted there, and its stack too: a later hang there is it)."""
        if not self.subject.settings.slow or job.budget.time_up():
            return False
        from strategies._internal.formats import FORMATS

        probe = self.probe(job, seed=self.subject.settings.seed,
                           run=lambda texts: job.settle_run(texts, deadline=job.budget.deadline, options=False))
        fmt = FORMATS.get(finding.sample.format) if finding.sample.format in FORMATS else None
        tokens = [t for t in getattr(fmt, "envelope", {}).values() if isinstance(t, str) and t.strip()]
        growth = probe.from_hang(finding.sample.text, tokens)
        slow = None
        if growth is not None:
            slow = self.file_growth(job, probe.reduce(growth), probe, finding.sample.format, finding.sample.tool)
        if slow is None:
            return False
        job.book.merge(finding, slow, note=f"a {len(finding.sample.text):,}-character input of this growth hung "
                                           f"past the {job.pool.spec.timeout:g} s timeout; it is counted here")
        if finding.outcome.frames:
            self._grown_hangs.append((finding.outcome.frames, slow))
        return True

    def grown_hang(self, frames: Any) -> Optional[Finding]:
        """The slow finding a hang stuck in ``frames`` was shown to be (:meth:`hang_grows`)."""
        return next((slow for stuck, slow in self._grown_hangs if same_hang(stuck, frames)), None)


class SlowShare:
    """How much of a tool's fuzzing time the slow probe has had (``--slow`` share of it)."""

    def __init__(self, share: float):
        self.share = share
        self.started = time.monotonic()
        self.spent = 0.0

    def has_time(self) -> bool:
        return self.spent < self.share * (time.monotonic() - self.started)


def _known_slow(entries: Any, tool: str, kind: str, stackless: bool = False) -> Optional[Signature]:
    """The signature of a slow entry of ``tool`` the corpus holds whose growth repeats the same
    kind of fragment: what a growth whose stack was not caught is filed as. ``stackless``: only an
    entry filed with no stack caught either (keyed by the fragment's kind)."""
    for entry in entries:
        growth = (entry.scenario or {}).get("growth") if entry.verdict == "slow" else None
        if stackless and entry.what in (None, "", "slow"):
            continue
        if growth and entry.tool == tool and fragment_kind(growth.get("fragment", "")) == kind:
            return Signature(id=entry.signature, title=entry.title, key=entry.what or "")
    return None


__all__ = ["SlowFindings", "SlowShare", "fragment_kind"]
