"""One rejection across formats: is it the same bug in each format, or a format's own?

A false_reject is keyed by where it was raised and its message, not by the format
(:func:`corpus.signature.rejection_signature`): the bundled naive parser's broken quote repair
rejects an apostrophe in a fenced output and in a DeepSeek one (whose payload is a fence) at the
same place with the same words — one bug, shown once, its formats listed. But the same place and
words can hide two causes: a parser whose one ``raise ValueError("no tool call")`` fires on an
upper-case fence tag in one format and on a tag only another format has. Splitting one bug is
the lesser harm than merging two, so a format joins a finding only when the reason is shown to
be the same, both ways:

* what the new format's failure wrote (its calls, in its layout, with prose if it had some) is
  rejected the same way when written in the finding's format, and
* what the finding shows is rejected the same way when written in the new format.

Otherwise the new format's rejections are its own finding, keyed with the format
(:func:`corpus.signature.by_format`). The check runs the target twice, once per (signature,
format) pair; later rejections of that pair go where the first went (:class:`FormatRoutes`).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from strategies._internal.build import Unbuildable, replay_recipe
from strategies._internal.formats import Unrepresentable, render
from strategies._internal.sample import Sample
from strategies._internal.source import ReplaySource


def written_in(sample: Sample, format: str, registry: Any, calls: Optional[list] = None) -> Optional[Sample]:
    """``sample``'s calls (or ``calls`` of them) written in ``format`` in the sample's layout, with
    prose around them when the sample has prose, every other variation the format's commonest;
    None when that cannot be written (no recipe to read the layout from, calls the format cannot
    write)."""
    if sample.recipe is None or sample.calls is None or sample.anomaly_class is not None:
        return None
    try:
        built = replay_recipe(sample.recipe, registry, keep_rendered=True)
        layout = built.rendered.layout if built.rendered is not None else None
        chatter = bool(built.rendered.chatter) if built.rendered is not None else False
        rendered = render(format, calls if calls is not None else sample.calls, ReplaySource(()), chatter=chatter,
                          layout=layout)
    except (Unbuildable, Unrepresentable, ValueError, KeyError, IndexError, TypeError, RecursionError):
        return None
    return Sample(text=rendered.text, format=format, anomaly_class=None, operator=None, calls=rendered.calls,
                  tool=sample.tool, description=f"the calls of a {sample.format} output written in {format}")


def _writings(sample: Sample, format: str, registry: Any) -> list:
    """``sample`` written in ``format``: all its calls, and each call alone when it has several
    (two formats write several calls differently: a list in one fence, a fence per call; the
    call that shows the bug is the same)."""
    calls = sample.calls or []
    options = [None] + ([[call] for call in calls] if len(calls) > 1 else [])
    return [w for w in (written_in(sample, format, registry, c) for c in options) if w is not None]


def same_reason(*, oracle: Any, registry: Any, run: Callable[..., list], shown: Sample, failing: Sample,
                signature_id: str, deadline: Optional[float] = None) -> Optional[bool]:
    """Whether ``failing`` (a rejection in another format than ``shown``'s, with the same
    ``signature_id``) fails for the reason ``shown`` does: each one's calls (all of them, or one
    of them), written in the other's format, are rejected with ``signature_id`` too. None when
    the deadline came first."""
    ways = [_writings(failing, shown.format, registry), _writings(shown, failing.format, registry)]
    if not all(ways):
        return False  # not shown to be the same: apart
    probes = [p for way in ways for p in way]
    outcomes = run([p.text for p in probes], deadline=deadline)
    if any(o is None for o in outcomes):
        return None
    failed = iter([oracle.judge(p, o).failed and oracle.signature(p, oracle.judge(p, o), o).id == signature_id
                   for p, o in zip(probes, outcomes)])
    return all(any([next(failed) for _ in way]) for way in ways)


class FormatRoutes:
    """Where the rejections of one (format-less signature, format) pair go: the finding of that
    signature (the same reason), or the format's own (:func:`corpus.signature.by_format`).

    ``pending``: the first rejection of a pair not decided yet, with the finding it is counted
    towards meanwhile and how many executions were counted so: ``(signature id, format) ->
    [finding, failure, level, count]``."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], str] = {}
        self.pending: dict[tuple[str, str], list] = {}

    def route(self, signature_id: str, format: str) -> Optional[str]:
        return self.routes.get((signature_id, format))

    def decide(self, signature_id: str, format: str, finding_id: str) -> None:
        self.routes[(signature_id, format)] = finding_id

    def learn(self, entries: Any) -> None:
        """Routes a corpus already holds: a rejection it filed as a format's own (its ``what``
        names the format, its scenario the format-less signature it was split from) goes there
        again, whatever this run meets first."""
        for entry in entries:
            match = (entry.scenario or {}).get("match")
            what = entry.what or ""
            if entry.verdict == "false_reject" and match and entry.format and \
                    what.startswith(f"false_reject|{entry.format}|"):
                self.routes.setdefault((match, entry.format), entry.signature)


__all__ = ["FormatRoutes", "same_reason", "written_in"]
