"""Hypothesis strategies for users' own tests: the same generators the campaign drives.

``tool_calls(registry, tool)`` draws valid calls; ``model_outputs(registry, tool, formats=...,
anomalies=..., prose=..., several=..., layouts=...)`` draws :class:`Sample` objects (text + ground
truth). Both go through :class:`HypothesisSource`, so every choice is a Hypothesis draw and failures
shrink with Hypothesis (towards one call, the usual layout, no prose, the simplest values).

Built the way Hypothesis builds its own (the ``defines_strategy`` habit): every public strategy is
registered in :data:`STRATEGIES`, arguments after ``tool`` are keyword-only, construction is lazy —
the arguments are checked the first time the strategy is used, so a module of tests imports even
with a typo in one of them — and the repr reads like the call, minus the arguments left at their
defaults::

    >>> model_outputs(builtin_registry(), "get_weather", formats=["hermes"], prose=False)
    model_outputs(builtin_registry(), 'get_weather', formats=['hermes'], prose=False)

Example::

    from hypothesis import given
    import strategies as tf

    registry = tf.builtin_registry()

    @given(tf.model_outputs(registry, "get_weather", formats=["hermes"], anomalies=[]))
    def test_parser_roundtrips_valid_output(sample):
        assert my_parser(sample.text) == sample.calls
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Iterable, Optional

from hypothesis import strategies as st
from hypothesis.strategies._internal.lazy import LazyStrategy

from strategies._internal.build import Unbuildable, build_sample, draw_calls
from strategies._internal.formats import FORMATS, LAYOUTS
from strategies._internal.mutations import OPERATORS, operators_of
from strategies._internal.sample import ANOMALY_CLASSES
from strategies._internal.schema import compile_tool
from strategies._internal.source import HypothesisSource
from strategies.errors import InvalidArgument, UnknownName
from strategies.registry import Registry

#: Every public strategy, by name (the package's export table must agree: a test checks it).
STRATEGIES: Registry[Callable] = Registry("strategy")


def defines_strategy(function: Callable) -> Callable:
    """Register ``function`` as a public strategy and make it lazy: calling it returns a strategy whose
    arguments are checked on first use and whose repr is the call."""

    signature = inspect.signature(function)

    @functools.wraps(function)
    def lazy(*args: Any, **kwargs: Any) -> st.SearchStrategy:
        signature.bind(*args, **kwargs)  # wrong arity or a keyword-only argument given positionally: now
        return LazyStrategy(function, args, kwargs)

    STRATEGIES.register(function.__name__, lazy, module=function.__module__)
    return lazy


# --------------------------------------------------------------------------- argument checks


def check_registry(registry: Any) -> None:
    if not hasattr(registry, "names") or not callable(getattr(registry, "__getitem__", None)):
        raise InvalidArgument(f"registry={registry!r:.80} ({type(registry).__name__}) is not a tools registry; "
                              "use builtin_registry() or load_registry(path)")


def resolve_tool(registry: Any, tool: Any) -> Any:
    """``tool`` as a Tool of ``registry`` (a name or a Tool)."""
    check_registry(registry)
    if isinstance(tool, str):
        return registry[tool]
    if not hasattr(tool, "name") or not hasattr(tool, "schema"):
        raise InvalidArgument(f"tool={tool!r:.80} ({type(tool).__name__}) must be a tool name or a Tool")
    return tool


def check_optional_bool(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} ({type(value).__name__}) must be True, False or None (drawn)")


def check_names(name: str, value: Any, check: Callable[[str], Any], what: str) -> Optional[list]:
    """``value`` as a list of names, each passed to ``check`` (which raises ``UnknownName`` with close
    matches); None stays None, a bare string is one name."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    try:
        names = list(value)
    except TypeError:
        raise InvalidArgument(f"{name}={value!r} ({type(value).__name__}) must be a list of {what} names") from None
    for item in names:
        if not isinstance(item, str):
            raise InvalidArgument(f"{name} holds {item!r} ({type(item).__name__}); {what} names are strings")
        check(item)
    return names


def check_anomaly(name: str) -> None:
    """An anomaly class or an operator name; ``UnknownName`` with the close matches of both."""
    if name not in ANOMALY_CLASSES and name not in OPERATORS:
        import difflib

        close = difflib.get_close_matches(name, list(ANOMALY_CLASSES) + list(OPERATORS), n=3)
        hint = f"did you mean {', '.join(close)}?" if close else f"classes: {', '.join(ANOMALY_CLASSES)}"
        raise UnknownName(f"unknown anomaly class or operator {name!r}; {hint}")


