"""The Ray back end against local workers, its start-up cost, and where the driver would saturate.

In one run, on the same machine (shared and noisy: the campaigns alternate, ``--rounds`` of each):

1. ``--workers 2`` locally: get_weather campaigns of ``--seconds``; executions per second of
   fuzzing (start-up excluded).
2. ``--backend ray`` with 2 actors on a Ray instance started here: the same campaigns; executions
   per second, and the start-up (Ray, the actors, the target's import) apart.
3. The driver's ceiling, from campaigns on the same 2 actors whose orders are those of a cluster of
   :data:`AT_SCALE` workers (:mod:`fuzzer.harnesses.parser.drawn`: 8,192 samples, planned in the
   workers). Measured from the first order planned past the scheduler's first pass to the end of
   the fuzzing loop (probing, the first pass and the campaign's setting up and wrapping up are
   once per tool or run, not per worker):

   * per order, the driver's CPU planning it (``ToolCampaign.order``), filing its result and
     telling the scheduler (``ToolCampaign._take``, ``feedback``) and unpickling its result (timed
     on a copy); moving it through Ray as at scale: a no-op order two a call (on a large cluster a
     round is two orders per actor, one call: :func:`fuzzer.backends.relay.orders_per_call`), this
     process's CPU (Ray's threads too), and half a Ray wait over :data:`AT_SCALE` calls in flight
     (the dispatcher's look when a call's results arrive);
   * between rounds (the exploration arm's havoc batch built, run and judged here, crediting the
     arms, the slow probe: ``ParserSubject.turn``, ``after_round``), per turn of the loop, which at
     scale is a round of two orders per actor (or, at most ``MAX_SHARE`` of the turns, a batch);
   * in time, whatever runs: the driver's CPU per second while every actor runs an order and none
     comes back (the dispatcher looks at the deadline every ``POLL`` s; Ray's threads), plus at
     scale a Ray wait over every actor's call per look;
   * settling (confirming, shrinking, announcing: ``CampaignJob._settle``): the budget holds it to
     its shrink share of the run's time, and its CPU to at most that — the share it took here if more;
   * one worker: executions per CPU-second of an actor and its worker process (read in ``/proc``
     while they live).

   One driver core saturates at ``N = (1 - settling share - in time) / (CPU per execution x r)``
   workers. As a check, what the loops' CPU holds beyond those parts and the in-time rate is
   counted per execution too (a difference of large figures: noisy on a shared machine); and the
   figure counting all the loops spent but settling per execution, as if nothing were per round or
   in time, is printed last.

Goals (issue 29): Ray >= 0.85x the local executions/s with 2 workers on this 2-core machine, and a
projected saturation point >= 256 workers. Run from the repository root::

    .venv/bin/python benchmarks/cluster.py [--seconds 6] [--rounds 2] [--target M:A] [--no-coverage]
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fuzzer.backends import make_pool  # noqa: E402
from fuzzer.backends.dispatch import POLL  # noqa: E402
from fuzzer.engine.budget import SHRINK_SHARE  # noqa: E402
from fuzzer.engine.pipeline import run_job  # noqa: E402
from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings  # noqa: E402
from fuzzer.harnesses.parser.drawn import order_size  # noqa: E402
from fuzzer.harnesses.parser.explore import MAX_SHARE  # noqa: E402
from fuzzer.harnesses.parser.outcome import TargetSpec  # noqa: E402
from fuzzer.harnesses.parser.tool import ToolCampaign  # noqa: E402
from strategies._internal.tools import builtin_registry  # noqa: E402

#: Actors of the cluster the driver's ceiling is measured for (the issue's goal).
AT_SCALE = 256
#: The parser's batch size (``--batch-size``'s default).
BATCH = 256


class Clock:
    """What a campaign's fuzzing loop cost: CPU seconds of the thread that ran each part (planning
    and filing run in a rounds thread while the campaign's thread settles), and the window's
    process and worker CPU."""

    filed = iterations = turns = 0
    planning_s = filing_s = settling_s = between_s = moving_s = unpacking_s = measuring_s = 0.0
    window: dict = {}
    workers: "WorkerCPU | None" = None
    unpacking = False  # time unpickling each result (the at-scale campaigns)

    @classmethod
    def reset(cls, workers: "WorkerCPU | None") -> None:
        cls.filed = cls.iterations = cls.turns = 0
        cls.planning_s = cls.filing_s = cls.settling_s = cls.between_s = cls.moving_s = 0.0
        cls.unpacking_s = cls.measuring_s = 0.0
        cls.window, cls.workers, cls.unpacking = {}, workers, workers is not None

    @classmethod
    def mark(cls, edge: str, tally) -> None:
        """The window's ``start`` (the first order planned past the scheduler's first pass) or
        ``end`` (the fuzzing loop over); what the clocks say, the parts' too."""
        if edge == "start" and "start" in cls.window:
            return
        workers = cls.workers.sample() if cls.workers is not None else 0.0
        sampling = sum(sampler.spent for sampler in SAMPLERS)
        cls.window[edge] = {"cpu": _cpu() - sampling - cls.measuring_s, "workers": workers,
                            "executions": tally.executions, "wall": time.monotonic(),
                            **{key: getattr(cls, key) for key in PARTS}}


