"""Every registered operator, whatever its class: it applies somewhere, and where it applies statically it
builds a sample on a meaningful share of draws (an operator that is always NotApplicable fails here,
not silently in a property test), of its own class, replayable from its recipe."""

from __future__ import annotations

import itertools

import pytest

from strategies._internal.build import Unbuildable, build_sample, replay_recipe
from strategies._internal.formats import FORMATS
from strategies._internal.mutations import OPERATORS
from strategies._internal.source import RandomSource
from strategies._internal.tools import builtin_registry

REGISTRY = builtin_registry()
#: Oversized operators build megabyte texts: fewer draws for them.
HEAVY = {"huge_string", "deep_nesting", "prose_fragment_run", "envelope_token_run"}
MIN_SHARE = 0.3


def _pairs(name: str) -> list:
    op = OPERATORS[name]
    pairs = [(tool, fmt) for fmt in FORMATS for tool in REGISTRY if op.applies(tool, fmt)]
    # spread over formats and tools, bounded: every format first, then more tools
    pairs.sort(key=lambda p: (list(REGISTRY).index(p[0]) + list(FORMATS).index(p[1])) % 7)
    return pairs[: 4 if name in HEAVY else 16]


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_builds_on_a_meaningful_share_of_its_applicable_draws(name):
    op = OPERATORS[name]
    pairs = _pairs(name)
    assert pairs, f"{name} applies to no built-in tool in any format"
    built = attempts = 0
    for (tool, fmt), seed in itertools.product(pairs, range(2)):
        attempts += 1
        try:
            sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=tool, format=fmt, operator=name)
        except Unbuildable:
            continue
        built += 1
        assert sample.anomaly_class == op.anomaly_class and sample.operator == name and sample.format == fmt
        if name not in HEAVY:
            assert replay_recipe(sample.recipe, REGISTRY) == sample
    assert built / attempts >= MIN_SHARE, f"{name} built {built} of {attempts} samples where it applies"
