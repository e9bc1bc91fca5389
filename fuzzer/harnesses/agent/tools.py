"""Tool doubles: the ``tools`` toolfuzz hands the loop, answering from the script.

``tools`` is a read-only mapping from tool name to a callable :class:`Tool`; ``tools[name]`` raises
``KeyError`` for a tool that does not exist, exactly like a dict of functions, so a loop that looks
up a hallucinated name unguarded crashes here as it would in production. A tool takes its arguments
as keywords or as one mapping (``tools["get_weather"](city="Paris")`` or ``(arguments)``); it
carries its ``name``, ``description`` and ``parameters`` (JSON Schema), and the box converts the
whole set to the lists model APIs take (:meth:`ToolBox.openai`, :meth:`ToolBox.anthropic`,
:meth:`ToolBox.specs`).

Every execution is recorded first (:class:`fuzzer.harnesses.agent.trace.Recorder` — it counts, even when the
tool then fails) and then answered by a **behaviour**: the one plug-in point for other tool
doubles. The default, :class:`ScriptedAnswers`, returns the result the script holds for the call.
A fault-injecting behaviour (the executor harness's: timeouts, 429s, malformed bodies) implements
the same one method, :meth:`ToolBehaviour.respond`, and raises or returns whatever the fault says;
the recorder keeps the failure, and the oracles judge the loop's reaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator, Optional, Protocol

from fuzzer.harnesses.agent.trace import Recorder
from strategies._internal.sample import copy_json


class ToolBehaviour(Protocol):
    """How a tool double answers one execution.

    ``name`` and ``arguments`` are what the loop passed (arguments as a JSON-typed dict);
    ``scripted`` is the result the script holds for that call (a fresh copy). Return the tool's
    result, or raise the tool's failure (any exception)."""

    def respond(self, name: str, arguments: dict, scripted: Any) -> Any: ...


class ToolFailure(RuntimeError):
    """What a tool double raises for a call the script says fails (a service that is down): the
    loop under test must report it to the model — the message names the result's ref — rather
    than crash or go on as if the call had answered."""


class ScriptedAnswers:
    """The default behaviour: every execution answers with the scripted result, or raises
    :class:`ToolFailure` where the script says the tool fails (``"ok": false``)."""

    def respond(self, name: str, arguments: dict, scripted: Any) -> Any:
        if type(scripted) is dict and scripted.get("ok") is False:
            raise ToolFailure(f"{name} failed: the service is unavailable (ref {scripted.get('ref')})")
        return scripted


class Tool:
    """One tool double: call it with keyword arguments or one mapping."""

    __slots__ = ("name", "description", "parameters", "_box")

    def __init__(self, name: str, description: str, parameters: Any, box: "ToolBox"):
        self.name, self.description, self.parameters, self._box = name, description, parameters, box

    @property
    def schema(self) -> Any:
        return self.parameters

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        if args:
            if len(args) != 1 or kwargs or not isinstance(args[0], Mapping):
                raise TypeError(f"tool {self.name!r} takes its arguments as keywords or as one mapping")
            arguments = dict(args[0])
        else:
            arguments = kwargs
        return self._box.run(self.name, arguments)

    def __repr__(self) -> str:
        return f"<tool {self.name}>"


class ToolBox(Mapping):
    """The tools of one episode (see the module docstring)."""

    def __init__(self, registry: Any, recorder: Recorder, behaviour: Optional[ToolBehaviour] = None):
        self._recorder = recorder
        self._behaviour = behaviour or ScriptedAnswers()
        self._shown = _shown(registry)
        self._tools = {spec["name"]: Tool(spec["name"], spec["description"], spec["parameters"], self)
                       for spec in self._shown[0]}

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except (KeyError, TypeError):
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"<tools {', '.join(self._tools)}>"

    def run(self, name: str, arguments: Any) -> Any:
        """Execute ``name`` (also ``tools.run(name, arguments)`` for dispatching loops)."""
        if name not in self._tools:
            raise KeyError(name)
        scripted = self._recorder.execute(name, arguments)
        try:
            return self._behaviour.respond(name, self._recorder.executions[-1]["arguments"], scripted)
        except Exception as exc:
            self._recorder.failed(exc)
            raise

    def specs(self) -> list[dict]:
        """``[{"name", "description", "parameters"}]``."""
        return list(self._shown[0])

    def openai(self) -> list[dict]:
        """The ``tools=`` list of the OpenAI chat completions API."""
        return list(self._shown[1])

    def anthropic(self) -> list[dict]:
        """The ``tools=`` list of the Anthropic messages API."""
        return list(self._shown[2])


def _shown(registry: Any) -> tuple:
    """(specs, OpenAI list, Anthropic list) of ``registry``, made once per process.

    Their schemas are copies: a loop that edits the schemas it is given (OpenAI strict mode adds
    ``additionalProperties: false``) changes what it sees in later episodes, as it would with
    module-level definitions, but never the schemas the oracles judge with. Loops ask for these
    on every request, and cache validators by schema identity, so they are not rebuilt per episode."""
    hit = _SHOWN.get(id(registry))
    if hit is None or hit[0] is not registry:
        specs = [{"name": t.name, "description": t.description, "parameters": copy_json(t.schema)} for t in registry]
        hit = _SHOWN[id(registry)] = (
            registry, specs, [{"type": "function", "function": spec} for spec in specs],
            [{"name": s["name"], "description": s["description"], "input_schema": s["parameters"]} for s in specs])
    return hit[1:]


_SHOWN: dict = {}


__all__ = ["ScriptedAnswers", "Tool", "ToolBehaviour", "ToolBox", "ToolFailure"]