#: Clock ticks of /proc's CPU times.
TICKS = os.sysconf("SC_CLK_TCK")
#: Seconds between readings of the workers' CPU.
SAMPLE_S = 0.1
#: What the window measures (Clock's figures), each the difference between its end and its start.
PARTS = ("planning_s", "filing_s", "settling_s", "between_s", "moving_s", "unpacking_s", "filed", "iterations",
         "turns")


def _proc_cpu(pid: int):
    """CPU seconds process ``pid`` spent so far (None: it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def _children(pid: int) -> list:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(child) for child in fh.read().split()]
    except OSError:
        return []


#: Every WorkerCPU started (their reading is the benchmark's CPU, not the driver's).
SAMPLERS: list = []


class WorkerCPU(threading.Thread):
    """The CPU of the workers' processes — ``roots`` (a pool's zygote, the actors) and everything
    under them — read every :data:`SAMPLE_S` seconds while they live: the pool restarts the
    workers busy when a campaign's deadline passes, and a process gone takes its CPU with it (at
    most a sample's worth is missed: fewer CPU-seconds, more executions per CPU-second of a
    worker, a lower ceiling — the safe side). Its own CPU is the driver's (``spent``), taken out
    of the driver's figures."""

    def __init__(self, roots: list):
        super().__init__(name="benchmark-worker-cpu", daemon=True)
        self.roots, self.last, self.spent = list(roots), {}, 0.0
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        SAMPLERS.append(self)

    def sample(self) -> float:
        """Read every process now; the CPU of every process seen so far (the gone at their last reading)."""
        with self.lock:
            began = time.thread_time()
            todo, seen = list(self.roots), set()
            while todo:
                pid = todo.pop()
                if pid in seen:
                    continue
                seen.add(pid)
                cpu = _proc_cpu(pid)
                if cpu is not None:
                    self.last[pid] = cpu
                    todo += _children(pid)
            self.spent += time.thread_time() - began
            return sum(self.last.values())

    def run(self) -> None:
        while not self.stopping.wait(SAMPLE_S):
            self.sample()


def moving(run_orders):
    """A pool's ``run_orders``, adding to ``Clock.moving_s`` the CPU seconds it spent itself (its
    ``on_result`` calls, which file results, not counted)."""
    def call(orders, **kwargs):
        on_result, inside = kwargs.get("on_result"), [0.0]
        if on_result is not None:
            def counted(results):
                started = time.thread_time()
                try:
                    on_result(results)
                finally:
                    inside[0] += time.thread_time() - started
            kwargs["on_result"] = counted
        started = time.thread_time()
        try:
            return run_orders(orders, **kwargs)
        finally:
            Clock.moving_s += time.thread_time() - started - inside[0]
    return call


def timed(function, key: str):
    """``function``, adding the CPU seconds of each call to ``Clock.<key>``."""
    def call(*args, **kwargs):
        started = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            setattr(Clock, key, getattr(Clock, key) + time.thread_time() - started)
    return call


class TimedTool(ToolCampaign):
    """The parser harness's per-tool engine, timing planning and filing."""

    def order(self, count, number, reruns):
        if not self.stream.scheduler.in_first_pass:  # (the first pass is the tool's, once: not in the window)
            Clock.mark("start", self.tally)
        return timed(super().order, "planning_s")(count, number, reruns)

    def feedback(self, orders, results):
        return timed(super().feedback, "filing_s")(orders, results)

    def _take(self, result, order):
        if Clock.unpacking and result is not None and hasattr(result, "by_class"):
            # what unpickling this result cost the driver (it came as bytes): per order, whatever
            # else the driver spends while its workers run (measured here, left out of the driver's CPU)
            began = time.thread_time()
            blob = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
            unpacked = time.thread_time()
            pickle.loads(blob)
            Clock.unpacking_s += time.thread_time() - unpacked
            Clock.measuring_s += time.thread_time() - began
        started = time.thread_time()
        try:
            return super()._take(result, order)
        finally:
            Clock.filing_s += time.thread_time() - started
            if result is not None and hasattr(result, "by_class"):
                Clock.filed += 1


