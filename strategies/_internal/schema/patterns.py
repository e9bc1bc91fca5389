"""String patterns: a ``pattern`` (and ``format``) compiled into a verified generator, and a cached plan.

The regex walk (:mod:`strategies._internal.regex`) gives a full match of the pattern; when a known
format generator fits the pattern (a date pattern, an email pattern) realistic values are preferred.
Every walked value must still be checked (lookarounds, length bounds, ``format``), and walking costs a
choice per character: a tools file with an email ``pattern`` ran several times slower than without.

So each (pattern, format, length bounds) gets a **plan**, built once and shared by every schema that
uses it: a pool of distinct verified values, sorted shortlex (index 0 is the simplest, what shrinking
reaches). A draw is one choice: most pick from the pool, the rest walk a fresh value (checked, with
the fallback behind it), so variety is kept and nothing unverified is ever returned.
"""

from __future__ import annotations

from typing import Any, Callable

from strategies._internal.schema.banks import FORMAT_GENERATORS
from strategies._internal.schema.nodes import Node
from strategies._internal.source import RandomSource, ReplaySource, Source
from strategies.json_values import shortlex

#: Distinct values a plan keeps, and the walks tried to find them.
PLAN_SIZE = 128
PLAN_ATTEMPTS = 384
#: Out of every (PLAN_SIZE + PLAN_SIZE // FRESH_SHARE) draws, PLAN_SIZE // FRESH_SHARE walk a fresh value.
FRESH_SHARE = 8


def realistic_for_pattern(raw: Callable[[Source], str], check: Callable[[str], bool]) -> Callable[[Source], str]:
    """Prefer realistic values when a known format fits the pattern (a date pattern gets real dates,
    an email pattern real addresses); the regex walk stays the simplest (choice 0) alternative."""
    fitting = [gen for gen in FORMAT_GENERATORS.values()
               if all(check(gen(RandomSource(seed))) for seed in range(8)) and check(gen(ReplaySource(())))]
    if not fitting:
        return raw
    gen = fitting[0]

    def generate(source: Source) -> str:
        return gen(source) if source.boolean(0.7) else raw(source)

    return generate


_PLANS: dict = {}


def plan_values(key: Any, raw: Callable[[Source], str], check: Callable[[str], bool]) -> list:
    """The verified values of a plan (cached by ``key``): the zero-choice value first if it checks,
    then distinct walked values, shortlex-sorted."""
    values = _PLANS.get(key)
    if values is None:
        found: dict = {}
        first = raw(ReplaySource(()))
        if check(first):
            found[first] = None
        for seed in range(PLAN_ATTEMPTS):
            if len(found) >= PLAN_SIZE:
                break
            value = raw(RandomSource(seed))
            if value not in found and check(value):
                found[value] = None
        values = _PLANS[key] = sorted(found, key=shortlex)
        if len(_PLANS) > 4096:
            _PLANS.clear()
    return values


class PlannedStringNode(Node):
    """A string drawn from its plan (one choice), or now and then a fresh checked walk."""

    __slots__ = ("values", "last", "fresh")

    def __init__(self, values: list, fresh: Node):
        self.values, self.fresh = values, fresh
        self.last = len(values) - 1 + max(1, len(values) // FRESH_SHARE)

    def generate(self, source: Source) -> Any:
        i = source.integer(0, self.last)
        values = self.values
        return values[i] if i < len(values) else self.fresh.generate(source)
