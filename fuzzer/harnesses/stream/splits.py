"""Splits: where one model output is cut into the deltas an incremental parser is fed.

Why these families: the serving engines' streaming bugs nearly all depend on where the stream was
cut (a call dropped when its begin and end markers arrive in one delta, arguments lost unless each
token is its own delta, a marker fragment leaking into content when the marker is cut). The
engines test with the whole output, one token per delta, every two-way split and seeded random
groupings; toolfuzz draws those and the cuts that hurt most:

===================  ==========================================================================
``whole``            the whole output as one delta (no cut)
``two_way``          one cut anywhere
``char``             one character per delta
``marker_atomic``    each special token whole, the text between cut into 1-4 characters (how a
                     tokenizer streams)
``inside_marker``    1-3 cuts inside one marker occurrence
``boundary``         1-3 cuts at boundaries between structure and value: next to ``{}[]":,``,
                     inside an escape, between a key and its colon
``random``           seeded random groupings of 1-4 characters (vLLM's split-invariance test)
``interesting``      a split that showed new behaviour before (its cut pattern, replayed on
                     this output)
===================  ==========================================================================

A split is a sorted tuple of cut positions (each in ``1 .. len(text) - 1``); :func:`deltas` turns
it into the deltas. Splits are drawn from a :class:`~strategies._internal.source.Source`, so the
same seed gives the same splits. :func:`shrink_split` reduces a failing split to the fewest cuts,
then moves each cut as early as it can go while the failure holds.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Optional, Sequence

FAMILIES = ("whole", "two_way", "char", "marker_atomic", "inside_marker", "boundary", "random", "interesting")
#: Relative weights of the drawn families (``whole`` and ``char`` are run for every output anyway).
WEIGHTS = {"two_way": 2, "marker_atomic": 2, "inside_marker": 3, "boundary": 3, "random": 2, "interesting": 2}

#: A special token inside a format's envelope strings: ``<tool_call>``, ``</tool_call>``,
#: ``<|python_tag|>``, ``[TOOL_CALLS]``, ``<｜tool▁sep｜>``, ``<function=``...
_MARKER = re.compile(r"<\|[^|<>]{1,40}\|>|<｜[^｜]{1,40}｜>|</?[A-Za-z_][A-Za-z_0-9]{0,40}>|\[[A-Z_]{2,40}\]"
                     r"|<[A-Za-z_]{1,40}=")
#: Characters whose neighbourhood is a structure/value boundary in JSON-ish payloads.
_STRUCTURE = frozenset('{}[]":,\\')


def markers_of(fmt: str) -> tuple:
    """The special tokens of format ``fmt`` (from its declared envelope and its reasoning syntax:
    a ``<think>`` cut in two is where a parser loses track of reasoning), longest first."""
    from strategies._internal.formats import FORMATS

    spec = FORMATS[fmt]
    texts = [v for v in getattr(spec, "envelope", {}).values() if isinstance(v, str)]
    reasoning = getattr(spec, "reasoning", None)
    if reasoning is not None:
        texts += [reasoning.open, reasoning.close]
    found: set = set()
    for value in texts:
        found.update(_MARKER.findall(value))
    return tuple(sorted(found, key=lambda m: (-len(m), m)))


def deltas(text: str, cuts: Sequence[int]) -> list:
    """The deltas of ``text`` under ``cuts`` (cuts outside ``1 .. len-1`` are ignored)."""
    out, start = [], 0
    for cut in cuts:
        if start < cut < len(text):
            out.append(text[start:cut])
            start = cut
    out.append(text[start:])
    return out


def cuts_of(parts: Sequence[str]) -> tuple:
    """The split that gives ``parts`` (the inverse of :func:`deltas`)."""
    cuts, at = [], 0
    for part in parts[:-1]:
        at += len(part)
        cuts.append(at)
    return tuple(c for c in cuts if 0 < c < at + len(parts[-1]))


def clip(cuts: Iterable[int], length: int) -> tuple:
    """``cuts`` kept inside a text of ``length`` characters, sorted and unique."""
    return tuple(sorted({c for c in cuts if 0 < c < length}))


def marker_spans(text: str, markers: Sequence[str]) -> list:
    """(start, end) of every marker occurrence in ``text``."""
    spans = []
    for marker in markers:
        at = text.find(marker)
        while at >= 0:
            spans.append((at, at + len(marker)))
            at = text.find(marker, at + 1)
    return sorted(spans)


def boundary_positions(text: str) -> list:
    """Cut positions next to a structural character, inside an escape, or between a key's closing
    quote and its colon."""
    out = set()
    for i, ch in enumerate(text):
        if ch in _STRUCTURE:
            out.add(i)
            out.add(i + 1)
    return sorted(c for c in out if 0 < c < len(text))


def groupings(source: Any, length: int, lo: int = 1, hi: int = 4) -> list:
    """Cuts that group ``length`` characters into pieces of ``lo``-``hi`` characters."""
    cuts, at = [], 0
    while True:
        at += source.integer(lo, hi)
        if at >= length:
            return cuts
        cuts.append(at)


def draw_split(source: Any, text: str, markers: Sequence[str] = (), *,
               interesting: Sequence[tuple] = ()) -> tuple:
    """(family, cuts): one split of ``text`` drawn from ``source`` (see the module docstring)."""
    n = len(text)
    if n < 2:
        return "whole", ()
    spans = marker_spans(text, markers)
    families = [f for f in WEIGHTS if (f != "inside_marker" or spans) and (f != "interesting" or interesting)]
    family = families[source.weighted([WEIGHTS[f] for f in families])]
    if family == "two_way":
        return family, (source.integer(1, n - 1),)
    if family == "random":
        return family, tuple(groupings(source, n))
    if family == "marker_atomic":
        return family, marker_atomic(source, text, markers)
    if family == "inside_marker":
        a, b = spans[source.integer(0, len(spans) - 1)]
        count = source.integer(1, min(3, b - a - 1)) if b - a > 1 else 0
        return family, clip((source.integer(a + 1, b - 1) for _ in range(count)), n)
    if family == "boundary":
        places = boundary_positions(text) or list(range(1, n))
        return family, clip((source.choice(places) for _ in range(source.integer(1, 3))), n)
    pattern = interesting[source.integer(0, len(interesting) - 1)]
    return family, clip(pattern, n) if max(pattern, default=0) < n else clip(
        (c * n // (max(pattern) + 1) for c in pattern), n)


def marker_atomic(source: Any, text: str, markers: Sequence[str] = ()) -> tuple:
    """Each special token whole in a delta of its own, the text between cut into 1-4 characters:
    how a tokenizer streams."""
    n = len(text)
    spans = marker_spans(text, markers)
    inside = {c for a, b in spans for c in range(a + 1, b)}
    edges = [c for a, b in spans for c in (a, b)]
    return clip([c for c in groupings(source, n) if c not in inside] + edges, n)


def marker_heads(text: str, markers: Sequence[str] = ()) -> tuple:
    """One cut, after the first character of the output's first marker (``<`` | ``think>...``)."""
    spans = marker_spans(text, markers)
    return clip((spans[0][0] + 1,), len(text)) if spans else ()


