"""One episode, played inside an isolated worker process.

The engine never imports the user's loop. It runs episodes through :class:`fuzzer.isolation.
WorkerPool` — the same zygote, watchdog, batching and stack capture the parser campaign uses —
with :func:`run_episode` as the pool's target: each input text is one line of settings (the
agent reference, tools file, working directory, policy, the warm-up) and one line of script JSON,
and the "call" the target returns carries the episode's trace and verdicts (judged in the worker,
so the oracles run in parallel over the workers) back to the engine as JSON text. The zygote the
workers are forked from loads the loop, warms it up with one episode and resolves the policy's
exception names before any episode is timed (:class:`EpisodeWorker`). A loop that hangs is
killed by the pool's watchdog after ``--timeout`` and its stack is captured; one that kills its
process (``os._exit``, a segfault) is restarted the same way. :class:`EpisodeRunner` is the
engine's side: the pool, the probe that turns a bad ``--agent`` (or a policy error name that
names no class) into a usage error, and the verdicts of episodes that hung or died.

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

from fuzzer.agent.checks import Episode, judge
from fuzzer.agent.models import scripted_model
from fuzzer.agent.policy import AgentPolicy
from fuzzer.agent.script import Script
from fuzzer.agent.tools import ToolBehaviour, ToolBox
from fuzzer.agent.trace import Caps, EpisodeAborted, Recorder
from fuzzer.isolation.pool import Started
from strategies.errors import TargetError

#: The pool target (``fuzzer.isolation.TargetSpec.target``): an :class:`EpisodeWorker` is built
#: where the pool loads its target (the zygote), which loads and warms the loop up there once.
WORKER_TARGET = "fuzzer.agent.worker:EpisodeWorker.run"


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
    """Run one episode in this process; returns its trace (see :mod:`fuzzer.agent.trace`).
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
        return recorder.trace(error=exc, declared=declared)
    return recorder.trace(reply=reply, returned=True)


@dataclass(frozen=True)
class Settings:
    """What a worker needs besides the script (one JSON line, the same for a whole campaign).
    ``shape`` / ``formats`` / ``warmup_s``: the warm-up episode played once where the loop is
    loaded (none without a shape)."""

    agent: str
    tools: Optional[str] = None
    cwd: Optional[str] = None
    policy: dict = field(default_factory=dict)
    shape: Optional[str] = None
    formats: tuple = ("json",)
    warmup_s: float = 0.0

    def line(self) -> str:
        return json.dumps({"agent": self.agent, "tools": self.tools, "cwd": self.cwd, "policy": self.policy,
                           "shape": self.shape, "formats": list(self.formats), "warmup_s": self.warmup_s},
                          separators=(",", ":"), sort_keys=True)


#: The environment variable that makes the pool's zygote load the agent once, before it forks
#: workers (an agent importing a heavy framework must not spend a worker's --timeout on imports).
PRELOAD_ENV = "TOOLFUZZ_AGENT_SETTINGS"

_LOADED: dict[str, Any] = {}


@dataclass(frozen=True)
class Environment:
    """A loaded settings line: the loop, the tools, the policy, its ``errors`` resolved here, and
    how the warm-up went (None: none was asked for)."""

    make_loop: Callable[[], Callable]
    registry: Any
    policy: AgentPolicy
    declared: Any
    warmup: Any = None


def _environment(line: str) -> Environment:
    """The :class:`Environment` of a settings line, loaded once per process: the loop is
    imported, warmed up by one episode (fuzzer/warmup.py), and only then are the policy's
    exception names resolved — a library the loop imports on first use counts."""
    hit = _LOADED.get(line)
    if hit is None:
        from fuzzer.exception_names import resolve
        from fuzzer.target import load_target
        from strategies._internal.tools import load_registry

        data = json.loads(line)
        obj = load_target(data["agent"], cwd=data.get("cwd"))
        make_loop, registry = loop_maker(obj, data["agent"]), load_registry(data.get("tools"))
        policy = AgentPolicy.from_json(data.get("policy") or {})
        warmed = None
        if data.get("shape") and data.get("warmup_s"):
            warmed = _warm_up(make_loop, registry, policy, data["shape"], tuple(data.get("formats") or ("json",)),
                              float(data["warmup_s"]))
        hit = _LOADED[line] = Environment(make_loop, registry, policy, resolve(policy.errors), warmed)
    return hit


