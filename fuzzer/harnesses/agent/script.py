"""An episode's script: the model turns the scripted model plays, generated from a choice sequence.

A script is the user's input and a list of :class:`Turn` s — what the model answers to its 1st,
2nd, ... request. Each turn comes from one **step** of a registered kind (:data:`STEPS`): a valid
call, parallel calls, the same call again (also with its argument keys in another order), a call
unrelated to the last result (``chain_break``), a malformed or truncated output made by the anomaly
operators, an unknown tool, ``finish_reason=length`` mid-call, an empty response; a script ends
with a final answer or a runaway that never stops calling.

A script is a pure function of (:class:`ScriptSetup`, choices): :func:`generate_script` draws every
decision from a :class:`~strategies._internal.source.Source`, so a failing script shrinks by
shrinking its choice sequence and replaying it (``ReplaySource``), and the shrunk script's tool
results, chain data and truncation flags are recomputed by construction. The simplest choices (all
zeros) give the simplest script: no step, then a final answer. Body steps are ordered simplest
first, so shrinking a step's kind moves it toward a plain call.

Turns are *materialized* for one model shape (the text a text-protocol model returns, or the
structured calls with the exact ``arguments`` strings), so a script stored in the corpus replays
exactly, whatever later versions of the generator would draw.

**Tool results and the chain.** The tool doubles answer each scripted call with
``{"ok": true, "ref": "tf-<turn>-<call>", "data": [...]}``. ``ref`` is unique per turn and call, so
the oracle can tell which result a message fed back; ``data`` carries one argument value of each
call of the next calls turn, so a model that follows the chain uses a value it was given. A
``chain_break`` call's values appear in no earlier result: it is *unrelated to the last result*
(see :func:`related`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from strategies._internal.build import Unbuildable, build_sample
from strategies._internal.formats import CHATTER_BEFORE, FORMATS, Unrepresentable, render, supports_name
from strategies._internal.mutations import OPERATORS
from strategies._internal.sample import ANOMALY_CLASSES, json_equal
from strategies._internal.schema import compile_tool, unsupported_tools
from strategies._internal.source import ReplaySource, Source
from strategies.errors import ToolfuzzError
from strategies.registry import Registry

#: The model shapes the scripted model comes in (:mod:`fuzzer.harnesses.agent.models`).
SHAPES = ("text", "openai", "anthropic")
#: finish reasons, in OpenAI's words (the Anthropic fake maps them to its stop reasons).
TOOL_CALLS, STOP, LENGTH = "tool_calls", "stop", "length"
#: At most this many steps before the ending (a script is the ending alone when the count is 0).
MAX_BODY_STEPS = 6
#: How often a script ends in a runaway instead of a final answer.
RUNAWAY_PROBABILITY = 0.25
#: At most this many distinct calls in a runaway (a policy with a huge max_turns sees the last again).
RUNAWAY_CALLS = 64
#: How often a structured calls turn also carries assistant text ("Let me check that.").
CONTENT_PROBABILITY = 0.2
#: How often a text-protocol turn has prose around its envelope.
CHATTER_PROBABILITY = 0.2
#: Relative weight of an anomaly class among a malformed step's operators (default 1): oversized
#: outputs (megabyte strings, deep nesting) cost milliseconds each to make, send and validate, so
#: they come rarely — still tried, never starved (the parser campaign weighs them the same way).
CLASS_WEIGHTS = {"oversized_input": 0.05}

USER_INPUTS = (
    "What is the weather in Paris tomorrow?",
    "Find me a flight to Rome and a hotel near the station.",
    "Email the team the agenda for Monday.",
    "How much is 17% of 2,340?",
    "Set up a meeting with Ana next week and tell me the forecast.",
)
FINAL_ANSWERS = (
    "Here is what I found.",
    "All done: the task is complete.",
    "I have the answer now. It will be sunny.",
    "Everything is booked, see the details above.",
)

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


# --------------------------------------------------------------------------------------------
# Generation


@dataclass
class ScriptSetup:
    """What generation needs, computed once per campaign: the tools it can generate calls for,
    the formats a text-protocol model writes, and which operators apply where."""

    registry: Any
    shape: str = "openai"
    formats: tuple = ("json",)
    max_turns: int = 10
    tools: list = field(default_factory=list)
    _writable: dict = field(default_factory=dict)
    _operators: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ScriptError(f"unknown model shape {self.shape!r}; known: {', '.join(SHAPES)}")
        for name in self.formats:
            if name not in FORMATS:
                raise ScriptError(f"unknown format {name!r}; known: {', '.join(FORMATS)}")
        broken = unsupported_tools(self.registry)
        self.tools = [t for t in self.registry if t.name not in broken]
        if not self.tools:
            raise ScriptError("no tool to call: every tool's schema is unsupported")
        for fmt in self.writing_formats:
            self._writable[fmt] = [t for t in self.tools if supports_name(fmt, t.name)]
            if not self._writable[fmt]:
                raise ScriptError(f"format {fmt!r} cannot write any of the tools' names")

    @property
    def writing_formats(self) -> tuple:
        """Formats outputs are rendered in: the declared ones for a text-protocol model; ``json``
        (the call object an anomaly operator mutates) for the structured shapes."""
        return self.formats if self.shape == "text" else ("json",)

    def tools_for(self, fmt: str) -> list:
        return self._writable[fmt]

    def operators(self, tool: Any, fmt: str, *, unknown: bool) -> list[str]:
        """Operators applying to (tool, fmt): the unknown_function ones (``unknown``) or the rest."""
        key = (tool.name, fmt, unknown)
        ops = self._operators.get(key)
        if ops is None:
            ops = self._operators[key] = [
                name for name, op in OPERATORS.items()
                if (op.anomaly_class == "unknown_function") == unknown and op.applies(tool, fmt)]
        return ops


@dataclass(frozen=True)
class StepKind:
    """A registered kind of step. ``draw(source, drafting) -> [Turn]`` (a runaway draws several)."""

    name: str
    description: str
    weight: float
    draw: Callable[[Source, "Drafting"], list]
    ending: bool = False


#: Every step kind, body kinds simplest first, then the endings.
STEPS: Registry[StepKind] = Registry("script step")


def step(name: str, *, weight: float = 0.0, ending: bool = False) -> Callable:
    """Register a step kind; the function's docstring is its description."""

    def register(draw: Callable) -> Callable:
        doc = (draw.__doc__ or name).strip().splitlines()[0]
        STEPS.register(name, StepKind(name=name, description=doc, weight=weight, draw=draw, ending=ending),
                       module=draw.__module__)
        return draw

    return register


