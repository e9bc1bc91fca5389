"""What runs in the isolated worker: streams fed to the user's parser (or chunks to the user's
accumulator), their events collected as plain data, each step timed, and judged.

Why in the worker: a stream is dozens of ``feed`` calls, each returning objects of the user's
classes; folding and judging them where they are made sends back only counts and the few streams
that failed (the engine never unpickles a user's class, and judging spreads over the workers).

The pool (:class:`fuzzer.isolation.WorkerPool`) is started with :data:`WORKER_TARGET` as its
target and the settings in :data:`ENV` (loaded once in the zygote, so a heavy parser import is not
paid per worker). Two ways in:

* :func:`run_text` — the pool target: one case as text (``settings line \\n case JSON``), for
  the probe, confirmation in a fresh worker and shrinking; returns the :class:`~.checks.Run` as JSON;
* :class:`StreamOrder` — many outputs, each with its splits, run with the pool's
  :class:`~fuzzer.isolation.worker.OrderRunner` pinning each stream before it runs (a hang or a
  death is blamed on it, and the order resumes without it).
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import asdict, dataclass
from typing import Any, Optional

from fuzzer.harnesses.stream.checks import Run, StreamCase, judge, nondeterminism, variance
from fuzzer.harnesses.stream.contract import ContractError, consumer_calls, load_parser_factory, normalize_events
from fuzzer.harnesses.stream.splits import deltas

#: The pool target (``fuzzer.isolation.TargetSpec.target``).
WORKER_TARGET = "fuzzer.harnesses.stream.worker:run_text"
#: The environment variable carrying the settings line to the zygote (loaded before forking).
ENV = "TOOLFUZZ_STREAM_SETTINGS"
#: What an order pins each stream with.
TAG = "stream"
#: Share of passing streams run a second time to catch nondeterminism.
RERUN_FRACTION = 0.01


@dataclass(frozen=True)
class Settings:
    """The target and how to drive it (one JSON line, the same for a whole campaign)."""

    parser: Optional[str] = None
    api: str = "events"
    consumer: Optional[str] = None
    shape: str = "openai"
    tools: Optional[str] = None
    cwd: Optional[str] = None

    def line(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @property
    def reference(self) -> str:
        return self.parser or self.consumer or ""


_LOADED: dict = {}


def environment(line: str) -> tuple:
    """(settings, make or consumer, tools list) for a settings line, loaded once per process."""
    hit = _LOADED.get(line)
    if hit is None:
        from fuzzer.harnesses.parser.target import load_target
        from strategies._internal.tools import load_registry

        settings = Settings(**json.loads(line))
        registry = load_registry(settings.tools)
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                   "parameters": t.schema}} for t in registry]
        if settings.parser:
            target = load_parser_factory(settings.parser, cwd=settings.cwd, api=settings.api)
        else:
            target = load_target(settings.consumer, cwd=settings.cwd)
            if not callable(target):
                raise ContractError(f"--consumer {settings.consumer!r} is not callable")
            _warm_sdk(settings.shape)
        hit = _LOADED[line] = (settings, target, tools)
    return hit


def _warm_sdk(shape: str) -> None:
    """Import the SDK and build one chunk stream here, in the zygote: the first validation of the
    SDK's pydantic models takes seconds, which must not count as the first stream's (a hang)."""
    from fuzzer.harnesses.stream.chunks import ChunkPlan, build_chunks

    build_chunks(ChunkPlan(calls=(("f", "{}"),), content="hi"), shape)


def _preload() -> None:
    line = os.environ.get(ENV)
    if line:
        try:
            environment(line)
        except Exception:  # noqa: BLE001 - the probe loads again and reports the error
            pass


def _error(exc: BaseException, step: int) -> tuple:
    from fuzzer.isolation.worker import _describe_exception

    name, message, frames = _describe_exception(exc)
    return (name, message, tuple(tuple(f) for f in frames), step)


def run_stream(make: Any, tools: list, text: str, cuts: tuple) -> Run:
    """Feed ``text`` cut at ``cuts`` to a new parser from ``make``, then finish it."""
    run = Run()
    clock = time.perf_counter
    parts = deltas(text, cuts)
    step = -1
    try:
        parser = make(tools)
        steps, times = run.steps, run.times
        for step, part in enumerate(parts):
            start = clock()
            value = parser.feed(part)
            times.append(clock() - start)
            steps.append(normalize_events(value))
        step = len(parts)
        start = clock()
        value = parser.finish()
        times.append(clock() - start)
        run.finish = normalize_events(value)
    except ContractError as exc:
        run.contract = str(exc)
    except BaseException as exc:  # noqa: BLE001 - anything the parser raises is the parser's
        run.error = _error(exc, max(step, 0))
    return run


def run_consumer(consumer: Any, ref: str, case: StreamCase, shape: str) -> Run:
    """Build the case's chunk stream (:mod:`.chunks`) and give it to the accumulator; its calls
    come back as the run's single step of events (one start and one arguments event per call)."""
    from fuzzer.harnesses.stream.chunks import ChunkPlan, build_chunks

    run = Run()
    plan = ChunkPlan.from_case(case)
    chunks = build_chunks(plan, shape)
    start = time.perf_counter()
    try:
        value = consumer(iter(chunks))
        calls = consumer_calls(value, ref)
    except ContractError as exc:
        run.contract = str(exc)
        return run
    except ValueError as exc:  # a declared rejection: no calls
        run.times.append(time.perf_counter() - start)
        run.steps.append([("rejected", type(exc).__name__)])
        return run
    except BaseException as exc:  # noqa: BLE001
        run.error = _error(exc, 0)
        return run
    run.times.append(time.perf_counter() - start)
    events: list = []
    for i, call in enumerate(calls):
        events.append(("start", i, None, call["name"]))
        events.append(("args", i, json.dumps(call["arguments"], ensure_ascii=False)))
    run.steps.append(events)
    return run


