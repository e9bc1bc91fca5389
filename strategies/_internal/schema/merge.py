"""Combinators: ``allOf`` merged at compile time, ``anyOf`` / ``oneOf`` compiled branch by branch.

``allOf`` becomes one schema through the shared merge kernel (:func:`strategies.json_schemas.merge_schemas`);
a ``oneOf`` value must match exactly one original branch, which is checked with jsonschema unless the
branches are disjoint by construction (types, or a discriminator property with distinct constants).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from strategies._internal.schema.nodes import Node, OneOfNode, UnionNode
from strategies._internal.schema.problems import Problem, Unsat
from strategies.json_schemas import ANNOTATIONS, merge_schemas
from strategies.json_values import canonical


#: Seeds a verified native generator is tried on at compile time (``Compiler.checked``), and a
#: union's branches are told apart on (:meth:`CombinatorsMixin._reaches_one`).
CHECK_SEEDS = 24

class CombinatorsMixin:
    """The ``allOf`` / ``anyOf`` / ``oneOf`` part of the compiler."""

    def compile_all_of(self, schema: Mapping, pointer: str) -> Node:
        """``allOf`` merged into one schema (the kernel's exact merge); the fallback pool when the
        branches cannot simply be merged, ``Unsat`` when they contradict each other."""
        merged: Any = {k: v for k, v in schema.items() if k != "allOf"}
        for i, sub in enumerate(schema["allOf"]):
            try:
                sub = self.deref(sub, f"{pointer}/allOf/{i}")
            except Problem:
                return self.pool(schema, pointer, eager=True)
            merged = merge_schemas(merged, sub)
            if merged is None:
                return self.pool(schema, pointer, eager=True)
            if merged is False:
                raise Unsat("allOf branches contradict each other", pointer)
        return self.compile(merged, pointer)

    def compile_union(self, schema: Mapping, pointer: str) -> Node:
        keyword = "anyOf" if "anyOf" in schema else "oneOf"
        base = {k: v for k, v in schema.items() if k != keyword}
        branches = schema[keyword]
        if not isinstance(branches, list) or not branches:
            raise Problem(f"{keyword} must be a non-empty list of schemas", pointer)
        nodes, recursive, kept, merged_list = [], [], [], []
        same = _repeated(branches) if keyword == "oneOf" else set()
        for i, branch in enumerate(branches):
            bp = f"{pointer}/{keyword}/{i}"
            if i in same:
                continue  # a value it admits matches its twin too: never exactly one oneOf branch
            is_ref = isinstance(branch, Mapping) and "$ref" in branch
            if set(base) - ANNOTATIONS:
                try:
                    merged = merge_schemas(base, self.deref(branch, bp))
                except Problem:
                    merged = None
                if merged is None:
                    return self.pool(schema, pointer, eager=True)
            else:
                merged = branch
            if merged is False:
                continue
            try:
                node, rec = self.child(merged, bp)
            except Unsat:
                continue
            nodes.append(node)
            recursive.append(rec or is_ref and branch.get("$ref") in self.in_progress)
            kept.append(i)
            merged_list.append(merged)
        if not nodes:
            raise Unsat(f"no {keyword} branch admits a value", pointer)
        if keyword == "anyOf":
            if len(nodes) == 1:
                return nodes[0]
            return UnionNode(nodes, [1.0] * len(nodes), recursive)
        # oneOf: the value must match exactly one of the ORIGINAL branches.
        others = None
        if len(branches) > 1 and not _disjoint([self.deref_safe(b) for b in branches]):
            checks = [self.validator(b) for b in branches]
            # node k was compiled from original branch kept[k]; it must match no other branch
            others = [[c for j, c in enumerate(checks) if j != kept[k]] for k in range(len(nodes))]
        fallback = self.pool(schema, pointer, eager=False)
        node = OneOfNode(nodes, others, fallback, recursive)
        if others is not None and not any(recursive) and not self._reaches_one(node):
            # overlapping branches no native draw separates (``{}`` and ``{"a": true}`` for objects):
            # the pool decides now whether any value matches exactly one, not the first draw in a
            # worker, where an optional property that admits nothing can no longer be left out
            return self.pool(schema, pointer, eager=True)
        return node

    @staticmethod
    def _reaches_one(node: Any) -> bool:
        """Whether natively drawn values of ``node``'s branches match exactly one branch, for some
        of a few seeds (what its fallback pool is there for otherwise)."""
        from strategies._internal.source import RandomSource

        for seed in range(CHECK_SEEDS):
            source = RandomSource(seed)
            i = source.integer(0, len(node.nodes) - 1)
            value = node.nodes[i].generate(source)
            if not any(valid(value) for valid in node.others[i]):
                return True
        return False

    def deref_safe(self, schema: Any) -> Any:
        try:
            return self.deref(schema, "")
        except Problem:
            return schema


def _json_type_set(schema: Any) -> Optional[frozenset]:
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema.get("enum", [])
        kinds = set()
        for v in values:
            kinds.add("null" if v is None else "boolean" if isinstance(v, bool) else
                      "number" if isinstance(v, (int, float)) else "string" if isinstance(v, str) else
                      "array" if isinstance(v, list) else "object")
        return frozenset(kinds)
    kind = schema.get("type")
    if kind is None:
        return None
    kinds = {kind} if isinstance(kind, str) else set(kind)
    if "integer" in kinds:
        kinds.discard("integer")
        kinds.add("number")
    if schema.get("nullable") is True:
        kinds.add("null")
    return frozenset(kinds)


def _repeated(branches: list) -> set:
    """Indices of ``oneOf`` branches that stand twice (the same JSON): no value can match exactly
    one of such a pair, so neither can be where a value comes from."""
    import json

    seen: dict = {}
    for i, branch in enumerate(branches):
        try:
            key = json.dumps(branch, sort_keys=True)
        except (TypeError, ValueError):
            continue
        seen.setdefault(key, []).append(i)
    return {i for indices in seen.values() if len(indices) > 1 for i in indices}


def _disjoint(branches: list) -> bool:
    """True when no value can match two branches: disjoint types, or a discriminator property
    required by every branch with disjoint const/enum values."""
    types = [_json_type_set(b) for b in branches]
    if all(t is not None for t in types):
        seen: set = set()
        if all(not (t & seen) and not seen.update(t) for t in types):  # type: ignore[func-returns-value]
            return True
    if not all(isinstance(b, Mapping) for b in branches):
        return False
    common = None
    for b in branches:
        req = set(b.get("required", []) or [])
        common = req if common is None else common & req
    for prop in sorted(common or ()):
        seen_values: list = []
        ok = True
        for b in branches:
            sub = (b.get("properties") or {}).get(prop)
            if not isinstance(sub, Mapping) or not ("const" in sub or "enum" in sub):
                ok = False
                break
            values = [sub["const"]] if "const" in sub else list(sub["enum"])
            if any(canonical(v) in seen_values for v in values):
                ok = False
                break
            seen_values.extend(canonical(v) for v in values)
        if ok:
            return True
    return False