def _warm_up(make_loop: Callable, registry: Any, policy: AgentPolicy, shape: str, formats: tuple,
             limit_s: float) -> Any:
    """Play the warm-up script once (one valid call, a final answer), bounded by ``limit_s``."""
    from fuzzer.agent.script import ScriptSetup, warmup_script
    from fuzzer.warmup import WarmUp, warm_up

    try:
        script = warmup_script(ScriptSetup(registry, shape=shape, formats=formats, max_turns=policy.max_turns))
    except Exception as exc:  # noqa: BLE001 - no script to warm up with: the workers start cold
        return WarmUp(finished=True, error=f"{type(exc).__name__}: {exc}")
    return warm_up(lambda: play(script, make_loop, registry, policy.caps), limit_s)


def _preload() -> None:
    line = os.environ.get(PRELOAD_ENV)
    if line:
        try:
            _environment(line)
        except Exception:  # noqa: BLE001 - the first episode loads again and reports the error
            pass


class EpisodeWorker:
    """The pool's target. Built where the pool loads it — the zygote its workers are forked from —
    so the loop is imported and warmed up there once (:data:`PRELOAD_ENV`), and every worker starts
    with it. (Preloading when this module is imported is not enough: with ``fork`` the zygote is a
    copy of the engine, which imported this module long before, without the variable.)"""

    def __init__(self) -> None:
        _preload()

    def run(self, text: str) -> list:
        return run_episode(text)


def episode_text(settings_line: str, script: Script) -> str:
    """The pool input of one episode."""
    return settings_line + "\n" + json.dumps(script.to_json(), ensure_ascii=False, separators=(",", ":"))


def probe_text(settings_line: str) -> str:
    """A pool input that only loads the agent (and makes one loop), to report a bad reference."""
    return settings_line + "\n"


def run_episode(text: str) -> list:
    """The pool target: ``[{"name": "episode", "arguments": {"json": ...}}]`` — the trace and the
    verdicts (judged here, in parallel over the workers), as JSON text — or ``"error"`` with a
    one-line message when the agent or the tools cannot be loaded."""
    line, _, body = text.partition("\n")
    try:
        env = _environment(line)
        make_loop, registry, policy = env.make_loop, env.registry, env.policy
        if not body:
            try:
                make_loop()
            except Exception as exc:  # noqa: BLE001 - the factory's own failure: no episode can run
                agent = json.loads(line).get("agent")
                raise TargetError(f"agent {agent!r}: making a loop raised {type(exc).__name__}: "
                                  f"{' '.join(str(exc).split())[:200]} (its factory is called for every episode, "
                                  f"the warm-up's too)") from None
            return [{"name": "loaded", "arguments": {
                "unresolved_errors": [list(p) for p in env.declared.problems],
                "warmup": env.warmup.to_json() if env.warmup is not None else None}}]
        script = Script.from_json(json.loads(body))
        trace = play(script, make_loop, registry, policy.caps, declared=env.declared)
    except TargetError as exc:
        message = str(exc)
        if message.startswith("target "):  # fuzzer.target's loader speaks of parsers
            message = "--agent " + message[len("target "):]
        return [{"name": "error", "arguments": {"message": message}}]
    except Exception as exc:  # noqa: BLE001 - e.g. a tools file the worker cannot read
        return [{"name": "error", "arguments": {"message": f"{type(exc).__name__}: {exc}"}}]
    violations = judge(Episode(script, trace, policy, registry))
    # One JSON string: the pool normalizes what its target returns value by value, and json.dumps
    # / json.loads (C code) carry a trace of any size far faster.
    payload = json.dumps({"trace": trace, "violations": [
        [v.verdict, v.signature.id, v.signature.title, v.signature.key, v.reason] for v in violations]},
        ensure_ascii=False, separators=(",", ":"), default=repr)
    return [{"name": "episode", "arguments": {"json": payload}}]


# --------------------------------------------------------------------------------------------
# Engine side