def execute(line: str, case: StreamCase) -> Run:
    settings, target, tools = environment(line)
    if settings.parser:
        return run_stream(target, tools, case.text, case.cuts)
    return run_consumer(target, settings.consumer, case, settings.shape)


def run_to_json(run: Run) -> dict:
    return {"steps": run.steps, "finish": run.finish, "error": run.error, "times": run.times, "contract": run.contract}


def run_from_json(data: dict) -> Run:
    tuples = lambda events: [tuple(e) for e in events]  # noqa: E731
    error = data.get("error")
    if error is not None:
        error = (error[0], error[1], tuple(tuple(f) for f in error[2]), error[3])
    return Run(steps=[tuples(s) for s in data["steps"]], finish=tuples(data["finish"]), error=error,
               times=list(data["times"]), contract=data.get("contract"))


def case_to_json(case: StreamCase) -> dict:
    data = asdict(case)
    data["cuts"], data["markers"] = list(case.cuts), list(case.markers)
    return data


def case_from_json(data: dict) -> StreamCase:
    data = dict(data)
    data["cuts"], data["markers"] = tuple(data.get("cuts", ())), tuple(data.get("markers", ()))
    return StreamCase(**data)


def case_text(line: str, case: Optional[StreamCase]) -> str:
    """The pool input of one case (a probe when ``case`` is None)."""
    return line + "\n" + ("" if case is None else json.dumps(case_to_json(case), ensure_ascii=False))


def run_text(text: str) -> list:
    """The pool target: ``[{"name": "run", "arguments": {"json": ...}}]``, ``loaded`` for a probe,
    or ``error`` with a one-line message when the target does not load or keep the contract."""
    line, _, body = text.partition("\n")
    try:
        settings, target, tools = environment(line)
        if not body:
            if settings.parser:
                target(tools)  # the factory makes a parser with feed/finish (a ContractError if not)
            return [{"name": "loaded", "arguments": {}}]
        run = execute(line, case_from_json(json.loads(body)))
    except (ContractError, Exception) as exc:  # noqa: BLE001 - loading problems are the user's config
        from strategies.errors import ToolfuzzError

        message = str(exc) if isinstance(exc, ToolfuzzError) else f"{type(exc).__name__}: {exc}"
        if message.startswith("target "):
            message = ("--parser " if "parser" in line else "--consumer ") + message[len("target "):]
        return [{"name": "error", "arguments": {"message": message}}]
    return [{"name": "run", "arguments": {"json": json.dumps(run_to_json(run), ensure_ascii=False)}}]


# -- orders ----------------------------------------------------------------------------------------


@dataclass
class Failure:
    """The first stream of an order that showed one signature, and how many did."""

    verdict: str
    signature: Any
    reason: str
    case: StreamCase
    run: Run
    count: int = 1


