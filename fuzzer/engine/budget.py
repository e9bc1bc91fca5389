"""``--budget`` is a limit: the wall time of a job, shrinking included.

The clock starts when the workers are up (start-up is reported in ``elapsed_s`` but not charged to
the budget, so a heavy parser import does not eat the search). Everything that runs the target is
given a deadline (``WorkerPool.run(..., deadline=)``), so a target that hangs on every input cannot
overrun it by more than one poll. Shrinking may spend at most ``shrink_share`` of the budget in
all, and any one finding at most ``shrink_cap_s``, so a target with many findings is still
searched; a finding the budget leaves unshrunk is reported as not minimized.
"""

from __future__ import annotations

import time
from typing import Any, Optional

from fuzzer.engine.events import StopReason

#: Default share of the budget that shrinking may use.
SHRINK_SHARE = 0.3
#: Default cap of one finding's shrink, seconds.
SHRINK_CAP_S = 10.0


def shrink_stopped_note(seconds: float) -> str:
    """What a finding says when its shrink ran out of time: the limit is the shrink's own (a share
    of ``--budget``, at most ``shrink_cap_s`` per finding), which a run under ``--max-examples``
    has too, so it is named as such and not as the run's budget."""
    return f"shrinking stopped at its time limit ({seconds:.3g} s for one finding): the input shown may shrink further"


class Budget:
    def __init__(self, *, seconds: Optional[float], max_examples: Optional[int] = None,
                 shrink_share: float = SHRINK_SHARE, shrink_cap_s: float = SHRINK_CAP_S):
        self.seconds = seconds
        self.max_examples = max_examples
        self.shrink_share = shrink_share
        self.shrink_cap_s = shrink_cap_s
        self.started: Optional[float] = None
        self.shrink_spent = 0.0

    def start(self) -> None:
        if self.started is None:
            self.started = time.monotonic()

    @property
    def deadline(self) -> Optional[float]:
        if self.seconds is None:
            return None
        self.start()
        return self.started + self.seconds  # type: ignore[operator]

    def remaining(self) -> Optional[float]:
        deadline = self.deadline
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def time_up(self) -> bool:
        remaining = self.remaining()
        return remaining is not None and remaining <= 0

    def stop_reason(self, executions: int) -> Optional[StopReason]:
        if self.max_examples is not None and executions >= self.max_examples:
            return StopReason.MAX_EXAMPLES
        if self.time_up():
            return StopReason.BUDGET
        return None

    def executions_left(self, executions: int) -> Optional[int]:
        return None if self.max_examples is None else max(0, self.max_examples - executions)

    def slice_deadline(self, index: int, count: int) -> Optional[float]:
        """Deadline of part ``index`` of ``count`` equal parts (one per tool)."""
        if self.seconds is None:
            return None
        self.start()
        return self.started + self.seconds * (index + 1) / count  # type: ignore[operator]

    def slice_examples(self, index: int, count: int) -> Optional[int]:
        """Executions allowed by the end of part ``index`` of ``count``."""
        if self.max_examples is None:
            return None
        return -(-self.max_examples * (index + 1) // count)

    # -- shrinking -------------------------------------------------------------------------------
    def shrink_window(self) -> float:
        """Seconds the next shrink may take (0: none left)."""
        window = self.shrink_cap_s
        if self.seconds is not None:
            window = min(window, self.seconds * self.shrink_share - self.shrink_spent, self.remaining() or 0.0)
        return max(0.0, window)

    def spent_shrinking(self, seconds: float) -> None:
        self.shrink_spent += max(0.0, seconds)


def units_total(total: Any, units: list, subject: Any, key: str) -> Any:
    """A campaign's limit (``budget_s`` / ``max_examples``) over its units (the parser's tools):
    the sum of the units' parts when some unit has its own (:meth:`Subject.limits`)."""
    parts = unit_parts(total, units, subject, key)
    return None if parts is None else sum(parts)


def unit_parts(total: Any, units: list, subject: Any, key: str) -> Optional[list]:
    """Each unit's part of ``budget_s`` / ``max_examples``: its own limit (:meth:`Subject.limits`),
    or an equal share of what the job's limit leaves."""
    overrides = {u: subject.limits(u)[key] for u in units if key in subject.limits(u)}
    if total is None and not overrides:
        return None
    rest = [u for u in units if u not in overrides]
    if total is None and rest:
        return None  # some units unlimited: no part is a limit
    left = max(0, (total or 0) - sum(overrides.values())) if total is not None else 0
    share = left / len(rest) if rest else 0
    parts = [overrides.get(u, share) for u in units]
    if key == "max_examples":
        parts = [int(p) for p in parts]
        if rest and total is not None:  # integer shares that add up exactly
            remainder = max(0, total - sum(overrides.values())) - sum(int(share) for _ in rest)
            for i, u in enumerate(units):
                if u in rest and remainder > 0:
                    parts[i] += 1
                    remainder -= 1
    return parts


__all__ = ["Budget", "SHRINK_CAP_S", "SHRINK_SHARE", "unit_parts", "units_total"]