@dataclass
class Drafting:
    """A script being generated: the setup and the turns drawn so far."""

    setup: ScriptSetup
    turns: list = field(default_factory=list)

    @property
    def text(self) -> bool:
        return self.setup.shape == "text"

    def format(self, source: Source) -> Optional[str]:
        return source.choice(self.setup.formats) if self.text else None

    def tool(self, source: Source, fmt: Optional[str]) -> Any:
        return source.choice(self.setup.tools_for(fmt) if fmt else self.setup.tools)

    def new_call(self, source: Source, tool: Any) -> ScriptCall:
        return self.structured(tool.name, compile_tool(tool).generate(source))

    def structured(self, name: str, arguments: dict) -> ScriptCall:
        raw = None if self.text else json.dumps(arguments, ensure_ascii=False)
        return ScriptCall(name=name, arguments=arguments, raw=raw)

    def calls_turn(self, source: Source, step_name: str, fmt: Optional[str], calls: list, **extra: Any) -> Turn:
        """A turn carrying ``calls``: rendered in ``fmt`` for a text-protocol model; for the
        structured shapes, sometimes with assistant text beside the calls."""
        if self.text:
            plain = [{"name": c.name, "arguments": c.arguments} for c in calls]
            text = render(fmt, plain, source, chatter=source.boolean(CHATTER_PROBABILITY)).text
            return Turn(step=step_name, calls=calls, text=text, finish=TOOL_CALLS, **extra)
        content = source.choice(CHATTER_BEFORE) if source.boolean(CONTENT_PROBABILITY) else None
        return Turn(step=step_name, calls=calls, content=content, finish=TOOL_CALLS, **extra)

    def earlier_calls(self) -> list[ScriptCall]:
        """Calls of earlier turns that a model could make again: well-formed ones of known tools."""
        names = {t.name for t in self.setup.tools}
        return [c for t in self.turns if t.step in EXECUTABLE_STEPS for c in t.calls
                if c.arguments is not None and c.name in names]


