"""JSON Schema -> generators: each schema is compiled ONCE into a tree of nodes.

The package, one module per concept:

* :mod:`.compiler` — the compiler (types, objects, arrays, strings) and the public entry points;
* :mod:`.refs` — ``$ref`` (memoized, recursion-safe); :mod:`.merge` — ``allOf`` / ``anyOf`` / ``oneOf``;
* :mod:`.nodes` — what schemas compile to; :mod:`.banks` — the realistic values they draw from;
* :mod:`.patterns` — ``pattern`` / ``format`` strings; :mod:`.fallback` — the hypothesis-jsonschema pool;
* :mod:`.validators` — the jsonschema validator of a tool's arguments.

Pointer resolution, merging and draft detection are the shared kernels of :mod:`strategies.json_schemas`.
"""

from strategies._internal.schema.compiler import (
    FALLBACK_KEYWORDS, compile_schema, compile_tool, tool_arguments, unsupported_tools,
)
from strategies._internal.schema.fallback import POOL_EXAMPLES, PoolNode
from strategies._internal.schema.nodes import MAX_REF_DEPTH, Node, OneOfNode
from strategies._internal.schema.validators import tool_validator, validator_for_schema
from strategies.json_schemas import normalize_openapi

__all__ = ["FALLBACK_KEYWORDS", "MAX_REF_DEPTH", "Node", "OneOfNode", "POOL_EXAMPLES", "PoolNode", "compile_schema",
           "compile_tool", "normalize_openapi", "tool_arguments", "tool_validator", "unsupported_tools",
           "validator_for_schema"]
