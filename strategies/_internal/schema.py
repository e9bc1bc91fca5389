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
as likely values). Everything else (``not``, ``if``, ``patternProperties``, ``contains`` ...) and
every native attempt that cannot be verified falls back to hypothesis-jsonschema through
``source.pool``: a deterministic, simplest-first pool of values drawn once per subschema.

Shrinking: choice 0 is always the simplest option (shortest plain string, the integer closest to
0, the first enum value, optional properties absent, the fewest items), so a zeroed or truncated
choice sequence still yields a valid, minimal value.
"""

from __future__ import annotations

import threading
import ipaddress
import json
import math
from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, Optional

from strategies._internal.regex import UnsupportedPattern, compile_pattern
from strategies._internal.source import ReplaySource, RandomSource, Source
from strategies.errors import InvalidSchema
from strategies.json_schemas import (
    ANNOTATIONS, escape_pointer_token, ignores_ref_siblings, merge_schemas, normalize_local,
    normalize_openapi, resolve_pointer, validator_class,
)
from strategies.json_values import JSON_TYPES, canonical, copy_json

__all__ = ["Node", "compile_schema", "compile_tool", "tool_arguments", "unsupported_tools",
           "validator_for_schema", "tool_validator", "normalize_openapi"]

#: Recursive $refs are followed at most this deep before containers choose non-recursive options.
MAX_REF_DEPTH = 3
#: Hard limit for schemas that force recursion (a required recursive property): a schema bug.
HARD_REF_DEPTH = 40
#: Values drawn from hypothesis-jsonschema for one fallback subschema.
POOL_EXAMPLES = 60
#: Native attempts before a verified node uses its fallback.
ATTEMPTS = 8
#: Probability that an optional property is present.
OPTIONAL_P = 0.5
#: Probability of extra keys where additionalProperties is explicitly true or a schema.
EXTRA_KEYS_P = 0.04
#: Probability of using a schema's default/examples value.
LIKELY_P = 0.1


# Keywords the native compiler does not implement: their presence sends the subschema to the fallback.
FALLBACK_KEYWORDS = frozenset({
    "not", "if", "then", "else", "patternProperties", "propertyNames", "dependentRequired",
    "dependentSchemas", "dependencies", "contains", "minContains", "maxContains", "unevaluatedProperties",
    "unevaluatedItems", "$dynamicRef", "$recursiveRef",
})
_STRING_KEYS = {"minLength", "maxLength", "pattern", "format"}
_NUMBER_KEYS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
_ARRAY_KEYS = {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems"}
_OBJECT_KEYS = {"properties", "required", "additionalProperties", "minProperties", "maxProperties"}


class _Problem(Exception):
    """Internal: a subschema cannot be generated; converted to InvalidSchema at the API boundary."""

    def __init__(self, message: str, pointer: str):
        super().__init__(message)
        self.message, self.pointer = message, pointer


class _Unsat(_Problem):
    """The subschema admits no value (e.g. ``false``, an empty enum, disjoint types)."""


# --------------------------------------------------------------------------------------------------
# Realistic text. Index 0 of every list is the simplest entry (what shrinking converges to).

_WORDS = ["a", "Paris", "London", "New York", "Tokyo", "Berlin", "San Francisco", "São Paulo", "Zürich",
          "Xi'an", "北京", "Москва", "Kraków", "Reykjavík", "O'Brien", "Dr. Smith", "meeting", "quarterly report",
          "hello", "weather", "tomorrow", "lunch", "project update", "Q3 budget", "café", "naïve", "résumé",
          "München", "Côte d'Ivoire", "Saint-Étienne", "Ho Chi Minh City", "Los Angeles", "Rio de Janeiro",
          "東京", "서울", "القاهرة", "Tel Aviv-Yafo", "main", "feature/login", "README.md", "user_42", "ACME Corp."]
_SENTENCES = [
    "Hi", "I'm looking for a quiet room.", "Please send the report by Friday.",
    "Can you check the weather in Xi'an?", 'She said "hello" and left.', "Meeting moved to 3pm, see you there!",
    "Don't forget: bring the slides.", "Use C:\\Users\\me\\notes.txt as the path.",
    "Line one\nLine two", "Tabs\tand\tspaces", "Price: €100 (incl. VAT)", "Let's meet at O'Hare.",
    "The JSON was {\"a\": 1}, not [1, 2].", "Results: a, b, c}", "Thanks 🙏 see you soon 😀",
    "北京欢迎你", "Ça va? Très bien, merci.", "Quote ' and double \" and backslash \\ all at once",
]
_TRICKY = [
    "'", "O'Brien", "Xi'an", "I'm", '"', 'say "hi"', "\\", "a\\b", "C:\\temp\\new", "a, }", "a, ]", "}{", "]",
    "[1, 2]", '{"a": 1}', "{}", "null", "true", "1e5", "", " ", "\n", "line1\nline2", "\t", "\r\n", "é", "北京",
    "😀", "👩‍💻", "🇫🇷", "\u2028", "\u00a0", "\x00", "\x1b[0m", "\\u0041", "\\n", "</tool_call>", "```json",
    "<|python_tag|>", "[TOOL_CALLS]", "Action: x", "&amp;", "%s", "${HOME}", "a" * 64,
]
_SOUP = "abcXYZ019 '\"\\,:;{}[]()<>/\n\t\r\x00\x7féüß€北京😀\u2028\u00a0-_.!?"
_FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt "
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_EXTRA_KEYS = ["extra", "note", "metadata", "comment", "x_debug", "tags", "source", "id"]
_FREE_KEYS = ["key", "name", "value", "id", "type", "note", "count", "enabled", "tags", "label"]


def _fit_length(text: str, lo: int, hi: Optional[int]) -> str:
    """Pad or truncate to [lo, hi] code points (what ``minLength``/``maxLength`` count)."""
    n = len(text)
    if n < lo:
        need = lo - n
        if not text:  # the shrink target: "a", "aa", ...
            return "a" * need if hi is None or need <= hi else "a" * hi
        filler = _FILLER * (need // len(_FILLER) + 1)
        text = text + filler[:need]
    if hi is not None and len(text) > hi:
        text = text[:hi]
    return text


# --------------------------------------------------------------------------------------------------
# Nodes

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
            raise _Unsat("no integer satisfies the bounds and multipleOf", "")
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
            raise _Unsat("the numeric bounds admit no value", "")
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
                raise _Unsat("no number satisfies the bounds and multipleOf", "")
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
            raise _Unsat("cannot find a number satisfying multipleOf within the bounds", "")
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
        raise _Unsat("the numeric bounds admit no value", "")

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


class StringNode(Node):
    """Realistic strings: plain letters, words and names, sentences, parser-hostile text, soup."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: int = 0, hi: Optional[int] = None):
        self.lo, self.hi = lo, hi

    def generate(self, source: Source) -> Any:
        kind = source.weighted((0.2, 0.35, 0.15, 0.2, 0.1))
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
        else:
            text = "".join(_SOUP[source.integer(0, len(_SOUP) - 1)] for _ in range(source.integer(1, 12)))
        if self.lo or self.hi is not None:
            text = _fit_length(text, self.lo, self.hi)
        return text


