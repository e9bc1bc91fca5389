"""What runs in the isolated worker: streams fed to the user's parser (or chunks to the user's
accumulator), their events collected as plain data, each step timed, and judged there.

Why in the worker: a stream is dozens of ``feed`` calls, each returning objects of the user's
classes; folding and judging them where they are made sends back only counts and the few streams
that failed (the engine never unpickles a user's class, and judging spreads over the workers).

The stream harness runs on the same machinery as every harness (:mod:`fuzzer.isolation`): a
:class:`StreamSpec` names its served object, a :class:`StreamServer`, which the zygote builds once
before it forks any worker. Building it loads the factory (or the accumulator) and the tools,
checks the contract once (a factory that is not callable, makes no ``feed``, fails whenever it is
called; a consumer that returns a generator: one :class:`~strategies.errors.TargetError` line,
exit 2), imports the SDK and validates its chunk models (seconds, the first time), and warms the
target up (:mod:`fuzzer.engine.warmup`): none of that may count against the first stream's
``--timeout``. Two ways in:

* :meth:`StreamServer.run` — one :class:`~.checks.StreamCase` sent by the engine (probing the
  formats, confirming in a fresh worker, shrinking, replaying a corpus entry, a diff), answered
  with its :class:`StreamOutcome` (violations judged here, and what the stream folded into);
* the campaign's orders (:mod:`.orders`), which draw their streams here from a seed and run them
  with :meth:`StreamServer.execute`.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, fields, replace
from operator import attrgetter
from typing import Any, Optional

from fuzzer.harnesses.stream.checks import Run, StreamCase, violations_of
from fuzzer.harnesses.stream.contract import ContractError, consumer_calls, load_parser_factory, normalize_events
from fuzzer.harnesses.stream.splits import deltas
from fuzzer.isolation.spec import Fault, Limits
from strategies.errors import TargetError


@dataclass(frozen=True)
class Settings:
    """The target and how to drive it (the same for a whole campaign)."""

    parser: Optional[str] = None
    api: str = "events"
    consumer: Optional[str] = None
    shape: str = "openai"
    tools: Optional[str] = None
    cwd: Optional[str] = None
    #: The option the user named the target with (``--stream-parser`` in replay and gate): every
    #: error about the target names it. "": ``--parser`` / ``--consumer``.
    named: str = ""

    @property
    def reference(self) -> str:
        return self.parser or self.consumer or ""

    @property
    def mode(self) -> str:
        """``parser`` (an incremental parser fed deltas) or ``consumer`` (an accumulator fed chunks)."""
        return "parser" if self.parser else "consumer"

    @property
    def option(self) -> str:
        return self.named or ("--parser" if self.parser else "--consumer")

    def to_json(self) -> dict:
        return asdict(self)


#: A stream whose worker hung (``kind`` "hung") or died ("died"): how long it ran, how the worker
#: ended, and the Python stack it was in (innermost last) — the isolation's own record of a lost
#: payload, which says all a stream's judging needs.
StreamFault = Fault


@dataclass(frozen=True)
class StreamOutcome:
    """What one stream gave, judged where it ran: its violations (:class:`~.checks.Violation`),
    what the client folded out of it (calls, content, reasoning), what it raised (type, message,
    frames, step) and the seconds its steps took."""

    violations: tuple = ()
    calls: Optional[list] = None
    content: str = ""
    reasoning: str = ""
    error: Optional[tuple] = None
    seconds: float = 0.0

    @classmethod
    def of(cls, run: Run, violations: list) -> "StreamOutcome":
        from fuzzer.harnesses.stream.fold import fold

        if run.error is not None:
            return cls(tuple(violations), error=run.error, seconds=sum(run.times))
        folded = fold(run.steps, run.finish)
        return cls(tuple(violations), folded.calls, folded.content, folded.reasoning, None, sum(run.times))

    @property
    def exception(self) -> Optional[str]:
        return f"{self.error[0]}: {self.error[1]}" if self.error else None

    def result(self) -> tuple:
        """What two versions compare (a diff): the calls, content and reasoning, or what was raised."""
        if self.error is not None:
            return ("raised", self.error[0])
        return (json.dumps(self.calls, sort_keys=True, ensure_ascii=False, default=repr), self.content, self.reasoning)

    def signatures(self) -> frozenset:
        return frozenset(v.signature.id for v in self.violations)


@dataclass(frozen=True, kw_only=True)
class StreamSpec(Limits, serve="fuzzer.harnesses.stream.worker:StreamServer",
                 option=attrgetter("settings.option"), reference="settings.reference"):
    """The :mod:`fuzzer.isolation.spec` of a stream target's workers: they serve a :class:`StreamServer`."""

    settings: Settings
    load_timeout: Optional[float] = None
    #: Seconds the warm-up may take in the zygote (:func:`fuzzer.engine.warmup.warmup_limit`); 0: none.
    warmup_s: float = 0.0

    def fault(self, kind: str, elapsed: float, detail: Optional[str], frames: tuple) -> StreamFault:
        return StreamFault(kind, elapsed, detail, tuple(tuple(f) for f in frames))


