"""A tool-use loop done right: an explicit state machine (the bundled clean example).

    IDLE -> THINKING -> TOOL_CALLING -> OBSERVING -> THINKING ... -> DONE | ERROR

* THINKING asks the model, at most ``max_turns`` times per user input. A response cut off at the
  length limit is not acted on (the model is asked again); an empty one gets a nudge; text without
  a call is the final answer, returned as given.
* TOOL_CALLING runs each call only after checks: the tool exists, the arguments satisfy its JSON
  Schema, the identical call (arguments compared as JSON values) has not run already, the last
  ``convergence`` results are not all the same, at most ``max_tool_calls`` executions — and, when
  ``notice_chain_break`` is on, the call uses a value from the last results.
* OBSERVING feeds every call's outcome back under its own call id (OpenAI ``tool`` messages,
  Anthropic ``tool_result`` blocks), including the calls it refused, since both APIs require an
  answer to every call.

It runs unchanged against the three model shapes: an object with ``chat.completions.create``
(OpenAI-compatible), one with ``messages.create`` (Anthropic-compatible), or one with
``generate(messages, tools) -> str`` (a text protocol: a JSON call object or list, bare, in a
```json fence or after some prose). It is written as a user would write it: it imports only the
standard library and jsonschema, nothing from toolfuzz.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any, Optional

from jsonschema import Draft202012Validator, FormatChecker

MAX_TURNS = 10
MAX_TOOL_CALLS = 30
CONVERGENCE = 3
MODEL = "gpt-4o"


class State(enum.Enum):
    IDLE = "idle"
    THINKING = "thinking"
    TOOL_CALLING = "tool_calling"
    OBSERVING = "observing"
    DONE = "done"
    ERROR = "error"


@dataclass
class Call:
    id: Optional[str]
    name: str
    arguments: Optional[dict]  # None: the arguments could not be read
    problem: Optional[str] = None


@dataclass
class Decision:
    """What one model response asks for."""

    calls: list = field(default_factory=list)
    text: Optional[str] = None
    truncated: bool = False
    problem: Optional[str] = None  # e.g. a text-protocol call that does not parse


_VALIDATORS: dict = {}


def validator_for(schema: Any) -> Draft202012Validator:
    key = id(schema)
    hit = _VALIDATORS.get(key)
    if hit is None or hit[0] is not schema:
        hit = _VALIDATORS[key] = (schema, Draft202012Validator(schema, format_checker=FormatChecker()))
    return hit[1]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _values(value: Any) -> list:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (str, int, float)):
        return [value] if value != "" else []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [v for item in items for v in _values(item)]


# --------------------------------------------------------------------------------------------
# The three model shapes


class _Shape:
    """What every model shape does alike: it keeps the model (an SDK client, or a text model) and
    the tools; the conversation starts with the user's input; a nudge is one more user message.
    Each shape says how to ask, read the answer, record it and feed the tool results back."""

    def __init__(self, model: Any, tools: Any):
        self.model, self.tools = model, tools

    def start(self, user_input: str) -> list:
        return [{"role": "user", "content": user_input}]

    def say(self, history: list, text: str) -> None:
        history.append({"role": "user", "content": text})


class OpenAIShape(_Shape):
    def ask(self, history: list) -> Any:
        return self.model.chat.completions.create(model=MODEL, messages=history, tools=self.tools.openai())

    def read(self, response: Any) -> Decision:
        choice = response.choices[0]
        message = choice.message
        if choice.finish_reason == "length":
            return Decision(truncated=True)
        calls = []
        for tc in message.tool_calls or []:
            try:
                arguments = json.loads(tc.function.arguments)
                problem = None if isinstance(arguments, dict) else "the arguments are not a JSON object"
            except (TypeError, ValueError, RecursionError) as exc:
                arguments, problem = None, f"the arguments are not valid JSON ({exc})"
            calls.append(Call(tc.id, tc.function.name, arguments if problem is None else None, problem))
        return Decision(calls=calls, text=message.content)

    def record(self, history: list, response: Any) -> None:
        message = response.choices[0].message
        history.append({"role": "assistant", "content": message.content,
                        "tool_calls": [{"id": tc.id, "type": "function",
                                        "function": {"name": tc.function.name, "arguments": tc.function.arguments}}
                                       for tc in message.tool_calls or []]})

    def feed(self, history: list, outcomes: list) -> None:
        for call, content, _is_error in outcomes:
            history.append({"role": "tool", "tool_call_id": call.id, "content": content})


class AnthropicShape(_Shape):
    def ask(self, history: list) -> Any:
        return self.model.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=history,
                                           tools=self.tools.anthropic())

    def read(self, response: Any) -> Decision:
        if response.stop_reason == "max_tokens":
            return Decision(truncated=True)
        calls = [Call(b.id, b.name, b.input if isinstance(b.input, dict) else None,
                      None if isinstance(b.input, dict) else "the input is not an object")
                 for b in response.content if b.type == "tool_use"]
        text = "".join(b.text for b in response.content if b.type == "text")
        return Decision(calls=calls, text=text)

    def record(self, history: list, response: Any) -> None:
        blocks = []
        for b in response.content:
            if b.type == "text":
                blocks.append({"type": "text", "text": b.text})
            elif b.type == "tool_use":
                blocks.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
        history.append({"role": "assistant", "content": blocks})

    def feed(self, history: list, outcomes: list) -> None:
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": content, "is_error": is_error}
            for call, content, is_error in outcomes]})


class TextShape(_Shape):
    """A text protocol: the model writes a JSON call (or a list of them) to call tools."""

    def start(self, user_input: str) -> list:
        catalog = json.dumps(self.tools.specs(), ensure_ascii=False)
        return [{"role": "system", "content": "To call tools, answer with JSON: {\"name\": ..., \"arguments\": {...}} "
                                              f"or a list of such objects. Tools: {catalog}"},
                {"role": "user", "content": user_input}]

    def ask(self, history: list) -> Any:
        return self.model.generate(history, self.tools.specs())

    def read(self, text: Any) -> Decision:
        text = text if isinstance(text, str) else ""
        start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
        if start < 0:
            return Decision(text=text.strip())
        try:
            value, _end = json.JSONDecoder().raw_decode(text, start)
        except (ValueError, RecursionError) as exc:
            return Decision(problem=f"your tool call is not valid JSON ({exc})")
        items = value if isinstance(value, list) else [value]
        calls = []
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                return Decision(problem="a tool call must be an object with a string 'name'")
            arguments = item.get("arguments", {})
            ok = isinstance(arguments, dict)
            calls.append(Call(None, item["name"], arguments if ok else None,
                              None if ok else "the arguments are not an object"))
        return Decision(calls=calls)

    def record(self, history: list, text: Any) -> None:
        history.append({"role": "assistant", "content": text})

    def feed(self, history: list, outcomes: list) -> None:
        for call, content, _is_error in outcomes:
            history.append({"role": "tool", "name": call.name, "content": content})


def shape_of(model: Any, tools: Any) -> Any:
    if hasattr(model, "chat"):
        return OpenAIShape(model, tools)
    if hasattr(model, "messages"):
        return AnthropicShape(model, tools)
    return TextShape(model, tools)


# --------------------------------------------------------------------------------------------
# The machine


class AgentStateMachine:
    def __init__(self, model: Any, tools: Any, *, max_turns: int = MAX_TURNS, max_tool_calls: int = MAX_TOOL_CALLS,
                 convergence: int = CONVERGENCE, notice_chain_break: bool = False):
        self.shape = shape_of(model, tools)
        self.tools = tools
        self.max_turns, self.max_tool_calls = max_turns, max_tool_calls
        self.convergence, self.notice_chain_break = convergence, notice_chain_break
        self.state = State.IDLE
        self.turns = 0
        self.attempts = 0
        self.executed: dict = {}  # canonical call -> its result
        self.results: list = []  # canonical results, in execution order
        self.last_results: list = []
        self.reply: Optional[str] = None

    def run(self, user_input: str) -> Optional[str]:
        history = self.shape.start(user_input)
        self.state = State.THINKING
        while self.state not in (State.DONE, State.ERROR):
            if self.state is State.THINKING:
                self._think(history)
            elif self.state is State.TOOL_CALLING:
                self._call_tools(history)
        return self.reply

    def _finish(self, reply: str, state: State = State.DONE) -> None:
        self.reply, self.state = reply, state

    def _think(self, history: list) -> None:
        if self.turns >= self.max_turns:
            return self._finish(f"I stopped after {self.max_turns} turns without a final answer.")
        response = self.shape.ask(history)
        self.turns += 1
        decision = self.shape.read(response)
        if decision.truncated:
            return self.shape.say(history, "Your last answer was cut off. Please answer again, briefly.")
        if decision.problem:
            self.shape.record(history, response)
            return self.shape.say(history, f"I could not use that: {decision.problem}. Please try again.")
        if decision.calls:
            self.shape.record(history, response)
            self.pending, self.response = decision.calls, response
            self.state = State.TOOL_CALLING
            return None
        if decision.text:
            return self._finish(decision.text)
        return self.shape.say(history, "Your answer was empty. Please answer the question.")

    def _call_tools(self, history: list) -> None:
        self.state = State.OBSERVING
        outcomes = []
        fresh: list = []
        for call in self.pending:
            key = _canonical([call.name, call.arguments])
            refusal = self._refusal(call, key)
            if refusal == "converged":
                return self._finish("I stopped: the tools keep returning the same result.")
            if refusal == "limit":
                return self._finish(f"I stopped after {self.max_tool_calls} tool calls.")
            if refusal is not None:
                outcomes.append((call, json.dumps({"error": refusal}), True))
                continue
            self.attempts += 1
            try:
                result = self.tools[call.name](**call.arguments)
            except Exception as exc:  # a failing tool is reported to the model, not raised
                outcomes.append((call, json.dumps({"error": f"{type(exc).__name__}: {exc}"}), True))
                continue
            self.executed[key] = result
            self.results.append(_canonical(result))
            fresh.append(result)
            outcomes.append((call, json.dumps(result, ensure_ascii=False), False))
        if fresh:
            self.last_results = fresh
        self.shape.feed(history, outcomes)
        self.state = State.THINKING

    def _refusal(self, call: Call, key: str) -> Optional[str]:
        """Why ``call`` (``key``: its canonical JSON) must not run (None: it may)."""
        if call.problem:
            return call.problem
        if call.name not in self.tools:
            return f"there is no tool named {call.name!r}"
        if key in self.executed:  # before validating: a call that already ran was valid
            return f"this exact call already ran; its result was {json.dumps(self.executed[key])}"
        error = next(validator_for(self.tools[call.name].parameters).iter_errors(call.arguments), None)
        if error is not None:
            return f"invalid arguments: {error.message[:200]}"
        n = self.convergence
        if n and len(self.results) >= n and len(set(self.results[-n:])) == 1:
            return "converged"
        if self.attempts >= self.max_tool_calls:
            return "limit"
        if self.notice_chain_break and self.last_results:
            mine = _values(call.arguments)
            theirs = _values(self.last_results)
            if mine and not any(a == b and isinstance(a, str) == isinstance(b, str) for a in mine for b in theirs):
                return "this call uses nothing from the last result"
        return None


def run(model: Any, tools: Any, user_input: str) -> Optional[str]:
    """The loop with the default limits (max_turns 10, max_tool_calls 30, convergence 3)."""
    return AgentStateMachine(model, tools).run(user_input)


def run_noticing_chain_breaks(model: Any, tools: Any, user_input: str) -> Optional[str]:
    """The same loop, refusing calls that use nothing from the last result."""
    return AgentStateMachine(model, tools, notice_chain_break=True).run(user_input)
