"""Read-only introspection of a tool's argument schema, for the semantic mutation operators.

A semantic operator must know, for every argument it touches, exactly what the schema allows: the
value it writes has to *really* violate ``type`` (or ``required``, ``enum``, ``maxLength``...) for
the sample's ground truth to be right, and an injection payload has to *really* satisfy the field's
own string constraints for the call to stay otherwise valid. This module answers those questions
once per schema (cached): ``$ref`` followed, ``allOf`` merged, nested objects and array items walked.

Paths address fields inside the arguments object: a tuple of property names, with :data:`ITEMS`
standing for "every element of this array". :func:`locate` turns a path into the concrete paths
present in one call's arguments.

Only what a schema states conjunctively is trusted: keywords at the top of a (resolved, allOf-merged)
field schema always apply, so violating one always fails validation. Alternatives (``anyOf``,
``oneOf``) are used only for the set of allowed types, and only when every branch declares one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, Iterator, Optional

from strategies.json_schemas import ignores_ref_siblings, merge_schemas, resolve_pointer
from strategies.json_values import JSON_TYPES, json_equal, json_types  # noqa: F401  (json_equal: operators import it here)



class _Items:
    """The path marker for "each element of the array"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "[*]"

    def __reduce__(self) -> str:
        return "ITEMS"


ITEMS = _Items()


class _ItemsFrom:
    """The path marker for "each element of the array from index ``start`` on": what ``items``
    governs behind ``prefixItems`` (or the list form of ``items``), whose positions have schemas
    of their own."""

    __slots__ = ("start",)

    def __init__(self, start: int):
        self.start = start

    def __repr__(self) -> str:
        return f"[{self.start}:]"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ItemsFrom) and other.start == self.start

    def __hash__(self) -> int:
        return hash(("items-from", self.start))

_MAX_DEPTH = 12  # nesting/ref depth walked; deeper schemas are left unconstrained (conservative)


# --------------------------------------------------------------------------- JSON values


def violates_type(value: Any, types: Optional[frozenset]) -> bool:
    """True when ``value`` fails a ``type`` restricted to ``types`` (None = unrestricted: never)."""
    if types is None:
        return False
    return not (json_types(value) & types)


def typed_by_schema(tool_schema: Any, key: str, value: Any) -> bool:
    """Whether a parser that reads a top-level value's raw text by the tool's schema, as the serving
    engines' parsers of GLM and Qwen3-Coder XML do, gives argument ``key``'s ``value`` its JSON type
    back. ``tool_schema``: the tool's arguments schema (None: a tool the registry has not).
    A string always (it is the raw text); any other value only where the property, as the
    schema's ``properties`` writes it, has a ``type`` of its own that admits it and no string. The
    parsers read that ``type`` and nothing else (vLLM's qwen3coder reads a property with none,
    under ``anyOf`` or ``$ref``, as a string): elsewhere the text ``["a"]`` is read, or kept when
    it does not convert, as the string ``'["a"]'``."""
    if isinstance(value, str):
        return True
    properties = tool_schema.get("properties") if isinstance(tool_schema, Mapping) else None
    declared = properties.get(key) if isinstance(properties, Mapping) else None
    if not isinstance(declared, Mapping):
        return False
    written = declared.get("type")
    types = frozenset([written] if isinstance(written, str) else written or ())
    return bool(types) and "string" not in types and not violates_type(value, types)


def search(pattern: str, value: str) -> Optional[bool]:
    """``re.search`` as JSON Schema's ``pattern`` uses it; None when Python cannot compile the regex."""
    try:
        return re.search(pattern, value) is not None
    except (re.error, TypeError):
        return None


_FORMAT_CHECKER: Any = None


def format_conforms(value: Any, fmt: str) -> Optional[bool]:
    """Whether ``value`` conforms to ``fmt`` by jsonschema's standard FormatChecker in this environment.

    None when the checker does not know the format (e.g. ``date-time`` without ``rfc3339-validator``):
    a validator built the usual way would then accept anything, so the operators treat the format as
    unverifiable rather than claim a violation nobody can detect.
    """
    global _FORMAT_CHECKER
    if _FORMAT_CHECKER is None:
        from jsonschema import FormatChecker

        _FORMAT_CHECKER = FormatChecker()
    if fmt not in _FORMAT_CHECKER.checkers:
        return None
    return bool(_FORMAT_CHECKER.conforms(value, fmt))