def _hex(source: Source, digits: int) -> str:
    return format(source.integer(0, 16 ** digits - 1), f"0{digits}x")


def _date(source: Source) -> str:
    year, month = source.integer(2000, 2035), source.integer(1, 12)
    days = (31, 29 if year % 4 == 0 else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    return f"{year:04d}-{month:02d}-{source.integer(1, days):02d}"


def _time(source: Source) -> str:
    return f"{source.integer(0, 23):02d}:{source.integer(0, 59):02d}:{source.integer(0, 59):02d}"


_ZONES = ["Z", "+00:00", "+02:00", "-05:00", ".123Z", ".5+05:30"]
_DOMAINS = ["example.com", "example.org", "mail.example.co.uk", "acme.io", "xn--mnchen-3ya.de"]
_LOCALS = ["a", "john.doe", "o'brien", "jane+travel", "info", "first_last", "x.y.z"]
_HOSTS = ["a.com", "example.com", "api.example.org", "localhost", "my-host-1.internal", "sub.domain.example.net"]
_PATHS = ["", "/", "/search", "/api/v1/items/42", "/docs/index.html", "/path/with%20space", "/a/b?q=1&lang=fr",
          "/files/report.pdf#page=2"]


def _format_generators() -> dict[str, Callable[[Source], str]]:
    def email(s: Source) -> str:
        return f"{_LOCALS[s.integer(0, len(_LOCALS) - 1)]}@{_DOMAINS[s.integer(0, len(_DOMAINS) - 1)]}"

    def uri(s: Source) -> str:
        scheme = ("https", "http", "ftp")[s.weighted((0.8, 0.15, 0.05))]
        return f"{scheme}://{_HOSTS[s.integer(0, len(_HOSTS) - 1)]}{_PATHS[s.integer(0, len(_PATHS) - 1)]}"

    def uuid(s: Source) -> str:
        h = _hex(s, 12) + _hex(s, 12) + _hex(s, 8)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"

    def ipv4(s: Source) -> str:
        return ".".join(str(s.integer(0, 255)) for _ in range(4))

    def ipv6(s: Source) -> str:
        value = ipaddress.IPv6Address(s.integer(0, 2 ** 64 - 1) << 64 | s.integer(0, 2 ** 64 - 1))
        return value.compressed if s.boolean(0.7) else value.exploded

    def date_time(s: Source) -> str:
        return f"{_date(s)}T{_time(s)}{_ZONES[s.integer(0, len(_ZONES) - 1)]}"

    def duration(s: Source) -> str:
        return ("P1D", "PT5M", "P1Y2M3DT4H5M6S", "PT0.5S", "P2W")[s.integer(0, 4)]

    return {
        "date": _date, "time": _time, "date-time": date_time, "email": email, "idn-email": email,
        "uri": uri, "url": uri, "iri": uri, "uri-reference": uri, "iri-reference": uri,
        "uuid": uuid, "ipv4": ipv4, "ipv6": ipv6, "duration": duration,
        "hostname": lambda s: _HOSTS[s.integer(0, len(_HOSTS) - 1)],
        "idn-hostname": lambda s: ("a.com", "münchen.de", "例子.测试")[s.integer(0, 2)],
        "json-pointer": lambda s: ("", "/a", "/a/0", "/foo~1bar", "/m~0n")[s.integer(0, 4)],
        "relative-json-pointer": lambda s: ("0", "1/a", "0#")[s.integer(0, 2)],
        "regex": lambda s: ("a", "^[a-z]+$", r"\d{3}-\d{4}", "(foo|bar)?")[s.integer(0, 3)],
        "uri-template": lambda s: ("https://example.com/{id}", "/users/{user}/items{?q}")[s.integer(0, 1)],
    }


FORMAT_GENERATORS = _format_generators()


class CheckedNode(Node):
    """A native generator that is not valid by construction: verify, retry, then fall back."""

    __slots__ = ("inner", "check", "fallback")

    def __init__(self, inner: Callable[[Source], Any], check: Callable[[Any], bool], fallback: "PoolNode"):
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
                 fallback: Optional["PoolNode"]):
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
    __slots__ = ("required", "optional", "extra", "extra_names", "free", "lo", "hi", "declared")

    def __init__(self, required: list, optional: list, extra: Optional[Node], extra_names: list, free: bool,
                 lo: int, hi: Optional[int]):
        self.required, self.optional = required, optional  # [(key, node)], [(key, node, recursive)]
        self.extra, self.extra_names, self.free, self.lo, self.hi = extra, extra_names, free, lo, hi
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

    def __init__(self, nodes: list, others: Optional[list], fallback: "PoolNode", recursive: list):
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


