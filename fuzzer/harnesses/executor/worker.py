"""Running scenarios in an isolated worker process with a watchdog.

The executor harness runs on the same machinery as every harness (:mod:`fuzzer.isolation`): a
zygote process loads the code under test once and forks workers; each worker runs batches of
payloads, publishing the index of the one it runs so a hang or a death is pinned on exactly that
input; the supervisor kills, re-forks and carries on. What the zygote loads is an
:class:`ExecutorSpec`'s served object, a :class:`ScenarioRunner`: its constructor installs the
virtual clock, the network guard and (HTTP mode) the transports *before* it imports the user's
executor, and its ``run`` takes one scenario as JSON and answers with its trace as JSON text
(plain data; :meth:`ExecutorSpec.decode` reads it on the engine's side). What it loaded (the tools
it offers, whether the executor is async) is its ``info``, which the pool hands the engine once it
has started.

On the engine's side the pool is a plain :class:`~fuzzer.isolation.WorkerPool` of an
:class:`ExecutorSpec` (:func:`fuzzer.harnesses.executor.job.open_pool`): its load failures are
one-line :class:`~strategies.errors.TargetError` s naming ``--executor``, its results are traces.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import inspect
import json
import os
import pickle
import random
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from fuzzer.isolation.spec import Limits
from strategies._internal.tools import registry_digest
from strategies.errors import TargetError, ToolfuzzError


@dataclass
class WorkerConfig:
    """What a worker needs (carried to the zygote in the :class:`ExecutorSpec`)."""

    executor: str
    tools_file: Optional[str] = None
    cwd: Optional[str] = None
    http: bool = False
    implementations: Optional[str] = None  # M:A of a {name: callable} mapping (HTTP mode)
    non_idempotent: list = field(default_factory=list)
    async_tools: Any = "auto"
    http_responses: dict = field(default_factory=dict)
    invocation_cap: int = 100
    virtual_limit_s: float = 86_400.0
    flavors: list = field(default_factory=list)  # libraries failing tools raise from (``via``)
    #: The campaign's policy (:func:`encode_policy`), for judging in the worker; "" = never judge.
    policy: str = ""
    #: Seconds the warm-up scenario may take in the zygote (fuzzer/engine/warmup.py); 0: no warm-up.
    warmup_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class ExecutorSpec(Limits, serve="fuzzer.harnesses.executor.worker:ScenarioRunner", option="--executor",
                   reference="config.executor"):
    """The :mod:`fuzzer.isolation.spec` of an executor's workers: they serve a :class:`ScenarioRunner`."""

    config: WorkerConfig

    def decode(self, result: Any) -> "Trace":
        kind, text = result
        if kind == "error":
            return Trace("error", detail=text)
        try:
            return Trace("ran", load_json(text))
        except (TypeError, ValueError) as exc:
            return Trace("error", detail=f"unreadable trace ({exc})")

    def fault(self, kind: str, elapsed: float, detail: Optional[str], frames: tuple) -> "Trace":
        return Trace(kind, frames=tuple(tuple(f) for f in frames), detail=detail)


# ---------------------------------------------------------------------------------------------
# Worker side


