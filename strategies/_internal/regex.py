"""Strings that match a JSON Schema ``pattern``, generated natively from the regex's parse tree.

Hypothesis's ``from_regex`` costs a Hypothesis draw per character; the campaign needs thousands of
valid strings per second, so a pattern is compiled ONCE (through ``re._parser``, the parser ``re``
itself uses) into a small tree of generator objects that draw from a :class:`Source`. Choice 0 is
always the simplest option (first alternative, first character of a class, fewest repetitions), so
a zeroed choice sequence yields the shortest plain match — that is what shrinking converges to.

The generated string is a *full* match of the pattern, which is enough because JSON Schema
``pattern`` is a search (``re.search``, exactly what ``jsonschema`` runs). Lookarounds and word
boundaries generate nothing: callers verify every string with :meth:`PatternGenerator.matches`
(plus their own length bounds) and fall back to hypothesis-jsonschema when the native walk cannot
satisfy them (see ``schema.py``).
"""

from __future__ import annotations

import re
import string
from typing import Any, Callable, Optional, Sequence

try:  # Python 3.11+
    from re import _constants as _c, _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

#: Extra repetitions drawn for an unbounded repeat (``*``, ``+``, ``{n,}``) beyond its minimum.
UNBOUNDED_EXTRA = 6
#: Bounded repeats with a larger span are capped at ``min + LARGE_SPAN`` so strings stay short.
LARGE_SPAN = 24

# Candidate characters for negated classes, ``.`` and ``\W``-like categories, simplest first:
# a plain letter is the shrink target; exotic characters are reachable but later in the order.
_UNIVERSE = (string.ascii_lowercase + string.ascii_uppercase + string.digits + " _-.,:;/@#'\"()[]{}!?+*=&%$\\|<>~^`"
             + "\t\n" + "éüßñçøå€£北京東😀ü")
_UNIVERSE = "".join(dict.fromkeys(_UNIVERSE))


class UnsupportedPattern(ValueError):
    """The pattern cannot be compiled by Python's ``re`` (so ``jsonschema`` cannot check it either)."""


class _Gen:
    __slots__ = ()

    def gen(self, source: Any, out: list, groups: dict) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class _Literal(_Gen):
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def gen(self, source: Any, out: list, groups: dict) -> None:
        out.append(self.text)


class _OneOf(_Gen):
    """One of a precomputed, simplest-first sequence of ``options``: index 0 is the shrink target."""

    __slots__ = ("options", "hi")

    def __init__(self, options: Sequence):
        self.options = options
        self.hi = len(options) - 1


class _Chars(_OneOf):
    """One character from a precomputed, simplest-first string."""

    __slots__ = ()

    def gen(self, source: Any, out: list, groups: dict) -> None:
        out.append(self.options[source.integer(0, self.hi)])


class _Ranges(_Gen):
    """One character from a union of code point ranges (too large to list), index 0 simplest."""

    __slots__ = ("ranges", "total")

    def __init__(self, ranges: list[tuple[int, int]]):
        self.ranges = ranges
        self.total = sum(hi - lo + 1 for lo, hi in ranges)

    def gen(self, source: Any, out: list, groups: dict) -> None:
        k = source.integer(0, self.total - 1)
        for lo, hi in self.ranges:
            size = hi - lo + 1
            if k < size:
                out.append(chr(lo + k))
                return
            k -= size


class _Seq(_Gen):
    __slots__ = ("items",)

    def __init__(self, items: list):
        self.items = items

    def gen(self, source: Any, out: list, groups: dict) -> None:
        for item in self.items:
            item.gen(source, out, groups)


class _Branch(_OneOf):
    """One alternative of ``a|b|c``, the first simplest."""

    __slots__ = ()

    def gen(self, source: Any, out: list, groups: dict) -> None:
        self.options[source.integer(0, self.hi)].gen(source, out, groups)


class _Repeat(_Gen):
    __slots__ = ("lo", "hi", "item")

    def __init__(self, lo: int, hi: int, item: _Gen):
        self.lo, self.hi, self.item = lo, hi, item

    def gen(self, source: Any, out: list, groups: dict) -> None:
        item = self.item
        for _ in range(source.integer(self.lo, self.hi)):
            item.gen(source, out, groups)


