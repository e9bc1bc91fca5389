"""Spread units of work over remote members, gather results as they complete, and run a lost
member's units again elsewhere.

A remote back end (Ray actors) has *members*, each running units of work (an order, a chunk of
texts) one after another. :class:`Dispatcher` keeps up to :data:`~fuzzer.isolation.spec.DEPTH`
units in flight per member (so a member's worker never waits for the caller between two units),
hands each result to ``deliver`` as it arrives, and keeps the promises of
:meth:`fuzzer.isolation.WorkerPool.run_orders`: nothing past ``deadline``, nothing new sent past
``stop_sending`` or once ``stop_when()``, ``on_sent`` once the first units are out, ``on_result``
after the members have their next units.

A member can be lost with the units it holds (its process or its whole node died). Its results
died with it and none of them was delivered, so each of its units is sent again to a member still
there, first in line and in the order it was planned: counts add up (a unit is delivered once)
and nothing it would have found is lost. :attr:`Dispatcher.rerun` counts those sends. A unit
that loses :data:`MAX_RERUNS` members in a row (it takes down whatever runs it) is given up
(its result stays None, as one the deadline cut off) and counted in :attr:`Dispatcher.given_up`.

The transport is duck-typed, so the logic is tested without any cluster::

    transport.members()            -> the members that take work now (in a stable order)
    transport.submit(member, i)    -> a handle for unit i sent to member
    transport.wait(handles, t)     -> the handles whose result is ready, waiting at most t seconds
    transport.take(handle)         -> the result; raises MemberLost when its member is gone
    transport.lose(member, why)    -> the member is gone: stop using it (start another, if it can)
    transport.joining()            -> handles of members starting up (waited on with the rest)
    transport.joined(handle)       -> one of those is ready (it is a member from now on)
    transport.gone(why)            -> an exception to raise: no member is left, none is starting
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Callable, Optional

from fuzzer.isolation.spec import DEPTH

#: Members a unit may lose before it is given up.
MAX_RERUNS = 3
#: Seconds between checks of the deadline, stop_when and Ctrl-C while waiting for results.
POLL = 0.05


class MemberLost(Exception):
    """The member holding a unit is gone (``why`` says how); its units are to be sent elsewhere."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class Dispatcher:
    """Runs units on a transport's members (see the module docstring). Several ``run`` calls may
    go on at once from different threads (each its own units; the members are shared), if the
    transport allows it."""

    def __init__(self, transport: Any, depth: int = DEPTH, max_reruns: int = MAX_RERUNS):
        self.transport, self.depth, self.max_reruns = transport, max(1, depth), max_reruns
        self._lock = threading.Lock()
        #: Units sent again because the member running them was lost (over every run).
        self.rerun = 0
        #: Members lost while running units (over every run).
        self.members_lost = 0
        #: Units given up after losing MAX_RERUNS members each.
        self.given_up = 0

    def run(self, count: int, deliver: Callable[[int, Any], None], *, deadline: Optional[float] = None,
            stop_sending: Optional[float] = None, stop_when: Optional[Callable[[], bool]] = None,
            on_sent: Optional[Callable[[], None]] = None, on_arrived: Optional[Callable[[], None]] = None,
            width: Optional[int] = None, submit: Optional[Callable[[Any, int], Any]] = None,
            weight: Optional[Callable[[int], int]] = None) -> None:
        """Run units ``0..count-1``; ``deliver(i, result)`` for each as it arrives (any order).

        ``on_arrived()`` after results arrived, once the members have their next units; ``width``:
        use only the first ``width`` members (1: one member runs everything, in order);
        ``submit(member, i)``: how this call sends a unit (default: the transport's ``submit``);
        ``weight(i)``: what unit i counts for in :attr:`rerun` and :attr:`given_up` (a group of
        orders sent in one call counts its orders; default 1)."""
        transport = self.transport
        submit = submit or transport.submit
        pending: deque = deque(range(count))
        inflight: dict[Any, tuple[Any, int]] = {}  # handle -> (member, unit)
        held: dict[int, list] = {}  # id(member) -> its handles, oldest first
        losses: dict[int, int] = {}  # unit -> members it lost
        notify = False
        monotonic = time.monotonic
        while True:
            now = monotonic()
            if deadline is not None and now >= deadline:
                return  # what is in flight stays None; the members stop at the deadline they were given
            if pending and ((stop_sending is not None and now >= stop_sending) or (stop_when is not None and stop_when())):
                pending.clear()
            members = transport.members()
            if width is not None:
                members = members[:width]
            if pending:  # (once every unit is out, nothing to walk: on hundreds of members, a walk per result)
                for depth in range(1, self.depth + 1):  # one unit per member first, then a second each
                    for member in members:
                        handles = held.setdefault(id(member), [])
                        while pending and len(handles) < depth:
                            unit = pending.popleft()
                            handle = submit(member, unit)
                            handles.append(handle)
                            inflight[handle] = (member, unit)
            if on_sent is not None:
                on_sent, sent = None, on_sent
                sent()
            if notify:
                notify = False
                on_arrived()
            joining = list(transport.joining())
            if not inflight and not pending:
                return
            if not inflight and not members and not joining:
                raise transport.gone("no member is left to run the work, and none is starting")
            wait_s = POLL if deadline is None else max(0.0, min(POLL, deadline - now))
            ready = transport.wait(list(inflight) + joining, wait_s)
            arrived = False
            for handle in ready:
                if handle not in inflight:
                    if handle in joining:
                        transport.joined(handle)
                    continue  # (a lost member's handle, already sent elsewhere)
                member, unit = inflight[handle]
                try:
                    value = transport.take(handle)
                except MemberLost as exc:
                    self._lose(member, exc.why, held, inflight, pending, losses, weight)
                    continue
                del inflight[handle]
                held[id(member)].remove(handle)
                deliver(unit, value)
                arrived = True
            if arrived and on_arrived is not None:
                notify = True

    def _lose(self, member: Any, why: str, held: dict, inflight: dict, pending: deque, losses: dict,
              weight: Optional[Callable[[int], int]] = None) -> None:
        """``member`` is gone: its units go first in line again (in the order they were sent)."""
        again, given_up = [], 0
        for handle in held.pop(id(member), []):
            _member, unit = inflight.pop(handle)
            losses[unit] = losses.get(unit, 0) + 1
            if losses[unit] > self.max_reruns:
                given_up += weight(unit) if weight is not None else 1
                continue
            again.append(unit)
        with self._lock:  # (another run may count at the same moment)
            self.members_lost += 1
            self.rerun += sum(weight(unit) for unit in again) if weight is not None else len(again)
            self.given_up += given_up
        pending.extendleft(reversed(again))
        self.transport.lose(member, why)


__all__ = ["Dispatcher", "MAX_RERUNS", "MemberLost", "POLL"]
