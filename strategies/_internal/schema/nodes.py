"""The nodes a schema compiles to: each ``generate(source)`` returns a fresh JSON value valid for it.

All schema walking happened at compile time; a node only draws choices and builds values. Choice 0
is always the simplest option (shortest plain string, the integer closest to 0, the first enum value,
optional properties absent, the fewest items), so a zeroed or truncated choice sequence still yields
a valid, minimal value.
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction
from typing import Any, Callable, Optional

from strategies._internal.schema.banks import (
    _FREE_KEYS, _HOSTILE, _LOWER, _SENTENCES, _SOUP, _TRICKY, _WORDS, fit_length,
)
from strategies._internal.schema.problems import Unsat
from strategies._internal.source import Source
from strategies.errors import InvalidSchema
from strategies.json_values import canonical, copy_json

#: Recursive $refs are followed at most this deep before containers choose non-recursive options.
MAX_REF_DEPTH = 3
#: Hard limit for schemas that force recursion (a required recursive property): a schema bug.
HARD_REF_DEPTH = 40
#: Native attempts before a verified node uses its fallback.
ATTEMPTS = 8
#: Probability that an optional property is present.
OPTIONAL_P = 0.5
#: Probability of extra keys where additionalProperties is explicitly true or a schema.
EXTRA_KEYS_P = 0.04
#: Probability of using a schema's default/examples value.
LIKELY_P = 0.1


class Node:
    """A compiled (sub)schema: ``generate(source)`` returns a fresh JSON value valid for it."""

    __slots__ = ()

    def generate(self, source: Source) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _copy(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return copy_json(value)
    return value


class ConstNode(Node):
    __slots__ = ("value", "mutable")

    def __init__(self, value: Any):
        self.value, self.mutable = value, isinstance(value, (dict, list))

    def generate(self, source: Source) -> Any:
        source.integer(0, 0)  # keep one choice per value so recorded sequences line up
        return copy_json(self.value) if self.mutable else self.value


class EnumNode(Node):
    __slots__ = ("values", "hi", "mutable")

    def __init__(self, values: list):
        self.values, self.hi = values, len(values) - 1
        self.mutable = any(isinstance(v, (dict, list)) for v in values)

    def generate(self, source: Source) -> Any:
        value = self.values[source.integer(0, self.hi)]
        return copy_json(value) if self.mutable else value


class NullNode(Node):
    __slots__ = ()

    def generate(self, source: Source) -> Any:
        return None


class BoolNode(Node):
    __slots__ = ()

    def generate(self, source: Source) -> Any:
        return source.boolean(0.5)


class IntegerNode(Node):
    """Integers ``k * step`` for k in [klo, khi]; mostly small, near the value closest to 0."""

    __slots__ = ("klo", "khi", "step", "simple", "specials")

    def __init__(self, lo: Optional[int], hi: Optional[int], step: int = 1):
        self.step = step
        self.klo = None if lo is None else -((-lo) // step)  # ceil
        self.khi = None if hi is None else hi // step  # floor
        if self.klo is not None and self.khi is not None and self.klo > self.khi:
            raise Unsat("no integer satisfies the bounds and multipleOf", "")
        self.simple = self._clamp(0)
        specials = [2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 1, 2 ** 63, -(2 ** 63) - 1, 10 ** 20]
        self.specials = sorted({self._clamp(s // step) for s in specials}, key=abs)

    def _clamp(self, k: int) -> int:
        if self.klo is not None and k < self.klo:
            return self.klo
        if self.khi is not None and k > self.khi:
            return self.khi
        return k

    def generate(self, source: Source) -> Any:
        kind = source.weighted((0.6, 0.28, 0.08, 0.04))
        if kind <= 1:
            offset = source.integer(0, 10 if kind == 0 else 1000)
            if source.boolean(0.2):
                offset = -offset
            k = self._clamp(self.simple + offset)
        elif kind == 2:
            k = self.klo if self.klo is not None and (self.khi is None or source.boolean(0.5)) else \
                (self.khi if self.khi is not None else self.simple)
        else:
            k = self.specials[source.integer(0, len(self.specials) - 1)]
        return k * self.step


def _inside(lo: Optional[float], hi: Optional[float], xlo: bool, xhi: bool, value: float) -> bool:
    if lo is not None and (value < lo or (xlo and value == lo)):
        return False
    if hi is not None and (value > hi or (xhi and value == hi)):
        return False
    return True


def _decimals(step: float) -> int:
    text = repr(float(step))
    if "e-" in text:
        return int(text.split("e-")[1]) + len(text.split("e")[0].split(".")[-1])
    return len(text.split(".")[1]) if "." in text else 0


def _multiple_ok(value: float, step: float) -> bool:
    """The exact test ``jsonschema`` applies for a float ``multipleOf``."""
    try:
        quotient = value / step
        return int(quotient) == quotient
    except (OverflowError, ValueError):
        return (Fraction(value) / Fraction(step)).denominator == 1


class NumberNode(Node):
    """Numbers (ints and short decimals) within bounds; the simplest is the value closest to 0."""

    __slots__ = ("lo", "hi", "xlo", "xhi", "simple", "step", "digits", "klo", "khi")

    def __init__(self, lo: Optional[float], hi: Optional[float], xlo: bool, xhi: bool,
                 step: Optional[float] = None):
        self.lo, self.hi, self.xlo, self.xhi, self.step = lo, hi, xlo, xhi, step
        if lo is not None and hi is not None and (lo > hi or (lo == hi and (xlo or xhi))):
            raise Unsat("the numeric bounds admit no value", "")
        self.digits = _decimals(step) if step else 2
        self.klo = self.khi = None
        if step:
            self.klo = None if lo is None else math.ceil(lo / step)
            self.khi = None if hi is None else math.floor(hi / step)
            if self.klo is not None and not self._ok(self._k(self.klo)):
                self.klo += 1
            if self.khi is not None and not self._ok(self._k(self.khi)):
                self.khi -= 1
            if self.klo is not None and self.khi is not None and self.klo > self.khi:
                raise Unsat("no number satisfies the bounds and multipleOf", "")
        self.simple = self._find_simple()

    def _k(self, k: int) -> Any:
        value = round(k * self.step, self.digits)
        if value == int(value) and abs(value) < 2 ** 53:
            value = int(value)
        return value

    def _ok(self, value: Any) -> bool:
        if not _inside(self.lo, self.hi, self.xlo, self.xhi, value):
            return False
        return self.step is None or _multiple_ok(value, self.step)

    def _find_simple(self) -> Any:
        if self.step:
            k = 0
            if self.klo is not None and k < self.klo:
                k = self.klo
            if self.khi is not None and k > self.khi:
                k = self.khi
            for cand in (k, k + 1, k - 1):
                if self._ok(self._k(cand)):
                    return self._k(cand)
            raise Unsat("cannot find a number satisfying multipleOf within the bounds", "")
        lo, hi = self.lo, self.hi
        candidates = [0]
        if lo is not None:
            candidates += [math.floor(lo) + 1, lo, lo + (1 if hi is None else min(1, (hi - lo) / 2))]
        if hi is not None:
            candidates += [math.ceil(hi) - 1, hi, hi - (1 if lo is None else min(1, (hi - lo) / 2))]
        if lo is not None and hi is not None:
            candidates.append((lo + hi) / 2)
        for cand in candidates:
            if self._ok(cand):
                return cand
        raise Unsat("the numeric bounds admit no value", "")

    def generate(self, source: Source) -> Any:
        kind = source.weighted((0.45, 0.35, 0.12, 0.08))
        if self.step:
            k0 = round(self.simple / self.step)
            if kind == 0:
                k = k0 + source.integer(0, 10)
            elif kind == 1:
                k = k0 + source.integer(0, 1000) * (-1 if source.boolean(0.2) else 1)
            elif kind == 2 and self.klo is not None and self.khi is not None:
                k = source.integer(self.klo, self.khi)
            else:
                k = self.klo if self.klo is not None else (self.khi if self.khi is not None else k0)
            if self.klo is not None and k < self.klo:
                k = self.klo
            if self.khi is not None and k > self.khi:
                k = self.khi
            value = self._k(k)
            return value if self._ok(value) else self.simple
        if kind == 0:
            value: Any = int(self.simple) + source.integer(0, 10)
        elif kind == 1:
            whole = int(self.simple) + source.integer(0, 100) * (-1 if source.boolean(0.2) else 1)
            value = round(whole + source.integer(1, 99) / 100.0, 2)
        elif kind == 2 and self.lo is not None and self.hi is not None:
            value = round(self.lo + (self.hi - self.lo) * source.integer(0, 10000) / 10000.0, 4)
        else:
            value = (0.5, 1e-7, 3.141592653589793, 1e21, -0.0, 1.5e300, 2.0 ** 53 + 2)[source.integer(0, 6)]
        if isinstance(value, float) and value == int(value) and abs(value) < 2 ** 53 and kind == 0:
            value = int(value)
        return value if self._ok(value) else self.simple


#: Weights of the string kinds: letters, words, sentences, tricky, soup, hostile to post-processing.
_STRING_KINDS = (0.18, 0.3, 0.12, 0.15, 0.07, 0.18)


class StringNode(Node):
    """Realistic strings: plain letters, words and names, sentences, parser-hostile text, values that
    break naive post-processing (drawn often, so a parser that "cleans" strings is caught), soup."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: int = 0, hi: Optional[int] = None):
        self.lo, self.hi = lo, hi

    def generate(self, source: Source) -> Any:
        kind = source.weighted(_STRING_KINDS)
        if kind == 0:
            text = "".join(_LOWER[source.integer(0, 25)] for _ in range(source.integer(0, 8)))
        elif kind == 1:
            text = " ".join(_WORDS[source.integer(0, len(_WORDS) - 1)] for _ in range(source.integer(1, 3)))
        elif kind == 2:
            text = _SENTENCES[source.integer(0, len(_SENTENCES) - 1)]
        elif kind == 3:
            text = _TRICKY[source.integer(0, len(_TRICKY) - 1)]
            if source.boolean(0.4):
                text = _WORDS[source.integer(0, len(_WORDS) - 1)] + text
            if source.boolean(0.3):
                text = text + _WORDS[source.integer(0, len(_WORDS) - 1)]
        elif kind == 4:
            text = "".join(_SOUP[source.integer(0, len(_SOUP) - 1)] for _ in range(source.integer(1, 12)))
        else:
            text = _HOSTILE[source.integer(0, len(_HOSTILE) - 1)]
            if source.boolean(0.3):
                text = _WORDS[source.integer(0, len(_WORDS) - 1)] + " " + text
        if self.lo or self.hi is not None:
            text = fit_length(text, self.lo, self.hi)
        return text