class _Group(_Gen):
    __slots__ = ("group", "item")

    def __init__(self, group: int, item: _Gen):
        self.group, self.item = group, item

    def gen(self, source: Any, out: list, groups: dict) -> None:
        start = len(out)
        self.item.gen(source, out, groups)
        groups[self.group] = "".join(out[start:])


class _GroupRef(_Gen):
    __slots__ = ("group",)

    def __init__(self, group: int):
        self.group = group

    def gen(self, source: Any, out: list, groups: dict) -> None:
        out.append(groups.get(self.group, ""))


class _GroupRefExists(_Gen):
    __slots__ = ("group", "yes", "no")

    def __init__(self, group: int, yes: _Gen, no: _Gen):
        self.group, self.yes, self.no = group, yes, no

    def gen(self, source: Any, out: list, groups: dict) -> None:
        (self.yes if self.group in groups else self.no).gen(source, out, groups)


_EMPTY = _Literal("")


def _category_test(category: Any) -> Callable[[str], bool]:
    C = _c
    table = {
        C.CATEGORY_DIGIT: lambda ch: ch.isdecimal(),
        C.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdecimal(),
        C.CATEGORY_SPACE: lambda ch: ch.isspace(),
        C.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
        C.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
        C.CATEGORY_NOT_WORD: lambda ch: not (ch.isalnum() or ch == "_"),
        C.CATEGORY_LINEBREAK: lambda ch: ch == "\n",
        C.CATEGORY_NOT_LINEBREAK: lambda ch: ch != "\n",
    }
    return table.get(category, lambda ch: False)


# What a positive category generates (ASCII, simplest first); negative ones filter the universe.
_CATEGORY_CHARS = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_WORD": string.ascii_lowercase + string.ascii_uppercase + string.digits + "_",
    "CATEGORY_SPACE": " \t\n",
}


def _is_surrogate(cp: int) -> bool:
    return 0xD800 <= cp <= 0xDFFF


def _class_gen(items: list, ignorecase: bool) -> _Gen:
    """A generator for one ``[...]`` class (or a category such as ``\\d``)."""
    negate = False
    ranges: list[tuple[int, int]] = []
    ordered: list[tuple[int, int]] = []  # what a positive class generates, in pattern order
    tests: list[Callable[[str], bool]] = []
    simple = True
    for op, av in items:
        if op is _c.NEGATE:
            negate = True
        elif op is _c.LITERAL:
            ranges.append((av, av))
            ordered.append((av, av))
        elif op is _c.RANGE:
            ranges.append(av)
            ordered.append(av)
        elif op is _c.CATEGORY:
            name = str(av)
            tests.append(_category_test(av))
            if name in _CATEGORY_CHARS:
                ordered.extend((ord(ch), ord(ch)) for ch in _CATEGORY_CHARS[name])
            else:
                simple = False
        else:  # CHARSET/BIGCHARSET only appear in compiled code, not in parse trees
            simple = False

    def member(ch: str) -> bool:
        cp = ord(ch)
        hit = any(lo <= cp <= hi for lo, hi in ranges) or any(t(ch) for t in tests)
        if not hit and ignorecase:
            hit = any(lo <= ord(x) <= hi for x in (ch.lower(), ch.upper()) for lo, hi in ranges)
        return hit != negate

    if negate or not simple:
        chars = "".join(ch for ch in _UNIVERSE if member(ch))
        if not chars:
            raise UnsupportedPattern("character class matches none of the generated characters")
        return _Chars(chars)
    # Positive class: literal ranges in pattern order (so [a-z] shrinks to "a"), surrogates removed.
    clean: list[tuple[int, int]] = []
    for lo, hi in ordered:
        if hi < 0xD800 or lo > 0xDFFF:
            clean.append((lo, hi))
        else:
            if lo < 0xD800:
                clean.append((lo, 0xD7FF))
            if hi > 0xDFFF:
                clean.append((0xE000, hi))
    total = sum(hi - lo + 1 for lo, hi in clean)
    if total <= 512:
        chars = "".join(chr(cp) for lo, hi in clean for cp in range(lo, hi + 1))
        chars = "".join(dict.fromkeys(chars))
        if not chars:
            raise UnsupportedPattern("empty character class")
        return _Chars(chars)
    return _Ranges(clean)


