"""``$ref``: local references compiled once, recursion tracked, siblings merged where the draft says so.

A reference is compiled the first time it is met and memoized; a reference met again while its own
target is being compiled is a recursion, closed by a :class:`RefNode` that counts depth at generation
time so containers stop recursing past ``MAX_REF_DEPTH``. Keywords next to ``$ref`` apply from draft
2019-09 on: then the target is inlined and merged with them (resolution and merging are the shared
kernels of :mod:`strategies.json_schemas`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strategies._internal.schema.nodes import Node, RefNode
from strategies._internal.schema.problems import Problem
from strategies.json_schemas import ANNOTATIONS, merge_schemas, resolve_pointer


class RefsMixin:
    """The ``$ref`` part of the compiler (state: ``in_progress``, ``used_back``, ``memo``, ``back_edges``)."""

    def deref(self, schema: Any, pointer: str, depth: int = 0) -> Any:
        """Inline top-level $refs (for merging); recursive ones cannot be inlined."""
        while isinstance(schema, Mapping) and "$ref" in schema:
            if depth > 20:
                raise Problem("$ref chain too deep to merge", pointer)
            ref = schema["$ref"]
            try:
                target = resolve_pointer(self.root, ref)
            except KeyError:
                raise Problem(f"$ref {ref!r} does not resolve", pointer) from None
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            if target is True:
                target = {}
            if target is False:
                return False
            schema = merge_schemas(target, rest) if (self.modern and set(rest) - ANNOTATIONS) else target
            depth += 1
        return schema


    def compile_ref(self, schema: Mapping, pointer: str) -> Node:
        ref = schema["$ref"]
        if not isinstance(ref, str):
            raise Problem("$ref must be a string", pointer)
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS}
        if siblings and self.modern:
            try:
                target = self.deref(schema, pointer)
            except Problem:
                return self.pool(schema, pointer, eager=True)
            return self.compile(target, pointer)
        if ref in self.memo:
            node, recursive = self.memo[ref]
            if recursive:
                self.back_edges += 1
            return node
        if ref in self.in_progress:
            self.back_edges += 1
            self.used_back.add(ref)
            return self.in_progress[ref]
        try:
            target = resolve_pointer(self.root, ref)
        except KeyError:
            raise Problem(f"$ref {ref!r} does not resolve", pointer) from None
        placeholder = self.in_progress[ref] = RefNode(ref)
        before = self.back_edges
        try:
            node = self.compile(target, ref[1:] if ref.startswith("#/") else pointer)
        finally:
            del self.in_progress[ref]
        recursive = self.back_edges > before
        if ref in self.used_back:
            placeholder.target = node
            node = placeholder
        self.memo[ref] = (node, recursive)
        return node