class ScenarioRunner:
    """Built once in the zygote (the served object of an :class:`ExecutorSpec`); :meth:`run` runs
    one scenario in a worker, and orders run theirs with :meth:`run_direct`."""

    def __init__(self, spec: ExecutorSpec) -> None:
        config = spec.config
        try:
            self._load(config)
        except ToolfuzzError:
            raise
        except BaseException as exc:  # noqa: BLE001 - anything at all must become one line
            message = f"{spec.label}: loading raised {type(exc).__name__}: {' '.join(str(exc).split())}"
            raise TargetError(message[:500]) from None
        # Everything loaded so far lives as long as the worker: the cyclic garbage collector need
        # not walk it again on every collection of the objects scenarios create (nor touch its
        # pages, which the forked workers share with the zygote).
        gc.freeze()
        # ... and collect the youngest generation less often: a scenario creates thousands of
        # short-lived containers that reference counting frees (see young_collections_every).
        threshold = gc.get_threshold()
        gc.set_threshold(max(threshold[0], YOUNG_OBJECTS), *threshold[1:])

    def _load(self, config: WorkerConfig) -> None:
        from fuzzer.harnesses.executor.clock import CLOCK
        from fuzzer.harnesses.executor.http import block_network
        from fuzzer.harnesses.executor.recorder import CapturedOutput, Recorder, ToolProxy, capture_logs

        self.config = config
        self.clock = CLOCK.install()  # before any user code is imported
        self.guard = block_network()
        cwd = config.cwd or os.getcwd()
        self.recorder = Recorder(CLOCK, invocation_cap=config.invocation_cap)
        capture_logs(self.recorder)
        self.output = CapturedOutput(self.recorder)
        self.transports = None
        from strategies._internal.tools import load_registry

        registry = load_registry(config.tools_file)
        implementations = None
        if config.http:
            from fuzzer.harnesses.executor import http

            self.transports = http.install(CLOCK, config.http_responses)
            implementations = _load_implementations(config, registry, cwd)
        names = list(implementations) if implementations is not None else registry.names()
        non_idempotent = set(config.non_idempotent)
        self.tools = {name: ToolProxy(registry[name], self.recorder, idempotent=name not in non_idempotent,
                                      implementation=implementations.get(name) if implementations else None)
                      for name in names}
        self.registry = registry
        self.policy = decode_policy(config.policy) if config.policy else None
        self.sent: dict = {}  # violation signature -> full traces sent with it (judging here)
        self.last_order = -1  # the highest order number run (ScenarioOrder.run)
        self.factory = _load_factory(config.executor, cwd)
        self.is_async = self._probe()
        self.warmup: Any = None
        self.warm_up_limit_s = config.warmup_s
        self._resolve_declared()
        self.recorder.async_tools = self.is_async if config.async_tools == "auto" else bool(config.async_tools)
        _import_flavors(config.flavors)

    def _probe(self) -> bool:
        """Call the factory once: it must give something that executes calls."""
        ref = self.config.executor
        try:
            made = self.factory(self.tools)
            if inspect.isawaitable(made):
                from fuzzer.harnesses.executor.clock import ScenarioLoop

                with ScenarioLoop(self.clock) as loop:
                    made = loop.run(made)
        except Exception as exc:  # noqa: BLE001
            raise TargetError(f"--executor {ref!r}: calling it with the tools raised "
                              f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}") from None
        execute = executor_entry(made)
        if execute is None:
            raise TargetError(f"--executor {ref!r}: it returned {type(made).__name__}, which is neither "
                              f"callable as execute(name, arguments) nor has an execute_tool(name, arguments) method")
        return _is_async(execute)

    def _resolve_declared(self) -> None:
        """The policy's exception names, resolved now that the executor is imported (and again
        after the warm-up: a library it imports on first use counts): an escaping exception is
        described with the names it is an instance of (fuzzer/engine/exception_names.py)."""
        from fuzzer.engine.exception_names import Declared, resolve

        self.declared = resolve(self.policy.raises) if self.policy is not None else Declared()
        self.recorder.declared = self.declared

    def warm_up(self) -> None:
        """Called once in the zygote after loading (the engine's load timeout covers the import,
        the warm-up bounds itself), before any worker is forked and anything is timed."""
        if self.config.warmup_s:
            self.warmup = self._warm_up(self.config.warmup_s)
            self._resolve_declared()

    def _warm_up(self, limit_s: float) -> Any:
        """One scenario, untimed by the watchdog, before any is (fuzzer.engine.warmup): the first tool
        called once with the simplest valid arguments, healthy — a first call's lazy imports and
        clients are made here, in the zygote, and every worker starts warm."""
        from fuzzer.engine.warmup import WarmUp, warm_up
        from strategies._internal.schema import compile_tool
        from strategies._internal.source import ReplaySource

        name = next((n for n in self.tools if n in self.registry), None)
        if name is None:
            return None
        try:
            arguments = compile_tool(self.registry[name]).generate(ReplaySource(()))
        except Exception as exc:  # noqa: BLE001 - nothing to warm up with: the workers start cold
            return WarmUp(finished=True, error=f"{type(exc).__name__}: {exc}")
        healthy = self._schedule({"then": {"kind": "ok"}})
        return warm_up(lambda: self.run_steps([(name, arguments, healthy, 0.0, True)], 0), limit_s)

    @property
    def info(self) -> dict:
        """What the engine learns once the workers are up: the tools it offers, whether the
        executor is async, whether (and with what) the workers can judge, the policy's exception
        names that name no class, and how the warm-up went."""
        return {"tools": list(self.tools), "async": self.is_async, "registry": registry_digest(self.registry),
                "judges": self.policy is not None, "unresolved_raises": [list(p) for p in self.declared.problems],
                "warmup": self.warmup.to_json() if self.warmup is not None else None}

    def run(self, text: str, options: Any = None) -> tuple:
        """One scenario sent as JSON: ("ran", its trace as JSON text), or ("error", why) when the
        runner itself failed (an unreadable scenario): never an exception, which would end the worker."""
        try:
            data = load_json(text)
            steps = [(s["name"], s["arguments"], self._schedule(s.get("schedule", {})), float(s.get("gap", 0)),
                      s.get("valid", True)) for s in data["steps"]]
            return "ran", dump_trace(self.run_steps(steps, data.get("seed", 0)))
        except Exception as exc:  # noqa: BLE001 - the runner's own failure, reported as such
            return "error", f"{type(exc).__name__}: {exc}"[:300]

    def run_direct(self, scenario: Any, judge: bool) -> tuple:
        """A :class:`~fuzzer.harnesses.executor.scenario.Scenario` drawn in this worker (an order's), run
        without the JSON text a scenario sent by the engine travels as: (its summary when judged
        here, else None; its trace as JSON text when it must travel whole, else None)."""
        steps = [(s.name, s.arguments, s.schedule, s.gap, s.valid) for s in scenario.steps]
        trace = self.run_steps(steps, scenario.seed)
        if not (judge and self.policy is not None):
            return None, dump_trace(trace)
        summary = self.judged(steps, trace)
        whole = summary.pop("trace", None)
        return summary, (dump_trace(whole) if whole is not None else None)

    def judged(self, steps: list, trace: dict) -> dict:
        """The scenario judged here: what the engine counts (:func:`summary_of`), with the whole trace
        only while a violation's signature has been sent fewer than TRACES_PER_SIGNATURE times.

        Why here: judging costs the engine as much as generating, and the engine is one process
        for every worker; a worker judging its own traces leaves the engine only generating (and
        sends back a few hundred bytes instead of the trace)."""
        from fuzzer.harnesses.executor.checks import judge
        from fuzzer.harnesses.executor.clock import real_perf_counter

        started, cpu = real_perf_counter(), time.process_time()
        scenario = _Steps([_Step(name, arguments, schedule, valid) for name, arguments, schedule, _gap, valid in steps])
        violations = judge(scenario, Trace("ran", trace), self.policy, self.registry)
        summary = summary_of(trace, real_s=trace["real_s"] + real_perf_counter() - started,
                             cpu_s=trace["cpu_s"] + time.process_time() - cpu)
        if violations:
            summary["violations"] = [[v.verdict, v.signature.id] for v in violations]
            sent = self.sent
            if any(sent.get(v.signature.id, 0) < TRACES_PER_SIGNATURE for v in violations):
                for v in violations:
                    sent[v.signature.id] = sent.get(v.signature.id, 0) + 1
                summary["trace"] = trace
        return summary

    def run_steps(self, steps: list, seed: int) -> dict:
        """Run one scenario's ``steps`` — (name, arguments, schedule, gap, valid) each — against a
        fresh executor; its trace."""
        from fuzzer.harnesses.executor.clock import ScenarioLoop, VirtualTimeExceeded, real_perf_counter
        from fuzzer.harnesses.executor.recorder import RunawayExecution, plain
        from strategies._internal.sample import copy_json

        started, cpu = real_perf_counter(), time.process_time()
        clock, recorder = self.clock, self.recorder
        calls = [(name, arguments, schedule) for name, arguments, schedule, _gap, _valid in steps]
        clock.reset()
        random.seed(seed)  # the executor's own jitter replays exactly
        blocked_before, created_before = len(self.guard.blocked), self.guard.created
        recorder.begin_scenario(calls, capture=any(sch.serves_canary for _n, _a, sch in calls))
        records: list = []
        trace: dict = {"steps": records}
        with ScenarioLoop(clock) as loop, self.output:
            try:
                made = self.factory(self.tools)
                if _awaitable(made):
                    made = loop.run(made)
                execute = executor_entry(made)
                if execute is None:
                    raise TypeError(f"make_executor returned {type(made).__name__}")
            except BaseException as exc:  # noqa: BLE001
                trace["factory_error"] = recorder.describe_exception(exc)
                execute = None
            for index, (name, arguments, _schedule, gap, _valid) in enumerate(steps):
                if execute is None:
                    break
                clock.advance(gap)
                recorder.begin_step(index)
                t0 = clock.elapsed
                clock.arm(self.config.virtual_limit_s)
                outcome: dict
                try:
                    value = execute(name, copy_json(arguments))
                    if _awaitable(value):
                        value = loop.run(value)
                    outcome = {"outcome": "returned", "value": plain(value)}
                except VirtualTimeExceeded:
                    recorder.abort = "virtual_time"
                    outcome = {"outcome": "aborted"}
                except RunawayExecution:
                    recorder.abort = recorder.abort or "runaway"
                    outcome = {"outcome": "aborted"}
                except BaseException as exc:  # noqa: BLE001 - SystemExit too: it escaped the executor
                    recorder.note_raised(exc)
                    outcome = {"outcome": "aborted"} if recorder.abort else {
                        "outcome": "raised", "exception": recorder.describe_exception(exc)}
                finally:
                    clock.disarm()
                if recorder.abort is None and clock.aborted:
                    recorder.abort = "virtual_time"
                    outcome = {"outcome": "aborted"}
                records.append(recorder.end_step(t0, outcome))
                if recorder.abort:
                    break
        blocked = self.guard.blocked[blocked_before:]
        if blocked:
            trace["network_blocked"] = blocked[:20]
        if self.guard.created > created_before:
            trace["sockets_created"] = self.guard.created - created_before
        if self.transports is not None and self.transports.untracked:
            trace["untracked_requests"] = self.transports.untracked
            self.transports.untracked = 0
        trace["real_s"] = real_perf_counter() - started
        trace["cpu_s"] = time.process_time() - cpu
        trace["virtual_s"] = clock.elapsed
        return trace


    _schedules: dict = {}

    def _schedule(self, data: Any) -> Any:
        """Parsed schedules, cached: scenarios repeat the same few schedules over and over."""
        from fuzzer.harnesses.executor.schedule import Schedule

        key = data if isinstance(data, str) else json.dumps(data, sort_keys=True)
        hit = self._schedules.get(key)
        if hit is None:
            if len(self._schedules) > 4096:
                self._schedules.clear()
            hit = self._schedules[key] = Schedule.from_json(load_json(key))
        return hit


