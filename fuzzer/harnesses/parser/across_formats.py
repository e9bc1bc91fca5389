"""One rejection across formats: is it the same bug in each format, or a format's own?

A false_reject is keyed by where it was raised and its message, not by the format
(:func:`corpus.signature.rejection_signature`): the bundled naive parser's broken quote repair
rejects an apostrophe in a fenced output and in a DeepSeek one (whose payload is a fence) at the
same place with the same words — one bug, shown once, its formats listed. But the same place and
words can hide two causes: a parser whose one ``raise ValueError("no tool call")`` fires on an
upper-case fence tag in one format and on a tag only another format has. Splitting one bug is
the lesser harm than merging two, so a format joins a finding only when the reason is shown to
be the same. Every test is asked of both failures alike (the one the finding shows, the new
format's first), so the answer never depends on which came first. Each failure is

* *written in the other's format*: its calls, in its layout, with its own prose where it had
  prose (and the end-of-turn token it ended with, where that format has none);
* *given the other's calls*: its own recipe replayed with them (the same prose, end tokens and
  variations around another call list);
* *given the plainest calls* (``"a"`` for every string): when it still fails, what fails is its
  context, not its calls.

The reason is the same when both writings are rejected with the signature (what fails carries
into the other format), or, when neither failure's context fails on its own, both exchanges are:
a bug some context must bring out is found in both formats this way (the naive parser repairs
quotes only when text after the JSON made ``json.loads`` fail first, so a bare JSON output shows
the apostrophe bug only with text after it). Two causes that only contexts bring out (an
upper-case fence tag in one format, prose before the JSON in another) part, since neither context
carries into the other format.

Otherwise the new format's rejections are its own finding, keyed with the format
(:func:`corpus.signature.by_format`), which a later format with the same reason joins. The check
runs once per (signature, format) pair; later rejections of that pair go where the first went
(:class:`FormatRoutes`), and so do those of a run that follows a corpus.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional

from corpus.signature import by_format, format_less
from fuzzer.engine.interrupts import BALANCED
from fuzzer.harnesses.parser.oracle import Verdict
from strategies._internal.build import Unbuildable, build_sample, replay_recipe
from strategies._internal.formats import Rendered, Unrepresentable, get_format, render
from strategies._internal.sample import Sample
from strategies._internal.source import ReplaySource


#: What writing a sample's calls another way may raise: a recipe that no longer replays, calls a
#: format cannot write. Such a writing is left out.
_CANNOT_WRITE = (Unbuildable, Unrepresentable, ValueError, KeyError, IndexError, TypeError, RecursionError)


def written_in(sample: Sample, format: str, registry: Any, calls: Optional[list] = None) -> Optional[Sample]:
    """``sample``'s calls (or ``calls`` of them) written in ``format`` in the sample's layout, with
    the sample's own prose where it had prose (before the calls, after them), every other
    variation the format's commonest; None when that cannot be written (no recipe to read the
    layout from, calls the format cannot write)."""
    return _written(sample, _rendering(sample, registry), format, calls)


def _rendering(sample: Sample, registry: Any) -> Any:
    """The valid rendering ``sample`` was made from (its layout, its prose pieces), replayed from
    its recipe once for every writing of it; None when it has none."""
    if sample.recipe is None or sample.calls is None or sample.anomaly_class is not None:
        return None
    try:
        return replay_recipe(sample.recipe, registry, keep_rendered=True).rendered
    except _CANNOT_WRITE:
        return None


def _written(sample: Sample, original: Any, format: str, calls: Optional[list]) -> Optional[Sample]:
    if original is None:
        return None
    try:
        rendered = _with_prose_of(original, format, calls if calls is not None else sample.calls)
    except _CANNOT_WRITE:
        return None
    return Sample(text=rendered.text, format=format, anomaly_class=None, operator=None, calls=rendered.calls,
                  tool=sample.tool, description=f"the calls of a {sample.format} output written in {format}")


def _with_prose_of(original: Any, format: str, calls: list) -> Any:
    """``calls`` rendered in ``format`` in ``original``'s layout, the prose pieces ``original`` had
    before and after its calls put in the same places, and the end-of-turn token it ended with
    kept where ``format`` has none of its own (text after the calls, as prose is); a format whose
    prose is part of its payload gets its commonest prose instead."""
    fmt, was = get_format(format), get_format(original.format)
    chatter = [p for p in original.pieces if p.role == "chatter"]
    lay = original.layout
    ended = [p for p in original.pieces[-2:] if p.role == "envelope" and p.text in was.end_tokens] \
        if lay.end_token and not fmt.end_tokens else []
    if fmt.prose_inside or was.prose_inside or not (chatter or ended):
        return render(format, calls, ReplaySource(()), chatter=bool(chatter), layout=lay)
    plain = render(format, calls, ReplaySource(()), chatter=False, layout=lay)
    roles = [p.role for p in original.pieces]
    first_other = next((i for i, role in enumerate(roles) if role not in ("chatter", "reasoning")), len(roles))
    before = [p for p in original.pieces[:first_other] if p.role == "chatter"]
    after = [p for p in original.pieces[first_other:] if p.role == "chatter"] + ended
    trailing = int(bool(lay.end_token and fmt.end_tokens)) + int(bool(lay.trailing_newline))
    pieces = list(plain.pieces)
    cut = len(pieces) - trailing
    pieces = before + pieces[:cut] + after + pieces[cut:]
    return Rendered(format=plain.format, calls=plain.calls, pieces=tuple(pieces), chatter=bool(chatter), layout=lay)


def given_calls(sample: Sample, calls: list, registry: Any) -> Optional[Sample]:
    """``sample`` with ``calls`` in place of its own: its recipe replayed with them, so the same
    prose, end tokens and variations surround another call list. None when it cannot be."""
    if sample.recipe is None or sample.anomaly_class is not None or not calls:
        return None
    try:
        return replay_recipe(sample.recipe, registry, calls=calls)
    except _CANNOT_WRITE:
        return None


def _exchanges(sample: Sample, calls: list, registry: Any) -> list:
    """``sample`` given ``calls`` (its recipe replayed with them, and its calls' rendering with
    them in its place): all of them and each alone (another of them may fail first for another
    reason), as they are and repeated to as many calls as the sample has
    (a context may need several calls: the ``; `` between two calls that makes a bare JSON parse
    fail first), never with any of the sample's own calls left in."""
    count = len(sample.calls or [])
    lists = [calls] + ([[call] for call in calls] if len(calls) > 1 else [])
    options = [o for given in lists for o in [given] + ([(given * count)[:count]] if count > len(given) else [])]
    made = [given_calls(sample, c, registry) for c in options]
    # and written as the sample's own calls would be (its layout, its prose in its places): the
    # recipe replayed with another number of calls may draw its prose elsewhere
    original = _rendering(sample, registry)
    made += [_written(sample, original, sample.format, c) for c in options]
    return [x for x in made if x is not None]