class CheckedNode(Node):
    """A native generator that is not valid by construction: verify, retry, then fall back."""

    __slots__ = ("inner", "check", "fallback")

    def __init__(self, inner: Callable[[Source], Any], check: Callable[[Any], bool], fallback: Node):
        self.inner, self.check, self.fallback = inner, check, fallback

    def generate(self, source: Source) -> Any:
        inner, check = self.inner, self.check
        for _ in range(ATTEMPTS):
            value = inner(source)
            if check(value):
                return value
        return self.fallback.generate(source)


class ArrayNode(Node):
    __slots__ = ("prefix", "items", "lo", "hi", "unique", "rec_items", "fallback")

    def __init__(self, prefix: list, items: Optional[Node], lo: int, hi: int, unique: bool, rec_items: bool,
                 fallback: Optional[Node]):
        self.prefix, self.items, self.lo, self.hi = prefix, items, lo, hi
        self.unique, self.rec_items, self.fallback = unique, rec_items, fallback

    def generate(self, source: Source) -> Any:
        lo, hi = self.lo, self.hi
        if self.rec_items and _DEPTH.value >= MAX_REF_DEPTH:
            n = lo
        else:
            n = source.integer(lo, min(hi, lo + 3)) if not source.boolean(0.05) else source.integer(lo, hi)
        prefix, items, out = self.prefix, self.items, []
        if not self.unique:
            for i in range(n):
                out.append(prefix[i].generate(source) if i < len(prefix) else items.generate(source))
            return out
        seen = set()
        for i in range(n):
            node = prefix[i] if i < len(prefix) else items
            for _ in range(ATTEMPTS):
                value = node.generate(source)
                key = canonical(value)
                if key not in seen:
                    seen.add(key)
                    out.append(value)
                    break
            else:
                if len(out) >= lo and i >= len(prefix):
                    return out
                return self.fallback.generate(source)
        return out