def _compile(parsed: Any, flags: int, max_length: Optional[int]) -> _Gen:
    items: list[_Gen] = []
    literal_run: list[str] = []

    def flush() -> None:
        if literal_run:
            items.append(_Literal("".join(literal_run)))
            literal_run.clear()

    ignorecase = bool(flags & re.IGNORECASE)
    dotall = bool(flags & re.DOTALL)
    for op, av in parsed:
        if op is _c.LITERAL:
            literal_run.append(chr(av))
            continue
        flush()
        if op is _c.NOT_LITERAL:
            chars = "".join(ch for ch in _UNIVERSE if ord(ch) != av
                            and not (ignorecase and ch.lower() == chr(av).lower()))
            items.append(_Chars(chars))
        elif op is _c.ANY:
            items.append(_Chars(_UNIVERSE if dotall else _UNIVERSE.replace("\n", "")))
        elif op is _c.IN:
            items.append(_class_gen(av, ignorecase))
        elif op is _c.BRANCH:
            items.append(_Branch([_compile(alt, flags, max_length) for alt in av[1]]))
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) or str(op) == "POSSESSIVE_REPEAT":
            lo, hi, sub = av
            if hi is _c.MAXREPEAT or hi >= _c.MAXREPEAT:
                extra = UNBOUNDED_EXTRA if max_length is None else min(UNBOUNDED_EXTRA, max(max_length - lo, 0))
                hi = lo + extra
            elif hi - lo > LARGE_SPAN:
                hi = lo + LARGE_SPAN
            items.append(_Repeat(lo, hi, _compile(sub, flags, max_length)))
        elif op is _c.SUBPATTERN:
            group, add_flags, del_flags, sub = av
            inner = _compile(sub, (flags | add_flags) & ~del_flags, max_length)
            items.append(_Group(group, inner) if group is not None else inner)
        elif str(op) == "ATOMIC_GROUP":
            items.append(_compile(av, flags, max_length))
        elif op is _c.GROUPREF:
            items.append(_GroupRef(av))
        elif op is _c.GROUPREF_EXISTS:
            group, yes, no = av
            items.append(_GroupRefExists(group, _compile(yes, flags, max_length),
                                         _compile(no, flags, max_length) if no else _EMPTY))
        elif op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            pass  # anchors, \b and lookarounds consume nothing; the caller verifies the result
        else:
            raise UnsupportedPattern(f"unsupported regex construct {op}")
    flush()
    if len(items) == 1:
        return items[0]
    return _Seq(items) if items else _EMPTY


class PatternGenerator:
    """Generates strings matching ``pattern`` (a full match, hence also a ``re.search`` match).

    ``max_length`` (the schema's ``maxLength``) caps unbounded repeats so the usual case fits.
    """

    __slots__ = ("pattern", "_root", "_search")

    def __init__(self, pattern: str, *, max_length: Optional[int] = None):
        try:
            compiled = re.compile(pattern)
            parsed = _p.parse(pattern, 0)
        except (re.error, OverflowError, RecursionError) as exc:
            raise UnsupportedPattern(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
        self.pattern = pattern
        self._search = compiled.search
        self._root = _compile(parsed, compiled.flags, max_length)

    def generate(self, source: Any) -> str:
        out: list[str] = []
        self._root.gen(source, out, {})
        return "".join(out)

    def matches(self, text: str) -> bool:
        return self._search(text) is not None

    def __repr__(self) -> str:
        return f"PatternGenerator({self.pattern!r})"


def compile_pattern(pattern: str, *, max_length: Optional[int] = None) -> PatternGenerator:
    """Compile ``pattern`` once; raises :class:`UnsupportedPattern` for invalid or unusable ones."""
    return PatternGenerator(pattern, max_length=max_length)