class EpisodeRunner(Started):
    """Episodes of one agent in a worker pool: ``run(scripts) -> [(trace, violations, outcome)]``.

    ``start()`` launches the pool with the agent preloaded in its zygote and plays a probe, so a
    reference that does not load, or a factory that fails, is a :class:`TargetError` (a usage
    error) before anything is judged. A worker that hung or died has no trace; its violation
    (hang, crash) is judged here from how it ended.
    """

    def __init__(self, *, agent: str, registry: Any, policy: AgentPolicy, tools_file: Optional[str] = None,
                 cwd: Optional[str] = None, timeout: float = 2.0, workers: int = 1,
                 memory_limit_mb: Optional[int] = 4096, shape: Optional[str] = "openai", formats: tuple = ("json",)):
        from fuzzer.isolation import TargetSpec, WorkerPool
        from fuzzer.warmup import warmup_limit

        self.agent, self.registry, self.policy, self.timeout = agent, registry, policy, timeout
        cwd = cwd or os.getcwd()
        self.warmup_s = warmup_limit(timeout) if shape else 0.0
        self.line = Settings(agent=agent, tools=_absolute(tools_file, cwd), cwd=cwd, policy=policy.to_json(),
                             shape=shape, formats=tuple(formats), warmup_s=self.warmup_s).line()
        self.pool = WorkerPool(TargetSpec(target=WORKER_TARGET, cwd=cwd, timeout=timeout,
                                          memory_limit_mb=memory_limit_mb), workers=workers,
                               environ={PRELOAD_ENV: self.line})
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
        outcome = self.pool.run([probe_text(self.line)])[0]
        first = outcome.calls[0] if outcome.kind == "returned" and outcome.calls else None
        if first is not None and first["name"] == "loaded":
            self._loaded(first["arguments"])
            return
        if first is not None and first["name"] == "error":
            raise TargetError(first["arguments"]["message"])
        if outcome.kind == "hung":
            raise TargetError(f"agent {self.agent!r}: loading it did not finish within {self.timeout:g} s (--timeout)")
        raise TargetError(f"agent {self.agent!r}: the process loading it failed "
                          f"({outcome.detail or outcome.exception or outcome.kind})")

    def _loaded(self, info: dict) -> None:
        """What loading said: a policy ``errors`` name that resolves to no exception class is a
        policy error (one line naming the file and key); a warm-up that did not warm is a note."""
        from fuzzer.agent.policy import PolicyError
        from fuzzer.warmup import WarmUp

        unresolved = info.get("unresolved_errors") or []
        if unresolved:
            name, why = unresolved[0]
            raise PolicyError(f"{self.policy.source}: errors: {name!r}: {why}")
        warmup = info.get("warmup")
        if warmup is not None:
            note = WarmUp(**warmup).note(f"agent {self.agent!r}", self.warmup_s)
            if note:
                self.notes.append(note)

    def run(self, scripts: list, deadline: Optional[float] = None) -> list[Optional[tuple]]:
        """One (trace, violations, outcome) per script; None for a script not played by
        ``deadline`` (a ``time.monotonic()`` value: its worker is restarted, as for the parser pool).
        ``violations`` None: the episode could not run at all (the loop's factory failed in the
        worker; :attr:`notes` says why) — neither a pass nor a failure."""
        outcomes = self.pool.run([episode_text(self.line, s) for s in scripts], deadline=deadline)
        return [self._judged(script, outcome) if outcome is not None else None
                for script, outcome in zip(scripts, outcomes)]

    def _judged(self, script: Script, outcome: Any) -> tuple:
        from corpus.signature import Signature
        from fuzzer.agent.checks import Violation

        first = outcome.calls[0] if outcome.kind == "returned" and outcome.calls else None
        if first is not None and first["name"] == "episode":
            data = json.loads(first["arguments"]["json"])
            violations = [Violation(v[0], Signature(id=v[1], title=v[2], key=v[3]), v[4]) for v in data["violations"]]
            return data["trace"], violations, outcome
        if first is not None and first["name"] == "error":  # no test at all: violations None (never a pass)
            self.notes.append(f"an episode could not run: {first['arguments']['message']}")
            return None, None, outcome
        episode = Episode(script, None, self.policy, self.registry, outcome=outcome, timeout=self.timeout)
        return None, judge(episode), outcome


def _absolute(path: Optional[str], cwd: str) -> Optional[str]:
    """A tools file as an absolute path (workers run in ``cwd`` too, but corpus entries and reports
    keep what the user typed); an ``M:A`` reference to pydantic models is left as it is."""
    if path is None or (":" in path and not os.path.exists(os.path.join(cwd, path))):
        return path
    return os.path.abspath(os.path.join(cwd, path))

__all__ = ["EpisodeRunner", "PRELOAD_ENV", "Settings", "WORKER_TARGET", "episode_text", "loop_maker", "play", "probe_text", "run_episode"]