class ObjectNode(Node):
    __slots__ = ("required", "optional", "extra", "extra_names", "free", "lo", "hi", "declared", "patterned")

    def __init__(self, required: list, optional: list, extra: Optional[Node], extra_names: list, free: bool,
                 lo: int, hi: Optional[int], patterned: tuple = ()):
        self.required, self.optional = required, optional  # [(key, node)], [(key, node, recursive)]
        self.extra, self.extra_names, self.free, self.lo, self.hi = extra, extra_names, free, lo, hi
        # patternProperties: (key generator with .generate(source), value node); keys a pattern makes
        self.patterned = patterned
        # extra keys must never collide with a declared property (its own schema would apply)
        self.declared = frozenset(k for k, _ in required) | frozenset(k for k, _, _ in optional)

    def generate(self, source: Source) -> Any:
        out = {key: node.generate(source) for key, node in self.required}
        deep = _DEPTH.value >= MAX_REF_DEPTH
        hi = self.hi
        for key, node, recursive in self.optional:
            if hi is not None and len(out) >= hi:
                break
            if recursive and deep:
                continue
            if source.boolean(OPTIONAL_P):
                out[key] = node.generate(source)
        if len(out) < self.lo:
            for key, node, recursive in self.optional:
                if len(out) >= self.lo:
                    break
                if key not in out:
                    out[key] = node.generate(source)
        patterned = self.patterned
        if patterned:
            count = source.integer(0, 2)
            if self.extra is None:  # nothing else can reach minProperties
                count = max(count, self.lo - len(out))
            if hi is not None:
                count = min(count, hi - len(out))
            for _ in range(count):
                keys, node = patterned[source.integer(0, len(patterned) - 1)]
                key = keys.generate(source)
                if key not in out and key not in self.declared:
                    out[key] = node.generate(source)
        extra = self.extra
        if extra is not None:
            names = self.extra_names
            if self.free:
                count = source.integer(0, 3)
            else:
                count = source.integer(1, 2) if source.boolean(EXTRA_KEYS_P) else 0
            count = max(count, self.lo - len(out))
            if hi is not None:
                count = min(count, hi - len(out))
            for i in range(count):
                name = names[source.integer(0, len(names) - 1)]
                suffix = 2
                while name in out or name in self.declared:  # never collide: keeps minProperties exact
                    name = f"{names[0]}_{i + suffix}"
                    suffix += 1
                out[name] = extra.generate(source)
        return out


