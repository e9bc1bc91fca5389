"""Where generators get their randomness: one small interface, three backends.

Every generator in toolfuzz (schema-derived arguments, formats, mutation operators) is written
against :class:`Source`, never against ``random`` or Hypothesis directly. That gives one definition
and three uses:

* :class:`RandomSource` — a seeded ``random.Random`` that records every choice. The campaign drives
  generators with it: it costs well under a microsecond per choice, so the engine never pays
  Hypothesis's per-example overhead per execution (DESIGN.md, "Performance design").
* :class:`ReplaySource` — plays a recorded choice sequence back. A sample is a pure function of
  (tool, format, operator, choices), so shrinking the choices and regenerating recomputes the
  sample's ground truth by construction ("Shrinking keeps the meaning"). Choices past the end of the
  sequence are the simplest ones, and out-of-range ones are clamped, as in Hypothesis's own IR.
* :class:`HypothesisSource` — draws each choice from Hypothesis, so the same generators are real
  Hypothesis strategies (``strategies.tool_calls`` / ``strategies.model_outputs``) that shrink with
  Hypothesis in users' own tests.

Every choice is an integer in a closed range and shrinks toward its lower bound; ``boolean`` shrinks
to False and ``choice`` to the first element, so generators put the simplest option first.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")


class Source:
    """The interface generators draw from. Subclasses implement :meth:`integer` and :meth:`pool`."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]`` (inclusive); shrinks toward ``lo``."""
        raise NotImplementedError

    def boolean(self, p: float = 0.5) -> bool:
        """True with probability ``p``; shrinks to False."""
        raise NotImplementedError

    def choice(self, seq: Sequence[T]) -> T:
        """One element of a non-empty sequence; shrinks toward ``seq[0]``."""
        return seq[self.integer(0, len(seq) - 1)]

    def weighted(self, weights: Sequence[float]) -> int:
        """An index drawn with the given relative weights; shrinks toward index 0."""
        total = float(sum(weights))
        # A fixed-resolution integer keeps the choice replayable and shrinkable.
        ticket = self.integer(0, 9999) * total / 10000.0
        acc = 0.0
        for i, w in enumerate(weights):
            acc += w
            if ticket < acc:
                return i
        return len(weights) - 1

    def pool(self, key: Any, draw_pool: Callable[[], Sequence[Any]], strategy_factory: Callable[[], Any]) -> Any:
        """A value from a Hypothesis strategy the native generators cannot express.

        Fast backends pick from ``draw_pool()`` (a list drawn once from the strategy, cached by
        ``key``, simplest first); the Hypothesis backend draws from ``strategy_factory()`` directly.
        """
        values = _POOLS.get(key)
        if values is None:
            values = _POOLS[key] = list(draw_pool())
        if not values:
            raise ValueError(f"empty fallback pool for {key!r}")
        return values[self.integer(0, len(values) - 1)]


_POOLS: dict[Any, list[Any]] = {}


class RandomSource(Source):
    """Seeded, fast, and recording: ``choices`` replays through :class:`ReplaySource`."""

    __slots__ = ("_random", "choices")

    def __init__(self, seed_or_random: int | random.Random = 0):
        self._random = (seed_or_random if isinstance(seed_or_random, random.Random)
                        else random.Random(seed_or_random))
        self.choices: list[int] = []

    def integer(self, lo: int, hi: int) -> int:
        if hi <= lo:
            self.choices.append(0)
            return lo
        offset = int(self._random.random() * (hi - lo + 1))
        if offset > hi - lo:  # guard against rounding at the top of the range
            offset = hi - lo
        self.choices.append(offset)
        return lo + offset

    def boolean(self, p: float = 0.5) -> bool:
        value = self._random.random() < p
        self.choices.append(1 if value else 0)
        return value

    def reset(self) -> list[int]:
        """Return the choices made so far and start a new recording."""
        made, self.choices = self.choices, []
        return made


class ReplaySource(Source):
    """Replays a choice sequence; exhausted or out-of-range choices become the simplest value."""

    __slots__ = ("_choices", "_index", "choices")

    def __init__(self, choices: Sequence[int]):
        self._choices = choices
        self._index = 0
        self.choices: list[int] = []  # what was actually used, after clamping

    def _next(self) -> int:
        i = self._index
        self._index = i + 1
        return self._choices[i] if i < len(self._choices) else 0

    def integer(self, lo: int, hi: int) -> int:
        offset = max(0, self._next())
        if offset > hi - lo:
            offset = max(0, hi - lo)
        self.choices.append(offset)
        return lo + offset

    def boolean(self, p: float = 0.5) -> bool:
        value = 1 if self._next() > 0 else 0
        self.choices.append(value)
        return bool(value)

    @property
    def exhausted(self) -> bool:
        return self._index > len(self._choices)


class HypothesisSource(Source):
    """Draws each choice from Hypothesis inside ``st.composite`` / ``st.data()``."""

    __slots__ = ("_draw",)

    def __init__(self, draw: Callable[[Any], Any]):
        self._draw = draw

    def integer(self, lo: int, hi: int) -> int:
        from hypothesis import strategies as st

        if hi <= lo:
            return lo
        return lo + self._draw(st.integers(0, hi - lo))

    def boolean(self, p: float = 0.5) -> bool:
        from hypothesis import strategies as st

        if p >= 1:
            return True
        if p <= 0:
            return False
        # integers shrink toward 0, which maps to False
        return self._draw(st.integers(0, 999)) >= 1000 * (1 - p)

    def pool(self, key: Any, draw_pool: Callable[[], Sequence[Any]], strategy_factory: Callable[[], Any]) -> Any:
        return self._draw(strategy_factory())
