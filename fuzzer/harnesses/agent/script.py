"""An episode's script: the user's input and the model turns the scripted model plays.

A script is the user's input and a list of :class:`Turn` s — what the model answers to its 1st,
2nd, ... request. Each turn comes from one **step** (a valid call, parallel calls, the same call
again, a call unrelated to the last result, a malformed or truncated output, an unknown tool, an
empty response; a final answer or a runaway at the end), drawn from a choice sequence by
:mod:`fuzzer.harnesses.agent.generation`.

Turns are *materialized* for one model shape (the text a text-protocol model returns, or the
structured calls with the exact ``arguments`` strings), so a script stored in the corpus replays
exactly, whatever later versions of the generator would draw.

**Tool results and the chain.** The tool doubles answer each scripted call with
``{"ok": true, "ref": "tf-<turn>-<call>", "data": [...]}``. ``ref`` is unique per turn and call, so
the oracle can tell which result a message fed back; ``data`` carries one argument value of each
call of the next calls turn, so a model that follows the chain uses a value it was given. A
``chain_break`` call's values appear in no earlier result: it is *unrelated to the last result*
(see :func:`related`). :func:`link_results` computes them, for a generated script and for a
stored one alike.

:func:`listing` prints a script as numbered steps, one line each (how a finding shows it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from strategies._internal.sample import json_equal
from strategies.errors import ToolfuzzError

#: The model shapes the scripted model comes in (:mod:`fuzzer.harnesses.agent.models`).
SHAPES = ("text", "openai", "anthropic")
#: finish reasons, in OpenAI's words (the Anthropic fake maps them to its stop reasons).
TOOL_CALLS, STOP, LENGTH = "tool_calls", "stop", "length"
_REF = re.compile(r"tf-(?:u\d+|\d+-\d+)")


# --------------------------------------------------------------------------------------------
# The script


@dataclass
class ScriptCall:
    """One call as the model wrote it.

    ``arguments``: what the call denotes (the truth), or None when it denotes no faithful call
    (broken or cut-off JSON). ``raw``: for the structured shapes, the exact arguments JSON text the
    fake sends (OpenAI's ``function.arguments``; Anthropic's ``input`` is parsed from it, keeping
    its key order); None for text-protocol turns and for calls the fake does not emit as a tool call
    (an Anthropic model that wrote its call as text). ``result``: what the tool double answers.
    ``fails``: the tool double raises :class:`fuzzer.harnesses.agent.tools.ToolFailure` instead (its message
    names the result's ref, so a loop that reports the failure to the model feeds the ref back).
    """

    name: str
    arguments: Optional[dict]
    raw: Optional[str] = None
    result: Any = None
    fails: bool = False

    def to_json(self, *, compact: bool = False) -> dict:
        """``compact``: leave out what loading recomputes — the result (:func:`link_results`) and
        the arguments when ``raw`` is exactly them (the short form of a reproduce command)."""
        data: dict = {"name": self.name}
        if not (compact and self.raw is not None and self.arguments is not None and _denotes(self.raw, self.arguments)):
            data["arguments"] = self.arguments
        if self.raw is not None:
            data["raw"] = self.raw
        if not compact:
            data["result"] = self.result
        if self.fails:
            data["fails"] = True
        return data

    @classmethod
    def from_json(cls, data: dict) -> "ScriptCall":
        arguments = data.get("arguments")
        if "arguments" not in data and isinstance(data.get("raw"), str):
            arguments = json.loads(data["raw"])
        return cls(name=data["name"], arguments=arguments, raw=data.get("raw"), result=data.get("result"),
                   fails=bool(data.get("fails")))


@dataclass
class Turn:
    """What the model answers to one request.

    ``text``: the whole output of a text-protocol model. ``content``: the assistant text of a
    structured response (None: none). ``finish``: tool_calls | stop | length. ``truncated``: the
    output was cut off (a call from it must not run). ``final``: this is the final answer.
    ``mode``: a runaway's kind (same | vary | stuck). ``note``: what the listing says about it.
    """

    step: str
    calls: list = field(default_factory=list)
    text: str = ""
    content: Optional[str] = None
    finish: str = STOP
    truncated: bool = False
    chain_break: bool = False
    final: bool = False
    mode: str = ""
    note: str = ""

    def to_json(self, *, compact: bool = False) -> dict:
        """The turn's fields, those at their default left out (a stored script stays short)."""
        data: dict = {"step": self.step}
        if self.calls:
            data["calls"] = [c.to_json(compact=compact) for c in self.calls]
        for name, default in _TURN_DEFAULTS:
            value = getattr(self, name)
            if value != default:
                data[name] = value
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Turn":
        return cls(step=data["step"], calls=[ScriptCall.from_json(c) for c in data.get("calls", ())],
                   text=data.get("text", ""), content=data.get("content"), finish=data.get("finish", STOP),
                   truncated=bool(data.get("truncated")), chain_break=bool(data.get("chain_break")),
                   final=bool(data.get("final")), mode=data.get("mode", ""), note=data.get("note", ""))


_TURN_DEFAULTS = (("text", ""), ("content", None), ("finish", STOP), ("truncated", False), ("chain_break", False),
                  ("final", False), ("mode", ""), ("note", ""))


@dataclass
class Script:
    """The user's input and the model's turns, for one model shape."""

    user: str
    turns: list
    shape: str
    formats: tuple = ("json",)
    #: Where each body step's choices are in the choice sequence it was generated from, and where
    #: the step count is: deleting a step is deleting its span and counting one fewer (shrinking).
    spans: tuple = field(default=(), compare=False, repr=False)
    count_at: int = field(default=-1, compare=False, repr=False)

    def without_step(self, choices: tuple, step: int) -> tuple:
        """The choice sequence of this script with body step ``step`` (0-based) left out."""
        start, end = self.spans[step]
        out = list(choices[:start]) + list(choices[end:])
        out[self.count_at] = max(0, out[self.count_at] - 1)
        return tuple(out)

    def turn(self, request: int) -> Turn:
        """The turn answering the ``request``-th request (0-based); past the end the last turn is
        played again (a runaway keeps running, a final answer is given again)."""
        return self.turns[min(request, len(self.turns) - 1)]

    def steps(self) -> list[list[int]]:
        """Turn indices grouped by step (a runaway's turns are one step)."""
        groups: list[list[int]] = []
        for i, turn in enumerate(self.turns):
            if groups and turn.step == "runaway" and self.turns[groups[-1][0]].step == "runaway":
                groups[-1].append(i)
            else:
                groups.append([i])
        return groups

    def size(self) -> tuple:
        """The shrinking order: fewer steps, then fewer turns, then a shorter listing."""
        return (len(self.steps()), len(self.turns), len(listing(self)))

    def refs(self) -> set[str]:
        return {c.result["ref"] for t in self.turns for c in t.calls if isinstance(c.result, dict) and "ref" in c.result}

    def to_json(self, *, compact: bool = False) -> dict:
        """``compact``: no tool results (recomputed on loading) and no arguments where ``raw``
        holds them exactly, for commands a person copies."""
        return {"shape": self.shape, "formats": list(self.formats), "user": self.user,
                "turns": [t.to_json(compact=compact) for t in self.turns]}

    @classmethod
    def from_json(cls, data: Any) -> "Script":
        if not isinstance(data, dict) or not isinstance(data.get("turns"), list) or not data["turns"]:
            raise ScriptError("a script must be an object with a non-empty 'turns' list")
        shape = data.get("shape", "openai")
        if shape not in SHAPES:
            raise ScriptError(f"script shape {shape!r} is not one of {', '.join(SHAPES)}")
        try:
            turns = [Turn.from_json(t) for t in data["turns"]]
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ScriptError(f"a script turn is malformed ({type(exc).__name__}: {exc})") from None
        if any(c.result is None for t in turns for c in t.calls):
            link_results(turns)
        return cls(user=str(data.get("user", "")), turns=turns, shape=shape,
                   formats=tuple(data.get("formats") or ("json",)))


class ScriptError(ToolfuzzError, ValueError):
    """A stored script (corpus scenario, reproduce command) does not have the documented shape."""


# --------------------------------------------------------------------------------------------
# Chain data: what "related to the last result" means


def scalars(value: Any) -> Iterator[Any]:
    """The strings (non-empty) and numbers (not booleans) inside a JSON value, depth first."""
    if isinstance(value, str):
        if value:
            yield value
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, (int, float)):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from scalars(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from scalars(v)


def related(arguments: Any, results: list) -> Optional[bool]:
    """Is a call with ``arguments`` related to ``results`` (the last results the loop saw)?

    True when one of its argument values (a string or number, at any depth) equals, as a JSON
    value, a value inside one of the results: the model carried data from the result into the
    call. None when the call holds no such value (it takes nothing, so it cannot ignore anything).
    """
    mine = list(scalars(arguments))
    if not mine:
        return None
    theirs = [v for r in results for v in scalars(r)]
    return any(json_equal(a, b) for a in mine for b in theirs)


def refs_in(text: str) -> list[str]:
    """The result refs (``tf-3-1``, ``tf-u2``) a text mentions."""
    return _REF.findall(text)


#: Steps whose calls are well formed and valid: a loop is expected to run them (when the
#: duplicate rule allows), so the chain continues from their results.
EXECUTABLE_STEPS = frozenset({"call", "parallel", "repeat", "chain_break", "runaway", "tool_error"})


def link_results(turns: list) -> None:
    """Give every call its tool result: a unique ``ref`` and the chain ``data`` (module docstring).

    A turn's argument values are put into the results of the turns before it, back to and
    including the last turn whose calls a loop is expected to run, so whichever of those the loop
    ran last, the call is related to it — unless the turn is a chain break. A runaway that is
    ``same`` or ``stuck`` answers every turn with one identical result (``stuck``: with no data,
    so each new call is unrelated to it)."""
    for i, turn in enumerate(turns):
        for j, call in enumerate(turn.calls):
            call.result = {"ok": not call.fails, "ref": f"tf-{i + 1}-{j + 1}", "data": []}
    for j, turn in enumerate(turns):
        if turn.chain_break or turn.mode == "stuck":
            continue
        values = [next(scalars(c.arguments), None) for c in turn.calls if c.arguments is not None]
        values = [v for v in values if v is not None]
        if not values:
            continue
        for i in range(j - 1, -1, -1):
            for call in turns[i].calls:
                data = call.result["data"]
                data.extend(v for v in values if not any(json_equal(v, w) for w in data))
            if turns[i].step in EXECUTABLE_STEPS:
                break
    runaway = [t for t in turns if t.step == "runaway"]
    if runaway and runaway[0].mode in ("same", "stuck"):
        shared = runaway[0].calls[0].result
        if runaway[0].mode == "stuck":
            shared["data"] = []
        for t in runaway:
            t.calls[0].result = shared


# --------------------------------------------------------------------------------------------
# The readable listing


def call_text(call: ScriptCall) -> str:
    """``get_weather(city="Paris", unit="celsius")``; the raw text when it denotes no call."""
    if call.arguments is None or (call.raw is not None and not _denotes(call.raw, call.arguments)):
        raw = call.raw if call.raw is not None else "…"
        return f"{call.name}(<arguments {_short(raw, 60)}>)"
    parts = []
    for key, value in call.arguments.items():
        shown = _dump(value)
        parts.append(f"{key}={_short(shown, 60, quote=False)}" if key.isidentifier() else
                     f"**{{{_dump(key)}: {_short(shown, 60, quote=False)}}}")
    return f"{call.name}({', '.join(parts)})"


def _dump(value: Any) -> str:
    """JSON for people: non-ASCII kept, lone surrogates escaped (they cannot be printed)."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True)
    return text


def _denotes(raw: str, arguments: dict) -> bool:
    try:
        return json_equal(json.loads(raw), arguments)
    except (ValueError, RecursionError):
        return False


def _short(text: str, limit: int, *, quote: bool = True) -> str:
    shown = _dump(text) if quote else text
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"


def listing(script: Script) -> str:
    """The script as numbered steps, one line each, like Hypothesis's stateful step listing::

        user: "What's the weather in Paris tomorrow?"
          1. call         get_weather(city="Paris")
          2. repeat       get_weather(unit="celsius", city="Paris")   # turn 1's call again, ...
          3. final        "Here is what I found."
    """
    lines = [f"user: {_dump(script.user)}   [{script.shape} model"
             + (f", {'/'.join(script.formats)}" if script.shape == "text" else "") + "]"]
    for number, group in enumerate(script.steps(), 1):
        turn = script.turns[group[0]]
        lines.append(f"  {number}. {turn.step:<13}{_turn_body(script, turn, group)}")
    return "\n".join(lines)


def _turn_body(script: Script, turn: Turn, group: list) -> str:
    note = f"   # {turn.note}" if turn.note else ""
    if turn.final:
        return _dump(turn.content or turn.text)
    if turn.step == "empty":
        return "(no text, no call)"
    if turn.step == "runaway":
        calls = [call_text(script.turns[i].calls[0]) for i in group]
        if len(calls) == 1:
            return f"{calls[0]} every turn, forever{note}"
        return f"{calls[0]}, {calls[1]}, … ({len(calls)} calls), then the last forever{note}"
    if script.shape == "text" and (turn.step in ("malformed", "unknown_tool", "length") or not turn.calls):
        return _short(turn.text, 110) + note
    body = ", ".join(call_text(c) for c in turn.calls if c.raw is not None or script.shape == "text")
    if script.shape == "text":  # the exact text matters to a parser: show how the calls were written
        body += f"  as {_short(turn.text, 90)}"
    if turn.content and not turn.final:
        body = (body + "  + text " if body else "text ") + _short(turn.content, 60)
    return body + note


__all__ = ["EXECUTABLE_STEPS", "LENGTH", "SHAPES", "STOP", "TOOL_CALLS", "Script", "ScriptCall", "ScriptError",
           "Turn", "call_text", "link_results", "listing", "refs_in", "related", "scalars"]