def checkable_format(fmt: Any) -> bool:
    """True when the standard FormatChecker checks ``fmt`` here."""
    return isinstance(fmt, str) and format_conforms("", fmt) is not None


# --------------------------------------------------------------------------- schema facts


@dataclass(frozen=True)
class FieldInfo:
    """One argument (at any depth) and the facts the operators need about it."""

    path: tuple
    schema: Mapping[str, Any]  # resolved ($ref followed, allOf merged)
    types: Optional[frozenset]  # allowed JSON types from explicit ``type`` keywords; None = unknown/any
    required: bool  # required by its parent object
    enum: Optional[tuple] = None  # ``enum`` values, or ``(const,)``
    pattern: Optional[str] = None
    format: Optional[str] = None
    minimum: Optional[float] = None  # inclusive bounds
    maximum: Optional[float] = None
    exclusive_minimum: Optional[float] = None
    exclusive_maximum: Optional[float] = None
    multiple_of: Optional[float] = None
    min_length: Optional[int] = None
    max_length: Optional[int] = None
    min_items: Optional[int] = None
    max_items: Optional[int] = None
    unique_items: bool = False
    alternatives: bool = False  # anyOf/oneOf/not/if at the top: constraints beyond the ones above

    @property
    def name(self) -> str:
        """The last property name on the path (the word an operator reasons about)."""
        for part in reversed(self.path):
            if isinstance(part, str):
                return part
        return ""

    def allows(self, json_type: str) -> bool:
        """Whether ``type`` admits ``json_type`` (None types admit everything)."""
        if self.types is None:
            return True
        if json_type == "integer":
            return bool({"integer", "number"} & self.types)
        return json_type in self.types

    @property
    def nullable(self) -> bool:
        return self.allows("null")

    @property
    def has_bounds(self) -> bool:
        return any(b is not None for b in (self.minimum, self.maximum, self.exclusive_minimum,
                                            self.exclusive_maximum))


@dataclass(frozen=True)
class ObjectInfo:
    """An object in the arguments (the root, or a nested object argument)."""

    path: tuple
    properties: tuple  # declared property names
    required: tuple
    extra_forbidden: bool  # additionalProperties/unevaluatedProperties is false
    pattern_properties: tuple = ()

    def declares(self, key: str) -> bool:
        """Whether ``key`` is a declared or pattern-matched property (renames must avoid these)."""
        if key in self.properties:
            return True
        return any(search(p, key) is not False for p in self.pattern_properties)


@dataclass(frozen=True)
class SchemaInfo:
    """Everything known about one tool's argument schema."""

    root: ObjectInfo
    objects: tuple  # ObjectInfo, root first
    fields: tuple  # FieldInfo at every depth, root properties first
    by_path: Mapping[tuple, FieldInfo] = field(default_factory=dict, compare=False)

    @property
    def properties(self) -> dict:
        """Top-level properties by name."""
        return {f.path[0]: f for f in self.fields if len(f.path) == 1}

    @property
    def required(self) -> tuple:
        return self.root.required

    @property
    def extra_forbidden(self) -> bool:
        return self.root.extra_forbidden

    def field(self, path: tuple) -> Optional[FieldInfo]:
        return self.by_path.get(tuple(path))

    def object_at(self, path: tuple) -> Optional[ObjectInfo]:
        for obj in self.objects:
            if obj.path == tuple(path):
                return obj
        return None