class _Step:
    """What the checks read of a scenario's step (:class:`~fuzzer.harnesses.executor.scenario.Step` without
    the cost of a frozen dataclass, built once per step of every scenario a worker judges)."""

    __slots__ = ("name", "arguments", "schedule", "valid")

    def __init__(self, name: str, arguments: Any, schedule: Any, valid: bool):
        self.name, self.arguments, self.schedule, self.valid = name, arguments, schedule, valid


class _Steps:
    __slots__ = ("steps",)

    def __init__(self, steps: list):
        self.steps = steps


#: Whole traces a judging worker sends per violation signature: the engine files a finding from
#: the first and needs another only when confirming that one failed; later ones are counted.
TRACES_PER_SIGNATURE = 3


def encode_policy(policy: Any) -> str:
    """A policy as text for the worker's configuration (pickled: the worker judges with exactly it)."""
    return base64.b64encode(pickle.dumps(policy, pickle.HIGHEST_PROTOCOL)).decode("ascii")


def decode_policy(text: str) -> Any:
    return pickle.loads(base64.b64decode(text))


def summary_of(trace: dict, real_s: Optional[float] = None, cpu_s: Optional[float] = None) -> dict:
    """What the engine counts of a scenario's trace (:meth:`ExecutorCampaign._tally`): calls, virtual
    and real seconds, and the faults its tools met; ``real_s`` / ``cpu_s`` replace the trace's own
    (a judging worker adds its judging time)."""
    steps = trace.get("steps", ())
    faults: dict = {}
    for record in steps:
        for inv in record.get("invocations", ()):
            faults[inv["fault"]] = faults.get(inv["fault"], 0) + 1
    return {"calls": len(steps), "virtual_s": float(trace.get("virtual_s", 0.0)), "faults": faults,
            "real_s": float(trace.get("real_s", 0.0)) if real_s is None else real_s,
            "cpu_s": float(trace.get("cpu_s", 0.0)) if cpu_s is None else cpu_s}


