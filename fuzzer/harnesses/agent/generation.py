"""Scripts drawn from a choice sequence: the registered kinds of step, and a whole script.

Each turn of a :class:`~fuzzer.harnesses.agent.script.Script` comes from one **step** of a
registered kind (:data:`STEPS`): a valid call, parallel calls, the same call again (also with its
argument keys in another order), a call unrelated to the last result (``chain_break``), a
malformed or truncated output made by the anomaly operators, an unknown tool,
``finish_reason=length`` mid-call, an empty response; a script ends with a final answer or a
runaway that never stops calling.

A script is a pure function of (:class:`ScriptSetup`, choices): :func:`generate_script` draws every
decision from a :class:`~strategies._internal.source.Source`, so a failing script shrinks by
shrinking its choice sequence and replaying it (``ReplaySource``), and the shrunk script's tool
results, chain data and truncation flags are recomputed by construction
(:func:`~fuzzer.harnesses.agent.script.link_results`). The simplest choices (all zeros) give the
simplest script: no step, then a final answer. Body steps are ordered simplest first, so
shrinking a step's kind moves it toward a plain call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from fuzzer.harnesses.agent.script import (
    EXECUTABLE_STEPS, LENGTH, SHAPES, STOP, TOOL_CALLS, Script, ScriptCall, ScriptError, Turn, link_results,
)
from strategies._internal.build import Unbuildable, build_sample
from strategies._internal.formats import CHATTER_BEFORE, FORMATS, Unrepresentable, render, supports_name
from strategies._internal.mutations import OPERATORS
from strategies._internal.sample import ANOMALY_CLASSES, json_equal
from strategies._internal.schema import compile_tool, unsupported_tools
from strategies._internal.source import ReplaySource, Source
from strategies.registry import Registry

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


__all__ = ["FINAL_ANSWERS", "STEPS", "ScriptSetup", "StepKind", "generate_script", "warmup_script"]