#: Steps whose calls are well formed and valid: a loop is expected to run them (when the
#: duplicate rule allows), so the chain continues from their results.
EXECUTABLE_STEPS = frozenset({"call", "parallel", "repeat", "chain_break", "runaway", "tool_error"})


@step("call", weight=4)
def _call(source: Source, d: Drafting) -> list:
    """a valid call of a tool"""
    fmt = d.format(source)
    return [d.calls_turn(source, "call", fmt, [d.new_call(source, d.tool(source, fmt))])]


@step("parallel", weight=1.5)
def _parallel(source: Source, d: Drafting) -> list:
    """two or three valid calls in one response"""
    fmt = d.format(source)
    calls: list[ScriptCall] = []
    for _ in range(source.integer(2, 3)):
        call = d.new_call(source, d.tool(source, fmt))
        if not any(c.name == call.name and json_equal(c.arguments, call.arguments) for c in calls):
            calls.append(call)
    return [d.calls_turn(source, "parallel", fmt, calls)]


@step("repeat", weight=2)
def _repeat(source: Source, d: Drafting) -> list:
    """the same call as an earlier step again, sometimes with its argument keys in another order"""
    # The same choices are drawn whether or not there is an earlier call: a new call, which is, then
    # which earlier call and whether to reorder it. So deleting the step that made the earlier call
    # (shrinking) turns this step into a call without shifting the choices of the steps after it.
    fmt = d.format(source)
    fresh = d.new_call(source, d.tool(source, fmt))
    earlier = d.earlier_calls()
    pick = source.integer(0, max(0, len(earlier) - 1))
    reorder = source.boolean(0.5)
    if not earlier:
        return [d.calls_turn(source, "call", fmt, [fresh])]
    original = earlier[pick]
    arguments = original.arguments
    reorder = reorder and len(arguments) > 1
    if reorder:
        arguments = dict(reversed(list(arguments.items())))
    if d.text and not supports_name(fmt, original.name):
        fmt = next((f for f in d.setup.formats if supports_name(f, original.name)), "json")
    step_no = next(i for i, t in enumerate(d.turns) if any(c is original for c in t.calls)) + 1
    note = f"turn {step_no}'s call again" + (", argument keys reordered" if reorder else "")
    return [d.calls_turn(source, "repeat", fmt, [d.structured(original.name, arguments)], note=note)]


@step("tool_error", weight=1)
def _tool_error(source: Source, d: Drafting) -> list:
    """a valid call whose tool fails (raises): the loop must tell the model, not crash or drop it"""
    fmt = d.format(source)
    call = d.new_call(source, d.tool(source, fmt))
    call.fails = True
    return [d.calls_turn(source, "tool_error", fmt, [call], note="the tool raises ToolFailure")]


@step("chain_break", weight=1)
def _chain_break(source: Source, d: Drafting) -> list:
    """a call that uses nothing from the last result"""
    fmt = d.format(source)
    return [d.calls_turn(source, "chain_break", fmt, [d.new_call(source, d.tool(source, fmt))],
                         chain_break=True, note="uses nothing from the last result")]


@step("malformed", weight=2)
def _malformed(source: Source, d: Drafting) -> list:
    """an output an anomaly operator made: malformed, truncated, wrongly typed, ..."""
    return _anomaly(source, d, unknown=False)