def dump_trace(trace: dict) -> str:
    """The trace as JSON text: orjson (several times faster; a trace holds only plain values), or
    the standard library for what orjson refuses (integers beyond 64 bits)."""
    try:
        import orjson

        return orjson.dumps(trace).decode()
    except (ImportError, TypeError):
        return json.dumps(trace, ensure_ascii=False)


def load_json(text: str) -> Any:
    """A trace, a scenario or a schedule from its JSON text: orjson, or the standard library for
    what orjson refuses (integers beyond 64 bits, NaN, lone surrogates), which reads the same
    values otherwise. A worker reads a scenario and its schedules per run: with the standard
    library that was a tenth of its time."""
    try:
        import orjson

        return orjson.loads(text)
    except (ImportError, ValueError):
        return json.loads(text)


#: Types a synchronous executor returns, never awaitable (``inspect.isawaitable`` goes through
#: ``collections.abc.Awaitable`` for anything that is not a coroutine: a few microseconds per call).
_NOT_AWAITABLE = frozenset({dict, list, str, int, float, bool, type(None), tuple, bytes})


def _awaitable(value: Any) -> bool:
    return value.__class__ not in _NOT_AWAITABLE and inspect.isawaitable(value)


def _import_flavors(flavors: list) -> None:
    """Import what serving a fault needs (the libraries of ``via`` flavours, the HTTP-date
    formatter) in the zygote, once, rather than in the first scenario of every forked worker,
    where it costs tens of milliseconds. A flavour that will not import is left to fail, as it
    did before, where it is used."""
    import email.utils  # noqa: F401

    for via in flavors:
        if via == "builtin":
            continue
        try:
            from fuzzer.harnesses.executor import http  # noqa: F401

            __import__(via)
        except Exception:  # noqa: BLE001 - see the docstring
            pass