def _draw_pool(schema: Any, validate: Callable[[Any], bool]) -> list:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis_jsonschema import from_schema

    try:
        strategy = from_schema(schema)
    except Exception as exc:  # hypothesis-jsonschema raises many types for unsupported schemas
        raise _Problem(f"hypothesis-jsonschema cannot generate it: {type(exc).__name__}: "
                       f"{str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": "), "") from None
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
            raise _Problem(f"hypothesis-jsonschema cannot generate it: {type(exc).__name__}", "") from None
    values.sort(key=lambda v: (len(json.dumps(v, ensure_ascii=False)), json.dumps(v, sort_keys=True)))
    return values


# --------------------------------------------------------------------------------------------------
# Validators

#: The jsonschema validator class for a schema (its ``$schema``, or the draft its keywords imply).
validator_for_schema = validator_class


def _make_validator(schema: Any, cls: Any) -> Callable[[Any], bool]:
    from jsonschema import FormatChecker

    return cls(schema, format_checker=FormatChecker()).is_valid


_VALIDATORS: dict[int, tuple[Any, Any]] = {}


def tool_validator(tool: Any) -> Any:
    """A cached jsonschema validator (with format checking) for ``tool``'s arguments schema."""
    from jsonschema import FormatChecker

    hit = _VALIDATORS.get(id(tool))
    if hit is None or hit[0] is not tool:
        schema = tool.schema
        hit = _VALIDATORS[id(tool)] = (tool, validator_for_schema(schema)(schema, format_checker=FormatChecker()))
    return hit[1]


# --------------------------------------------------------------------------------------------------
# The compiler

def _realistic_for_pattern(raw: Callable[[Source], str], check: Callable[[str], bool]) -> Callable[[Source], str]:
    """Prefer realistic values when a known format fits the pattern (a date pattern gets real dates,
    an email pattern real addresses); the regex walk stays the simplest (choice 0) alternative."""
    fitting = [gen for gen in FORMAT_GENERATORS.values()
               if all(check(gen(RandomSource(seed))) for seed in range(8)) and check(gen(ReplaySource(())))]
    if not fitting:
        return raw
    gen = fitting[0]

    def generate(source: Source) -> str:
        return gen(source) if source.boolean(0.7) else raw(source)

    return generate


class _Compiler:
    def __init__(self, root: Any):
        self.root = root
        self.cls = validator_for_schema(root)
        self.modern = not ignores_ref_siblings(root)
        self.in_progress: dict[str, RefNode] = {}
        self.used_back: set[str] = set()
        self.memo: dict[str, tuple[Node, bool]] = {}
        self.back_edges = 0
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
            except _Problem as problem:
                raise _Problem(problem.message, pointer) from None
            if not values:
                raise _Problem("hypothesis-jsonschema found no value for this subschema", pointer)
        return node

    def child(self, schema: Any, pointer: str) -> tuple[Node, bool]:
        before = self.back_edges
        node = self.compile(schema, pointer)
        return node, self.back_edges > before

    def deref(self, schema: Any, pointer: str, depth: int = 0) -> Any:
        """Inline top-level $refs (for merging); recursive ones cannot be inlined."""
        while isinstance(schema, Mapping) and "$ref" in schema:
            if depth > 20:
                raise _Problem("$ref chain too deep to merge", pointer)
            ref = schema["$ref"]
            try:
                target = resolve_pointer(self.root, ref)
            except (KeyError, IndexError, ValueError):
                raise _Problem(f"$ref {ref!r} does not resolve", pointer) from None
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            if target is True:
                target = {}
            if target is False:
                return False
            schema = merge_schemas(target, rest) if (self.modern and set(rest) - ANNOTATIONS) else target
            depth += 1
        return schema

    # -- main entry -------------------------------------------------------------------------------
    def compile(self, schema: Any, pointer: str) -> Node:
        if schema is True:
            return AnyNode()
        if schema is False:
            raise _Unsat("the schema is false: no value is allowed", pointer)
        if not isinstance(schema, Mapping):
            raise _Problem(f"schema must be an object or a boolean, got {type(schema).__name__}", pointer)
        if "$ref" in schema:
            return self.compile_ref(schema, pointer)
        keys = set(schema)
        if keys & FALLBACK_KEYWORDS:
            return self.pool(schema, pointer, eager=True)
        if "allOf" in schema:
            merged: Any = {k: v for k, v in schema.items() if k != "allOf"}
            for i, sub in enumerate(schema["allOf"]):
                try:
                    sub = self.deref(sub, f"{pointer}/allOf/{i}")
                except _Problem:
                    return self.pool(schema, pointer, eager=True)
                merged = merge_schemas(merged, sub)
                if merged is None:
                    return self.pool(schema, pointer, eager=True)
                if merged is False:
                    raise _Unsat("allOf branches contradict each other", pointer)
            return self.compile(merged, pointer)
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

    def compile_ref(self, schema: Mapping, pointer: str) -> Node:
        ref = schema["$ref"]
        if not isinstance(ref, str):
            raise _Problem("$ref must be a string", pointer)
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS}
        if siblings and self.modern:
            try:
                target = self.deref(schema, pointer)
            except _Problem:
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
        except (KeyError, IndexError, ValueError):
            raise _Problem(f"$ref {ref!r} does not resolve", pointer) from None
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

    def compile_union(self, schema: Mapping, pointer: str) -> Node:
        keyword = "anyOf" if "anyOf" in schema else "oneOf"
        base = {k: v for k, v in schema.items() if k != keyword}
        branches = schema[keyword]
        if not isinstance(branches, list) or not branches:
            raise _Problem(f"{keyword} must be a non-empty list of schemas", pointer)
        nodes, recursive, kept, merged_list = [], [], [], []
        for i, branch in enumerate(branches):
            bp = f"{pointer}/{keyword}/{i}"
            is_ref = isinstance(branch, Mapping) and "$ref" in branch
            if set(base) - ANNOTATIONS:
                try:
                    merged = merge_schemas(base, self.deref(branch, bp))
                except _Problem:
                    merged = None
                if merged is None:
                    return self.pool(schema, pointer, eager=True)
            else:
                merged = branch
            if merged is False:
                continue
            try:
                node, rec = self.child(merged, bp)
            except _Unsat:
                continue
            nodes.append(node)
            recursive.append(rec or is_ref and branch.get("$ref") in self.in_progress)
            kept.append(i)
            merged_list.append(merged)
        if not nodes:
            raise _Unsat(f"no {keyword} branch admits a value", pointer)
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
        return OneOfNode(nodes, others, fallback, recursive)

    def deref_safe(self, schema: Any) -> Any:
        try:
            return self.deref(schema, "")
        except _Problem:
            return schema

    def compile_plain(self, schema: Mapping, pointer: str) -> Node:
        schema = normalize_local(schema)
        if "const" in schema or "enum" in schema:
            values = [schema["const"]] if "const" in schema else schema["enum"]
            if not isinstance(values, list):
                raise _Problem("enum must be a list", pointer)
            rest = {k: v for k, v in schema.items() if k not in ANNOTATIONS and k not in ("enum", "const")}
            if rest:
                check = self.validator(schema)
                values = [v for v in values if check(v)]
            if not values:
                raise _Unsat("no enum/const value satisfies the schema", pointer)
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
            except _Unsat:
                if len(types) == 1:
                    raise
                continue
            weights.append(0.12 if kind == "null" else 1.0)
        if not nodes:
            raise _Unsat("no listed type admits a value", pointer)
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
        raise _Problem(f"{kind!r} is not a JSON type (expected one of {', '.join(JSON_TYPES)})", pointer + "/type")

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
        except _Unsat as exc:
            raise _Unsat(exc.message, pointer) from None

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
            except _Unsat as exc:
                raise _Unsat(exc.message, pointer) from None
        try:
            return NumberNode(lo, hi, xlo, xhi, step)
        except _Unsat as exc:
            raise _Unsat(exc.message, pointer) from None

    def compile_string(self, schema: Mapping, pointer: str) -> Node:
        lo, hi = schema.get("minLength", 0), schema.get("maxLength")
        if hi is not None and lo > hi:
            raise _Unsat("minLength is greater than maxLength", pointer)
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
            raw = _realistic_for_pattern(raw, check)
        # Probe at compile time: the native walk must satisfy the zero sequence and most seeds,
        # otherwise the fallback pool is the generator.
        if not check(raw(ReplaySource(()))) or sum(check(raw(RandomSource(s))) for s in range(24)) < 12:
            return self.pool(sub, pointer, eager=True)
        return CheckedNode(raw, check, self.pool(sub, pointer, eager=False))

    def compile_array(self, schema: Mapping, pointer: str) -> Node:
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        prefix_schemas = schema.get("prefixItems", [])
        items = schema.get("items", True)
        prefix, rec_items = [], False
        for i, sub in enumerate(prefix_schemas):
            try:
                node, rec = self.child(sub, f"{pointer}/prefixItems/{i}")
            except _Unsat:
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
        except _Unsat:
            items_node = None
        if items_node is None:
            cap = len(prefix)
            hi = cap if hi is None else min(hi, cap)
        if hi is None:
            hi = lo + 10
        if lo > hi:
            raise _Unsat("minItems cannot be reached", pointer)
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
            except _Unsat:
                additional = False
        for key, sub in props.items():
            kp = f"{pointer}/properties/{escape_pointer_token(key)}"
            try:
                node, rec = self.child(sub, kp)
            except _Unsat:
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
                    raise _Unsat(f"required property {key!r} is not allowed by additionalProperties false",
                                 pointer)
                req_nodes.append((key, additional_node or AnyNode()))
        # keep schema order: required ones first would be unrealistic, so sort by property order
        order = {k: i for i, k in enumerate(list(props) + required)}
        req_nodes.sort(key=lambda kv: order.get(kv[0], 0))
        lo, hi = schema.get("minProperties", 0), schema.get("maxProperties")
        if hi is not None and len(req_nodes) > hi:
            raise _Unsat("more required properties than maxProperties", pointer)
        # An object with no "properties" keyword and no additionalProperties is free-form (e.g. a
        # "metadata" argument): generate a few keys. "properties": {} means no arguments.
        free = "properties" not in schema and additional is None
        extra = None
        if additional is True or free:
            extra = AnyNode()
        elif additional_node is not None:
            extra = additional_node
        names = [n for n in (_FREE_KEYS if free else _EXTRA_KEYS) if n not in props] or ["extra_key"]
        if extra is None and lo > len(req_nodes) + len(opt_nodes):
            raise _Unsat("minProperties cannot be reached", pointer)
        node = ObjectNode(req_nodes, opt_nodes, extra, names, free, lo, hi)
        node.declared = frozenset(props) | frozenset(required)
        return node


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
    except _Problem as problem:
        raise InvalidSchema(problem.message, pointer=problem.pointer or pointer) from None
    except RecursionError:
        raise InvalidSchema("schema nesting too deep to compile", pointer=pointer) from None


_TOOL_CACHE: dict[tuple[str, int], tuple[Any, Node]] = {}


def compile_tool(tool: Any) -> Node:
    """The compiled generator of ``tool``'s arguments dict (cached per tool object)."""
    key = (tool.name, id(tool))
    hit = _TOOL_CACHE.get(key)
    if hit is not None and hit[0] is tool:
        return hit[1]
    schema = tool.schema
    if schema is True or (isinstance(schema, Mapping) and "type" not in schema and "$ref" not in schema
                          and not (set(schema) & {"anyOf", "oneOf", "allOf", "enum", "const"})):
        schema = dict(schema) if isinstance(schema, Mapping) else {}
        schema["type"] = "object"
    pointer = getattr(tool, "pointer", "") or ""
    compiler = _Compiler(schema)
    try:
        node = compiler.compile(schema, pointer)
    except _Problem as problem:
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
