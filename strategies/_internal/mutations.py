"""Mutation operators, every built-in one registered: what the rest of toolfuzz imports.

The machinery (the registry, the :func:`mutator` decorator, :class:`Mutation`, the context) is
:mod:`strategies._internal.mutator`; the built-in operators (one module per anomaly class, in
:mod:`strategies._internal.operators`) import that module and register there when this one imports
them. So importing this module gives the registry full, and no module imports another in a loop.
"""

from __future__ import annotations

from strategies._internal import operators as _operators  # noqa: F401  (registers the built-in operators)
from strategies._internal.mutator import *  # noqa: F401,F403
from strategies._internal.mutator import __all__  # noqa: F401
