"""The hypothesis-jsonschema fallback: values for the subschemas the native compiler does not cover.

A pool of values is drawn once per subschema, deterministically, validated with jsonschema and
sorted simplest-first; fast sources pick from it by index (``Source.pool``), the Hypothesis source
draws from the real strategy. Hypothesis is imported only when a pool is first drawn.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable

from strategies._internal.schema.nodes import Node, _copy
from strategies._internal.schema.problems import Problem, Unsat
from strategies._internal.source import Source
from strategies.errors import InvalidSchema
from strategies.json_values import canonical

#: Values drawn from hypothesis-jsonschema for one fallback subschema.
POOL_EXAMPLES = 60


class PoolNode(Node):
    """The hypothesis-jsonschema fallback for one subschema, through ``source.pool``.

    The pool is drawn once, deterministically (``derandomize=True``), validated with jsonschema
    and sorted simplest-first by JSON length, so index 0 is what shrinking reaches.
    """

    __slots__ = ("schema", "key", "validate", "_strategy")

    def __init__(self, schema: Any, validate: Callable[[Any], bool]):
        self.schema, self.validate, self._strategy = schema, validate, None
        self.key = ("toolfuzz.schema", json.dumps(schema, sort_keys=True, default=str))

    def values(self) -> list:
        cached = _POOL_CACHE.get(self.key)
        if cached is None:
            # A pool may be drawn lazily (a checked node's draws kept failing) by the generator
            # thread while the engine's thread shrinks: Hypothesis runs one @given at a time.
            with _POOL_LOCK:
                cached = _POOL_CACHE.get(self.key)
                if cached is None:
                    cached = _POOL_CACHE[self.key] = _draw_pool(self.schema, self.validate)
        return cached

    def strategy(self) -> Any:
        if self._strategy is None:
            from hypothesis_jsonschema import from_schema

            self._strategy = from_schema(self.schema).filter(self.validate)
        return self._strategy

    def generate(self, source: Source) -> Any:
        values = self.values()
        if not values:
            raise InvalidSchema("hypothesis-jsonschema found no value for this subschema")
        return _copy(source.pool(self.key, self.values, self.strategy))

    def __repr__(self) -> str:
        return f"PoolNode({self.key[1][:60]})"


_POOL_CACHE: dict[Any, list] = {}
_POOL_LOCK = threading.RLock()


def _draw_pool(schema: Any, validate: Callable[[Any], bool]) -> list:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis_jsonschema import from_schema

    try:
        strategy = from_schema(schema)
    except Exception as exc:  # hypothesis-jsonschema raises many types for unsupported schemas
        raise Problem(f"hypothesis-jsonschema cannot generate it: {type(exc).__name__}: "
                       f"{str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": "), "") from None
    if strategy.is_empty:  # its canonical form is false: proven to admit no value, not merely unsupported
        raise Unsat("the schema admits no value", "")
    values: list = []
    seen: set = set()

    @settings(derandomize=True, database=None, max_examples=POOL_EXAMPLES, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(strategy)
    def collect(value: Any) -> None:
        key = canonical(value)
        if key not in seen and validate(value):
            seen.add(key)
            values.append(value)

    try:
        collect()
    except Exception as exc:
        if not values:
            from hypothesis.errors import Unsatisfiable

            if isinstance(exc, Unsatisfiable):  # not one value satisfies it (``oneOf`` twice the same schema)
                raise Unsat("the schema admits no value (no value could be drawn)", "") from None
            raise Problem(f"hypothesis-jsonschema cannot generate it: {type(exc).__name__}", "") from None
    return simplest_first(values)


def simplest_first(values: list) -> list:
    """``values`` without repeats, shortest JSON first (ties by their sorted-keys JSON), so index 0
    is what shrinking reaches."""
    distinct: dict = {}
    for value in values:
        distinct.setdefault(canonical(value), value)
    return sorted(distinct.values(), key=lambda v: (len(json.dumps(v, ensure_ascii=False)), json.dumps(v, sort_keys=True)))
