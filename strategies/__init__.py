"""toolfuzz strategies: tools, JSON Schema -> Hypothesis, output formats and mutation operators.

Everything public is re-exported here; implementations live in ``strategies._internal``. The
re-exports are resolved lazily (PEP 562), so ``import strategies.errors`` — which the corpus package
does — does not import Hypothesis.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "Unbuildable": "strategies._internal.build",
    "build_sample": "strategies._internal.build",
    "draw_calls": "strategies._internal.build",
    "replay_recipe": "strategies._internal.build",
    "FORMATS": "strategies._internal.formats",
    "LAYOUTS": "strategies._internal.formats",
    "Layout": "strategies._internal.formats",
    "layouts_for": "strategies._internal.formats",
    "Rendered": "strategies._internal.formats",
    "Style": "strategies._internal.formats",
    "render": "strategies._internal.formats",
    "output_format": "strategies._internal.formats",
    "Context": "strategies._internal.formats",
    "Piece": "strategies._internal.formats",
    "Unrepresentable": "strategies._internal.formats",
    "detect_format": "strategies._internal.formats.detect",
    "OPERATORS": "strategies._internal.mutations",
    "Mutation": "strategies._internal.mutations",
    "MutationContext": "strategies._internal.mutations",
    "NotApplicable": "strategies._internal.mutations",
    "Operator": "strategies._internal.mutations",
    "get_operator": "strategies._internal.mutations",
    "mutator": "strategies._internal.mutations",
    "operators_of": "strategies._internal.mutations",
    "STRATEGIES": "strategies._internal.public",
    "arguments": "strategies._internal.public",
    "model_outputs": "strategies._internal.public",
    "tool_calls": "strategies._internal.public",
    "ANOMALY_CLASSES": "strategies._internal.sample",
    "AnomalyClass": "strategies._internal.sample",
    "Recipe": "strategies._internal.sample",
    "Sample": "strategies._internal.sample",
    "compile_schema": "strategies._internal.schema",
    "compile_tool": "strategies._internal.schema",
    "tool_arguments": "strategies._internal.schema",
    "tool_validator": "strategies._internal.schema",
    "unsupported_tools": "strategies._internal.schema",
    "HypothesisSource": "strategies._internal.source",
    "RandomSource": "strategies._internal.source",
    "ReplaySource": "strategies._internal.source",
    "Source": "strategies._internal.source",
    "Registry": "strategies._internal.tools",
    "Tool": "strategies._internal.tools",
    "builtin_registry": "strategies._internal.tools",
    "load_registry": "strategies._internal.tools",
    "InvalidArgument": "strategies.errors",
    "InvalidSchema": "strategies.errors",
    "RegistryError": "strategies.errors",
    "TargetError": "strategies.errors",
    "ToolfuzzError": "strategies.errors",
    "UnknownName": "strategies.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'strategies' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