@step("unknown_tool", weight=1)
def _unknown_tool(source: Source, d: Drafting) -> list:
    """a call of a tool that does not exist (hallucinated, misspelled, wrong case, prefixed)"""
    return _anomaly(source, d, unknown=True)


def _anomaly(source: Source, d: Drafting, *, unknown: bool) -> list:
    fmt = d.format(source) or "json"
    tool = d.tool(source, fmt)
    operators = d.setup.operators(tool, fmt, unknown=unknown)
    if not operators:
        return _call(source, d)
    operator = operators[source.weighted([CLASS_WEIGHTS.get(OPERATORS[op].anomaly_class, 1.0) for op in operators])]
    try:
        sample = build_sample(source, registry=d.setup.registry, tool=tool, format=fmt, operator=operator,
                              chatter=None if d.text else False, multi=None if d.text else False)
    except (Unbuildable, Unrepresentable):
        return _call(source, d)
    anomaly = OPERATORS[operator].anomaly_class
    name = "unknown_tool" if unknown else "malformed"
    truncated = anomaly == "truncated_output" and sample.calls is None
    note = f"{operator} ({anomaly})"
    truth = sample.calls
    if d.text:
        calls = ([ScriptCall(c["name"], c["arguments"]) for c in truth] if truth
                 else [ScriptCall(tool.name, None)])
        return [Turn(step=name, calls=calls, text=sample.text, finish=STOP if not truth else TOOL_CALLS,
                     truncated=truncated, note=note)]
    if ANOMALY_CLASSES[anomaly].semantic:  # well-formed JSON saying the wrong thing: send it as written
        calls = [d.structured(c["name"], c["arguments"]) for c in truth]
        return [Turn(step=name, calls=calls, finish=TOOL_CALLS, note=note)]
    arguments = truth[0]["arguments"] if truth and len(truth) == 1 else None
    if d.setup.shape == "anthropic":
        # Anthropic's API always parses tool input; broken JSON reaches a loop as text.
        return [Turn(step=name, calls=[ScriptCall(tool.name, arguments)], content=sample.text, finish=STOP,
                     truncated=truncated, note=note + ", written as text")]
    call = ScriptCall(tool.name, arguments, raw=_arguments_text(sample.text))
    return [Turn(step=name, calls=[call], finish=TOOL_CALLS, truncated=truncated, note=note)]


_CALL_PREFIX = re.compile(r'^\s*\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"arguments"\s*:\s*', re.S)


def _arguments_text(text: str) -> str:
    """The arguments part of a mutated ``{"name": ..., "arguments": ...}`` text: what OpenAI's
    ``function.arguments`` holds when the model's JSON is broken (the whole text when the operator
    broke the envelope itself)."""
    match = _CALL_PREFIX.match(text)
    if match is None:
        return text
    rest = text[match.end():].rstrip()
    return rest[:-1].rstrip() if rest.endswith("}") else rest


@step("length", weight=1)
def _length(source: Source, d: Drafting) -> list:
    """the response stops mid-call: finish_reason=length (max_tokens)"""
    fmt = d.format(source)
    tool = d.tool(source, fmt)
    arguments = compile_tool(tool).generate(source)
    if d.text:
        rendered = render(fmt, [{"name": tool.name, "arguments": arguments}], source, chatter=False)
        offset, cut = 0, None
        for piece in rendered.pieces:
            if piece.role == "payload" and piece.args_end is not None:
                cut = offset + source.integer(1, max(1, piece.args_end - 1))
                break
            offset += len(piece.text)
        text = rendered.text[:cut if cut is not None else max(1, len(rendered.text) - 1)]
        return [Turn(step="length", calls=[ScriptCall(tool.name, None)], text=text, finish=LENGTH,
                     truncated=True, note=f"cut after {len(text)} of {len(rendered.text)} characters")]
    if d.setup.shape == "anthropic":  # the input holds the keys written before the cut
        items = list(arguments.items())
        partial = dict(items[:source.integer(0, max(0, len(items) - 1))])
        return [Turn(step="length", calls=[d.structured(tool.name, partial)], finish=LENGTH, truncated=True,
                     note=f"max_tokens: {len(partial)} of {len(items)} arguments written")]
    full = json.dumps(arguments, ensure_ascii=False)
    raw = full[:source.integer(1, max(1, len(full) - 1))]
    return [Turn(step="length", calls=[ScriptCall(tool.name, None, raw=raw)], finish=LENGTH, truncated=True,
                 note=f"arguments cut after {len(raw)} of {len(full)} characters")]