class UnionNode(Node):
    """One of several alternatives (anyOf, type lists); index 0 is the simplest."""

    __slots__ = ("nodes", "weights", "safe")

    def __init__(self, nodes: list, weights: list, recursive: list):
        self.nodes, self.weights = nodes, weights
        self.safe = [i for i, rec in enumerate(recursive) if not rec] if any(recursive) else None

    def generate(self, source: Source) -> Any:
        if self.safe and _DEPTH.value >= MAX_REF_DEPTH:
            return self.nodes[self.safe[source.integer(0, len(self.safe) - 1)]].generate(source)
        return self.nodes[source.weighted(self.weights)].generate(source)


class OneOfNode(Node):
    """A value of branch i that matches no other branch (checked with jsonschema unless disjoint).

    ``others[k]`` holds the validators of every original branch except the one node k came from.
    """

    __slots__ = ("nodes", "others", "fallback", "safe")

    def __init__(self, nodes: list, others: Optional[list], fallback: Node, recursive: list):
        self.nodes, self.others, self.fallback = nodes, others, fallback
        self.safe = [i for i, rec in enumerate(recursive) if not rec] if any(recursive) else None

    def generate(self, source: Source) -> Any:
        choices = self.safe if self.safe and _DEPTH.value >= MAX_REF_DEPTH else range(len(self.nodes))
        for _ in range(ATTEMPTS):
            i = choices[source.integer(0, len(choices) - 1)]
            value = self.nodes[i].generate(source)
            if self.others is None or not any(valid(value) for valid in self.others[i]):
                return value
        return self.fallback.generate(source)


class LikelyNode(Node):
    """Sometimes the schema's own default/examples: values models actually produce."""

    __slots__ = ("inner", "likely")

    def __init__(self, inner: Node, likely: list):
        self.inner, self.likely = inner, likely

    def generate(self, source: Source) -> Any:
        if source.boolean(LIKELY_P):
            return _copy(self.likely[source.integer(0, len(self.likely) - 1)])
        return self.inner.generate(source)


class _Depth(threading.local):
    """The recursive-$ref depth of the generation in progress, per thread (the campaign generates
    in a background thread while the shrinker replays recipes in the main one)."""

    value = 0


_DEPTH = _Depth()


class RefNode(Node):
    """A recursive ``$ref``: counts depth so containers stop recursing past MAX_REF_DEPTH."""

    __slots__ = ("target", "ref")

    def __init__(self, ref: str):
        self.ref, self.target = ref, None

    def generate(self, source: Source) -> Any:
        if _DEPTH.value >= HARD_REF_DEPTH:
            raise InvalidSchema(f"$ref {self.ref!r} recurses without a way out")
        _DEPTH.value += 1
        try:
            return self.target.generate(source)
        finally:
            _DEPTH.value -= 1

    def __repr__(self) -> str:
        return f"RefNode({self.ref!r})"


class AnyNode(Node):
    """Any simple JSON value (the empty schema / ``true``)."""

    __slots__ = ("nodes",)

    def __init__(self, depth: int = 0):
        scalars = [StringNode(), IntegerNode(None, None), BoolNode(), NullNode(), NumberNode(None, None, False, False)]
        self.nodes = scalars
        if depth < 1:
            inner = AnyNode(depth + 1)
            self.nodes = scalars + [
                ArrayNode([], inner, 0, 3, False, False, None),
                ObjectNode([], [], inner, _FREE_KEYS, True, 0, None),
            ]

    def generate(self, source: Source) -> Any:
        w = (0.35, 0.2, 0.1, 0.1, 0.1, 0.08, 0.07)[:len(self.nodes)]
        return self.nodes[source.weighted(w)].generate(source)
