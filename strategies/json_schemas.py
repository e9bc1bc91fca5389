"""JSON Schema mechanics every layer shares: JSON pointers and ``$ref``, ``allOf`` merging, legacy and
OpenAPI forms, and which draft a schema is written in.

One implementation of each: the schema compiler (generation), the schema facts the semantic
operators trust, the tools loader's checks and the validators all resolve, merge and pick drafts
here, so they can never disagree about what a schema means. Only the standard library is imported
at module level (``jsonschema`` lazily, for the validator classes), never Hypothesis.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Iterable, Iterator, Optional
from urllib.parse import unquote

from strategies.json_values import json_equal

__all__ = ["ANNOTATIONS", "allow_null", "escape_pointer_token", "ignores_ref_siblings", "legacy_draft",
           "merge_schemas", "normalize_local", "normalize_openapi", "pointer", "resolve_pointer",
           "subschemas", "validator_class", "without_boolean_narrowing"]

#: Keywords that never constrain a value.
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "deprecated", "readOnly",
                         "writeOnly", "$schema", "$id", "$anchor", "$defs", "definitions", "discriminator",
                         "xml", "externalDocs", "example", "contentMediaType", "contentEncoding", "$vocabulary"})
#: Keywords whose values are data, not subschemas.
_VALUE_KEYWORDS = ("enum", "const", "default", "examples", "example")


# --------------------------------------------------------------------------- JSON pointers and $ref


def escape_pointer_token(token: Any) -> str:
    """One JSON pointer reference token: ``~`` -> ``~0``, ``/`` -> ``~1``."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: Any) -> str:
    """The JSON pointer of a path: ``pointer("properties", "a/b")`` -> ``/properties/a~1b``."""
    return "".join("/" + escape_pointer_token(t) for t in tokens)