def _writings(sample: Sample, format: str, registry: Any) -> list:
    """``sample`` written in ``format``: all its calls, and each call alone when it has several
    (two formats write several calls differently: a list in one fence, a fence per call; the
    call that shows the bug is the same)."""
    calls = sample.calls or []
    options = [None] + ([[call] for call in calls] if len(calls) > 1 else [])
    original = _rendering(sample, registry)
    return [w for w in (_written(sample, original, format, c) for c in options) if w is not None]


def same_reason(*, oracle: Any, registry: Any, run: Callable[..., list], shown: Sample, failing: Sample,
                signature_id: str, deadline: Optional[float] = None) -> Optional[bool]:
    """Whether ``failing`` (a rejection in another format than ``shown``'s, with the same
    ``signature_id``) fails for the reason ``shown`` does (see the module's docstring). Every test
    is asked of both failures alike, so the answer never depends on which one came first. None
    when the deadline came first."""
    ways = [_writings(failing, shown.format, registry), _writings(shown, failing.format, registry),
            _exchanges(failing, shown.calls or [], registry), _exchanges(shown, failing.calls or [], registry),
            _exchanges(failing, _plain_calls(failing, registry), registry),
            _exchanges(shown, _plain_calls(shown, registry), registry)]
    probes = [p for way in ways for p in way]
    if not probes:
        return False  # not shown to be the same: apart
    outcomes = run([p.text for p in probes], deadline=deadline)
    if any(o is None for o in outcomes):
        return None
    rejected = iter([_rejected(oracle, p, o, signature_id) for p, o in zip(probes, outcomes)])
    written, exchanged, context_only = [[any([next(rejected) for _ in way]) for way in two]
                                        for two in (ways[0:2], ways[2:4], ways[4:6])]
    # Where a context fails whatever calls it holds, what fails must fail carried into the other
    # format (each written there, with its prose); only where the calls carry the bug in both may
    # exchanging them show it instead.
    return all(written) or (not any(context_only) and all(exchanged))


