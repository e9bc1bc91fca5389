"""String patterns: a ``pattern`` (and ``format``) compiled into a verified generator once per subschema.

The regex walk (:mod:`strategies._internal.regex`) gives a full match of the pattern; when a known
format generator fits the pattern (a date pattern, an email pattern) realistic values are preferred.
"""

from __future__ import annotations

from typing import Callable

from strategies._internal.schema.banks import FORMAT_GENERATORS
from strategies._internal.source import RandomSource, ReplaySource, Source


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