@step("empty", weight=1)
def _empty(source: Source, d: Drafting) -> list:
    """an empty response: no text, no call"""
    return [Turn(step="empty")]


@step("final", ending=True)
def _final(source: Source, d: Drafting) -> list:
    """the final answer"""
    answer = source.choice(FINAL_ANSWERS)
    return [Turn(step="final", text=answer, content=answer, final=True)]


RUNAWAY_MODES = {
    "same": "the same call every turn, the same result",
    "vary": "a new call every turn, each using the last result",
    "stuck": "a new call every turn, the tool always answering the same",
}


@step("runaway", ending=True)
def _runaway(source: Source, d: Drafting) -> list:
    """a model that never stops calling tools"""
    mode = source.choice(list(RUNAWAY_MODES))
    fmt = d.format(source)
    tool = d.tool(source, fmt)
    # "same" is one turn, played again past the end of the script; the others need one turn per
    # request up to where the episode is stopped (max_turns).
    count = 1 if mode == "same" else max(1, min(RUNAWAY_CALLS, d.setup.max_turns - len(d.turns)))
    calls: list[ScriptCall] = []
    for _ in range(count):
        call = d.new_call(source, tool)
        if calls and any(json_equal(call.arguments, c.arguments) for c in calls):
            call = d.new_call(source, tool)  # one more try at a call not made yet
        calls.append(call)
    return [d.calls_turn(source, "runaway", fmt, [call], mode=mode, note=RUNAWAY_MODES[mode]) for call in calls]


def _body_kinds() -> tuple[list, list]:
    kinds = [k for k in STEPS.values() if not k.ending]
    return kinds, [k.weight for k in kinds]


def generate_script(source: Source, setup: ScriptSetup) -> Script:
    """Draw one script. Choices, in order: the user input, the number of body steps, each step
    (its kind, then what it draws), the ending (a final answer unless a runaway is drawn)."""
    d = Drafting(setup)
    made = getattr(source, "choices", None)
    base = len(made) if made is not None else 0
    user = source.choice(USER_INPUTS)
    kinds, weights = _body_kinds()
    count_at = len(made) - base if made is not None else -1
    spans = []
    for _ in range(source.integer(0, MAX_BODY_STEPS)):
        start = len(made) if made is not None else 0
        d.turns.extend(kinds[source.weighted(weights)].draw(source, d))
        if made is not None:
            spans.append((start - base, len(made) - base))
    ending = STEPS["runaway"] if source.boolean(RUNAWAY_PROBABILITY) else STEPS["final"]
    d.turns.extend(ending.draw(source, d))
    link_results(d.turns)
    return Script(user=user, turns=d.turns, shape=setup.shape, formats=tuple(setup.formats),
                  spans=tuple(spans), count_at=count_at)


#: The choices of the warm-up script: the first user input, one body step, and in it the simplest
#: of everything (a plain call of the first tool); then the final answer.
WARMUP_CHOICES = (0, 1, 0)


def warmup_script(setup: ScriptSetup) -> Script:
    """The script a loop is warmed up with before any episode is timed (:mod:`fuzzer.engine.warmup`):
    one valid call, then a final answer — the path every episode takes first."""
    return generate_script(ReplaySource(WARMUP_CHOICES), setup)


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


__all__ = ["FINAL_ANSWERS", "SHAPES", "STEPS", "Script", "ScriptCall", "ScriptError", "ScriptSetup", "StepKind",
           "Turn", "call_text", "generate_script", "link_results", "listing", "refs_in", "related", "scalars",
           "warmup_script"]
