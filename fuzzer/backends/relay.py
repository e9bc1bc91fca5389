"""What a remote back end sends its members and gets back, as plain functions (no Ray here).

A member of a remote back end (a Ray actor) runs a local :class:`~fuzzer.isolation.WorkerPool`
on another process or machine, so three things that are implicit inside one pool must travel:

* **Text chunks.** A text list may hold a prefix of an earlier text as ``(index, end)``
  (:mod:`fuzzer.isolation.wire`), an index into the whole list. A chunk sent on its own keeps the
  reference when the text is in the chunk (re-based) and carries the prefix itself otherwise.
* **Deadlines.** ``time.monotonic()`` values mean nothing on another machine, so a deadline travels
  as the seconds left when the unit is sent, and becomes a deadline of the member's clock there.
* **Orders' lost inputs.** The pool calls ``order.resume(lost)`` on the order it holds when a
  worker hangs or dies on one of its inputs; the caller reads what the order kept (its lost
  inputs, what it skips) from the order it planned. A member holds an unpickled copy, so
  :class:`RecordingOrder` notes every ``resume`` there, and :func:`replay_resumes` makes the same
  calls on the caller's order when the result arrives: its order then reads exactly as after a
  local run. Nothing here knows what an order is beyond that protocol (``run``, ``size``,
  ``resume``), so every harness's orders travel alike.
"""

from __future__ import annotations

import time
from typing import Any, Optional


def chunk_of(texts: list, start: int, stop: int) -> list:
    """``texts[start:stop]`` as a list that stands alone: a prefix reference ``(index, end)`` to a
    text inside the chunk is re-based on it, one to a text outside becomes the prefix itself."""
    out: list = []
    for item in texts[start:stop]:
        if item.__class__ is tuple:
            base, end = item
            out.append((base - start, end) if start <= base < stop else _text(texts, base)[:end])
        else:
            out.append(item)
    return out


def _text(texts: list, index: int) -> str:
    item = texts[index]
    return item if item.__class__ is not tuple else _text(texts, item[0])[:item[1]]


def chunk_bounds(count: int, size: int) -> list[tuple[int, int]]:
    """Consecutive ``(start, stop)`` ranges of at most ``size`` items covering ``count`` items."""
    size = max(1, size)
    return [(start, min(count, start + size)) for start in range(0, count, size)]


def orders_per_call(count: int, members: int, depth: int, most: int) -> int:
    """How many consecutive orders of a round of ``count`` go to a member in one call.

    A call costs the caller and the member about as much as running a few hundred inputs of a fast
    parser, whatever it carries, so orders travel in groups. A round with more than ``depth``
    orders per member is cut into at least ``depth`` groups per member (at most ``most`` orders
    each), so a member always has its next group while it runs one. A round with fewer — on a
    large cluster every round: the engine plans two orders per worker — goes out as one group per
    member: the member's own pool runs a group's orders back to back, so nothing waits, and the
    round costs one call per member instead of one per order."""
    members = max(1, members)
    if count <= depth * members:
        return max(1, min(most, -(-count // members)))
    return max(1, min(most, count // (depth * members)))


def seconds_left(deadline: Optional[float], now: Optional[float] = None) -> Optional[float]:
    """A deadline of this process's monotonic clock as the seconds left (never negative)."""
    if deadline is None:
        return None
    return max(0.0, deadline - (time.monotonic() if now is None else now))


def deadline_in(seconds: Optional[float], now: Optional[float] = None) -> Optional[float]:
    """Seconds left, sent by the caller, as a deadline of this process's monotonic clock."""
    if seconds is None:
        return None
    return (time.monotonic() if now is None else now) + seconds


class RecordingOrder:
    """An order as a member's pool runs it, noting each ``resume`` (see the module docstring).

    It is pickled as the order it wraps (``__reduce__``), so the worker process receives and runs
    the order itself: the member's pool sees the order's ``size`` and ``resume`` through this."""

    __slots__ = ("order", "resumed")

    def __init__(self, order: Any):
        self.order = order
        self.resumed: list = []  # the Lost of every resume, in order

    @property
    def size(self) -> int:
        return self.order.size

    def run(self, runner: Any) -> Any:  # (in-process callers; the worker gets the order itself)
        return self.order.run(runner)

    def resume(self, lost: Any) -> bool:
        self.resumed.append(lost)
        resume = getattr(self.order, "resume", None)
        return bool(resume(lost)) if resume is not None else False

    def __reduce__(self) -> Any:
        return _same, (self.order,)


def _same(order: Any) -> Any:
    """Unpickling a :class:`RecordingOrder` gives the order it wrapped."""
    return order


def replay_resumes(order: Any, resumed: list) -> None:
    """Make on the caller's ``order`` the ``resume`` calls its copy received in the member (their
    answers were the copy's to act on; the order keeps what each call keeps)."""
    resume = getattr(order, "resume", None)
    if resume is None:
        return
    for lost in resumed:
        resume(lost)


__all__ = ["RecordingOrder", "chunk_bounds", "chunk_of", "deadline_in", "orders_per_call", "replay_resumes",
           "seconds_left"]