# ---------------------------------------------------------------------------------------------
# Worker side


class StreamServer:
    """Built once in the zygote (see the module docstring): ``run(case)`` judges one stream the
    engine sent; orders draw with :attr:`registry` and run with :meth:`execute`."""

    def __init__(self, spec: StreamSpec):
        from strategies._internal.tools import load_registry

        settings = self.settings = spec.settings
        self.registry = load_registry(settings.tools)
        self.tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                        "parameters": t.schema}} for t in self.registry]
        self.make: Any = None
        self.consumer: Any = None
        try:
            if settings.parser:
                self.make = load_parser_factory(settings.parser, cwd=settings.cwd, api=settings.api,
                                                option=settings.option)
                self._check_factory()
            else:
                from fuzzer.engine.references import load_target

                self.consumer = load_target(settings.consumer, cwd=settings.cwd, what=settings.option)
                try:
                    self._check_consumer()
                except ImportError as exc:  # the shape's chunks are the SDK's own types
                    sdk = "anthropic" if settings.shape == "anthropic" else "openai"
                    raise TargetError(f"--consumer-shape {settings.shape}: its chunks are the {sdk} SDK's types, and "
                                      f"{sdk} cannot be imported ({exc}): pip install '{sdk}' "
                                      f"(or toolfuzz[stream])") from None
        except ContractError as exc:  # a usage error: one line, exit 2
            raise TargetError(str(exc)) from None
        self.warmup = self._warm_up(spec.warmup_s) if spec.warmup_s else None

    def _check_factory(self) -> None:
        """Make one parser: a factory without ``feed``/``finish`` is a :class:`ContractError`, one
        that raises whenever it is called tests nothing (it is called for every stream)."""
        try:
            self.make(self.tools)
        except ContractError:
            raise
        except Exception as exc:  # noqa: BLE001 - one line: nothing can be streamed
            raise TargetError(f"{self.settings.option} {self.settings.parser!r}: making a parser raised {type(exc).__name__}: "
                              f"{' '.join(str(exc).split())[:200]} (the factory is called for every stream)") from None

    def _check_consumer(self) -> None:
        """Give the accumulator one valid chunk stream: this imports the SDK and validates its
        models (seconds, the first time: not the first stream's); an accumulator that cannot be
        called with one argument, or returns a generator (its calls would be assembled after
        toolfuzz stopped looking), is a :class:`ContractError`. What else it does with that stream is the campaign's to judge."""
        import inspect

        from fuzzer.harnesses.stream.chunks import ChunkPlan, build_chunks

        try:  # one that cannot take the chunks (a parser factory named by mistake) tests nothing
            inspect.signature(self.consumer).bind(iter(()))
        except TypeError as exc:
            raise ContractError(f"{self.settings.option} {self.settings.consumer!r} cannot be called with the chunks "
                                f"({exc}): M:A(chunks) -> calls") from None
        except ValueError:  # no signature to read (a builtin): the streams will tell
            pass
        chunks = build_chunks(ChunkPlan(calls=(("get_weather", '{"city": "Paris"}'),), content="hi"), self.settings.shape)
        try:
            consumer_calls(self.consumer(iter(chunks)), self.settings.consumer, self.settings.option)
        except ContractError:
            raise
        except Exception:  # noqa: BLE001 - a bug the campaign will find (and shrink)
            pass

    def _warm_up(self, limit_s: float) -> Any:
        """Stream a few valid outputs once (whole and one character per delta), untimed by the
        watchdog: a parser's lazy imports and caches are made here, and every worker starts warm."""
        from fuzzer.engine.warmup import warm_up

        def run() -> None:
            if self.make is None:
                return  # an accumulator was warmed by _check_consumer
            from strategies._internal.formats import render
            from strategies._internal.source import RandomSource

            call = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
            for fmt in ("hermes", "json", "openai"):
                try:
                    text = render(fmt, call, RandomSource(0), chatter=False).text
                except Exception:  # noqa: BLE001 - a format this build does not have
                    continue
                run_stream(self.make, self.tools, text, ())
                run_stream(self.make, self.tools, text, tuple(range(1, len(text))))

        return warm_up(run, limit_s)

    @property
    def info(self) -> dict:
        return {"warmup": self.warmup.to_json() if self.warmup is not None else None}

    def execute(self, case: StreamCase) -> Run:
        """Run one stream (no judging)."""
        if self.make is not None:
            return run_stream(self.make, self.tools, case.text, case.cuts)
        return run_consumer(self.consumer, self.settings.consumer, case, self.settings.shape, self.settings.option)

    def judged(self, case: StreamCase) -> tuple:
        """``("run", StreamOutcome)`` of one stream, judged (with its variance from the whole
        output where the truth is not known); ``("contract", message)`` when the target broke
        the contract."""
        run = self.execute(case)
        if run.contract is not None:
            return ("contract", run.contract)
        whole = None
        if not case.truth_known and case.cuts:
            whole = self.execute(replace(case, cuts=(), family="whole"))
            if whole.contract is not None:
                return ("contract", whole.contract)
        return ("run", StreamOutcome.of(run, violations_of(case, run, whole)))

    def run(self, case: Optional[StreamCase], options: Any = None) -> tuple:
        """A stream the engine sent, as :meth:`judged` answers; ``("loaded", None)`` for the probe."""
        if case is None:
            return ("loaded", None)
        return self.judged(case)