@dataclass
class StreamResult:
    """What a worker sends back for one order."""

    streams: int = 0
    outputs: int = 0
    feeds: int = 0
    failures: list = None  # [Failure], one per signature, in the order met
    interesting: list = None  # cut patterns whose event pattern was new to the worker
    contract: Optional[str] = None  # the target broke the contract: stop, exit 2
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self.failures = [] if self.failures is None else self.failures
        self.interesting = [] if self.interesting is None else self.interesting


_FEATURES: set = set()


def _novel(run: Run) -> bool:
    """Whether ``run`` shows an event pattern (which kinds of event end one step and begin the
    next, how many events a step gives) this worker has not seen: a cheap stand-in for line
    coverage that needs no tracer in the hot loop."""
    new, previous = False, "^"
    for events in run.steps + [run.finish]:
        head = events[0][0] if events else "-"
        feature = (previous, head, min(len(events), 3))
        if feature not in _FEATURES:
            _FEATURES.add(feature)
            new = True
        previous = events[-1][0] if events else previous
    return new


class StreamOrder:
    """"Run these outputs, each under its splits": ``groups`` = [(StreamCase without cuts,
    [(family, cuts), ...])]; the first split of each group is the whole output. ``line``: the
    settings line. When its worker hangs or dies on a stream, the order is sent again without it
    (:meth:`resume`) and ``lost`` keeps the pool's :class:`~fuzzer.isolation.pool.Lost`."""

    __slots__ = ("line", "groups", "seed", "skip", "lost")

    RESUMES = 16

    def __init__(self, line: str, groups: list, seed: int):
        """A hang or death pins the stream's index; :meth:`case_at` gives the case back."""
        self.line, self.groups, self.seed = line, groups, seed
        self.skip: frozenset = frozenset()
        self.lost: list = []

    def __getstate__(self) -> tuple:
        return self.line, self.groups, self.seed, self.skip

    def __setstate__(self, state: tuple) -> None:
        self.line, self.groups, self.seed, self.skip = state
        self.lost = []

    @property
    def size(self) -> int:
        return sum(len(splits) for _case, splits in self.groups) * 2

    def case_at(self, index: int) -> Optional[StreamCase]:
        """The stream the order ran as its ``index``-th (how a pinned hang is read back)."""
        from dataclasses import replace

        for base, splits in self.groups:
            if index < len(splits):
                family, cuts = splits[index]
                return replace(base, cuts=tuple(cuts), family=family)
            index -= len(splits)
        return None

    def resume(self, lost: Any) -> bool:
        self.lost.append(lost)
        if len(self.lost) >= self.RESUMES:
            return False
        self.skip = self.skip | {lost.index}
        return True

    def run(self, runner: Any) -> StreamResult:
        from dataclasses import replace

        started = time.perf_counter()
        result = StreamResult()
        found: dict = {}
        rnd = random.Random(self.seed)
        index = -1
        line = self.line
        for base, splits in self.groups:
            result.outputs += 1
            whole: Optional[Run] = None
            for family, cuts in splits:
                index += 1
                case = replace(base, cuts=tuple(cuts), family=family)
                if index in self.skip:
                    continue
                runner.enter(TAG, index, case.text)
                run = execute(line, case)
                result.streams += 1
                result.feeds += len(run.steps)
                if run.contract is not None:
                    result.contract = run.contract
                    result.seconds = time.perf_counter() - started
                    return result
                violations = judge(case, run)
                if whole is None:
                    whole = run
                elif not case.truth_known:
                    extra = variance(case, run, whole)
                    if extra is not None:
                        violations.append(extra)
                if not violations and rnd.random() < RERUN_FRACTION:
                    again = execute(line, case)
                    extra = nondeterminism(run, again)
                    if extra is not None:
                        violations.append(extra)
                for v in violations:
                    known = found.get(v.signature.id)
                    if known is None:
                        found[v.signature.id] = Failure(v.verdict, v.signature, v.reason, case, run)
                    else:
                        known.count += 1
                        if (len(case.text), len(case.cuts)) < (len(known.case.text), len(known.case.cuts)):
                            known.case, known.run, known.reason = case, run, v.reason
                if family != "whole" and _novel(run):
                    result.interesting.append(tuple(cuts))
        result.failures = list(found.values())
        result.seconds = time.perf_counter() - started
        return result


_preload()

__all__ = ["ENV", "Failure", "Settings", "StreamOrder", "StreamResult", "TAG", "WORKER_TARGET", "case_from_json",
           "case_text", "case_to_json", "environment", "execute", "run_consumer", "run_from_json", "run_stream",
           "run_text", "run_to_json"]
