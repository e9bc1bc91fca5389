"""Minimizers: shrink a failing input while a batched predicate still holds.

The engine runs targets in isolated worker processes, where one message of many inputs costs about
as much as one message of one input (DESIGN.md, "Isolation is affordable when batched"). So every
predicate here is *batched*: it takes a list of candidates and answers for each, and the minimizers
are written to propose many candidates at once and keep the best one that passed.

Two minimizers, one contract:

* :func:`shrink_text` reduces raw model output. It is for verdicts the text alone carries (crash,
  hang, nondeterminism), with the predicate "fails with the same signature".
* :func:`shrink_choices` reduces the choice sequence of a generated sample, which the caller replays
  and re-renders, so the sample's ground truth is recomputed by construction (DESIGN.md, "Shrinking
  keeps the meaning"). The predicate returns a size key of the produced sample, or None.

Both are deterministic (no randomness, no iteration over sets), never return something that did not
pass the predicate (the input is checked first: :class:`NotInteresting` if it does not pass), never
return something larger than the input, and stop with the best result so far when ``budget_s``
seconds or ``max_tests`` predicate evaluations run out. Answers are cached, so a candidate is never
evaluated twice and cached answers do not count against ``max_tests``.

This module is their public face; each lives in a module of its own (:mod:`corpus.text_shrinker`,
:mod:`corpus.choice_shrinker`), and what both share — asking the batched predicate within the
budget, the size order of inputs — in :mod:`corpus.predicate`.
"""

from __future__ import annotations

from corpus.choice_shrinker import shrink_choices
from corpus.predicate import DEFAULT_BATCH, NotInteresting, shortlex
from corpus.text_shrinker import longest_repeat, shrink_text, tokenize

__all__ = ["DEFAULT_BATCH", "NotInteresting", "longest_repeat", "shortlex", "shrink_choices", "shrink_text",
           "tokenize"]