class TimedJob(CampaignJob):
    """A parser campaign, timed; ``as_workers``: its orders as large as on a pool of that many."""

    tool_campaign = TimedTool

    def __init__(self, *args, as_workers: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        subject = self.subject
        if as_workers:
            size = order_size(subject.settings.batch_size, as_workers)
            subject.__class__ = type("Subject", (type(subject),), {"order_size": size})
        turn, after_round = subject.turn, subject.after_round

        def turned(unit, job, left):  # the exploration arm's turn: its havoc batch built, run, judged here
            started = time.thread_time()
            try:
                ran = turn(unit, job, left)
            finally:
                Clock.between_s += time.thread_time() - started
            Clock.iterations += 1
            Clock.turns += ran is not None
            return ran
        subject.turn = turned
        subject.after_round = timed(after_round, "between_s")  # (crediting the arms, the slow probe)
        end = subject.end

        def ended(unit, job):
            Clock.mark("end", job.tally)
            return end(unit, job)
        subject.end = ended

    def _settle(self):
        steps = super()._settle()
        while True:
            started = time.thread_time()
            try:
                event = next(steps)
            except StopIteration:
                return
            finally:
                Clock.settling_s += time.thread_time() - started
            yield event


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def campaign(pool, target: str, seconds: float, coverage: bool, *, workers: "WorkerCPU | None" = None,
             as_workers: int = 0, **more) -> dict:
    """One campaign on a started ``pool``; its figures (start-up excluded: the pool is up)."""
    Clock.reset(workers)
    settings = CampaignSettings(tools=["get_weather"], target=target, budget_s=seconds, explore=coverage, **more)
    result = run_job(TimedJob(builtin_registry(), settings, pool, as_workers=as_workers)).result
    fuzzing_s = max(1e-9, result.elapsed_s - result.setup_s)
    start, end = Clock.window.get("start"), Clock.window.get("end")
    if start is None or end is None:
        raise SystemExit("a campaign planned no order past the scheduler's first pass: nothing to measure "
                         "(a longer --seconds?)")
    figures = {"rate": result.executions / fuzzing_s, "executions": result.executions, "fuzzing_s": fuzzing_s,
               "findings": len(result.findings)}
    figures.update({f"window_{key}": end[key] - start[key] for key in start})
    figures["settling_s"] = Clock.settling_s
    return figures


def started(backend: str, target: str, coverage: bool) -> tuple:
    """(pool of 2 workers or actors, seconds its start took)."""
    pool = make_pool(backend, TargetSpec(target=target, cwd=ROOT, timeout=2.0, coverage=coverage), 2)
    began = time.monotonic()
    pool.start()
    pool.run_orders = moving(pool.run_orders)
    return pool, time.monotonic() - began


def actor_processes(pool) -> list:
    """The Ray pool's actors' process ids (this machine's processes; their workers are under them)."""
    return [member.info["pid"] for member in pool.members()]


def total(runs: list, key: str) -> float:
    return sum(run[key] for run in runs)


class Noop:
    """An order that runs nothing: what moving one order and its result costs, alone."""

    size = 1

    def run(self, runner):
        return {"by_class": {"valid": [256, 0]}, "failures": [], "seeds": [], "built": [[True]]}


class Sleep:
    """An order that runs nothing for ``seconds``: what the driver spends while its workers are busy."""

    size = 1

    def __init__(self, seconds: float):
        self.seconds = seconds

    def run(self, runner):
        time.sleep(self.seconds)
        return {"by_class": {}, "failures": [], "seeds": [], "built": []}


def idle_cpu(pool, seconds: float = 3.0) -> float:
    """Driver CPU seconds per second while every actor runs an order and none comes back (the
    dispatcher's look at the deadline every :data:`~fuzzer.backends.dispatch.POLL` seconds, Ray's
    own threads): what the driver spends in time, not per order."""
    from benchmarks.cluster import Sleep as order  # (by its importable name, not __main__'s)

    pool.run_orders([order(0.0) for _ in range(pool.workers)])  # warm
    def spent() -> float:
        return _cpu() - sum(sampler.spent for sampler in SAMPLERS)

    before, began = spent(), time.monotonic()
    for _ in range(3):
        pool.run_orders([order(seconds / 3) for _ in range(pool.workers)])
    return (spent() - before) / (time.monotonic() - began)


def dispatch_cpu(pool, orders: int, per_actor: int) -> float:
    """Driver CPU seconds per order to send ``orders`` no-op orders through ``pool`` in rounds of
    ``per_actor`` orders per actor (as the campaign sends them), and take the results."""
    from benchmarks.cluster import Noop as order  # (by its importable name, not __main__'s)

    size = per_actor * pool.workers
    pool.run_orders([order() for _ in range(32)])  # warm
    before = _cpu()
    for start in range(0, orders, size):
        pool.run_orders([order() for _ in range(min(size, orders - start))])
    return (_cpu() - before) / orders


def wait_cpu(refs: int, repeats: int = 200) -> float:
    """Driver CPU seconds of one ``ray.wait`` over ``refs`` calls in flight (the dispatcher waits
    over every call out, once per batch of results it takes)."""
    import ray

    @ray.remote(num_cpus=0)
    class Busy:
        def hold(self, seconds: float) -> None:
            time.sleep(seconds)

    busy = Busy.remote()
    pending = [busy.hold.remote(0.01 if i else 30.0) for i in range(refs)]  # (queued behind the first)
    ray.wait(pending, num_returns=1, timeout=0)
    began = time.thread_time()
    for _ in range(repeats):
        ray.wait(pending, num_returns=1, timeout=0)
    spent = (time.thread_time() - began) / repeats
    ray.kill(busy)
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="fuzzing seconds of each campaign")
    parser.add_argument("--rounds", type=int, default=2, help="campaigns of each kind, alternating")
    parser.add_argument("--target", default="fuzzer.targets.naive:parse",
                        help="the parser (default: the bundled naive one, whose findings are confirmed and shrunk)")
    parser.add_argument("--no-coverage", dest="coverage", action="store_false",
                        help="without exploration (whose havoc batches the driver builds and judges itself)")
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # the actors unpickle this module's Noop order: the repository on their import path too
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

    local_pool, local_start = started("local", args.target, args.coverage)
    ray_pool, ray_start = started("ray", args.target, args.coverage)
    local, remote, scale = [], [], []
    scale_size = order_size(BATCH, AT_SCALE)
    local_cpu, actors_cpu = WorkerCPU(local_pool.pids[:1]), WorkerCPU(actor_processes(ray_pool))
    local_cpu.start()
    actors_cpu.start()
    try:
        for _ in range(args.rounds):  # alternating: a shared machine's load drifts
            local.append(campaign(local_pool, args.target, args.seconds, args.coverage, workers=local_cpu))
            remote.append(campaign(ray_pool, args.target, args.seconds, args.coverage))
            scale.append(campaign(ray_pool, args.target, args.seconds, args.coverage, workers=actors_cpu,
                                  as_workers=AT_SCALE, planning="workers"))
        moving_at_scale = dispatch_cpu(ray_pool, 800, 2)  # a large cluster's rounds: two orders per actor
        waiting = wait_cpu(AT_SCALE)
        idle = idle_cpu(ray_pool)
    finally:
        local_cpu.stopping.set()
        actors_cpu.stopping.set()
        local_pool.close()
        ray_pool.close()

    local_rate, ray_rate = statistics.median(r["rate"] for r in local), statistics.median(r["rate"] for r in remote)
    print(f"local, 2 workers:  {local_rate:>9,.0f} executions/s  (median of {args.rounds}; start-up {local_start:.2f} s)")
    print(f"ray, 2 actors:     {ray_rate:>9,.0f} executions/s  (median of {args.rounds}; start-up {ray_start:.2f} s: "
          "Ray, the actors, the target's import)")
    ratio = ray_rate / local_rate if local_rate else 0.0
    print(f"ray / local:       {ratio:>9.2f}x   (each round: "
          + ", ".join(f"{r['rate'] / l['rate']:.2f}" for l, r in zip(local, remote)) + ")")

    # the driver's ceiling, from the at-scale campaigns' fuzzing loops
    executions = max(1, total(scale, "window_executions"))
    window, settling, wall = total(scale, "window_cpu"), total(scale, "window_settling_s"), total(scale, "window_wall")
    orders = max(1, total(scale, "window_filed"))
    planning, filing = total(scale, "window_planning_s"), total(scale, "window_filing_s")
    unpacking, moving_here = total(scale, "window_unpacking_s"), total(scale, "window_moving_s")
    between = total(scale, "window_between_s")
    # per order at scale: planning it, filing it and unpickling its result as measured here, moving a
    # no-op order two a call (process CPU: Ray's threads too), and half a Ray wait over every
    # actor's call (the dispatcher's look when a call's results arrive)
    per_order = (planning + filing + unpacking) / orders + moving_at_scale + waiting / 2
    # between rounds (the exploration arm's turn, crediting the arms, the slow probe): once per turn
    # of the loop, at scale a round of two orders per actor or, at most MAX_SHARE of the turns, a
    # batch of the exploration arm
    iterations = max(1, total(scale, "window_iterations"))
    per_iteration_at_scale = (1 - MAX_SHARE) * 2 * AT_SCALE * scale_size + MAX_SHARE * BATCH
    at_scale = per_order * orders / executions + between / iterations / per_iteration_at_scale
    # in time, whatever runs: the dispatcher's looks at the deadline (each over every actor's call), Ray's threads
    idle_at_scale = idle + waiting / POLL
    worker_rate = executions / max(1e-9, total(scale, "window_workers"))  # executions per worker CPU-second
    # settling (confirming, shrinking) is held to the budget's shrink share of the run's time, its CPU to
    # at most that: the share it took here if more (its overshoot, announcing, the corpus)
    settled = max(SHRINK_SHARE, total(scale, "settling_s") / (args.seconds * len(scale)))
    room = 1.0 - settled - idle_at_scale
    saturation = room / (at_scale * worker_rate) if at_scale and worker_rate else float("inf")
    # the check: what the loops' CPU holds beyond those parts and the in-time rate (a difference of
    # large figures: noisy on a shared machine), counted per execution
    unexplained = max(0.0, window - settling - between - planning - filing - moving_here - idle * wall)
    checked = room / ((at_scale + unexplained / executions) * worker_rate) if worker_rate else float("inf")
    plain = (window - settling) / executions  # everything but settling, per execution, as measured here
    pessimistic = (1.0 - settled) / (plain * worker_rate) if plain and worker_rate else float("inf")
    print(f"at {AT_SCALE} actors' orders ({scale_size:,} samples, planned in the workers), on the 2 actors, "
          f"{len(scale)} campaign(s):")
    print(f"  driver CPU:      {window:.2f} s in {wall:.1f} s of fuzzing loops for {executions:,} executions "
          f"({orders:,} orders, the rest the exploration arm's): settling {settling:.2f} s, between rounds "
          f"{between:.3f} s ({int(iterations)} turn(s) of the loop); all but settling {plain * 1e6:.3f} us per execution")
    print(f"  per order:       planning {planning / orders * 1e3:.3f} ms, filing {filing / orders * 1e3:.3f} ms, "
          f"unpickling its result {unpacking / orders * 1e3:.3f} ms; moving it through Ray here "
          f"{moving_here / orders * 1e3:.3f} ms (with the looks at the deadline while it ran), at scale "
          f"{(moving_at_scale + waiting / 2) * 1e3:.3f} ms (a no-op order two a call {moving_at_scale * 1e3:.3f} ms, "
          f"half a Ray wait over {AT_SCALE} calls in flight {waiting / 2 * 1e3:.3f} ms)")
    print(f"  in time:         {idle * 1e3:.1f} ms a second with the workers busy and nothing coming back; "
          f"{idle_at_scale * 1e3:.1f} ms at scale")
    print(f"  at {AT_SCALE} actors:  {at_scale * 1e6:>9.3f} us per execution ({per_order * 1e3:.3f} ms per order of "
          f"~{executions / orders:,.0f}; between rounds once per {per_iteration_at_scale:,.0f} executions)")
    workers_cpu = total(scale, "window_workers")
    local_rate_cpu = total(local, "window_executions") / max(1e-9, total(local, "window_workers"))
    print(f"  one worker:      {worker_rate:>9,.0f} executions per CPU-second (an actor and its worker process: "
          f"{workers_cpu:.1f} CPU-s in {wall:.1f} s on 2; a local worker at the local campaigns' orders: "
          f"{local_rate_cpu:,.0f})")
    print(f"driver saturates:  {saturation:>9,.0f} workers (one core, {room:.0%} of it left by settling, "
          f"{settled:.0%}, and what is in time)")
    print(f"  check:           {checked:>9,.0f} workers counting per execution what the loops spent beyond those parts "
          f"and the in-time rate ({unexplained / executions * 1e6:.3f} us per execution; noisy)")
    print(f"                   {pessimistic:>9,.0f} workers counting all the loops spent but settling, in time and "
          "between rounds too, per execution")
    ok = ratio >= 0.85 and saturation >= AT_SCALE
    print(f"goals (ray >= 0.85x local, saturation >= {AT_SCALE} workers):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