def resolve(schema: Any, root: Any, depth: int = 0) -> Any:
    """``schema`` with local ``$ref`` followed (siblings kept) and ``allOf`` merged into one mapping.

    Unresolvable references become ``{}`` (unconstrained), which every caller treats conservatively.
    """
    if schema is True or schema is None:
        return {}
    if schema is False or not isinstance(schema, Mapping):
        return schema
    if depth > _MAX_DEPTH:
        return {}
    if "$ref" in schema and isinstance(schema["$ref"], str):
        try:
            target = resolve_pointer(root, schema["$ref"])
        except KeyError:
            target = {}
        # before draft 2019-09, keywords next to $ref are ignored by validators: so ignore them too
        siblings = {} if ignores_ref_siblings(root) else {k: v for k, v in schema.items() if k != "$ref"}
        target = resolve(target, root, depth + 1)
        schema = merge_schemas(target, siblings, lossy=True) if isinstance(target, Mapping) else siblings
    if "allOf" in schema and isinstance(schema["allOf"], list):
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for branch in schema["allOf"]:
            branch = resolve(branch, root, depth + 1)
            if isinstance(branch, Mapping):
                merged = merge_schemas(merged, branch, lossy=True)
        schema = merged
    return schema


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _types(schema: Any, root: Any, depth: int = 0) -> Optional[frozenset]:
    """Allowed JSON types when every path through the schema declares ``type``; else None."""
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return None
    declared: Optional[set] = None
    if "type" in schema:
        t = schema["type"]
        declared = {t} if isinstance(t, str) else set(t) if isinstance(t, list) else None
        if declared is not None and schema.get("nullable") is True:
            declared.add("null")
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            union: Optional[set] = set()
            for branch in branches:
                bt = _types(resolve(branch, root, depth + 1), root, depth + 1)
                if bt is None:
                    union = None
                    break
                union |= bt
            if union is not None:
                declared = union if declared is None else _intersect(declared, union)
    if declared is None:
        return None
    return frozenset(t for t in declared if t in JSON_TYPES)


def _intersect(a: set, b: set) -> set:
    out = a & b
    if "number" in a and "integer" in b or "number" in b and "integer" in a:
        out.add("integer")
    return out


def _field(path: tuple, schema: Mapping, root: Any, required: bool) -> FieldInfo:
    def number(key: str) -> Optional[float]:
        v = schema.get(key)
        return v if _num(v) else None

    def count(key: str) -> Optional[int]:
        v = schema.get(key)
        return int(v) if _num(v) and v >= 0 else None

    minimum, maximum = number("minimum"), number("maximum")
    exmin, exmax = number("exclusiveMinimum"), number("exclusiveMaximum")
    # draft-04 style boolean exclusives: the bound itself becomes exclusive
    if schema.get("exclusiveMinimum") is True and minimum is not None:
        exmin, minimum = minimum, None
    if schema.get("exclusiveMaximum") is True and maximum is not None:
        exmax, maximum = maximum, None
    enum = None
    if "const" in schema:
        enum = (schema["const"],)
    elif isinstance(schema.get("enum"), list) and schema["enum"]:
        enum = tuple(schema["enum"])
    pattern = schema.get("pattern") if isinstance(schema.get("pattern"), str) else None
    fmt = schema.get("format") if isinstance(schema.get("format"), str) else None
    return FieldInfo(
        path=path, schema=schema, types=_types(schema, root), required=required, enum=enum,
        pattern=pattern, format=fmt, minimum=minimum, maximum=maximum, exclusive_minimum=exmin,
        exclusive_maximum=exmax, multiple_of=number("multipleOf") if (number("multipleOf") or 0) > 0 else None,
        min_length=count("minLength"), max_length=count("maxLength"), min_items=count("minItems"),
        max_items=count("maxItems"), unique_items=schema.get("uniqueItems") is True,
        alternatives=any(k in schema for k in ("anyOf", "oneOf", "not", "if", "dependentSchemas",
                                                "$dynamicRef", "contains")),
    )


def _branch_property_names(schema: Mapping, root: Any, depth: int) -> list:
    names: list = []
    branches: list = []
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            branches += schema[key]
    branches += [schema[k] for k in ("if", "then", "else") if k in schema]
    if isinstance(schema.get("dependentSchemas"), Mapping):
        branches += list(schema["dependentSchemas"].values())
    for branch in branches:
        branch = resolve(branch, root, depth + 1)
        if isinstance(branch, Mapping) and isinstance(branch.get("properties"), Mapping):
            names += list(branch["properties"])
    return names


