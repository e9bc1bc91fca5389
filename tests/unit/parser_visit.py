"""One tool's visit as the engine sends it to parser workers (get_weather, four formats, every
operator): what the in-process tests of orders planned in the workers and of inputs recalled by
reference both run."""

from __future__ import annotations

import pickle

from fuzzer.harnesses.parser.orders import Visit
from fuzzer.harnesses.parser.tool import resolve_operators
from strategies._internal.tools import builtin_registry, registry_digest

REGISTRY = builtin_registry()
TOOL = "get_weather"
FORMATS = {"json": (True, True, False), "fenced": (True, True, False), "hermes": (True, True, True),
           "pythonic": (True, True, False)}
OPERATORS = resolve_operators(None)
VISIT = Visit(registry=REGISTRY, tool=TOOL, operators=list(OPERATORS), level="parse",
              registry_key=registry_digest(REGISTRY))
VISIT_BLOB = pickle.dumps(VISIT, pickle.HIGHEST_PROTOCOL)
