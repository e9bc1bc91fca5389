"""One episode, played inside an isolated worker process.

The engine never imports the user's loop. It runs episodes through :class:`fuzzer.isolation.
WorkerPool` — the same zygote, watchdog, batching and stack capture every harness uses — from an
:class:`AgentSpec`, whose served object (:class:`EpisodeServer`) loads the loop, the tools and the
policy once in the zygote, and plays each script it is sent: the episode's trace and verdicts
(judged in the worker, so the oracles run in parallel over the workers) come back to the engine
as JSON text. A loop that hangs is killed by the pool's watchdog after ``--timeout`` and its stack
is captured; one that kills its process (``os._exit``, a segfault) is restarted the same way.
:class:`EpisodeRunner` is the engine's side: the pool, the probe that turns a bad ``--agent`` into
a usage error, and the verdicts of episodes that hung or died.

:func:`play` is the episode itself, usable in-process too (tests, the reproduce command): build
the recorder, the scripted model of the script's shape and the tool doubles, call
``run(model, tools, user_input)`` and record what happened.
"""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from fuzzer.harnesses.agent.checks import Episode, judge
from fuzzer.harnesses.agent.models import scripted_model, shape_fitting
from fuzzer.harnesses.agent.policy import AgentPolicy
from fuzzer.harnesses.agent.script import Script
from fuzzer.harnesses.agent.tools import ToolBehaviour, ToolBox
from fuzzer.harnesses.agent.trace import Caps, EpisodeAborted, Recorder
from fuzzer.isolation.pool import Started
from fuzzer.isolation.spec import Limits
from strategies.errors import TargetError



def loop_maker(obj: Any, ref: str) -> Callable[[], Callable]:
    """``() -> run``: ``obj`` itself when it is ``run(model, tools, user_input)``; when it is a
    factory taking no arguments, a fresh loop from it for every episode (so no state leaks from
    one episode into the next)."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # a builtin or an extension: call it as run()
        return lambda: obj
    for arguments, kind in (((None, None, None), "run"), ((), "factory")):
        try:
            signature.bind(*arguments)
        except TypeError:
            continue
        if kind == "run":
            return lambda: obj
        return lambda: _made(obj, ref)
    raise TargetError(f"agent {ref!r}: must be run(model, tools, user_input) or a factory taking no "
                      f"arguments; its signature is {signature}")


def _made(factory: Callable, ref: str) -> Callable:
    run = factory()
    if not callable(run):
        raise TargetError(f"agent {ref!r}: the factory returned {type(run).__name__}, not a callable "
                          f"run(model, tools, user_input)")
    return run


def play(script: Script, make_loop: Callable[[], Callable], registry: Any, caps: Caps, *,
         behaviour: Optional[ToolBehaviour] = None, declared: Any = None) -> dict:
    """Run one episode in this process; returns its trace (see :mod:`fuzzer.harnesses.agent.trace`).
    ``declared``: the policy's ``errors`` resolved here, for describing what run() raised."""
    recorder = Recorder(script, caps)
    model = scripted_model(script.shape, recorder)
    tools = ToolBox(registry, recorder, behaviour)
    run = make_loop()  # a factory's own failure is a TargetError: it is not the episode's fault
    try:
        reply = run(model, tools, script.user)
        if inspect.iscoroutine(reply):  # an async loop: the structured fakes' responses are awaitable
            import asyncio

            reply = asyncio.run(reply)
    except EpisodeAborted:
        return recorder.trace()
    except BaseException as exc:  # noqa: BLE001 - SystemExit, RecursionError, ... all are the loop's
        fits = shape_fitting(exc, model)
        if fits is not None:  # not the loop's bug: the wrong option (a usage error, never a crash finding)
            raise ShapeMismatch(f"the loop uses the model as the {fits} shape's client ({_one_line(exc)}), but "
                                f"--model-shape is {script.shape}: run it with --model-shape {fits}") from None
        return recorder.trace(error=exc, declared=declared)
    return recorder.trace(reply=reply, returned=True)


class ShapeMismatch(TargetError):
    """The loop is written against another ``--model-shape`` than the one it was given."""


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:200]


@dataclass(frozen=True)
class Settings:
    """What a worker needs besides the script (the same for a whole campaign)."""

    agent: str
    tools: Optional[str] = None
    cwd: Optional[str] = None
    policy: dict = field(default_factory=dict)
    shape: str = "openai"
    formats: tuple = ("json",)
    #: Seconds the warm-up episode may take where the loop is loaded (:mod:`fuzzer.engine.warmup`); 0: none.
    warmup_s: float = 0.0