def _walk(schema: Mapping, root: Any, path: tuple, objects: list, fields: list, depth: int) -> None:
    if depth > _MAX_DEPTH or not isinstance(schema, Mapping):
        return
    props = schema.get("properties")
    if isinstance(props, Mapping) or schema.get("type") == "object":
        props = props if isinstance(props, Mapping) else {}
        required = tuple(r for r in schema.get("required", ()) if isinstance(r, str))
        forbidden = schema.get("additionalProperties") is False or (
            schema.get("unevaluatedProperties") is False and "additionalProperties" not in schema)
        patterns = tuple(p for p in (schema.get("patternProperties") or {}) if isinstance(p, str))
        # names declared in alternative branches count as "evaluated" for unevaluatedProperties
        names = tuple(dict.fromkeys(list(props) + _branch_property_names(schema, root, depth)))
        objects.append(ObjectInfo(path=path, properties=names, required=required,
                                  extra_forbidden=forbidden, pattern_properties=patterns))
        for name, sub in props.items():
            sub = resolve(sub, root, depth + 1)
            if not isinstance(sub, Mapping):
                continue
            info = _field(path + (name,), sub, root, name in required)
            fields.append(info)
            _walk(sub, root, info.path, objects, fields, depth + 1)
    items = schema.get("items")
    prefix = schema.get("prefixItems")
    if isinstance(items, list):  # the older drafts' tuple form: positions first, then additionalItems
        prefix, items = items, schema.get("additionalItems")
    if isinstance(items, Mapping) and path:
        items = resolve(items, root, depth + 1)
        if isinstance(items, Mapping):
            marker = _ItemsFrom(len(prefix)) if isinstance(prefix, list) and prefix else ITEMS
            info = _field(path + (marker,), items, root, False)
            fields.append(info)
            _walk(items, root, info.path, objects, fields, depth + 1)


_CACHE: dict[int, tuple[Any, SchemaInfo]] = {}


def schema_info(tool_or_schema: Any) -> SchemaInfo:
    """The facts of a tool's (or a bare) argument schema; computed once per schema object."""
    schema = getattr(tool_or_schema, "schema", tool_or_schema)
    hit = _CACHE.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    root = resolve(schema, schema) if isinstance(schema, Mapping) else {}
    objects: list = []
    fields: list = []
    _walk(root if isinstance(root, Mapping) else {}, schema, (), objects, fields, 0)
    if not objects or objects[0].path != ():
        objects.insert(0, ObjectInfo(path=(), properties=(), required=(), extra_forbidden=False))
    fields.sort(key=lambda f: len(f.path))  # stable: top-level properties first, in schema order
    info = SchemaInfo(root=objects[0], objects=tuple(objects), fields=tuple(fields),
                      by_path={f.path: f for f in fields})
    if len(_CACHE) > 4096:
        _CACHE.clear()
    _CACHE[id(schema)] = (schema, info)
    return info


# --------------------------------------------------------------------------- concrete values


def locate(arguments: Any, path: tuple) -> Iterator[tuple]:
    """The concrete paths (``ITEMS`` replaced by indices) where ``path`` exists in ``arguments``."""

    def walk(node: Any, i: int, done: tuple) -> Iterator[tuple]:
        if i == len(path):
            yield done
            return
        part = path[i]
        if part is ITEMS or part.__class__ is _ItemsFrom:
            if isinstance(node, list):
                start = 0 if part is ITEMS else part.start
                for index, element in enumerate(node[start:], start):
                    yield from walk(element, i + 1, done + (index,))
        elif isinstance(node, Mapping) and part in node:
            yield from walk(node[part], i + 1, done + (part,))

    yield from walk(arguments, 0, ())


def get_at(arguments: Any, concrete: tuple) -> Any:
    node = arguments
    for part in concrete:
        node = node[part]
    return node


def set_at(arguments: Any, concrete: tuple, value: Any) -> None:
    """Replace the value at a concrete path in place (the caller works on a deep copy)."""
    parent = get_at(arguments, concrete[:-1])
    parent[concrete[-1]] = value


def format_path(concrete: tuple) -> str:
    """A short human path for descriptions: ``passengers[0].name``."""
    out = ""
    for part in concrete:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"
