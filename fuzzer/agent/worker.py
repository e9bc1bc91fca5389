"""One episode, played inside an isolated worker process.

The engine never imports the user's loop. It runs episodes through :class:`fuzzer.isolation.
WorkerPool` — the same zygote, watchdog, batching and stack capture the parser campaign uses —
with :func:`run_episode` as the pool's target: each input text is one line of settings (the
agent reference, tools file, working directory, policy) and one line of script JSON, and the
"call" the target returns carries the episode's trace and verdicts (judged in the worker, so the
oracles run in parallel over the workers) back to the engine as JSON text. A loop that hangs is
killed by the pool's watchdog after ``--timeout`` and its stack is captured; one that kills its
process (``os._exit``, a segfault) is restarted the same way. :class:`EpisodeRunner` is the
engine's side: the pool, the probe that turns a bad ``--agent`` into a usage error, and the
verdicts of episodes that hung or died.

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

#: The pool target (``fuzzer.isolation.TargetSpec.target``).
WORKER_TARGET = "fuzzer.agent.worker:run_episode"


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
    """What a worker needs besides the script (one JSON line, the same for a whole campaign)."""

    agent: str
    tools: Optional[str] = None
    cwd: Optional[str] = None
    policy: dict = field(default_factory=dict)

    def line(self) -> str:
        return json.dumps({"agent": self.agent, "tools": self.tools, "cwd": self.cwd, "policy": self.policy},
                          separators=(",", ":"), sort_keys=True)


#: The environment variable that makes the pool's zygote load the agent once, before it forks
#: workers (an agent importing a heavy framework must not spend a worker's --timeout on imports).
PRELOAD_ENV = "TOOLFUZZ_AGENT_SETTINGS"

_LOADED: dict[str, Any] = {}


def _environment(line: str) -> tuple:
    """(make_loop, registry, policy, declared) for a settings line, loaded once per process; the
    policy's exception names are resolved once the loop is imported (fuzzer/exception_names.py)."""
    hit = _LOADED.get(line)
    if hit is None:
        from fuzzer.exception_names import resolve
        from fuzzer.target import load_target
        from strategies._internal.tools import load_registry

        data = json.loads(line)
        obj = load_target(data["agent"], cwd=data.get("cwd"))
        policy = AgentPolicy.from_json(data.get("policy") or {})
        hit = _LOADED[line] = (loop_maker(obj, data["agent"]), load_registry(data.get("tools")), policy,
                               resolve(policy.errors))
    return hit


def _preload() -> None:
    line = os.environ.get(PRELOAD_ENV)
    if line:
        try:
            _environment(line)
        except Exception:  # noqa: BLE001 - the first episode loads again and reports the error
            pass


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
        make_loop, registry, policy, declared = _environment(line)
        if not body:
            make_loop()
            return [{"name": "loaded", "arguments": {"unresolved_errors": [list(p) for p in declared.problems]}}]
        script = Script.from_json(json.loads(body))
        trace = play(script, make_loop, registry, policy.caps, declared=declared)
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


_preload()


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
                 memory_limit_mb: Optional[int] = 4096):
        from fuzzer.isolation import TargetSpec, WorkerPool

        self.agent, self.registry, self.policy, self.timeout = agent, registry, policy, timeout
        cwd = cwd or os.getcwd()
        self.line = Settings(agent=agent, tools=_absolute(tools_file, cwd), cwd=cwd, policy=policy.to_json()).line()
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
            unresolved = first["arguments"].get("unresolved_errors") or []
            if unresolved:  # a name that resolves to no exception class: one line naming the file and key
                from fuzzer.agent.policy import PolicyError

                name, why = unresolved[0]
                raise PolicyError(f"{self.policy.source}: errors: {name!r}: {why}")
            return
        if first is not None and first["name"] == "error":
            raise TargetError(first["arguments"]["message"])
        if outcome.kind == "hung":
            raise TargetError(f"agent {self.agent!r}: loading it did not finish within {self.timeout:g} s (--timeout)")
        raise TargetError(f"agent {self.agent!r}: the process loading it failed "
                          f"({outcome.detail or outcome.exception or outcome.kind})")

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