@dataclass(frozen=True)
class WorkerOutcome:
    """How an episode ended when it gave no trace: its worker hung or died (the pool's fault), or
    the episode failed outside the loop (``raised``: toolfuzz's own code in the worker)."""

    kind: str
    elapsed: float = 0.0
    detail: Optional[str] = None
    frames: tuple = ()
    exception: Optional[str] = None
    message: Optional[str] = None


@dataclass(frozen=True, kw_only=True)
class AgentSpec(Limits, serve="fuzzer.harnesses.agent.worker:EpisodeServer", option="--agent",
                reference="settings.agent"):
    """The :mod:`fuzzer.isolation.spec` of an agent loop's workers: they serve an :class:`EpisodeServer`."""

    settings: Settings

    def fault(self, kind: str, elapsed: float, detail: Optional[str], frames: tuple) -> WorkerOutcome:
        return WorkerOutcome(kind, elapsed, detail, tuple(frames))


class EpisodeServer:
    """Built once in the zygote: the loop, the tools, the policy and the script setup, loaded;
    :meth:`run` plays one script sent by the engine, :meth:`draw` and :meth:`play_judged` are what
    the campaign's orders (:mod:`fuzzer.harnesses.agent.orders`) draw and play with.

    Loading the loop's module happens here, before any worker is forked, so a loop importing a
    heavy framework does not spend a worker's ``--timeout`` on imports. A loop whose factory fails
    is no load failure (the factory runs per episode): the first episode reports it."""

    def __init__(self, spec: AgentSpec):
        from fuzzer.engine.references import load_target
        from fuzzer.harnesses.agent.generation import ScriptSetup
        from strategies._internal.tools import load_registry

        from fuzzer.engine.exception_names import resolve

        settings = spec.settings
        self._agent = settings.agent
        if settings.shape in ("openai", "anthropic"):
            import fuzzer.harnesses.agent.streaming  # noqa: F401 - stream=True answered without an import per worker
        obj = load_target(settings.agent, cwd=settings.cwd, what="--agent")
        self.make_loop = loop_maker(obj, settings.agent)
        self.registry = load_registry(settings.tools)
        self.policy = AgentPolicy.from_json(settings.policy or {})
        self.setup = ScriptSetup(self.registry, shape=settings.shape, formats=tuple(settings.formats),
                                 max_turns=self.policy.max_turns)
        self._settings = settings
        self.warmup: Any = None
        self.warm_up_limit_s = settings.warmup_s
        self.declared = resolve(self.policy.errors)

    def warm_up(self) -> None:
        """Warmed up once in the zygote, where the workers are forked from, before anything is
        timed (the engine's load timeout covers the import; the warm-up bounds itself); only then
        are the policy's exception names resolved (a library the loop imports on first use counts)."""
        from fuzzer.engine.exception_names import resolve

        if self._settings.warmup_s:
            self.warmup = self._warm_up(self._settings.warmup_s)
            self.declared = resolve(self.policy.errors)

    def _warm_up(self, limit_s: float) -> Any:
        """Play the warm-up script once (one valid call, a final answer), bounded by ``limit_s``."""
        from fuzzer.engine.warmup import WarmUp, warm_up
        from fuzzer.harnesses.agent.generation import warmup_script

        try:
            script = warmup_script(self.setup)
        except Exception as exc:  # noqa: BLE001 - no script to warm up with: the workers start cold
            return WarmUp(finished=True, error=f"{type(exc).__name__}: {exc}")
        return warm_up(lambda: play(script, self.make_loop, self.registry, self.policy.caps), limit_s)

    @property
    def info(self) -> dict:
        """What loading said: the policy's ``errors`` names that name no class, and the warm-up."""
        return {"unresolved_errors": [list(p) for p in self.declared.problems],
                "warmup": self.warmup.to_json() if self.warmup is not None else None}

    def draw(self, source: Any) -> Script:
        from fuzzer.harnesses.agent.generation import generate_script

        return generate_script(source, self.setup)

    def play_judged(self, script: Script) -> tuple:
        """``("episode", trace, violations)`` — each violation as (verdict, signature id, title,
        key, reason) —, ``("error", message)`` when the episode could not run at all (the loop's
        factory failed), or ``("failed", exception, message, frames)`` when toolfuzz's own judging
        failed (never a pass)."""
        try:
            trace = play(script, self.make_loop, self.registry, self.policy.caps, declared=self.declared)
        except TargetError as exc:
            return ("error", str(exc), isinstance(exc, ShapeMismatch))
        except Exception as exc:  # noqa: BLE001 - e.g. a tools file the worker cannot read
            return ("error", f"{type(exc).__name__}: {exc}")
        try:
            violations = judge(Episode(script, trace, self.policy, self.registry))
        except Exception as exc:  # noqa: BLE001 - reported as a failure outside the loop
            from fuzzer.engine.references import describe_exception

            name, message, frames = describe_exception(exc)
            return ("failed", name, message, frames)
        return ("episode", trace, [(v.verdict, v.signature.id, v.signature.title, v.signature.key, v.reason)
                                   for v in violations])

    def run(self, script: Any, options: Any = None) -> tuple:
        """A script the engine sent (confirming, shrinking, replaying), as :meth:`play_judged`
        answers, with the trace and verdicts as one JSON text (json.dumps / json.loads, C code,
        carry a trace of any size far faster than pickling its dictionaries); ``("loaded", "")``
        for the probe (no script: one loop made)."""
        if script is None:
            try:
                self.make_loop()
            except TargetError as exc:
                return ("error", str(exc))
            except Exception as exc:  # noqa: BLE001 - the factory's own failure: no episode can run
                return ("error", f"--agent {self._agent!r}: making a loop raised {type(exc).__name__}: "
                                 f"{' '.join(str(exc).split())[:200]} (its factory is called for every episode, "
                                 f"the warm-up's too)")
            return ("loaded", "")
        played = self.play_judged(script)
        if played[0] != "episode":
            return played
        return ("episode", json.dumps({"trace": played[1], "violations": played[2]}, ensure_ascii=False,
                                      separators=(",", ":"), default=repr))


