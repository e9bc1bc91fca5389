"""The Ray back end: the job's orders and texts run on Ray actors, each holding a local worker pool.

Why Ray: the teams that outgrow one machine run model-serving stacks that already run on Ray
(vLLM's distributed serving does); submitting to the cluster they have beats a scheduler of our
own. Why it is cheap: workers generate, run and judge whole orders (DESIGN.md), so the driver
only plans orders and files the small results that come back.

Shape::

    driver (RayPool: plans nothing, files nothing; a pool with WorkerPool's API)
      |- actor 0..N-1 (one CPU each, spread over the nodes; ``--workers N`` is N actors)
      |    '- WorkerPool(workers=1): zygote, worker, watchdog, audit hook, as on one machine
      '- near: WorkerPool(workers=1) on the driver's machine, for the runs it waits on that are
         too small to be worth a call (confirming, shrinking: see :meth:`RayPool.run`)

Every unit of work (a group of consecutive orders, a chunk of texts) goes to an actor as one call
(pickled by the driver: :func:`_pack`); up to two are in flight per actor, so its worker never
waits for the driver between units (:class:`~fuzzer.backends.dispatch.Dispatcher`), and a round
too short for that goes out as one group per actor (:func:`~fuzzer.backends.relay.orders_per_call`).
Results are gathered as they complete
(``ray.wait``) and delivered into the caller's list at their place, with ``on_result`` as the
local pool calls it, so the caller files them in order number whichever actor finished first.

Faults. A target that kills or hangs its worker is the actor's pool's business, as locally: the
input is pinned, the worker re-forked, the actor untouched. An actor (or its whole node) that is
lost fails its calls with ``RayActorError``; the units it held are sent to the others, first in
line (counted in ``describe()["orders_rerun"]`` and said in the summary), and a replacement actor
is started, which joins when the cluster places it. A deadline travels as the seconds left when a
unit is sent (clocks of two machines do not compare); a unit queued behind another may overrun
it by at most that unit's own time, while the driver itself stops at the deadline.

Start and stop. Without ``--ray-address`` a Ray instance is started for the run (one CPU per
worker at least) and stopped with the pool, also on Ctrl-C and at interpreter exit; with it,
the driver joins the cluster (``auto``: the one ``ray start`` left on this machine) and leaves it
running. An address where nothing answers is one :class:`~fuzzer.backends.BackendError` line
within :data:`~fuzzer.backends.ray_cluster.CONNECT_TIMEOUT` + :data:`~fuzzer.backends.ray_cluster.INIT_TIMEOUT`
seconds, never Ray's endless retries (:mod:`fuzzer.backends.ray_cluster`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import socket
import sys
import threading
import time
import weakref
from dataclasses import replace
from typing import Any, Callable, Mapping, Optional

import ray
import ray.exceptions

from fuzzer.backends import BackendError
from fuzzer.backends.dispatch import Dispatcher, MemberLost
from fuzzer.backends.ray_cluster import connect, one_line
from fuzzer.backends.relay import (RecordingOrder, chunk_bounds, chunk_of, deadline_in, orders_per_call,
                                   replay_resumes, seconds_left)
from fuzzer.engine.interrupts import BALANCED
from fuzzer.isolation.spec import BATCH_SIZE, DEPTH, LOAD_TIMEOUT
from fuzzer.isolation.pool import Started, native_threads_started
from strategies.errors import ToolfuzzError

#: Seconds the actors may take to be placed, beyond the time their pools may take to load the code
#: under test (the pool's load timeout: the spec's, or LOAD_TIMEOUT).
PLACEMENT_TIMEOUT = 30.0
#: Seconds a replacement actor may take to be placed before the driver stops waiting for it.
JOIN_TIMEOUT = 60.0
#: Actors a pool may start in all, as a multiple of ``workers`` (the first ones included).
REPLACEMENTS = 3
#: Texts per call at least when a run's outcomes are judged as they arrive (the local pool sends
#: 16 a message; through Ray a call costs as much as running ~100 texts of a fast parser).
CHUNK_MIN = 64
#: Orders per call at most (consecutive ones of a round; fewer when the round is short).
GROUP_MAX = 8
#: Texts a run the caller waits on may hold at most to run on the driver's own worker (see
#: :meth:`RayPool.run`); 0: every run goes to the actors.
NEAR_MAX = CHUNK_MIN
#: Environment variables the driver's workers would inherit locally and actors' workers need too.
FORWARDED_PREFIX = "TOOLFUZZ_"

#: What a lost actor (or node) looks like to ``ray.get``.
_LOST = tuple(getattr(ray.exceptions, name) for name in (
    "RayActorError", "ActorDiedError", "ActorUnavailableError", "WorkerCrashedError", "NodeDiedError",
    "ObjectLostError", "OwnerDiedError", "LocalRayletDiedError", "ActorUnschedulableError")
    if hasattr(ray.exceptions, name))


class _Actor:
    """One member: a local :class:`~fuzzer.isolation.WorkerPool` of one worker on the actor's node.

    The pool's zygote is *spawned*, not forked: the actor process runs Ray's threads, and a fork
    would copy their locks mid-use into every worker. The spawn costs a fraction of a second once
    per actor; the workers are forked from that clean zygote as locally."""

    def __init__(self, spec: Any, environ: Mapping[str, str], import_path: list,
                 load_timeout: Optional[float] = None):
        from fuzzer.isolation import WorkerPool

        for path in reversed(import_path):  # the driver's PYTHONPATH, where it exists here too
            if os.path.isdir(path) and path not in sys.path:
                sys.path.insert(0, path)
        cwd = spec.cwd if spec.cwd and os.path.isdir(spec.cwd) else None
        self.pool = WorkerPool(replace(spec, cwd=cwd), workers=1, environ=environ, start_method="spawn",
                               load_timeout=load_timeout)

    def start(self) -> dict:
        self.pool.start()
        return {"node": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(), "pid": os.getpid(),
                "pids": self.pool.pids, "served": self.pool.info}

    # Results travel on as the worker sent them (rows, pickled bytes): unpickling them here only to
    # pickle them again for the driver cost the actor twice what the worker spent running the target.
    def run(self, texts: list, seconds: Optional[float], fresh: bool, options: Any,
            timeout: Optional[float] = None) -> list:
        return self.pool.run(texts, deadline=deadline_in(seconds), fresh=fresh, options=options, raw=True,
                             timeout=timeout)

    def run_orders(self, orders: bytes, seconds: Optional[float]) -> bytes:
        """A group of orders, pickled by the driver; their results, pickled here (see :func:`_pack`)."""
        recordings = [RecordingOrder(order) for order in pickle.loads(orders)]
        results = self.pool.run_orders(recordings, deadline=deadline_in(seconds), raw=True)
        return _pack([(result, recording.resumed) for result, recording in zip(results, recordings)])

    def sample_stack(self, text: str, after_s: float, seconds: Optional[float], options: Any = None) -> tuple:
        return self.pool.sample_stack(text, after_s, deadline_in(seconds), options=options)

    def pids(self) -> list:
        return self.pool.pids

    def close(self) -> None:
        self.pool.close()


_REMOTE: list = []


def _remote_actor() -> Any:
    """The Ray actor class of :class:`_Actor`, made once per process."""
    if not _REMOTE:
        _REMOTE.append(ray.remote(_Actor))
    return _REMOTE[0]


class _Member:
    """An actor as the driver sees it."""

    __slots__ = ("actor", "number", "info", "ready", "since")

    def __init__(self, actor: Any, number: int, ready: Any):
        self.actor, self.number, self.ready = actor, number, ready
        self.info: dict = {}
        self.since = time.monotonic()


_LIVE: "weakref.WeakSet[RayPool]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for pool in list(_LIVE):
        pool.close()


class RayPool(Started):
    """``workers`` Ray actors (None: one per CPU the cluster offers) running ``spec``'s target,
    behind :class:`~fuzzer.isolation.WorkerPool`'s API. ``address``: a cluster to join (``auto``,
    ``host:port``, ``ray://host:port``); None starts a Ray instance for the run, stopped by
    :meth:`close`. ``environ``: variables every worker gets (with the driver's ``TOOLFUZZ_*``).
    Two threads may run orders at once (their units share the actors, each gets its own results;
    how several tools' rounds could be in flight together) — unlike a local WorkerPool."""

    def __init__(self, spec: Any, workers: Optional[int] = None, *, address: Optional[str] = None,
                 environ: Optional[Mapping[str, str]] = None, batch_size: int = BATCH_SIZE,
                 load_timeout: Optional[float] = None):
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, not {workers}")
        self.spec, self.address, self.batch_size = spec, address, max(1, int(batch_size))
        #: Seconds each actor's pool may take to load the code under test (as a local pool's).
        self.load_timeout = load_timeout or getattr(spec, "load_timeout", None) or LOAD_TIMEOUT
        self.requested = workers
        self.workers = workers or 1  # resolved by start() when None
        forwarded = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_PREFIX)}
        self.environ = {**forwarded, **dict(environ or {})}
        self.lines: set = set()
        self.startup_s = 0.0
        self._members: list[_Member] = []
        self._joining: list[_Member] = []
        self._gone: list[_Member] = []  # lost actors, killed at close
        self._numbers = 0
        self._cpus = 1.0
        self._owns_ray = False
        self._started = False
        self._lost_why: list[str] = []
        self._nodes: set = set()  # the nodes actors ran on
        self._ran = 0  # actors that started (replacements included)
        self._lost = 0  # actors lost while running work (each once, however many calls noticed)
        self._lock = threading.RLock()  # the member lists, for callers in several threads
        self.dispatcher = Dispatcher(self)
        #: The driver's own worker (a local pool of one), for the runs too small to be worth a
        #: call to an actor (:meth:`run`); started with the actors.
        self.near: Any = None
        self._near_lock = threading.Lock()  # (a local pool takes one caller at a time)

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def started(self) -> bool:
        return self._started

    def start(self) -> None:
        """Join (or start) Ray, start the actors and have each import the target."""
        if self._started:
            return
        began = time.monotonic()
        _LIVE.add(self)
        try:
            native_threads_started()  # local pools this process starts from now on spawn their zygote
            self._owns_ray = connect(self.address, self.requested)
            cpus = int(ray.cluster_resources().get("CPU", 0)) or 1
            self.workers = self.requested or cpus
            # one CPU each; more actors than CPUs share them evenly (k per CPU fits every node)
            self._cpus = 1.0 if self.workers <= cpus else 1.0 / -(-self.workers // cpus)
            members = [self._new_member() for _ in range(self.workers)]
            if NEAR_MAX:  # (while the cluster places the actors and they import the target)
                from fuzzer.backends import settling_pool

                self.near = settling_pool(self)
                self.near.start()
            self._await_start(members)
        except BaseException:
            self.close()
            raise
        self._started = True
        self.startup_s = time.monotonic() - began

    def _new_member(self) -> _Member:
        cls = _remote_actor().options(num_cpus=self._cpus, scheduling_strategy="SPREAD", max_restarts=0,
                                      max_task_retries=0)
        path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        actor = cls.remote(self.spec, self.environ, path, self.load_timeout)
        self._numbers += 1
        return _Member(actor, self._numbers - 1, actor.start.remote())

    def _await_start(self, members: list[_Member]) -> None:
        """Wait for every actor to have imported the target; a load error is the target's (raised
        as the local pool raises it), an actor not placed in time joins later if it can."""
        waiting = {m.ready: m for m in members}
        limit = self.load_timeout + PLACEMENT_TIMEOUT
        deadline = time.monotonic() + limit
        while waiting and time.monotonic() < deadline:
            ready, _ = ray.wait(list(waiting), num_returns=1, timeout=min(0.5, max(0.0, deadline - time.monotonic())))
            for ref in ready:
                member = waiting.pop(ref)
                try:
                    self._started_member(member, _take(ref))
                except MemberLost as exc:
                    self._lost_why.append(exc.why)
                    self._gone.append(member)
            if self._members and all(time.monotonic() - m.since > 5.0 for m in waiting.values()) and \
                    ray.available_resources().get("CPU", 0.0) + 1e-9 < self._cpus:
                break  # the cluster has no room for the rest now: run with those it placed (the
                # others join when it has; actors placed but still importing the target are awaited)
        self._joining.extend(waiting.values())
        if not self._members:
            offered = ray.cluster_resources().get("CPU", 0)
            why = f" ({self._lost_why[0]})" if self._lost_why else ""
            raise BackendError(f"--backend ray: no actor started within {limit:g} s on a cluster offering "
                               f"{offered:g} CPU(s){why}")
        self._members.sort(key=lambda m: m.number)

    def _started_member(self, member: _Member, info: dict) -> None:
        with self._lock:
            member.info = info
            self._members.append(member)
            self._nodes.add(info.get("node"))
            self._ran += 1

    def close(self) -> None:
        """Stop the actors (each closes its pool, then is killed) and, if this pool started Ray,
        stop it: no process is left behind. Idempotent; also runs at interpreter exit."""
        _LIVE.discard(self)
        near, self.near = self.near, None
        if near is not None:
            with contextlib.suppress(Exception):
                near.close()
        members, self._members = self._members + self._joining + self._gone, []
        self._joining, self._gone = [], []
        self._started = False
        if not ray.is_initialized():
            return
        if members:
            with contextlib.suppress(Exception):
                closing = [m.actor.close.remote() for m in members]
                ray.wait(closing, num_returns=len(closing), timeout=5.0)
            for member in members:
                with contextlib.suppress(Exception):
                    ray.kill(member.actor, no_restart=True)
        if self._owns_ray:
            self._owns_ray = False
            with contextlib.suppress(Exception):
                ray.shutdown()

    # -- the dispatcher's transport ----------------------------------------------------------------
    def members(self) -> list:
        with self._lock:
            return list(self._members)

    def wait(self, refs: list, timeout: float) -> list:
        ready, rest = ray.wait(refs, num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        return ready

    def take(self, ref: Any) -> Any:
        return _take(ref)

    def lose(self, member: _Member, why: str) -> None:
        """``member`` is gone: stop sending to it, and start a replacement (it joins when placed)."""
        with self._lock:
            if member not in self._members:
                return  # (another call noticed first)
            self._members.remove(member)
            self._gone.append(member)
            self._lost_why.append(why)
            self._lost += 1
            with contextlib.suppress(Exception):
                ray.kill(member.actor, no_restart=True)
            if self._numbers < REPLACEMENTS * self.workers:  # not forever: a unit that kills actors is given up
                with contextlib.suppress(Exception):
                    self._joining.append(self._new_member())

    def joining(self) -> list:
        now = time.monotonic()
        with self._lock:
            for member in [m for m in self._joining if now - m.since > JOIN_TIMEOUT]:
                self._joining.remove(member)  # never placed: the cluster has no room for it
                self._gone.append(member)
            return [m.ready for m in self._joining]

    def joined(self, ref: Any) -> None:
        with self._lock:
            member = next((m for m in self._joining if m.ready is ref), None)
            if member is None:
                return  # (another call took it)
            self._joining.remove(member)
        try:
            self._started_member(member, _take(ref))
        except MemberLost as exc:
            self._lost_why.append(exc.why)
            self._gone.append(member)

    def gone(self, why: str) -> Exception:
        lost = f"; last lost: {self._lost_why[-1]}" if self._lost_why else ""
        return BackendError(f"--backend ray: every actor was lost and none could be started again ({why}{lost})")

    # -- running -----------------------------------------------------------------------------------
    def run_one(self, text: str) -> Any:
        return self.run([text])[0]

    @property
    def info(self) -> Any:
        """What the served object offered when it loaded (its ``info``), as the first actor's pool saw it."""
        for member in self._members:
            if member.info:
                return member.info.get("served")
        return None

    def run(self, texts: list, *, deadline: Optional[float] = None, fresh: bool = False, options: Any = None,
            timeout: Optional[float] = None,
            on_result: Optional[Callable[[list], None]] = None) -> list:
        """One outcome per text, in order, as :meth:`fuzzer.isolation.WorkerPool.run`: chunks of the
        texts go to the actors (``fresh``: all of them to one actor's newly started worker, in
        order); ``on_result(results)`` as outcomes arrive. Interrupting it closes the pool.

        A run the caller waits on whole (no ``on_result``) of at most :data:`NEAR_MAX` texts, and
        every ``fresh`` one, runs on the driver's own worker instead: confirming a finding and each
        step of shrinking it are such runs, one after another, and through a cluster each would
        wait a call's round trip (milliseconds, against microseconds to run a fast parser's text)
        for no parallelism (it is one chunk: one actor would run it all)."""
        texts = list(texts)
        count = len(texts)
        if not count:
            return []
        self.start()
        if self.near is not None and (fresh or (on_result is None and count <= NEAR_MAX)):
            try:
                with self._near_lock:
                    results = self.near.run(texts, deadline=deadline, fresh=fresh, options=options, timeout=timeout)
            except BaseException:
                self.close()
                raise
            self.lines.update(self.near.lines)
            return results
        results: list = [None] * count
        if fresh:
            bounds = [(0, count)]
        else:
            actors = max(1, len(self._members))
            size = max(1, min(self.batch_size, -(-count // actors)))
            if on_result is not None:  # two chunks per actor, judged while the next ones run; not
                # smaller than CHUNK_MIN: a call costs the driver and the actor ~0.5 ms each
                size = min(size, max(-(-count // (actors * DEPTH)), CHUNK_MIN))
            bounds = chunk_bounds(count, size)
        chunks = [chunk_of(texts, start, stop) if start or stop != count else texts for start, stop in bounds]

        def submit(member: _Member, unit: int) -> Any:
            return member.actor.run.remote(chunks[unit], seconds_left(deadline), fresh, options, timeout)

        def deliver(unit: int, outcomes: list) -> None:
            start, stop = bounds[unit]
            decode = self.spec.decode  # (a worker's result; a hang or a death is the spec's fault already)
            results[start:stop] = [x if x is None or self._is_fault(x) else decode(x) for x in outcomes]

        try:
            self._run(len(chunks), submit, deliver, deadline=deadline, width=1 if fresh else None,
                      on_arrived=(lambda: on_result(results)) if on_result is not None else None)
        except BaseException:
            self.close()
            raise
        if getattr(self.spec, "coverage", False):
            for outcome in results:
                lines = getattr(outcome, "lines", None)
                if lines:
                    self.lines.update(lines)
        return results

    def _is_fault(self, result: Any) -> bool:
        """Whether a result an actor relayed is the spec's fault of a hang or a death (decoded
        already) rather than a worker's result (decoded here)."""
        kind = self.__dict__.get("_fault_type")
        if kind is None:
            kind = self._fault_type = type(self.spec.fault("hung", 0.0, None, ()))
        return result.__class__ is kind

    def run_orders(self, orders: list, *, deadline: Optional[float] = None, stop_sending: Optional[float] = None,
                   on_result: Optional[Callable[[list], None]] = None, on_sent: Optional[Callable[[], None]] = None,
                   stop_when: Optional[Callable[[], bool]] = None) -> list:
        """One result per order, in order, as :meth:`fuzzer.isolation.WorkerPool.run_orders`: orders
        go to the actors in groups of consecutive ones (a call costs ~0.5 ms of CPU on each side:
        :func:`~fuzzer.backends.relay.orders_per_call`), pickled once per group, whose pools run
        them and pin their lost inputs; the calls an order's copy got there (``resume``) are made
        on ``orders[i]`` when its result arrives. An actor lost runs its groups again elsewhere,
        whole (as they were sent: nothing of what it did to them came back)."""
        orders = list(orders)
        if not orders:
            return []
        self.start()
        results: list = [None] * len(orders)
        groups = chunk_bounds(len(orders), orders_per_call(len(orders), len(self._members), DEPTH, GROUP_MAX))

        packed: dict = {}  # unit -> its orders pickled (once: a group lost is sent again as it was)

        def submit(member: _Member, unit: int) -> Any:
            blob = packed.get(unit)
            if blob is None:
                start, stop = groups[unit]
                blob = packed[unit] = _pack(orders[start:stop])
            return member.actor.run_orders.remote(blob, seconds_left(deadline))

        def deliver(unit: int, blob: bytes) -> None:
            start, _stop = groups[unit]
            packed.pop(unit, None)
            for index, (result, resumed) in enumerate(pickle.loads(blob), start):
                if result.__class__ is bytes:  # (what the worker sent; a Lost or None came as itself)
                    result = pickle.loads(result)
                with BALANCED:  # the order's lost inputs and its result, together
                    replay_resumes(orders[index], resumed)
                    results[index] = result

        try:
            self._run(len(groups), submit, deliver, deadline=deadline, stop_sending=stop_sending,
                      stop_when=stop_when, on_sent=on_sent, weight=lambda unit: groups[unit][1] - groups[unit][0],
                      on_arrived=(lambda: on_result(results)) if on_result is not None else None)
        except BaseException as exc:
            if on_result is not None and isinstance(exc, KeyboardInterrupt):
                with BALANCED, contextlib.suppress(Exception):  # what arrived is counted (as locally)
                    on_result(results)
            self.close()
            raise
        return results

    def sample_stack(self, text: str, after_s: float, deadline: Optional[float] = None,
                     options: Any = None) -> tuple:
        """:meth:`fuzzer.isolation.WorkerPool.sample_stack` in one actor's pool (where the frames are)."""
        self.start()
        box: list = [(None, ())]

        def submit(member: _Member, unit: int) -> Any:
            return member.actor.sample_stack.remote(text, after_s, seconds_left(deadline), options)

        def deliver(unit: int, value: tuple) -> None:
            box[0] = value

        try:
            self._run(1, submit, deliver, deadline=deadline, width=1)
        except BaseException:
            self.close()
            raise
        return box[0]

    def _run(self, count: int, submit: Callable[[Any, int], Any], deliver: Callable[[int, Any], None],
             **kwargs: Any) -> None:
        self.dispatcher.run(count, deliver, submit=submit, **kwargs)

    # -- what the run says about the back end --------------------------------------------------------
    def actors(self) -> list[dict]:
        """The actors working now: their node id, host and process id."""
        return [dict(m.info) for m in self._members]

    def describe(self) -> dict:
        """The report's ``backend``: where the work ran and what the cluster's faults cost."""
        return {"name": "ray", "address": self.address or "local instance", "workers": self.workers,
                "actors_started": self._ran, "nodes": len(self._nodes), "startup_s": round(self.startup_s, 3),
                "actors_lost": self._lost, "orders_rerun": self.dispatcher.rerun,
                "orders_given_up": self.dispatcher.given_up}

    def notes(self) -> list[str]:
        d = self.dispatcher
        out = []
        if self._lost:
            out.append(f"{self._lost} Ray actor(s) lost during the run ({self._lost_why[-1]}); their "
                       f"{d.rerun} order(s) in flight were run again on other actors")
        if d.given_up:
            out.append(f"{d.given_up} order(s) not run: each lost {d.max_reruns + 1} actors in a row "
                       "(it takes down whatever runs it); their executions are not counted")
        return out


def _pack(value: Any) -> bytes:
    """What a call to an actor carries, or its answer: pickled here, so Ray moves one bytes object.

    Handed a list of orders or of results, Ray's serializer (cloudpickle, reducing object by object
    in Python) cost the driver and the actor more per call than the standard pickler does for the
    whole list; orders and results are plain picklable data anyway (a local pool pickles them the
    same way for its workers)."""
    return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)


def _take(ref: Any) -> Any:
    """``ray.get(ref)``; a lost actor or node is :class:`MemberLost`; an error the actor's pool
    raised (the target cannot be loaded) is raised here as the local pool raises it."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, ToolfuzzError):
            raise cause from None
        what = f"{type(cause).__name__}: {one_line(cause)}" if cause is not None else one_line(exc)
        raise BackendError(f"--backend ray: an actor failed: {what}") from None
    except _LOST as exc:
        raise MemberLost(f"{type(exc).__name__}: {one_line(exc)}") from None


__all__ = ["RayPool"]