def executor_entry(made: Any) -> Any:
    """The ``execute(name, arguments)`` callable of what the factory returned, or None."""
    method = getattr(made, "execute_tool", None)
    if callable(method):
        return method
    return made if callable(made) else None


def _is_async(function: Any) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(getattr(function, "__call__", None))


def _load_factory(ref: str, cwd: str) -> Any:
    from fuzzer.engine.references import load_target

    try:
        return load_target(ref, cwd=cwd)
    except TargetError as exc:
        raise TargetError(_as_option(str(exc), "--executor")) from None


def _load_implementations(config: WorkerConfig, registry: Any, cwd: str) -> dict:
    """HTTP mode: the user's real tool functions, ``{name: callable}``."""
    from collections.abc import Mapping

    from fuzzer.engine.references import _resolve

    ref = config.implementations or f"{config.executor.rpartition(':')[0]}:TOOLS"
    try:
        mapping = _resolve(ref, cwd, what="--implementations")[0]
    except TargetError as exc:
        hint = "" if config.implementations else " (name the real tool functions with --implementations M:A)"
        raise TargetError(f"{exc}{hint}") from None
    if not isinstance(mapping, Mapping):
        raise TargetError(f"--implementations {ref!r}: expected a mapping of tool name to function, "
                          f"got {type(mapping).__name__}")
    found = {}
    for name, function in mapping.items():
        if name not in registry:
            registry[name]  # UnknownName with close matches
        if not callable(function):
            raise TargetError(f"--implementations {ref!r}: {name!r} is {type(function).__name__}, not callable")
        found[str(name)] = function
    if not found:
        raise TargetError(f"--implementations {ref!r}: the mapping is empty")
    return found


def _as_option(message: str, option: str) -> str:
    return f"{option} {message[len('target '):]}" if message.startswith("target ") else message


# ---------------------------------------------------------------------------------------------
# Engine side


@dataclass
class Trace:
    """What one scenario did. ``kind``: ran | hung | died | error (the runner itself failed).
    ``judged``: the worker's verdicts and counts when it judged the scenario itself (then ``data``
    is empty unless the worker sent the whole trace too)."""

    kind: str
    data: dict = field(default_factory=dict)
    frames: tuple = ()
    detail: Optional[str] = None
    judged: Optional[dict] = None

    @property
    def steps(self) -> list:
        return self.data.get("steps", [])



#: Net container allocations between two collections of the youngest generation, during a
#: campaign (the interpreter's default is 700; see young_collections_every).
YOUNG_OBJECTS = 10_000


@contextlib.contextmanager
def young_collections_every(objects: int) -> Iterator[None]:
    """Run the cyclic garbage collector's youngest generation less often while a campaign runs.

    A batch of scenarios and their traces is tens of thousands of small containers that all live
    as long as the batch; at the default threshold the collector walks everything in flight over
    and over (and promotes it, so older generations are walked too): a quarter of the engine's CPU
    time. Almost none of it is cyclic garbage (reference counting frees it), so collecting less
    often only lets the rare cycle wait a little longer. The previous thresholds come back after."""
    saved = gc.get_threshold()
    gc.set_threshold(max(saved[0], objects), *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)


__all__ = ["YOUNG_OBJECTS", "young_collections_every", "ExecutorSpec", "ScenarioRunner", "Trace", "WorkerConfig", "executor_entry"]
