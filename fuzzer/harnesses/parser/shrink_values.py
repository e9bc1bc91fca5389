"""Minimal means 1-minimal: a sample's values reduced one edit at a time, its meaning kept.

Shrinking a recipe's choices (:func:`fuzzer.harnesses.parser.shrink.shrink_structured`) cannot cut a string down to
the one character that matters: strings come from banks (``"aaX a'\\xa0'a0"`` is one choice), and
a character in the middle of one is no choice of its own. So, after it, the calls the sample was
made from are edited directly — each string value emptied, cut to each of its characters, each of
its characters removed; each list and object emptied, each of their items and members removed;
each call of several removed — and the sample is built again from its recipe with the edited
calls (:func:`strategies._internal.build.build_sample` ``calls=``): the same format, layout, prose
and operator, the truth recomputed by construction (DESIGN.md, "Shrinking keeps the meaning").
Only edits whose calls are still valid calls of their tools are tried (a valid sample must stay
valid; an operator mutates valid calls). An edit is kept when the rebuilt sample still fails with
the same signature and is no longer; the pass repeats until no edit is kept.

The sample is then **1-minimal**: no character of a string value and no element can be removed
with the signature holding — what ``one_minimal`` on a finding says, when the pass ran to its end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from strategies._internal.build import Unbuildable, replay_recipe
from strategies._internal.sample import Sample
from strategies.json_values import json_equal

#: Candidates run per batch (one worker message each).
BATCH = 128
#: Edits of one round at most (a sample with huge values is reduced by the text stage, if at all).
MAX_EDITS = 4000
_BUILD_ERRORS = (Unbuildable, ValueError, KeyError, IndexError, RecursionError, TypeError)


@dataclass(frozen=True)
class ValuesShrunk:
    sample: Any
    observation: Any
    #: every single removal was tried on the result, and none kept the signature
    one_minimal: bool
    #: the pass ran to its end (not stopped by the deadline or the edit limit)
    complete: bool = True


def value_size(value: Any) -> int:
    """What the pass reduces: characters of strings plus items and members, nested."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return len(value) + sum(value_size(v) for v in value)
    if isinstance(value, dict):
        return len(value) + sum(value_size(v) for v in value.values())
    return 0


def _edits(value: Any) -> Iterator[tuple[bool, Any]]:
    """``(removal, edited value)`` for every single edit of ``value`` and of what it holds; the
    removals are what 1-minimality is about, the rest (emptying, cutting to one character) only
    shortcuts to them."""
    if isinstance(value, str):
        if len(value) > 1:
            yield False, ""
            for ch in dict.fromkeys(value):
                yield False, ch
        for i in range(len(value)):
            if i == 0 or value[i] != value[i - 1]:  # removing any of a run of one character is one edit
                yield True, value[:i] + value[i + 1:]
    elif isinstance(value, list):
        if len(value) > 1:
            yield False, []
        for i in range(len(value)):
            yield True, value[:i] + value[i + 1:]
        for i, item in enumerate(value):
            for removal, edited in _edits(item):
                yield removal, value[:i] + [edited] + value[i + 1:]
    elif isinstance(value, dict):
        if len(value) > 1:
            yield False, {}
        for key in value:
            yield True, {k: v for k, v in value.items() if k != key}
        for key, item in value.items():
            for removal, edited in _edits(item):
                yield removal, {**value, key: edited}


def call_edits(calls: list) -> Iterator[tuple[bool, list]]:
    """Every single edit of a list of calls: a call removed (of several), or one edit of a call's
    arguments (the name is the tool's: editing it makes another call altogether)."""
    if len(calls) > 1:
        for i in range(len(calls)):
            yield True, calls[:i] + calls[i + 1:]
    for i, call in enumerate(calls):
        arguments = call.get("arguments")
        for removal, edited in _edits(arguments):
            yield removal, calls[:i] + [{**call, "arguments": edited}] + calls[i + 1:]


def shrink_values(sample: Sample, observation: Any, *, registry: Any, promise: Any,
                  observe: Callable[[list], list], keeps: Callable[[Sample, Any], bool],
                  deadline: float) -> ValuesShrunk:
    """``sample`` with its values reduced as far as ``keeps`` (same signature) allows; see the
    module docstring. ``observe(samples)`` runs them (an observation each, None past the deadline);
    ``promise`` (:class:`fuzzer.harnesses.parser.promise.Promise`) says which edited calls are valid."""
    if sample.recipe is None:
        return ValuesShrunk(sample, observation, False)
    drawn: list = []
    try:
        again = replay_recipe(sample.recipe, registry, drawn=drawn)
    except _BUILD_ERRORS:
        return ValuesShrunk(sample, observation, False)
    if not drawn or again.text != sample.text:
        return ValuesShrunk(sample, observation, False)  # the recipe does not make this sample: leave it
    calls, best, seen = drawn[-1], (sample, observation), {sample.text}

    def valid(edited: list) -> bool:
        return all(promise.call_ok(c) for c in edited) and \
            not any(json_equal(a, b) for i, a in enumerate(edited) for b in edited[i + 1:])

    while True:
        size, text_key = value_size(calls), (len(best[0].text), best[0].text)
        tried: list = []  # (removal, sample, calls) of this round, smallest first
        for removal, edited in call_edits(calls):
            if len(tried) >= MAX_EDITS:
                return ValuesShrunk(best[0], best[1], False, complete=False)
            if value_size(edited) >= size or not valid(edited):
                continue
            try:
                built = replay_recipe(sample.recipe, registry, calls=edited)
            except _BUILD_ERRORS:
                continue
            if (len(built.text), built.text) > text_key:
                if removal:  # a removal that lengthens the text: not taken, and not 1-minimal if it keeps the bug
                    tried.append((removal, built, edited))
                continue
            tried.append((removal, built, edited))
        tried.sort(key=lambda t: (value_size(t[2]), len(t[1].text), t[1].text))
        adopted = False
        blocked = False
        for start in range(0, len(tried), BATCH):
            if time.monotonic() >= deadline:
                return ValuesShrunk(best[0], best[1], False, complete=False)
            chunk = [t for t in tried[start:start + BATCH] if t[1].text not in seen]
            observations = observe([t[1] for t in chunk]) if chunk else []
            if any(o is None for o in observations):
                return ValuesShrunk(best[0], best[1], False, complete=False)
            for (removal, built, edited), o in zip(chunk, observations):
                seen.add(built.text)
                if not keeps(built, o):
                    continue
                if (len(built.text), built.text) > text_key:
                    blocked = True  # keeps the signature, but is no smaller: 1-minimal it is not
                    continue
                calls, best, adopted = edited, (built, o), True
                break
            if adopted:
                break
        if not adopted:
            return ValuesShrunk(best[0], best[1], not blocked)


__all__ = ["ValuesShrunk", "call_edits", "shrink_values", "value_size"]
