"""JSON Schema -> generator compiler: each schema is compiled ONCE into a tree of nodes.

Why not ``hypothesis_jsonschema.from_schema`` per draw: it re-merges and re-resolves the schema on
every example (55–180 examples/s, DESIGN.md "Performance design"). Here all schema walking happens at
compile time; ``node.generate(source)`` only draws choices and builds values, so the same tree serves
the fast :class:`RandomSource`/:class:`ReplaySource` (campaigns, ~µs per value) and the
:class:`HypothesisSource` (real Hypothesis strategies that shrink).

Natively covered: the subset real tool schemas use (type and type lists, properties/required/
additionalProperties, enum/const, string lengths/pattern/format, numeric bounds in draft-4 and
draft-6+ forms, multipleOf, items/prefixItems/draft-4 tuple items, uniqueItems, min/maxProperties,
anyOf/oneOf/allOf, $ref/$defs/definitions including recursion, OpenAPI ``nullable``, default/examples
as likely values). Keywords that narrow the rest of a subschema (``not``, ``if``/``then``/``else``,
``dependentRequired``, ``propertyNames``, ``contains``; ``patternProperties`` keys from their
patterns) are compiled as the rest, checked against the whole (:class:`CheckedNode`). Everything
else (``unevaluatedProperties``, ``$dynamicRef`` ...) and every native attempt that cannot be
verified falls back to hypothesis-jsonschema through ``source.pool``: a deterministic,
simplest-first pool of values drawn once per subschema.

Shrinking: choice 0 is always the simplest option (shortest plain string, the integer closest to
0, the first enum value, optional properties absent, the fewest items), so a zeroed or truncated
choice sequence still yields a valid, minimal value.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from collections.abc import Mapping
from typing import Any, Callable, Iterable

from strategies._internal.regex import UnsupportedPattern, compile_pattern
from strategies._internal.schema.banks import _EXTRA_KEYS, _FREE_KEYS, FORMAT_GENERATORS
from strategies._internal.schema.fallback import PoolNode, simplest_first
from strategies._internal.schema.merge import CHECK_SEEDS, CombinatorsMixin
from strategies._internal.schema.nodes import (
    AnyNode, ArrayNode, BoolNode, CheckedNode, ConstNode, EnumNode, IntegerNode, LikelyNode, Node, NullNode,
    NumberNode, ObjectNode, RefNode, StringNode, UnionNode,
)
from strategies._internal.schema.patterns import PlannedStringNode, plan_values, realistic_for_pattern
from strategies._internal.schema.problems import Problem, Unsat
from strategies._internal.schema.refs import RefsMixin
from strategies._internal.schema.validators import _make_validator, validator_for_schema
from strategies._internal.source import RandomSource, ReplaySource, Source
from strategies.errors import InvalidSchema
from strategies.json_schemas import (ANNOTATIONS, escape_pointer_token, ignores_ref_siblings, normalize_local,
                                     without_boolean_narrowing)
from strategies.json_values import JSON_TYPES

# Keywords the native compiler does not implement: their presence sends the subschema to the fallback.
FALLBACK_KEYWORDS = frozenset({
    "not", "if", "then", "else", "patternProperties", "propertyNames", "dependentRequired",
    "dependentSchemas", "dependencies", "contains", "minContains", "maxContains", "unevaluatedProperties",
    "unevaluatedItems", "$dynamicRef", "$recursiveRef",
})
_STRING_KEYS = {"minLength", "maxLength", "pattern", "format"}
_NUMBER_KEYS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
_ARRAY_KEYS = {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems"}
_OBJECT_KEYS = {"properties", "required", "additionalProperties", "minProperties", "maxProperties",
                "patternProperties"}
#: Fallback keywords that only narrow what the rest of the subschema allows: the rest is compiled
#: natively and its values are checked against the whole subschema (retried, then the pool).
#: ``patternProperties`` is generated natively (keys from its patterns), checked the same way.
CHECKED_KEYWORDS = frozenset({
    "not", "if", "then", "else", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
    "contains", "minContains", "maxContains", "patternProperties",
})
#: Share of random draws of the native part that must satisfy the whole subschema at compile time.
CHECKED_MIN_VALID = 12


class _Compiler(RefsMixin, CombinatorsMixin):
    def __init__(self, root: Any):
        self.root = root
        self.cls = validator_for_schema(root)
        self.modern = not ignores_ref_siblings(root)
        self.in_progress: dict[str, RefNode] = {}
        self.used_back: set[str] = set()
        self.memo: dict[str, tuple[Node, bool]] = {}
        self.back_edges = 0
        self.checking: set[int] = set()
        defs = {}
        if isinstance(root, Mapping):
            for key in ("$defs", "definitions"):
                if isinstance(root.get(key), Mapping):
                    defs[key] = root[key]
        self.defs = defs

    # -- helpers ----------------------------------------------------------------------------------
    def with_defs(self, schema: Any) -> Any:
        if isinstance(schema, Mapping) and self.defs:
            out = dict(schema)
            for key, value in self.defs.items():
                out.setdefault(key, value)
            if isinstance(self.root, Mapping) and "$schema" in self.root:
                out.setdefault("$schema", self.root["$schema"])
            return out
        if isinstance(schema, Mapping) and isinstance(self.root, Mapping) and "$schema" in self.root:
            return dict(schema, **{"$schema": self.root["$schema"]})
        return schema

    def validator(self, schema: Any) -> Callable[[Any], bool]:
        return _make_validator(self.with_defs(schema), self.cls)

    def pool(self, schema: Any, pointer: str, eager: bool) -> PoolNode:
        full = self.with_defs(schema)
        node = PoolNode(full, _make_validator(full, self.cls))
        if eager:
            try:
                values = node.values()
            except Problem as problem:  # Unsat stays Unsat: an optional property that admits nothing is left out
                raise type(problem)(problem.message, pointer) from None
            if not values:
                raise Problem("hypothesis-jsonschema found no value for this subschema", pointer)
        return node

    def child(self, schema: Any, pointer: str) -> tuple[Node, bool]:
        before = self.back_edges
        node = self.compile(schema, pointer)
        return node, self.back_edges > before

    # -- main entry -------------------------------------------------------------------------------
    def compile(self, schema: Any, pointer: str) -> Node:
        if schema is True:
            return AnyNode()
        if schema is False:
            raise Unsat("the schema is false: no value is allowed", pointer)
        if not isinstance(schema, Mapping):
            raise Problem(f"schema must be an object or a boolean, got {type(schema).__name__}", pointer)
        schema = without_boolean_narrowing(schema)
        if schema is False:
            raise Unsat("the schema admits no value (a boolean subschema rules every value out)", pointer)
        if "$ref" in schema:
            return self.compile_ref(schema, pointer)
        keys = set(schema)
        if keys & FALLBACK_KEYWORDS and id(schema) not in self.checking:
            return self.compile_checked(schema, pointer)
        if "allOf" in schema:
            return self.compile_all_of(schema, pointer)
        if "anyOf" in schema or "oneOf" in schema:
            return self.compile_union(schema, pointer)
        node = self.compile_plain(schema, pointer)
        likely = []
        for key in ("default", "examples", "example"):
            if key in schema:
                values = schema[key] if key == "examples" and isinstance(schema[key], list) else [schema[key]]
                likely.extend(values)
        if likely:
            check = self.validator(schema)
            likely = [v for v in likely if _is_json(v) and check(v)]
            if likely:
                node = LikelyNode(node, likely)
        return node

    def compile_checked(self, schema: Mapping, pointer: str) -> Node:
        """A subschema with keywords the native walk cannot build by construction (``not``,
        ``if``/``then``, ``dependentRequired``, ``patternProperties`` ...): generate from the rest of
        it natively and keep values the whole subschema accepts. Drawing a hypothesis-jsonschema
        pool costs 0.2–2 s per subschema (most of a short campaign on a tools file that uses them);
        it is drawn only when the native part rarely satisfies the whole (probed here, as for
        patterns) or a draw keeps failing."""
        if set(schema) & (FALLBACK_KEYWORDS - CHECKED_KEYWORDS):
            return self.pool(schema, pointer, eager=True)
        rest = {k: v for k, v in schema.items() if k not in CHECKED_KEYWORDS or k == "patternProperties"}
        self.checking.add(id(rest))  # its patternProperties are the native walk's, not a way back here
        try:
            inner = self.compile(rest, pointer)
        except Unsat:
            raise  # the rest admits nothing: neither does the whole
        except Problem:
            return self.pool(schema, pointer, eager=True)
        finally:
            self.checking.discard(id(rest))
        return self.checked(inner.generate, self.validator(schema), schema, pointer)

    def checked(self, generate: Callable[[Source], Any], check: Callable[[Any], bool], schema: Any,
                pointer: str) -> Node:
        """``generate`` verified by ``check``, when it satisfies it on most of ``CHECK_SEEDS`` seeds
        (otherwise the hypothesis-jsonschema pool is the generator, drawn now).

        A value whose native attempts all fail (rare: most seeds pass) is picked from the values
        those seeds gave that passed, simplest first. That backstop is deterministic and free;
        drawing a hypothesis-jsonschema pool for it took up to 2 s, inside the budget, the first
        time one draw in a few thousand failed (in each worker, again after every restart)."""
        passed = [value for value in (generate(RandomSource(seed)) for seed in range(CHECK_SEEDS)) if check(value)]
        if len(passed) < CHECKED_MIN_VALID:
            return self.pool(schema, pointer, eager=True)
        return CheckedNode(generate, check, EnumNode(simplest_first(passed)))

    def compile_plain(self, schema: Mapping, pointer: str) -> Node:
        schema = normalize_local(schema)
        if "const" in schema or "enum" in schema:
            values = [schema["const"]] if "const" in schema else schema["enum"]
            if not isinstance(values, list):
                raise Problem("enum must be a list", pointer)
            rest = {k: v for k, v in schema.items() if k not in ANNOTATIONS and k not in ("enum", "const")}
            if rest:
                check = self.validator(schema)
                values = [v for v in values if check(v)]
            if not values:
                raise Unsat("no enum/const value satisfies the schema", pointer)
            return ConstNode(values[0]) if len(values) == 1 else EnumNode(list(values))
        types = schema.get("type")
        if isinstance(types, str):
            types = [types]
        if types is None:
            present = set(schema)
            types = [t for t, keys in (("object", _OBJECT_KEYS), ("array", _ARRAY_KEYS), ("string", _STRING_KEYS),
                                       ("number", _NUMBER_KEYS)) if present & keys]
            if not types:
                return AnyNode()
        types = list(dict.fromkeys(types))
        if "integer" in types and "number" in types:
            types.remove("integer")
        nodes, weights = [], []
        for kind in types:
            try:
                nodes.append(self.compile_type(kind, schema, pointer))
            except Unsat:
                if len(types) == 1:
                    raise
                continue
            weights.append(0.12 if kind == "null" else 1.0)
        if not nodes:
            raise Unsat("no listed type admits a value", pointer)
        if len(nodes) == 1:
            return nodes[0]
        return UnionNode(nodes, weights, [False] * len(nodes))

    def compile_type(self, kind: str, schema: Mapping, pointer: str) -> Node:
        if kind == "null":
            return NullNode()
        if kind == "boolean":
            return BoolNode()
        if kind == "integer":
            return self.compile_integer(schema, pointer)
        if kind == "number":
            return self.compile_number(schema, pointer)
        if kind == "string":
            return self.compile_string(schema, pointer)
        if kind == "array":
            return self.compile_array(schema, pointer)
        if kind == "object":
            return self.compile_object(schema, pointer)
        raise Problem(f"{kind!r} is not a JSON type (expected one of {', '.join(JSON_TYPES)})", pointer + "/type")

    def compile_integer(self, schema: Mapping, pointer: str) -> Node:
        lo, hi = schema.get("minimum"), schema.get("maximum")
        xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        ilo = None if lo is None else math.ceil(lo)
        ihi = None if hi is None else math.floor(hi)
        if xlo is not None:
            v = math.floor(xlo) + 1
            ilo = v if ilo is None else max(ilo, v)
        if xhi is not None:
            v = math.ceil(xhi) - 1
            ihi = v if ihi is None else min(ihi, v)
        step = schema.get("multipleOf")
        istep = 1
        if step is not None:
            if isinstance(step, int) or float(step).is_integer():
                istep = int(step)
            else:
                istep = Fraction(str(step)).numerator
        try:
            return IntegerNode(ilo, ihi, istep)
        except Unsat as exc:
            raise Unsat(exc.message, pointer) from None

    def compile_number(self, schema: Mapping, pointer: str) -> Node:
        lo, hi = schema.get("minimum"), schema.get("maximum")
        xlo = xhi = False
        if schema.get("exclusiveMinimum") is not None:
            v = schema["exclusiveMinimum"]
            if lo is None or v >= lo:
                lo, xlo = v, True
        if schema.get("exclusiveMaximum") is not None:
            v = schema["exclusiveMaximum"]
            if hi is None or v <= hi:
                hi, xhi = v, True
        step = schema.get("multipleOf")
        if step is not None and (isinstance(step, int) or float(step).is_integer()):
            ilo = None if lo is None else (math.floor(lo) + 1 if xlo else math.ceil(lo))
            ihi = None if hi is None else (math.ceil(hi) - 1 if xhi else math.floor(hi))
            try:
                return IntegerNode(ilo, ihi, int(step))
            except Unsat as exc:
                raise Unsat(exc.message, pointer) from None
        try:
            return NumberNode(lo, hi, xlo, xhi, step)
        except Unsat as exc:
            raise Unsat(exc.message, pointer) from None

    def compile_string(self, schema: Mapping, pointer: str) -> Node:
        lo, hi = schema.get("minLength", 0), schema.get("maxLength")
        if hi is not None and lo > hi:
            raise Unsat("minLength is greater than maxLength", pointer)
        pattern, fmt = schema.get("pattern"), schema.get("format")
        if pattern is None and (fmt is None or fmt not in FORMAT_GENERATORS):
            return StringNode(lo, hi)
        sub = {k: schema[k] for k in ("type", "minLength", "maxLength", "pattern", "format") if k in schema}
        sub["type"] = "string"
        fmt_check = None
        if fmt in FORMAT_GENERATORS:
            from jsonschema import FormatChecker

            checker = FormatChecker()
            fmt_check = (lambda v, _f=fmt, _c=checker: _c.conforms(v, _f)) if fmt in checker.checkers else None
        if pattern is not None:
            try:
                gen = compile_pattern(pattern, max_length=hi)
            except UnsupportedPattern:
                return self.pool(sub, pointer, eager=True)
            raw, search = gen.generate, gen.matches
        else:
            raw, search = FORMAT_GENERATORS[fmt], None

        def check(value: str) -> bool:
            n = len(value)
            if n < lo or (hi is not None and n > hi):
                return False
            if search is not None and not search(value):
                return False
            return fmt_check is None or fmt_check(value)

        if pattern is not None and fmt is None:
            raw = realistic_for_pattern(raw, check)
        # Probe at compile time: the native walk must satisfy the zero sequence and most seeds,
        # otherwise the fallback pool is the generator.
        if not check(raw(ReplaySource(()))):
            return self.pool(sub, pointer, eager=True)
        fresh = self.checked(raw, check, sub, pointer)
        if not isinstance(fresh, CheckedNode):
            return fresh
        values = plan_values((pattern, fmt, lo, hi), raw, check)
        return PlannedStringNode(values, fresh) if len(values) >= 4 else fresh

    def compile_array(self, schema: Mapping, pointer: str) -> Node:
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        prefix_schemas = schema.get("prefixItems", [])
        items = schema.get("items", True)
        prefix, rec_items = [], False
        for i, sub in enumerate(prefix_schemas):
            try:
                node, rec = self.child(sub, f"{pointer}/prefixItems/{i}")
            except Unsat:
                # this position can never be filled: the array stops before it
                hi = i if hi is None else min(hi, i)
                break
            prefix.append(node)
            rec_items = rec_items or rec
        items_node = None
        try:
            if items is not False:
                items_node, rec = self.child(items, f"{pointer}/items")
                rec_items = rec_items or rec
        except Unsat:
            items_node = None
        if items_node is None:
            cap = len(prefix)
            hi = cap if hi is None else min(hi, cap)
        if hi is None:
            hi = lo + 10
        if lo > hi:
            raise Unsat("minItems cannot be reached", pointer)
        unique = bool(schema.get("uniqueItems"))
        fallback = self.pool(dict(schema), pointer, eager=False) if unique else None
        return ArrayNode(prefix, items_node, lo, hi, unique, rec_items, fallback)

    def compile_object(self, schema: Mapping, pointer: str) -> Node:
        props = schema.get("properties", {}) or {}
        required = list(dict.fromkeys(schema.get("required", []) or []))
        additional = schema.get("additionalProperties", None)
        req_nodes, opt_nodes = [], []
        additional_node = None
        if additional not in (None, False, True):
            try:
                additional_node, _ = self.child(additional, f"{pointer}/additionalProperties")
            except Unsat:
                additional = False
        for key, sub in props.items():
            kp = f"{pointer}/properties/{escape_pointer_token(key)}"
            try:
                node, rec = self.child(sub, kp)
            except Unsat:
                if key in required:
                    raise
                continue  # the property can never be present
            if key in required:
                req_nodes.append((key, node))
            else:
                opt_nodes.append((key, node, rec))
        for key in required:
            if key not in props:
                if additional is False:
                    raise Unsat(f"required property {key!r} is not allowed by additionalProperties false",
                                 pointer)
                req_nodes.append((key, additional_node or AnyNode()))
        # keep schema order: required ones first would be unrealistic, so sort by property order
        order = {k: i for i, k in enumerate(list(props) + required)}
        req_nodes.sort(key=lambda kv: order.get(kv[0], 0))
        lo, hi = schema.get("minProperties", 0), schema.get("maxProperties")
        if hi is not None and len(req_nodes) > hi:
            raise Unsat("more required properties than maxProperties", pointer)
        # An object with no "properties" keyword and no additionalProperties is free-form (e.g. a
        # "metadata" argument): generate a few keys. "properties": {} means no arguments.
        free = "properties" not in schema and additional is None
        extra = None
        if additional is True or free:
            extra = AnyNode()
        elif additional_node is not None:
            extra = additional_node
        names = [n for n in (_FREE_KEYS if free else _EXTRA_KEYS) if n not in props] or ["extra_key"]
        patterned = self._pattern_properties(schema, pointer)
        if extra is None and not patterned and lo > len(req_nodes) + len(opt_nodes):
            raise Unsat("minProperties cannot be reached", pointer)
        node = ObjectNode(req_nodes, opt_nodes, extra, names, free, lo, hi, patterned)
        node.declared = frozenset(props) | frozenset(required)
        return node


    def _pattern_properties(self, schema: Mapping, pointer: str) -> tuple:
        """(key generator, value node) per ``patternProperties`` entry. Only reached through
        :meth:`compile_checked`, whose check catches a key that two patterns (or a declared
        property's schema) also govern."""
        out = []
        for pattern, sub in (schema.get("patternProperties") or {}).items():
            try:
                keys = compile_pattern(pattern, max_length=40)
            except UnsupportedPattern:
                raise Problem(f"patternProperties pattern {pattern!r} cannot be generated", pointer) from None
            try:
                node, _ = self.child(sub, f"{pointer}/patternProperties/{escape_pointer_token(pattern)}")
            except Unsat:
                continue  # no key matching it can be present
            out.append((keys, node))
        return tuple(out)


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (TypeError, ValueError):
        return False


# --------------------------------------------------------------------------------------------------
# Public API

def compile_schema(schema: Any, *, root: Any = None, pointer: str = "") -> Node:
    """Compile ``schema`` (resolving ``$ref`` against ``root``, default the schema itself).

    Raises :class:`InvalidSchema` naming the JSON pointer when neither the native compiler nor the
    hypothesis-jsonschema fallback can generate a value.
    """
    compiler = _Compiler(schema if root is None else root)
    try:
        return compiler.compile(schema, pointer)
    except Problem as problem:
        raise InvalidSchema(problem.message, pointer=problem.pointer or pointer) from None
    except RecursionError:
        raise InvalidSchema("schema nesting too deep to compile", pointer=pointer) from None


_TOOL_CACHE: dict[tuple[str, int], tuple[Any, Node]] = {}
_FAILED: dict[tuple[str, int], tuple[Any, InvalidSchema]] = {}


def compile_tool(tool: Any) -> Node:
    """The compiled generator of ``tool``'s arguments dict (cached per tool object; so is the
    InvalidSchema of a tool that cannot be generated: trying the fallback again costs seconds)."""
    key = (tool.name, id(tool))
    hit = _TOOL_CACHE.get(key)
    if hit is not None and hit[0] is tool:
        return hit[1]
    failed = _FAILED.get(key)
    if failed is not None and failed[0] is tool:
        raise failed[1].with_traceback(None)
    try:
        return _compile_tool(tool, key)
    except InvalidSchema as exc:
        _FAILED[key] = (tool, exc)
        raise


def generatable(tool: Any) -> bool:
    """Whether ``tool``'s arguments can be generated (its schema compiles): the tools a call of
    another tool may be drawn beside (a tool whose schema is ``false`` has no call at all)."""
    try:
        compile_tool(tool)
    except InvalidSchema:
        return False
    return True


def _compile_tool(tool: Any, key: tuple) -> Node:
    schema = tool.schema
    if schema is True or (isinstance(schema, Mapping) and "type" not in schema and "$ref" not in schema
                          and not (set(schema) & {"anyOf", "oneOf", "allOf", "enum", "const"})):
        schema = dict(schema) if isinstance(schema, Mapping) else {}
        schema["type"] = "object"
    pointer = getattr(tool, "pointer", "") or ""
    compiler = _Compiler(schema)
    try:
        node = compiler.compile(schema, pointer)
    except Problem as problem:
        raise InvalidSchema(problem.message, tool=tool.name, pointer=problem.pointer or pointer) from None
    except RecursionError:
        raise InvalidSchema("schema nesting too deep to compile", tool=tool.name, pointer=pointer) from None
    _TOOL_CACHE[key] = (tool, node)
    return node


def tool_arguments(source: Source, tool: Any) -> dict:
    """One arguments dict for ``tool`` drawn from ``source``."""
    return compile_tool(tool).generate(source)


def unsupported_tools(registry: Iterable[Any]) -> dict[str, str]:
    """``{tool name: one-line reason}`` for the tools whose schema cannot be generated, so a campaign
    can report them and carry on with the others."""
    out = {}
    for tool in registry:
        try:
            compile_tool(tool)
        except InvalidSchema as exc:
            out[tool.name] = str(exc)
    return out
