"""Hypothesis strategies for users' own tests: the same generators the campaign drives.

``tool_calls(registry, tool)`` draws valid calls; ``model_outputs(registry, tool, formats=...,
anomalies=...)`` draws :class:`Sample` objects (text + ground truth). Both go through
:class:`HypothesisSource`, so every choice is a Hypothesis draw and failures shrink with Hypothesis.

Example::

    from hypothesis import given
    import strategies as tf

    registry = tf.builtin_registry()

    @given(tf.model_outputs(registry, "get_weather", formats=["hermes"], anomalies=[]))
    def test_parser_roundtrips_valid_output(sample):
        assert my_parser(sample.text) == sample.calls
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from hypothesis import strategies as st

from strategies._internal.build import Unbuildable, build_sample, draw_calls
from strategies._internal.formats import FORMATS
from strategies._internal.mutations import OPERATORS, get_operator, operators_of
from strategies._internal.sample import ANOMALY_CLASSES
from strategies._internal.schema import compile_tool
from strategies._internal.source import HypothesisSource
from strategies.errors import UnknownName


def _tool(registry: Any, tool: Any) -> Any:
    return registry[tool] if isinstance(tool, str) else tool


def arguments(registry: Any, tool: Any) -> st.SearchStrategy:
    """Argument dicts that satisfy ``tool``'s JSON Schema."""
    tool = _tool(registry, tool)
    node = compile_tool(tool)
    return st.composite(lambda draw: node.generate(HypothesisSource(draw)))()


def tool_calls(registry: Any, tool: Any, *, multi: Optional[bool] = False) -> st.SearchStrategy:
    """Valid calls of ``tool``: ``{"name", "arguments"}`` (a list of 2-3 distinct calls when multi)."""
    tool = _tool(registry, tool)

    @st.composite
    def calls(draw: Any) -> Any:
        drawn = draw_calls(HypothesisSource(draw), registry, tool, multi=multi)
        return drawn if multi or multi is None else drawn[0]

    return calls()


def model_outputs(registry: Any, tool: Any, *, formats: Optional[Iterable[str]] = None,
                  anomalies: Optional[Iterable[str]] = None, valid: bool = True) -> st.SearchStrategy:
    """Samples of ``tool``: model output text in one of ``formats`` with its ground truth.

    ``anomalies`` lists anomaly classes or operator names to draw from (None = every class,
    ``[]`` = valid outputs only); ``valid`` adds valid outputs to the mix.
    """
    tool = _tool(registry, tool)
    format_names = list(formats) if formats is not None else list(FORMATS)
    for name in format_names:
        if name not in FORMATS:
            raise UnknownName(f"unknown format {name!r}; known: {', '.join(FORMATS)}")
    chosen: list[Optional[str]] = [None] if valid or anomalies == [] else []
    for name in (list(anomalies) if anomalies is not None else list(ANOMALY_CLASSES)):
        if name in ANOMALY_CLASSES:
            chosen.extend(op.name for op in operators_of(name))
        else:
            chosen.append(get_operator(name).name)

    usable = {fmt: [op for op in chosen if op is None or OPERATORS[op].applies(tool, fmt)] for fmt in format_names}
    usable = {fmt: ops for fmt, ops in usable.items() if ops}
    if not usable:
        raise UnknownName(f"model_outputs: none of the selected anomalies applies to {tool.name!r} in "
                          f"{', '.join(format_names)}")
    usable_formats = list(usable)

    @st.composite
    def outputs(draw: Any) -> Any:
        fmt = draw(st.sampled_from(usable_formats))
        operator = draw(st.sampled_from(usable[fmt]))
        try:
            return build_sample(HypothesisSource(draw), registry=registry, tool=tool, format=fmt,
                                operator=operator)
        except Unbuildable:
            from hypothesis import reject

            reject()

    return outputs()