def _plain_calls(sample: Sample, registry: Any) -> list:
    """The plainest valid calls of the sample's tool (every choice the commonest: ``"a"`` for a
    string), to tell whether the sample's context fails whatever calls it surrounds. Empty when
    there are none."""
    try:
        return build_sample(ReplaySource(()), registry=registry, tool=registry[sample.tool],
                            format=sample.format).calls or []
    except _CANNOT_WRITE:
        return []


def _rejected(oracle: Any, probe: Sample, outcome: Any, signature_id: str) -> bool:
    judgment = oracle.judge(probe, outcome)
    return judgment.failed and oracle.signature(probe, judgment, outcome).id == signature_id


class FormatRoutes:
    """Where the rejections of one (format-less signature, format) pair go: the finding of that
    signature (the same reason), or the format's own (:func:`corpus.signature.by_format`).

    ``pending``: the first rejection of a pair not decided yet, with the finding it is counted
    towards meanwhile and how many executions were counted so: ``(signature id, format) ->
    [finding, failure, level, count]``."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], str] = {}
        self.pending: dict[tuple[str, str], list] = {}
        #: the format each finding of a format's own is keyed with (:func:`corpus.signature.by_format`)
        self.keyed: dict[str, str] = {}

    def route(self, signature_id: str, format: str) -> Optional[str]:
        return self.routes.get((signature_id, format))

    def decide(self, signature_id: str, format: str, finding_id: str, keyed: Optional[str] = None) -> None:
        """Rejections of ``signature_id`` in ``format`` go to ``finding_id`` (keyed with the format
        ``keyed`` when it is a format's own)."""
        self.routes[(signature_id, format)] = finding_id
        if keyed is not None:
            self.keyed.setdefault(finding_id, keyed)

    def splits(self, signature_id: str, book: Any) -> list:
        """The findings rejections of ``signature_id`` were split into so far (one per format
        first split; a later format may join one of them)."""
        ids = dict.fromkeys(routed for (sig, _), routed in self.routes.items()
                            if sig == signature_id and routed != signature_id)
        return [f for f in (book.find(i) for i in ids) if f is not None]

    def learn(self, entries: Any) -> None:
        """Routes a corpus already holds, whatever this run meets first: a rejection it filed as a
        format's own (its ``what`` names the format, its scenario the format-less signature it was
        split from) goes there again, with the other formats that entry lists, and a format a format-less rejection's entry lists goes to
        that entry again."""
        for entry in entries:
            if entry.verdict != "false_reject":
                continue
            match = (entry.scenario or {}).get("match")
            what = entry.what or ""
            if match and entry.format and what.startswith(f"false_reject|{entry.format}|"):
                self.keyed.setdefault(entry.signature, entry.format)
                for fmt in entry.formats or [entry.format]:
                    self.routes.setdefault((match, fmt), entry.signature)
            elif format_less(what):
                for fmt in entry.formats or ([entry.format] if entry.format else []):
                    self.routes.setdefault((entry.signature, fmt), entry.signature)


class AcrossFormats:
    """The parser subject's filing of rejections across formats (a mixin of
    :class:`fuzzer.harnesses.parser.subject.ParserSubject`, which holds ``job``, ``oracles``,
    ``registry`` and ``_formats``, a :class:`FormatRoutes`)."""

    job: Any
    oracles: Any
    registry: Any
    _formats: FormatRoutes

    @staticmethod
    def _note_variant(found: Any, sample: Any) -> None:
        if found.verdict is Verdict.FALSE_REJECT and sample.anomaly_class is None and \
                sample.variant not in found.variants:
            found.variants.append(sample.variant)

    def _count_into(self, found: Any, failure: Any, count: int) -> None:
        self._note_variant(found, failure.case)
        self.job.book.count(found, count)
        self.job.book.offer(found, failure.case, failure.outcome)

    def _across_formats(self, failure: Any) -> bool:
        """File a rejection keyed without its format (:mod:`fuzzer.harnesses.parser.across_formats`):
        where its (signature, format) pair was routed; into the finding of the signature when its
        format is one of the finding's; else counted there until :meth:`_check_formats` tells
        whether the reason is the same. False: no finding holds it yet (then it is offered as usual)."""
        book, fmt, signature = self.job.book, failure.case.format, failure.signature
        routed = self._formats.route(signature.id, fmt)
        if routed is not None:
            found = book.find(routed)
            if found is not None:
                if fmt not in found.formats:  # (a route the corpus knows: this run's first of the format)
                    found.formats.append(fmt)
                self._count_into(found, failure, failure.count)
                return True
            if routed == signature.id:
                return False
            # routed to a finding of its own that this run has not made yet (the corpus knows it, or
            # the book let it go): made under that key, never filed with the signature's other formats
            judgment, level, _ = failure.extra
            own = by_format(signature, self._formats.keyed.get(routed, fmt))
            self.job.offer(replace(failure, signature=own, extra=(judgment, level, signature.id)))
            return True
        found = book.find(signature.id)
        if found is None:
            return False
        if fmt in found.formats:
            self._count_into(found, failure, failure.count)
            return True
        book.count(found, failure.count)  # counted there until the check says otherwise
        waiting = self._formats.pending.get((signature.id, fmt))
        if waiting is not None:
            waiting[3] += failure.count
        else:
            self._formats.pending[(signature.id, fmt)] = [found, failure, None, failure.count]
        return True

    def _check_formats(self, job: Any) -> None:
        """Decide the (signature, format) pairs waiting: the format joins the finding when the
        reason is the same (:func:`fuzzer.harnesses.parser.across_formats.same_reason`), else the
        finding an earlier format was split into when its reason is the same as that one's (an
        upper-case fence tag a fenced and a DeepSeek output both carry), else its rejections become
        a finding of their own, keyed with the format."""
        book = job.book
        for key in list(self._formats.pending):
            if job.budget.time_up():
                return
            found = book.find(self._formats.pending[key][0].signature.id) or self._formats.pending[key][0]
            if any(f is found for f in book.pending):
                # decided on the finding's smallest input, once it is shrunk: a first input whose
                # value holds two formats' triggers at once ("Côte d'Ivoire": an apostrophe one
                # format refuses, a non-ASCII letter another does) carries into either format
                continue
            _, failure, _, count = self._formats.pending.pop(key)
            signature_id, fmt = key
            judgment, level, _ = failure.extra
            joined = None
            for candidate in [found] + self._formats.splits(signature_id, book):
                same = same_reason(oracle=self.oracles[level], registry=self.registry, run=job.settle_run,
                                   shown=candidate.best, failing=failure.case, signature_id=found.oracle_id,
                                   deadline=job.budget.deadline)
                if same is None:  # no time left to tell: it stays counted there, the format not listed
                    return
                if same:
                    joined = candidate
                    break
            if joined is found:
                self._formats.decide(signature_id, fmt, found.signature.id)
                found.formats.append(fmt)
                self._note_variant(found, failure.case)
                book.offer(found, failure.case, failure.outcome)
                continue
            if joined is not None:  # the count moves whole, into the earlier split
                self._formats.decide(signature_id, fmt, joined.signature.id)
                joined.formats.append(fmt)
                with BALANCED:
                    found.count -= count
                    self._count_into(joined, failure, count)
                continue
            own = by_format(failure.signature, fmt)
            self._formats.decide(signature_id, fmt, own.id, keyed=fmt)
            with BALANCED:  # the count moves whole, out of one finding into the other
                found.count -= count
                job.offer(replace(failure, signature=own, count=count, extra=(judgment, level, signature_id)))


__all__ = ["AcrossFormats", "FormatRoutes", "given_calls", "same_reason", "written_in"]
