"""Mutation operators: the registry, the decorator and the context they work in.

An operator turns a valid sample into an anomalous one of exactly one anomaly class and states the
new ground truth (DESIGN.md): the faithful calls (noise a careful parser may strip), ``None`` (the
text denotes no faithful call), or — for semantic classes — the calls *as written*.

An operator is a plain function ``(source, ctx) -> Mutation`` registered with :func:`mutator`. It
draws every random decision from ``source`` (so the sample replays and shrinks), renders through
``ctx.render`` (so the envelope is the sample's format, with whatever :class:`Style` override the
operator needs), and raises :class:`NotApplicable` when this particular call offers nothing to
mutate (the builder then draws another call). Static applicability is declared on the decorator so
the scheduler never wastes executions on it: ``formats`` names the format *capabilities* the
operator needs (a predicate over :class:`~strategies._internal.formats.Format`, e.g.
:func:`json_payload`), so a format registered in one place gets every operator that applies;
``applies`` says which tools' schemas offer something to mutate.

The operator implementations live in :mod:`strategies._internal.operators`, one module per anomaly
class, and import this module; :mod:`strategies._internal.mutations` imports them (so every built-in
operator is registered) — this module imports none of them, so nothing imports in a loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Union

from strategies._internal.formats import FORMATS, Format, get_format
from strategies._internal.sample import ANOMALY_CLASSES
from strategies.json_values import copy_json
from strategies.registry import Registry


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
    reasoning: bool = False  # the sample starts with the family's reasoning block

    @property
    def format_spec(self) -> Format:
        """The registered :class:`Format` of this sample (its capabilities)."""
        return FORMATS[self.format]


#: What an operator needs of a format: a capability predicate.
FormatRequirement = Callable[[Format], bool]


def any_format(fmt: Format) -> bool:
    return True


def json_payload(fmt: Format) -> bool:
    """The payload is JSON text (every format but pythonic)."""
    return fmt.json_payload


def call_objects(fmt: Format) -> bool:
    """The payload holds JSON call objects (name and arguments members)."""
    return fmt.call_object is not None


def escaped_strings(fmt: Format) -> bool:
    """String values are written quoted and escaped (JSON, Python literals), not as raw text."""
    return not fmt.raw_strings


def closers_after_arguments(fmt: Format) -> bool:
    """JSON payload documents close after the arguments (call objects, messages): not bare arguments."""
    return fmt.json_payload and not fmt.bare_arguments


def tagged_reasoning(fmt: Format) -> bool:
    """Families whose reasoning is a tagged block (``<think>``, ``[THINK]``)."""
    return fmt.reasoning is not None and fmt.reasoning.open in ("<think>", "[THINK]")


def family(*families: str) -> FormatRequirement:
    """Every version of the families ``families`` (operators about a family's own markers)."""
    wanted = frozenset(families)

    def requirement(fmt: Format) -> bool:
        return (fmt.family or fmt.name) in wanted

    requirement.__name__ = f"family({', '.join(sorted(wanted))})"
    return requirement


def named(*names: str) -> FormatRequirement:
    """Only the formats called ``names`` (for operators that are about one format's own envelope)."""
    wanted = frozenset(names)

    def requirement(fmt: Format) -> bool:
        return fmt.name in wanted

    requirement.__name__ = f"named({', '.join(sorted(wanted))})"
    return requirement


#: The truth rules an operator may state (DESIGN.md, "Sample"):
#: ``faithful`` — the original calls (noise a careful parser may strip); ``none`` — no faithful call;
#: ``as_written`` — the calls the text really spells (every semantic class, raw control characters...);
#: ``no_call`` — the text holds no call at all (``[]``); ``composed`` — stacked operators: the truth of
#: their composition (see the ``stacked_anomalies`` operators).
TRUTHS = ("faithful", "none", "as_written", "no_call", "composed")
_CLASS_TRUTH = {"truncated_output": "none", "degenerate_output": "no_call", "stacked_anomalies": "composed"}


@dataclass(frozen=True)
class Operator:
    """A registered mutation operator.

    ``truth`` is its truth rule (one of :data:`TRUTHS`). ``restyle`` is set for operators that are one
    :class:`Style` of the valid calls (``restyle(source, ctx) -> (style, description)``, truth faithful):
    they compose with other operators (see the ``stacked_anomalies`` class).
    """

    name: str
    anomaly_class: str
    function: Callable[[Any, MutationContext], Mutation]
    description: str
    requires: FormatRequirement = any_format
    applies_to_tool: Optional[Callable[[Any], bool]] = None
    truth: str = "faithful"
    restyle: Optional[Callable[[Any, MutationContext], tuple]] = None

    @property
    def formats(self) -> frozenset:
        """The registered formats this operator applies to (computed: a format registered later counts)."""
        return frozenset(name for name, fmt in FORMATS.items() if self.requires(fmt))

    def applies_to_format(self, format: Union[str, Format]) -> bool:
        return bool(self.requires(get_format(format)))

    def applies(self, tool: Any, format: Union[str, Format]) -> bool:
        """Static applicability: can this operator ever produce a sample for (tool, format)?"""
        if not self.applies_to_format(format):
            return False
        return self.applies_to_tool is None or bool(self.applies_to_tool(tool))

    def __call__(self, source: Any, ctx: MutationContext) -> Mutation:
        return self.function(source, ctx)


OPERATORS: Registry[Operator] = Registry("operator")


def mutator(name: str, *, anomaly_class: str,
            formats: Union[None, FormatRequirement, Iterable[str]] = None,
            applies: Optional[Callable[[Any], bool]] = None, truth: Optional[str] = None,
            restyle: Optional[Callable] = None) -> Callable:
    """Register an operator. The function's docstring is its description (first line shown in
    ``fuzz anomalies``).

    ``formats``: a capability predicate over :class:`Format` (None = every format; an iterable of
    names is shorthand for :func:`named`). ``truth``: its truth rule (:data:`TRUTHS`); by default
    ``as_written`` for semantic classes, ``none`` for truncation, ``no_call`` for degenerate outputs,
    ``faithful`` otherwise. A name registered twice raises ``DuplicateName`` naming both modules; an
    unknown class or truth rule is a programming error too (``ValueError``).
    """
    if anomaly_class not in ANOMALY_CLASSES:
        raise ValueError(f"operator {name!r}: unknown anomaly class {anomaly_class!r}")
    if truth is None:
        truth = "as_written" if ANOMALY_CLASSES[anomaly_class].semantic else _CLASS_TRUTH.get(anomaly_class, "faithful")
    if truth not in TRUTHS:
        raise ValueError(f"operator {name!r}: unknown truth rule {truth!r}; known: {', '.join(TRUTHS)}")
    if formats is None:
        requires: FormatRequirement = any_format
    elif callable(formats):
        requires = formats
    else:
        requires = named(*formats)

    def register(function: Callable) -> Callable:
        doc = (function.__doc__ or "").strip()
        OPERATORS.register(name, Operator(name=name, anomaly_class=anomaly_class, function=function,
                                          description=doc.splitlines()[0] if doc else name,
                                          requires=requires, applies_to_tool=applies, truth=truth,
                                          restyle=restyle),
                           module=function.__module__)
        return function

    return register


def restyler(name: str, *, anomaly_class: str, formats: Union[None, FormatRequirement, Iterable[str]] = None,
             applies: Optional[Callable[[Any], bool]] = None) -> Callable:
    """Register an operator that is one :class:`Style` of the valid calls (a misspelled tag, a fence
    language, a renamed key...): the decorated function returns ``(style, description)``; the operator
    renders the calls with it and its truth is faithful. Restylers compose with other operators."""

    def register(style_function: Callable) -> Callable:
        def operator(source: Any, ctx: MutationContext) -> Mutation:
            style, description = style_function(source, ctx)
            return Mutation(ctx.render(ctx.calls, style=style).text, copy_json(ctx.calls), description)

        operator.__doc__, operator.__name__ = style_function.__doc__, style_function.__name__
        operator.__module__, operator.__qualname__ = style_function.__module__, style_function.__qualname__
        mutator(name, anomaly_class=anomaly_class, formats=formats, applies=applies, truth="faithful",
                restyle=style_function)(operator)
        return style_function

    return register


def get_operator(name: str) -> Operator:
    """The operator ``name``; ``UnknownName`` with close matches."""
    return OPERATORS[name]


def operators_of(anomaly_class: str) -> list[Operator]:
    """The operators of one anomaly class, in registration order."""
    return [op for op in OPERATORS.values() if op.anomaly_class == anomaly_class]


__all__ = ["Mutation", "MutationContext", "NotApplicable", "OPERATORS", "Operator", "TRUTHS", "any_format", "call_objects", "closers_after_arguments", "escaped_strings", "family", "get_operator", "json_payload", "mutator", "named", "operators_of", "restyler", "tagged_reasoning"]
