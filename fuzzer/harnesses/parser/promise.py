"""The validate-level promise (DESIGN.md, target contract): every call a target returns at
``--level validate`` names a known tool, satisfies that tool's JSON Schema (real jsonschema, formats
checked), and no two returned calls are identical. The parser's oracle decides "must reject" from
it (:mod:`fuzzer.harnesses.parser.oracle`), and structured shrinking keeps edited calls valid by it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from strategies._internal.sample import json_equal


def without_duplicates(calls: Sequence[dict]) -> list:
    unique: list = []
    for call in calls:
        if not any(json_equal(call, seen) for seen in unique):
            unique.append(call)
    return unique


class Promise:
    """The validate-level promise over a registry, with one compiled validator per tool.

    Verdicts are cached per call (the tool's name and the arguments' ``repr``: exact, since the
    target's returns are normalized to JSON types, where ``1``, ``1.0`` and ``True`` have different
    reprs): a sample's returned calls are usually its truth again, and the candidates of one
    shrink hold a few dozen distinct calls among thousands, while jsonschema takes 50-100 µs a call.
    ``cached=False`` for a worker's fuzzing, whose calls are fresh: there the key costs more than it saves."""

    #: Calls whose verdicts are kept (the cache starts over when full), and the longest ``repr``
    #: of arguments cached (a huge argument is validated each time rather than kept).
    CACHED_CALLS = 4096
    CACHED_REPR = 2000

    def __init__(self, registry: Any, *, cached: bool = True):
        self._registry = registry
        self._cached = cached
        self._broken: dict = {}  # (name, repr(arguments)) -> the jsonschema keyword that fails, "" if none

    def _validator(self, name: str) -> Any:
        # The schema's own draft (draft-4 boolean bounds, tuple items...), as the generator uses;
        # tool_validator caches it per tool.
        from strategies._internal.schema import tool_validator

        return tool_validator(self._registry[name])

    def call_ok(self, call: dict) -> bool:
        name = call.get("name")
        if not isinstance(name, str) or name not in self._registry:
            return False
        arguments = call.get("arguments")
        if not self._cached:  # nothing kept: is_valid stops at the first error
            try:
                return self._validator(name).is_valid(arguments)
            except RecursionError:
                return False
        return not self._memo(self._broken, self._failing_keyword, name, arguments)

    def _memo(self, cache: dict, compute: Callable[[str, Any], Any], name: str, arguments: Any) -> Any:
        """``compute(name, arguments)``, kept in ``cache`` per call (see the class docstring)."""
        key = self._key(name, arguments)
        if key is None:
            return compute(name, arguments)
        found = cache.get(key)
        if found is None:
            if len(cache) >= self.CACHED_CALLS:
                cache.clear()
            found = cache[key] = compute(name, arguments)
        return found

    def _key(self, name: str, arguments: Any) -> Optional[tuple]:
        if not self._cached:
            return None
        if arguments.__class__ is dict:  # a huge value is not cached: checked first, its repr costs
            for value in arguments.values():
                if value.__class__ in (str, list, dict) and len(value) > self.CACHED_REPR:
                    return None
        try:
            shown = repr(arguments)
        except Exception:  # noqa: BLE001 - not normalized, and its repr fails: not cached
            return None
        return (name, shown) if len(shown) <= self.CACHED_REPR else None

    def _failing_keyword(self, name: str, arguments: Any) -> str:
        """The jsonschema keyword the call's arguments break (the best match of their errors), or
        "" when they are valid. One pass of the validator answers both: a valid call costs what
        ``is_valid`` costs, and an invalid one is not validated twice (``is_valid``, then every
        error for ``best_match``: at --level validate a tenth of the executions are such calls)."""
        try:
            errors = list(self._validator(name).iter_errors(arguments))
        except RecursionError:
            return "recursion"
        if not errors:
            return ""
        from jsonschema.exceptions import best_match

        error = best_match(errors)
        return str(error.validator) if error is not None else "invalid"

    def problem(self, calls: Sequence[dict]) -> Optional[str]:
        """Why ``calls`` break the promise, or None when they keep it."""
        found = self.problem_key(calls)
        return found[1] if found else None

    def problem_key(self, calls: Sequence[dict]) -> Optional[tuple[str, str]]:
        """(key, words) of the first broken promise: ``unknown_function``, ``schema:<keyword>``
        (the jsonschema validator that failed), or ``duplicate``; None when the promise holds."""
        for call in calls:
            name = call.get("name")
            if not isinstance(name, str) or name not in self._registry:
                return "unknown_function", f"unknown function {name!r}"
            keyword = self._memo(self._broken, self._failing_keyword, name, call.get("arguments"))
            if keyword:
                return f"schema:{keyword}", f"arguments of {name!r} break the schema ({keyword})"
        if len(without_duplicates(calls)) != len(calls):
            return "duplicate", "duplicate calls"
        return None


__all__ = ["Promise", "without_duplicates"]
