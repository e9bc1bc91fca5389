"""Fault schedules: the fault of every attempt of one call's tool.

A :class:`Schedule` lists the faults of attempts 1, 2, … and the fault of every later attempt
(``then``, ``ok`` by default): ``http_503, http_503, then ok`` is a service that recovers after two
failures; ``then http_503`` is one that stays down. That one rule covers the shapes executors
must survive, and each shape is a registered *pattern* in :data:`PATTERNS` that draws it:

* ``healthy`` — no fault (the simplest: choices shrink toward it);
* ``single`` — one fault, then ok;
* ``succeed_after`` — the same transient fault N times (N in 1..6), then ok;
* ``flaky`` — a few different faults, then ok;
* ``down`` — maybe a few faults, then one failure for every later attempt.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from collections.abc import Mapping, Sequence
from typing import Any, Callable

from fuzzer.harnesses.executor.faults import FAULTS, OK, Fault, FaultError
from strategies.registry import Registry

#: The most attempts a drawn schedule spells out before its ``then``.
MAX_LISTED = 6


@dataclass(frozen=True)
class Schedule:
    faults: tuple = ()  # Fault of attempts 1..len
    then: Fault = OK  # every later attempt
    pattern: str = "healthy"

    def fault_for(self, attempt: int) -> Fault:
        """The fault of attempt ``attempt`` (1-based)."""
        return self.faults[attempt - 1] if attempt <= len(self.faults) else self.then

    @property
    def size(self) -> int:
        """How many failing faults it spells out (``then`` counts once): smaller is simpler."""
        return sum(1 for f in self.faults if not f.is_ok) + (0 if self.then.is_ok else 1)

    def describe(self) -> str:
        """``timeout(after=5s) ×2, http_503, then ok`` — runs of one fault collapsed."""
        if not self.size:
            return "no faults"
        parts: list[str] = []
        i = 0
        while i < len(self.faults):
            j = i
            while j + 1 < len(self.faults) and self.faults[j + 1] == self.faults[i]:
                j += 1
            run = j - i + 1
            parts.append(self.faults[i].describe() + (f" ×{run}" if run > 1 else ""))
            i = j + 1
        tail = "then ok" if self.then.is_ok else f"then {self.then.describe()} on every later attempt"
        return ", ".join(parts + [tail])

    def to_json(self) -> dict:
        return {"faults": [f.to_json() for f in self.faults], "then": self.then.to_json(), "pattern": self.pattern}

    @functools.cached_property
    def serves_canary(self) -> bool:
        """Some attempt meets a ``secret_error`` (the worker then captures what the executor prints
        and logs, to look for its canary there)."""
        return any(f.kind == "secret_error" for f in self.faults + (self.then,))

    @functools.cached_property
    def wire(self) -> str:
        """The JSON text a worker receives (it caches parsed schedules by this text)."""
        return json.dumps(self.to_json(), sort_keys=True)

    @classmethod
    def from_json(cls, data: Any, where: str = "schedule") -> "Schedule":
        if not isinstance(data, Mapping):
            raise FaultError(f"{where}: expected an object, got {type(data).__name__}")
        faults = data.get("faults", [])
        if not isinstance(faults, list):
            raise FaultError(f"{where}.faults: expected a list, got {type(faults).__name__}")
        then = data.get("then", {"kind": "ok"})
        return cls(faults=tuple(Fault.from_json(f, f"{where}.faults[{i}]") for i, f in enumerate(faults)),
                   then=Fault.from_json(then, f"{where}.then"), pattern=str(data.get("pattern", "custom")))


Pattern = Callable[[Any, "FaultMenu"], Schedule]
PATTERNS: Registry[Pattern] = Registry("schedule pattern")


@dataclass(frozen=True)
class FaultMenu:
    """The fault kinds a campaign may draw (the policy's ``faults``) and the flavours available."""

    kinds: tuple  # failing kinds, simplest first
    transient: tuple  # the transient ones among them
    flavors: tuple

    def draw(self, source: Any, kinds: Sequence[str] = ()) -> Fault:
        name = source.choice(kinds or self.kinds)
        params = FAULTS[name].draw(source, self.flavors)
        key = (name, tuple(sorted(params.items())) if len(params) > 1 else tuple(params.items()))
        fault = _FAULTS.get(key)
        if fault is None:  # drawn faults repeat a few dozen values: one object each, its lookups cached
            if len(_FAULTS) >= 4096:
                _FAULTS.clear()
            fault = _FAULTS[key] = Fault(*key)
        return fault


_FAULTS: dict = {}


@PATTERNS.decorator("healthy")
def healthy(source: Any, menu: FaultMenu) -> Schedule:
    return Schedule()


@PATTERNS.decorator("single")
def single(source: Any, menu: FaultMenu) -> Schedule:
    return Schedule(faults=(menu.draw(source),), pattern="single")


@PATTERNS.decorator("succeed_after")
def succeed_after(source: Any, menu: FaultMenu) -> Schedule:
    fault = menu.draw(source, menu.transient)
    return Schedule(faults=(fault,) * source.integer(1, MAX_LISTED), pattern="succeed_after")


@PATTERNS.decorator("flaky")
def flaky(source: Any, menu: FaultMenu) -> Schedule:
    return Schedule(faults=tuple(menu.draw(source) for _ in range(source.integer(1, 4))), pattern="flaky")


@PATTERNS.decorator("down")
def down(source: Any, menu: FaultMenu) -> Schedule:
    leading = tuple(menu.draw(source) for _ in range(source.integer(0, 2)))
    return Schedule(faults=leading, then=menu.draw(source, menu.transient if source.boolean(0.8) else ()),
                    pattern="down")


#: Relative weights of the patterns, in registration order (index 0 = healthy, the simplest).
WEIGHTS = {"healthy": 0.35, "single": 0.2, "succeed_after": 0.2, "flaky": 0.1, "down": 0.15}


def draw_schedule(source: Any, menu: FaultMenu) -> Schedule:
    if not menu.kinds:
        return Schedule()
    names, weights = _patterns()
    name = names[source.weighted(weights)]
    if not menu.transient and name in ("succeed_after", "down"):
        name = "flaky"
    return _interned(PATTERNS[name](source, menu))


def _patterns() -> tuple:
    """The registered patterns' names and weights (worked out again only when one is registered)."""
    names = PATTERNS.names()
    if _WEIGHED[0] != names:
        _WEIGHED[:] = [names, [WEIGHTS.get(n, 0.1) for n in names]]
    return _WEIGHED[0], _WEIGHED[1]


_WEIGHED: list = [None, None]
_DRAWN: dict = {}


def _interned(schedule: Schedule) -> Schedule:
    """One object per drawn schedule value, so what is derived from it (its wire text, what the
    worker caches by) is computed once per campaign, not once per step: a third of the steps are
    healthy and the rest repeat a few hundred shapes. Safe for drawn schedules: a parameter is
    always drawn from the same tuple, so equal drawn records also have equal types (``5.0`` never
    meets ``5``), which a schedule read from a file need not."""
    hit = _DRAWN.get(schedule)
    if hit is None:
        if len(_DRAWN) >= 8192:
            _DRAWN.clear()
        hit = _DRAWN[schedule] = schedule
    return hit


__all__ = ["FaultMenu", "PATTERNS", "Schedule", "draw_schedule"]
