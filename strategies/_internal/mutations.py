"""Mutation operators: the registry, the decorator and the context they work in.

An operator turns a valid sample into an anomalous one of exactly one anomaly class and states the
new ground truth (DESIGN.md): the faithful calls (noise a careful parser may strip), ``None`` (the
text denotes no faithful call), or — for semantic classes — the calls *as written*.

An operator is a plain function ``(source, ctx) -> Mutation`` registered with :func:`mutator`. It
draws every random decision from ``source`` (so the sample replays and shrinks), renders through
``ctx.render`` (so the envelope is the sample's format, with whatever :class:`Style` override the
operator needs), and raises :class:`NotApplicable` when this particular call offers nothing to
mutate (the builder then draws another call). Static applicability — "this tool has no enum",
"this format has no JSON payload" — is declared on the decorator so the scheduler never wastes
executions on it.

The operator implementations live in ``mutations_syntax.py`` (text and JSON-syntax classes) and
``mutations_semantic.py`` (call-level classes); both register here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from strategies.errors import ToolfuzzError, UnknownName
from strategies._internal.sample import ANOMALY_CLASSES


class NotApplicable(Exception):
    """This operator has nothing to mutate in this particular sample."""


@dataclass(slots=True)
class Mutation:
    """The result of an operator: the new text and its ground truth."""

    text: str
    calls: Optional[list]  # truth; None = no faithful call
    description: str = ""


@dataclass(slots=True)
class MutationContext:
    """What an operator may look at: the tool, the registry, the valid calls, and a renderer.

    ``render(calls, style=None)`` renders calls in this sample's format (and chatter variation) and
    returns a ``Rendered`` (``.text``, ``.pieces``); it consumes choices from the same source, so the
    result replays exactly.
    """

    registry: Any
    tool: Any
    format: str
    calls: list
    chatter: bool
    render: Callable[..., Any]


@dataclass(frozen=True)
class Operator:
    """A registered mutation operator."""

    name: str
    anomaly_class: str
    function: Callable[[Any, MutationContext], Mutation]
    description: str
    formats: Optional[frozenset[str]] = None  # None = every format
    applies_to_tool: Optional[Callable[[Any], bool]] = None

    def applies(self, tool: Any, format: str) -> bool:
        """Static applicability: can this operator ever produce a sample for (tool, format)?"""
        if self.formats is not None and format not in self.formats:
            return False
        return self.applies_to_tool is None or bool(self.applies_to_tool(tool))

    def __call__(self, source: Any, ctx: MutationContext) -> Mutation:
        return self.function(source, ctx)


OPERATORS: dict[str, Operator] = {}


def mutator(name: str, *, anomaly_class: str, formats: Optional[Iterable[str]] = None,
            applies: Optional[Callable[[Any], bool]] = None) -> Callable:
    """Register an operator. The function's docstring is its description (first line shown in
    ``fuzz anomalies``). A name registered twice, or an unknown class, is a programming error."""

    if anomaly_class not in ANOMALY_CLASSES:
        raise ToolfuzzError(f"operator {name!r}: unknown anomaly class {anomaly_class!r}")

    def register(function: Callable) -> Callable:
        if name in OPERATORS:
            raise ToolfuzzError(f"operator {name!r} is already registered by "
                                f"{OPERATORS[name].function.__module__}")
        doc = (function.__doc__ or "").strip()
        OPERATORS[name] = Operator(name=name, anomaly_class=anomaly_class, function=function,
                                   description=doc.splitlines()[0] if doc else name,
                                   formats=frozenset(formats) if formats is not None else None,
                                   applies_to_tool=applies)
        return function

    return register


def get_operator(name: str) -> Operator:
    try:
        return OPERATORS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, OPERATORS, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownName(f"unknown operator {name!r}{hint}") from None


def operators_of(anomaly_class: str) -> list[Operator]:
    return [op for op in OPERATORS.values() if op.anomaly_class == anomaly_class]


# The built-in operators register themselves on import; they import this module, so the import sits
# at the end, after every name they use is defined.
from strategies._internal import mutations_semantic as _semantic  # noqa: E402,F401
from strategies._internal import mutations_syntax as _syntax  # noqa: E402,F401