def resolve_pointer(root: Any, ref: str) -> Any:
    """The subschema a local ``$ref`` names: ``#``, ``#/json/pointer`` (percent-decoded, ``~0``/``~1``
    unescaped, array indices) or ``#name`` (an ``$anchor``). ``KeyError`` when it does not resolve
    (remote references included)."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise KeyError(ref)
    fragment = ref[1:]
    if not fragment:
        return root
    if not fragment.startswith("/"):
        for candidate in subschemas(root):
            if isinstance(candidate, Mapping) and candidate.get("$anchor") == fragment:
                return candidate
        raise KeyError(ref)
    node = root
    for token in fragment[1:].split("/"):
        token = unquote(token).replace("~1", "/").replace("~0", "~")
        try:
            if isinstance(node, list):
                node = node[int(token)]
            elif isinstance(node, Mapping):
                node = node[token]
            else:
                raise KeyError(ref)
        except (IndexError, ValueError, KeyError):
            raise KeyError(ref) from None
    return node


def subschemas(root: Any) -> Iterator[Any]:
    """Every mapping and list inside a schema (iterative, so any depth is safe), skipping data
    keywords (``enum``, ``const``, ``default``, ``examples``)."""
    stack = [root]
    seen: set = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, Mapping):
            stack.extend(v for k, v in node.items() if isinstance(v, (Mapping, list)) and k not in _VALUE_KEYWORDS)
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (Mapping, list)))


# --------------------------------------------------------------------------- drafts


def legacy_draft(schema: Any) -> Optional[int]:
    """4 when the schema uses draft-4 boolean ``exclusiveMinimum``/``exclusiveMaximum``, 7 when it uses
    tuple ``items`` (an array) without ``prefixItems``, None when nothing says it predates 2020-12."""
    found: Optional[int] = None
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, Mapping):
            if isinstance(node.get("exclusiveMinimum"), bool) or isinstance(node.get("exclusiveMaximum"), bool):
                return 4
            if isinstance(node.get("items"), list) and "prefixItems" not in node:
                found = 7
            for key, value in node.items():
                if key not in _VALUE_KEYWORDS:
                    stack.append(value)
    return found


def validator_class(schema: Any) -> Any:
    """The jsonschema validator class for a schema: its ``$schema``, else draft 2020-12 unless
    :func:`legacy_draft` finds draft-4 bounds (Draft 4) or tuple ``items`` (Draft 7)."""
    import jsonschema
    from jsonschema import validators

    if isinstance(schema, Mapping) and "$schema" in schema:
        return validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return {4: jsonschema.Draft4Validator, 7: jsonschema.Draft7Validator}.get(legacy_draft(schema),
                                                                             jsonschema.Draft202012Validator)


_SIBLINGS: dict = {}


def ignores_ref_siblings(root: Any) -> bool:
    """Whether keywords next to ``$ref`` are ignored, as the validator of :func:`validator_class` does
    it: before draft 2019-09 they are. Cached per schema object (it walks the whole schema)."""
    hit = _SIBLINGS.get(id(root))
    if hit is None or hit[0] is not root:
        answer = validator_class(root).__name__ not in ("Draft202012Validator", "Draft201909Validator")
        if len(_SIBLINGS) > 4096:
            _SIBLINGS.clear()
        hit = _SIBLINGS[id(root)] = (root, answer)
    return hit[1]


# --------------------------------------------------------------------------- legacy and OpenAPI forms


def allow_null(schema: dict) -> None:
    """OpenAPI ``nullable: true`` in JSON Schema terms, in place: ``null`` joins ``type`` and ``enum``."""
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "null":
        schema["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        schema["type"] = list(kind) + ["null"]
    if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
        schema["enum"] = list(schema["enum"]) + [None]


def normalize_openapi(schema: Any) -> Any:
    """A copy of ``schema`` with OpenAPI ``nullable: true`` rewritten as JSON Schema (``null`` added
    to ``type``/``enum``), so the schema jsonschema validates says what the generator produces."""
    if isinstance(schema, list):
        return [normalize_openapi(v) for v in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {}
    for key, value in schema.items():
        out[key] = value if key in _VALUE_KEYWORDS else normalize_openapi(value)
    if out.get("nullable") is True:
        del out["nullable"]
        allow_null(out)
    return out


def normalize_local(schema: Mapping) -> dict:
    """Shallow rewrite of legacy forms into draft 2020-12: draft-4 boolean exclusive bounds, tuple
    ``items`` / ``additionalItems``, OpenAPI ``nullable``."""
    out = dict(schema)
    for ex, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(out.get(ex), bool):
            if out[ex] and bound in out:
                out[ex] = out.pop(bound)
            else:
                del out[ex]
    if isinstance(out.get("items"), list):
        out["prefixItems"] = out.pop("items")
        if "additionalItems" in out:
            out["items"] = out.pop("additionalItems")
    else:
        out.pop("additionalItems", None)
    if out.get("nullable") is True:
        allow_null(out)
    return out


# --------------------------------------------------------------------------- boolean subschemas


def without_boolean_narrowing(schema: Mapping) -> Any:
    """``schema`` with the boolean subschemas of its narrowing keywords applied, one level deep:
    ``true`` accepts every value and ``false`` none (JSON Schema), so ``not: false``, ``if``'s
    ``then: true``, ``propertyNames: true``, ``unevaluatedProperties: true`` ... say nothing and go,
    ``not: true`` admits nothing (``False`` is returned), ``if: true`` leaves its ``then`` (an
    ``allOf`` member) and ``if: false`` its ``else``, ``propertyNames: false`` allows no property
    (``maxProperties: 0``), a ``dependentSchemas`` entry ``false`` forbids its property. The
    result means exactly what ``schema`` means; the compiler then needs no fallback for them."""
    if not any(isinstance(schema.get(k), bool) for k in _BOOLEAN_NARROWING) and not (
            isinstance(schema.get("dependentSchemas"), Mapping)
            and any(isinstance(v, bool) for v in schema["dependentSchemas"].values())):
        return schema
    out = dict(schema)
    if out.get("not") is True:
        return False
    if out.get("not") is False:
        del out["not"]
    if isinstance(out.get("if"), bool):
        taken = out.get("then" if out["if"] else "else", True)
        for key in ("if", "then", "else"):
            out.pop(key, None)
        if taken is not True:
            out["allOf"] = list(out.get("allOf") or []) + [taken]
    for key in ("then", "else", "propertyNames", "unevaluatedProperties", "unevaluatedItems"):
        if out.get(key) is True:
            del out[key]
    if out.get("propertyNames") is False:
        del out["propertyNames"]
        out["maxProperties"] = 0
    dependent = out.get("dependentSchemas")
    if isinstance(dependent, Mapping):
        kept = {k: v for k, v in dependent.items() if not isinstance(v, bool)}
        forbidden = [k for k, v in dependent.items() if v is False]
        if forbidden:
            out["properties"] = dict(out.get("properties") or {}, **{k: False for k in forbidden})
        if kept:
            out["dependentSchemas"] = kept
        else:
            del out["dependentSchemas"]
    return out


#: Narrowing keywords whose value is one subschema, which may be a boolean.
_BOOLEAN_NARROWING = ("not", "if", "then", "else", "propertyNames", "unevaluatedProperties",
                      "unevaluatedItems")


# --------------------------------------------------------------------------- allOf


_MERGE_MAX = {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"}
_MERGE_MIN = {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"}


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _types(value: Any) -> set:
    return {value} if isinstance(value, str) else set(value)


def merge_schemas(a: Any, b: Any, *, lossy: bool = False) -> Any:
    """The conjunction of two schemas (``allOf: [a, b]``) as one schema.

    Exact mode (the generator's): ``None`` when the two cannot simply be merged (two different
    ``enum``\\ s, keywords it does not know how to combine, ``additionalProperties`` over different
    property sets), ``False`` when the conjunction is obviously unsatisfiable (disjoint types).

    ``lossy=True`` (the schema facts the semantic operators trust) never gives up: where two values
    of a keyword cannot be combined, one of them is kept. That is sound for facts because under
    ``allOf`` every keyword of every branch applies: a value that violates a kept keyword fails
    validation. Disjoint types give an empty ``type`` list rather than ``False``.
    """
    if a is False or b is False:
        return False
    if a is True or a == {} or a is None:
        return dict(b) if isinstance(b, Mapping) else ({} if b is True or b is None else b)
    if b is True or b == {} or b is None:
        return dict(a)
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        return dict(a) if lossy and isinstance(a, Mapping) else None
    if not lossy:
        a, b = normalize_local(a), normalize_local(b)
    out = dict(a)
    for key, bv in b.items():
        if key not in out:
            out[key] = bv
            continue
        av = out[key]
        if key in ANNOTATIONS or json_equal(av, bv):
            continue
        if key == "type" and isinstance(av, (str, list)) and isinstance(bv, (str, list)):
            at, bt = _types(av), _types(bv)
            common = at & bt
            if "integer" in at and "number" in bt or "integer" in bt and "number" in at:
                common.add("integer")
            if not common and not lossy:
                return False
            out[key] = sorted(common)
        elif key in _MERGE_MAX and _number(av) and _number(bv):
            out[key] = max(av, bv)
        elif key in _MERGE_MIN and _number(av) and _number(bv):
            out[key] = min(av, bv)
        elif key == "required" and isinstance(av, list) and isinstance(bv, list):
            out[key] = list(dict.fromkeys(list(av) + list(bv)))
        elif key == "properties" and isinstance(av, Mapping) and isinstance(bv, Mapping):
            props = dict(av)
            for name, sub in bv.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
            out[key] = props
        elif key == "uniqueItems":
            out[key] = bool(av) or bool(bv)
        elif key in ("items", "additionalProperties", "unevaluatedProperties"):
            if isinstance(av, bool) or isinstance(bv, bool):
                out[key] = av and bv if isinstance(av, bool) and isinstance(bv, bool) else (
                    bv if av is True else av if bv is True else False)
            else:
                out[key] = {"allOf": [av, bv]}
        elif key == "multipleOf" and isinstance(av, int) and isinstance(bv, int) and av > 0 and bv > 0:
            out[key] = av * bv // math.gcd(av, bv)
        elif lossy:
            continue  # keep a's value: it applies under allOf
        else:
            return None
    if lossy:
        return out
    if "enum" in a and "const" in b or "const" in a and "enum" in b:
        return None
    if ("additionalProperties" in a or "additionalProperties" in b) and \
            set(a.get("properties", {})) != set(b.get("properties", {})) and \
            not (a.get("additionalProperties", True) is True and b.get("additionalProperties", True) is True):
        return None
    return out


def merge_all(schemas: Iterable[Any], *, lossy: bool = False) -> Any:
    """:func:`merge_schemas` over a sequence (``None`` / ``False`` as soon as one step gives it)."""
    merged: Any = {}
    for schema in schemas:
        merged = merge_schemas(merged, schema, lossy=lossy)
        if merged is None or merged is False:
            return merged
    return merged