# --------------------------------------------------------------------------------------------
# Engine side


class EpisodeRunner(Started):
    """Episodes of one agent in a worker pool: ``run(scripts) -> [(trace, violations, outcome)]``.

    ``start()`` launches the pool with the agent loaded in its zygote and plays a probe, so a
    reference that does not load, or a factory that fails, is a :class:`TargetError` (a usage
    error) before anything is judged. A worker that hung or died has no trace; its violation
    (hang, crash) is judged here from how it ended.
    """

    def __init__(self, *, agent: str, registry: Any, policy: AgentPolicy, tools_file: Optional[str] = None,
                 cwd: Optional[str] = None, timeout: float = 2.0, workers: int = 1,
                 memory_limit_mb: Optional[int] = 4096, shape: str = "openai", formats: tuple = ("json",),
                 backend: str = "local", ray_address: Optional[str] = None):
        from fuzzer.backends import make_pool, workers_of
        from fuzzer.engine.warmup import warmup_limit
        from fuzzer.isolation.spec import LOAD_TIMEOUT

        self.agent, self.registry, self.policy, self.timeout = agent, registry, policy, timeout
        cwd = cwd or os.getcwd()
        self.warmup_s = warmup_limit(timeout)
        self.settings = Settings(agent=agent, tools=_absolute(tools_file, cwd), cwd=cwd, policy=policy.to_json(),
                                 shape=shape, formats=tuple(formats), warmup_s=self.warmup_s)
        self.spec = AgentSpec(settings=self.settings, cwd=cwd, timeout=timeout, memory_limit_mb=memory_limit_mb)
        # The back end: local worker processes, or Ray actors each holding one (``workers`` auto:
        # one per CPU). The load timeout bounds the import; the warm-up after it bounds itself.
        self.pool = make_pool(backend, self.spec, workers_of(workers), address=ray_address,
                              load_timeout=LOAD_TIMEOUT)
        self.notes: list[str] = []

    def start(self) -> None:
        self.pool.start()
        try:
            self._probe()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.pool.close()

    def _probe(self) -> None:
        outcome = self.pool.run([None])[0]
        if isinstance(outcome, tuple) and outcome[0] == "loaded":
            self._loaded(self.pool.info or {})
            self._probe_shape()
            return
        if isinstance(outcome, tuple) and outcome[0] == "error":
            raise TargetError(outcome[1])
        if isinstance(outcome, WorkerOutcome) and outcome.kind == "hung":
            raise TargetError(f"agent {self.agent!r}: making a loop did not finish within {self.timeout:g} s (--timeout)")
        detail = outcome.detail if isinstance(outcome, WorkerOutcome) else f"{outcome[1]}: {outcome[2]}"
        raise TargetError(f"agent {self.agent!r}: the process loading it failed ({detail})")

    def _loaded(self, info: dict) -> None:
        """What loading said: a policy ``errors`` name that resolves to no exception class is a
        policy error (one line naming the file and key); a warm-up that did not warm is a note."""
        from fuzzer.engine.warmup import WarmUp
        from fuzzer.harnesses.agent.policy import PolicyError

        unresolved = info.get("unresolved_errors") or []
        if unresolved:
            name, why = unresolved[0]
            raise PolicyError(f"{self.policy.source}: errors: {name!r}: {why}")
        warmup = info.get("warmup")
        if warmup is not None:
            note = WarmUp(**warmup).note(f"agent {self.agent!r}", self.warmup_s)
            if note:
                self.notes.append(note)

    def _probe_shape(self) -> None:
        """Play one plain episode (the model answers at once) in the campaign's shape: a loop
        written against another shape's client cannot run any episode, and says so here as one
        usage error naming the ``--model-shape`` that fits, instead of a crash per episode. Any
        other failure of the probe is left to the campaign to find (and shrink) or to report."""
        script = Script.from_json({"shape": self.settings.shape, "formats": ["json"], "user": PROBE_USER,
                                   "turns": [{"step": "final", "text": PROBE_REPLY, "content": PROBE_REPLY,
                                              "final": True}]})
        outcome = self.pool.run([script])[0]
        if isinstance(outcome, tuple) and outcome[0] == "error" and len(outcome) > 2 and outcome[2]:
            raise TargetError(f"--agent {self.agent!r}: {outcome[1]}")

    def run(self, scripts: list, deadline: Optional[float] = None) -> list[Optional[tuple]]:
        """One (trace, violations, outcome) per script; None for a script not played by
        ``deadline`` (a ``time.monotonic()`` value: its worker is restarted, as for the parser pool).
        ``violations`` None: the episode could not run at all (the loop's factory failed in the
        worker; :attr:`notes` says why) — neither a pass nor a failure."""
        outcomes = self.pool.run(list(scripts), deadline=deadline)
        return [self._judged(script, outcome) if outcome is not None else None
                for script, outcome in zip(scripts, outcomes)]

    def _judged(self, script: Script, outcome: Any) -> tuple:
        trace, violations, outcome = judged(script, outcome, self.policy, self.registry, self.timeout)
        if violations is None:  # no test at all: violations None (never a pass)
            self.notes.append(f"an episode could not run: {outcome[1]}")
        return trace, violations, outcome