def _error(exc: BaseException, step: int) -> tuple:
    from fuzzer.engine.references import describe_exception

    name, message, frames = describe_exception(exc)
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


def run_consumer(consumer: Any, ref: str, case: StreamCase, shape: str, option: str = "--consumer") -> Run:
    """Build the case's chunk stream (:mod:`.chunks`) and give it to the accumulator; its calls
    come back as the run's single step of events (one start and one arguments event per call)."""
    from fuzzer.harnesses.stream.chunks import ChunkPlan, build_chunks

    run = Run()
    plan = ChunkPlan.from_case(case)
    chunks = build_chunks(plan, shape)
    start = time.perf_counter()
    try:
        value = consumer(iter(chunks))
        calls = consumer_calls(value, ref, option)
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


def case_to_json(case: StreamCase) -> dict:
    data = asdict(case)
    data["cuts"], data["markers"] = list(case.cuts), list(case.markers)
    return data


def case_from_json(data: dict) -> StreamCase:
    known = {f.name for f in fields(StreamCase)}
    data = {k: v for k, v in data.items() if k in known}
    data["cuts"], data["markers"] = tuple(data.get("cuts", ())), tuple(data.get("markers", ()))
    return StreamCase(**data)


__all__ = ["Settings", "StreamFault", "StreamOutcome", "StreamServer", "StreamSpec", "case_from_json", "case_to_json",
           "run_consumer", "run_stream"]