def standard_splits(text: str) -> list:
    """(family, cuts) every output is run with: the whole text, and one character per delta."""
    return [("whole", ()), ("char", tuple(range(1, len(text))))]


def every_two_way(text: str) -> list:
    return [(i,) for i in range(1, len(text))]


def split_key(cuts: Sequence[int]) -> tuple:
    """The size order of splits: fewer cuts first, then earlier cuts."""
    return (len(cuts), tuple(cuts))


def shrink_split(cuts: Sequence[int], test: Callable[[list], Sequence[bool]], *, max_tests: int = 600,
                 length: Optional[int] = None) -> tuple:
    """The smallest split (:func:`split_key`) found that still passes ``test``.

    ``test(candidates) -> [bool]`` is batched (one worker message runs many streams). First the
    fewest cuts: the empty split and each single cut alone; then blocks of cuts removed, halves
    first, then quarters, down to single cuts (delta debugging: a failure that needs two cuts of
    forty costs a few dozen streams, not hundreds); then each cut, left to right, moved to the
    earliest position after the previous cut that still passes. Never returns a split that did
    not pass (the input is returned when it is the best); ``max_tests`` bounds the streams run."""
    best = tuple(sorted(set(cuts)))
    spent = 0

    def first_passing(candidates: list) -> Optional[tuple]:
        nonlocal spent
        fresh = [c for c in dict.fromkeys(candidates) if split_key(c) < split_key(best)]
        if not fresh or spent >= max_tests:
            return None
        fresh = fresh[:max_tests - spent]
        spent += len(fresh)
        answers = test(fresh)
        passing = [c for c, ok in zip(fresh, answers) if ok]
        return min(passing, key=split_key) if passing else None

    if 1 < len(best) < max_tests // 2:  # (a char split's every cut alone would spend the budget here)
        found = first_passing([()] + [(c,) for c in best])
        if found is not None:
            best = found
    block = len(best) // 2
    while block >= 1 and spent < max_tests:
        found = first_passing([best[:i] + best[i + block:] for i in range(0, len(best), block)])
        if found is None:
            block //= 2
        else:
            best = found
            block = min(block, len(best) // 2)
    for i in range(len(best)):
        lo = best[i - 1] + 1 if i else 1
        found = first_passing([best[:i] + (p,) + best[i + 1:] for p in range(lo, best[i])])
        if found is not None:
            best = found
    return best


__all__ = ["FAMILIES", "boundary_positions", "clip", "cuts_of", "deltas", "draw_split", "every_two_way", "groupings",
           "marker_atomic", "marker_heads", "marker_spans", "markers_of", "shrink_split", "split_key", "standard_splits"]