def _operators(anomalies: Optional[list]) -> list:
    chosen: list = []
    for name in list(ANOMALY_CLASSES) if anomalies is None else anomalies:
        if name in ANOMALY_CLASSES:
            chosen.extend(op.name for op in operators_of(name))
        else:
            chosen.append(name)
    return chosen


# --------------------------------------------------------------------------- the strategies


@defines_strategy
def arguments(registry: Any, tool: Any) -> st.SearchStrategy:
    """Argument dicts that satisfy ``tool``'s JSON Schema (a name in ``registry``, or a Tool).

    Shrinks towards the simplest valid arguments: optional ones absent, shortest strings, numbers
    nearest to zero, the first enum value.
    """
    tool = resolve_tool(registry, tool)
    node = compile_tool(tool)
    return st.composite(lambda draw: node.generate(HypothesisSource(draw)))()


@defines_strategy
def tool_calls(registry: Any, tool: Any, *, multi: Optional[bool] = False) -> st.SearchStrategy:
    """Valid calls of ``tool``: ``{"name", "arguments"}``; with ``multi=True`` a list of 2-3 distinct
    calls (the first of ``tool``), with ``multi=None`` either. Shrinks towards one call."""
    tool = resolve_tool(registry, tool)
    check_optional_bool("multi", multi)

    @st.composite
    def calls(draw: Any) -> Any:
        drawn = draw_calls(HypothesisSource(draw), registry, tool, multi=multi)
        return drawn if multi or multi is None else drawn[0]

    return calls()


@defines_strategy
def model_outputs(registry: Any, tool: Any, *, formats: Optional[Iterable[str]] = None,
                  anomalies: Optional[Iterable[str]] = None, valid: bool = True, prose: Optional[bool] = None,
                  several: Optional[bool] = None, layouts: Optional[Iterable[str]] = None) -> st.SearchStrategy:
    """Samples of ``tool``: model output text in one of ``formats`` with its ground truth (``sample.calls``,
    ``None`` when the text denotes no faithful call).

    * ``formats``: format names (None = every registered format);
    * ``anomalies``: anomaly classes or operator names to draw from (None = every class, ``[]`` = valid
      outputs only); ``valid`` adds valid outputs to the mix;
    * ``prose``: prose around (or in) the envelope always (True), never (False), or drawn (None) —
      say ``prose=False`` for a parser that only reads bare envelopes;
    * ``several``: several calls per output always, never, or drawn;
    * ``layouts``: layout names (``LAYOUTS``: "usual", "compact", "crlf" ...) the valid renderings are
      written in (None = drawn freely, as the campaign does).

    Shrinks towards the first format, a valid output, one call, no prose and the usual layout.
    """
    tool = resolve_tool(registry, tool)
    format_names = check_names("formats", formats, FORMATS.__getitem__, "format")
    format_names = list(FORMATS) if format_names is None else format_names
    anomaly_names = check_names("anomalies", anomalies, check_anomaly, "anomaly class or operator")
    if not isinstance(valid, bool):
        raise InvalidArgument(f"valid={valid!r} ({type(valid).__name__}) must be True or False")
    check_optional_bool("prose", prose)
    check_optional_bool("several", several)
    layout_names = check_names("layouts", layouts, LAYOUTS.__getitem__, "layout")
    if layout_names == []:
        raise InvalidArgument("layouts=[] leaves no layout to write in; use None to draw any")
    chosen: list[Optional[str]] = [None] if valid or anomaly_names == [] else []
    chosen += _operators(anomaly_names)
    usable = {fmt: [op for op in chosen if op is None or OPERATORS[op].applies(tool, fmt)] for fmt in format_names}
    usable = {fmt: ops for fmt, ops in usable.items() if ops and FORMATS[fmt].supports_name(tool.name)}
    if not usable:
        raise InvalidArgument(f"model_outputs: none of the selected anomalies applies to {tool.name!r} in "
                              f"{', '.join(format_names)}")
    usable_formats = list(usable)

    @st.composite
    def outputs(draw: Any) -> Any:
        fmt = draw(st.sampled_from(usable_formats))
        operator = draw(st.sampled_from(usable[fmt]))
        layout = draw(st.sampled_from(layout_names)) if layout_names else None
        try:
            return build_sample(HypothesisSource(draw), registry=registry, tool=tool, format=fmt,
                                operator=operator, chatter=prose, multi=several, layout=layout)
        except Unbuildable:
            from hypothesis import reject

            reject()

    return outputs()