def violation_of(v: Any) -> Any:
    """A violation as it travels (verdict, signature id, title, key, reason), as a Violation."""
    from corpus.signature import Signature
    from fuzzer.engine.verdicts import Violation

    return Violation(v[0], Signature(id=v[1], title=v[2], key=v[3]), v[4])


def judged(script: Script, outcome: Any, policy: AgentPolicy, registry: Any, timeout: float) -> tuple:
    """(trace, violations, outcome) of what a worker answered for ``script`` (:meth:`EpisodeServer.run`,
    or the pool's fault of a hang or a death); violations None when the episode could not run."""
    if isinstance(outcome, tuple) and outcome[0] == "episode":
        data = json.loads(outcome[1])
        return data["trace"], [violation_of(v) for v in data["violations"]], outcome
    if isinstance(outcome, tuple) and outcome[0] == "error":
        return None, None, outcome
    if isinstance(outcome, tuple) and outcome[0] == "failed":
        outcome = WorkerOutcome("raised", frames=tuple(outcome[3]), exception=outcome[1], message=outcome[2])
    episode = Episode(script, None, policy, registry, outcome=outcome, timeout=timeout)
    return None, judge(episode), outcome


#: The probe episode's user input and the model's whole answer.
PROBE_USER, PROBE_REPLY = "What is the weather in Paris tomorrow?", "Here is what I found."


def _absolute(path: Optional[str], cwd: str) -> Optional[str]:
    """A tools file as an absolute path (workers run in ``cwd`` too, but corpus entries and reports
    keep what the user typed); an ``M:A`` reference to pydantic models is left as it is."""
    if path is None or (":" in path and not os.path.exists(os.path.join(cwd, path))):
        return path
    return os.path.abspath(os.path.join(cwd, path))


__all__ = ["AgentSpec", "EpisodeRunner", "EpisodeServer", "Settings", "WorkerOutcome", "judged", "loop_maker", "play",
           "violation_of"]
