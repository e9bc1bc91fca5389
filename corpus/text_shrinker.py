"""Shrinking raw model output: :func:`shrink_text`, for verdicts the text alone carries (crash,
hang, nondeterminism), with the predicate "fails with the same signature".

It proposes many candidates at once and keeps the best one that passed (:mod:`corpus.predicate`):
long runs of a repeated fragment collapsed by bisection, JSON documents in the text simplified in
place (their spans found by a small span parser after ``json.raw_decode`` accepted them), ddmin
over tokens then characters, then single deletions until none passes.
"""

from __future__ import annotations

import json
import re
from typing import Callable, Iterable, Optional

from corpus.predicate import DEFAULT_BATCH, Evaluator, TextTest, run_stages, shortlex, text_id


_TOKEN = re.compile(r"\w+|\s+|.", re.DOTALL)
#: a fragment of up to 32 characters repeated at least 4 times in a row
_RUN = re.compile(r"(.{1,32}?)\1{3,}", re.DOTALL)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_STRING_UNIT = re.compile(r"\\u[0-9a-fA-F]{4}|\\.|.", re.DOTALL)
_WS = " \t\n\r"
_WS_RUN = re.compile(f"[{_WS}]*")
#: raw_decode attempts that fail before the structure stage gives up looking for documents
_MAX_DECODE_ATTEMPTS = 2000
_MAX_DEPTH = 400
#: JSON values the structure stage edits per round (top-level values first)
_MAX_NODES = 5000
#: ddmin stops refining past this many chunks; the 1-minimality pass covers single deletions
_MAX_CHUNKS = 1024


def tokenize(text: str) -> list[str]:
    """Words, whitespace runs, and every other character alone; ``"".join`` gives ``text`` back."""
    return _TOKEN.findall(text)


class _Node:
    """A JSON value's span in the text; containers list their parts (key or item start, end, value)."""

    __slots__ = ("kind", "start", "end", "parts", "key")

    def __init__(self, kind: str, start: int, end: int):
        self.kind, self.start, self.end = kind, start, end
        self.parts: list[tuple[int, int, _Node]] = []
        self.key: Optional[_Node] = None  # for object members: the key's string node


class _SpanError(Exception):
    pass


def _skip(s: str, i: int) -> int:
    """The offset of the first non-whitespace character at or after ``i`` (``i`` past the end)."""
    return _WS_RUN.match(s, i).end() if i < len(s) else i


def _parse_string(s: str, i: int) -> _Node:
    if s[i] != '"':
        raise _SpanError(i)
    j, n = i + 1, len(s)
    while j < n and s[j] != '"':
        j += 2 if s[j] == "\\" else 1
    if j >= n:
        raise _SpanError(i)
    return _Node("str", i, j + 1)


def _parse_value(s: str, i: int, depth: int) -> _Node:
    """Spans of one JSON value at ``i``. The text was accepted by ``json.raw_decode`` first."""
    if depth > _MAX_DEPTH or i >= len(s):
        raise _SpanError(i)
    c = s[i]
    if c in "{[":
        close = "}" if c == "{" else "]"
        node = _Node("obj" if c == "{" else "arr", i, i)
        j = _skip(s, i + 1)
        if j < len(s) and s[j] == close:
            node.end = j + 1
            return node
        while True:
            part_start = j
            if c == "{":
                key = _parse_string(s, j)
                j = _skip(s, key.end)
                if j >= len(s) or s[j] != ":":
                    raise _SpanError(j)
                value = _parse_value(s, _skip(s, j + 1), depth + 1)
                value.key = key
            else:
                value = _parse_value(s, j, depth + 1)
            node.parts.append((part_start, value.end, value))
            j = _skip(s, value.end)
            if j < len(s) and s[j] == ",":
                j = _skip(s, j + 1)
                continue
            if j < len(s) and s[j] == close:
                node.end = j + 1
                return node
            raise _SpanError(j)
    if c == '"':
        return _parse_string(s, i)
    m = _NUMBER.match(s, i)
    if m:
        return _Node("num", i, m.end())
    for lit in _LITERALS:
        if s.startswith(lit, i):
            return _Node("lit", i, i + len(lit))
    raise _SpanError(i)


def _json_documents(text: str) -> list[_Node]:
    """The JSON containers embedded in ``text``, found with ``raw_decode`` at each ``{`` / ``[``."""
    decoder = json.JSONDecoder()
    docs: list[_Node] = []
    failures = 0
    i = 0
    n = len(text)
    while i < n and failures < _MAX_DECODE_ATTEMPTS:
        b, k = text.find("{", i), text.find("[", i)
        starts = [x for x in (b, k) if x >= 0]
        if not starts:
            break
        i = min(starts)
        try:
            _value, end = decoder.raw_decode(text, i)
        except ValueError:
            failures += 1
            i += 1
            continue
        except RecursionError:  # the values starting inside this bracket run are as deep: skip it
            failures += 1
            while i < n and text[i] in "[{":
                i += 1
            continue
        try:
            docs.append(_parse_value(text, i, 0))
        except (_SpanError, RecursionError):
            failures += 1  # too deep to edit; its inner values are too
        i = end
    return docs


def _number_simplifications(t: str) -> list[str]:
    out = ["0", "1"]
    try:
        v = int(t) if re.fullmatch(r"-?[0-9]+", t) else int(float(t))
        out.append(str(v // 2 if v >= 0 else -((-v) // 2)))
        out.append(str(v))
    except (ValueError, OverflowError):
        pass
    return out


def _structure_splices(text: str) -> list[tuple[int, int, str]]:
    """Every single simplification of a JSON value in ``text`` as a splice ``(start, end, new)``.

    Splices, not texts, so a large document costs memory per edit, not per copy of the text; the
    rest of the text (chatter, envelope, formatting) is kept byte for byte.
    """
    out: list[tuple[int, int, str]] = []

    def shorten(a: int, b: int, halves: bool) -> None:  # the content of a string, between quotes
        units = _STRING_UNIT.findall(text[a:b])
        if units:
            out.append((a, b, ""))
            out.append((a, b, "a"))
            out.append((a, b, "".join(units[: len(units) // 2])))
            if halves:
                out.append((a, b, "".join(units[len(units) // 2:])))

    stack = list(reversed(_json_documents(text)))
    visited = 0
    while stack and visited < _MAX_NODES:
        node = stack.pop()
        visited += 1
        if node.key is not None:  # shorten keys too: argument names are often long
            shorten(node.key.start + 1, node.key.end - 1, False)
        if node.kind in ("obj", "arr"):
            parts = node.parts
            if parts:
                out.append((node.start + 1, node.end - 1, ""))  # empty the container
            for idx, (a, b, value) in enumerate(parts):
                if len(parts) > 1:
                    if idx + 1 < len(parts):
                        out.append((a, parts[idx + 1][0], ""))
                    else:
                        out.append((parts[idx - 1][1], b, ""))
                out.append((node.start, node.end, text[value.start:value.end]))  # hoist the child
            for lit in ("null", "0", '""', "[]", "{}"):
                out.append((node.start, node.end, lit))
            stack.extend(reversed([v for _a, _b, v in parts]))
        elif node.kind == "str":
            shorten(node.start + 1, node.end - 1, True)
            out.append((node.start, node.end, "0"))
        elif node.kind == "num":
            for new in _number_simplifications(text[node.start:node.end]):
                out.append((node.start, node.end, new))
        else:
            for lit in ("0", "null"):
                out.append((node.start, node.end, lit))
    return out


class _TextShrinker:
    def __init__(self, text: str, evaluator: Evaluator):
        self.best = text
        self.ev = evaluator

    # -- core: evaluate candidates in batches, adopt the smallest passing improvement ------------
    def _first_improvement(self, candidates: Iterable[str]) -> Optional[int]:
        """Evaluate lazily, in batches; adopt the smallest passing candidate of the first batch that
        has one and return its index; None if no candidate passes and is smaller than the best."""
        bs = self.ev.batch_size
        best_key = shortlex(self.best)
        chunk: list[tuple[int, str]] = []
        for item in enumerate(candidates):
            if shortlex(item[1]) < best_key:
                chunk.append(item)
            if len(chunk) == bs:
                hit = self._adopt(chunk)
                if hit is not None:
                    return hit
                chunk = []
        return self._adopt(chunk) if chunk else None

    def _adopt(self, chunk: list[tuple[int, str]]) -> Optional[int]:
        answers = self.ev.evaluate([c for _i, c in chunk])
        passing = [(shortlex(c), i) for (i, c), ok in zip(chunk, answers) if ok]
        if not passing:
            return None
        key, i = min(passing)
        self.best = key[1]
        return i

    # -- stage 0: collapse long runs of a repeated fragment -------------------------------------
    def collapse_runs(self) -> None:
        tried: set[tuple[str, int, int]] = set()
        while True:
            runs = [(m.start(), m.end(), m.group(1)) for m in _RUN.finditer(self.best)]
            runs = [r for r in runs if r[1] - r[0] >= 8]
            runs.sort(key=lambda r: (-(r[1] - r[0]), r[0]))
            progressed = False
            for start, end, frag in runs:
                count = (end - start) // len(frag)
                mark = (frag, count, start)
                if mark in tried:
                    continue
                tried.add(mark)
                same = [r for r in runs if (r[1] - r[0]) // len(r[2]) == count]
                groups = [[(start, end, frag)]]
                if len(same) > 1:
                    groups.append(sorted(same))
                for group in groups:
                    if self._shrink_repeats(group, count):
                        progressed = True
                        break
                if progressed:
                    break
            if not progressed:
                return

    def _shrink_repeats(self, group: list[tuple[int, int, str]], count: int) -> bool:
        """Batched bisection for the fewest repeats ``k`` (same for every run in ``group``)."""
        text = self.best

        def with_k(k: int) -> str:
            pieces, pos = [], 0
            for start, end, frag in group:
                pieces.append(text[pos:start])
                pieces.append(frag * k)
                pos = end
            pieces.append(text[pos:])
            return "".join(pieces)

        lo, hi = -1, count  # hi: smallest k known to pass; lo: largest known to fail below hi
        while hi - lo > 1:
            span = hi - lo - 1
            m = min(span, 15)
            ks = sorted({lo + 1 + (span - 1) * j // max(m - 1, 1) for j in range(m)} if m > 1 else {lo + 1})
            answers = self.ev.evaluate([with_k(k) for k in ks])
            passing = [k for k, ok in zip(ks, answers) if ok]
            if passing:
                kmin = passing[0]
                failing_below = [k for k, ok in zip(ks, answers) if not ok and k < kmin]
                lo = max(failing_below) if failing_below else lo
                hi = kmin
                candidate = with_k(hi)  # adopt now: the budget may run out before the search ends
                if shortlex(candidate) < shortlex(self.best):
                    self.best = candidate
            else:
                lo = ks[-1]
        return hi < count

    # -- stage 1: structure-aware ----------------------------------------------------------------
    def simplify_structure(self) -> bool:
        progressed = False
        while True:
            text = self.best
            base = len(text)
            # biggest reductions first; dedupe and order deterministically without building texts
            splices = sorted(set(_structure_splices(text)),
                             key=lambda s: (base - (s[1] - s[0]) + len(s[2]), s))
            if self._first_improvement(text[:a] + new + text[b:] for a, b, new in splices) is None:
                return progressed
            progressed = True

    # -- stages 2 and 3: ddmin -------------------------------------------------------------------
    def ddmin(self, split: Callable[[str], list[str]]) -> None:
        """Delta debugging with complements: remove each of ``n`` chunks, refine when none passes."""
        units = split(self.best)
        n = 2
        while len(units) >= 2:
            size = -(-len(units) // n)
            bounds = [(a, min(a + size, len(units))) for a in range(0, len(units), size)]
            candidates = ("".join(units[:a] + units[b:]) for a, b in bounds)
            if self._first_improvement(candidates) is not None:
                units = split(self.best)
                n = max(n - 1, 2)
                continue
            if n >= len(units) or n >= _MAX_CHUNKS:
                return
            n = min(2 * n, len(units), _MAX_CHUNKS)

    # -- stage 4: 1-minimality -------------------------------------------------------------------
    def _delete_each(self, split: Callable[[str], list[str]]) -> bool:
        """Try deleting each unit, a batch of positions at a time.

        When several deletions of a batch pass, their union (then its first half) is tried too:
        removing 3,000 interleaved commas one adoption at a time would take 3,000 batches.
        """
        units = split(self.best)
        progressed = False
        i = 0
        while i < len(units):
            positions: list[int] = []
            j = i
            while j < len(units) and len(positions) < self.ev.batch_size:
                # deleting any unit of a run of equal units gives the same text: try the first only
                if j == 0 or units[j] != units[j - 1]:
                    positions.append(j)
                j += 1
            if not positions:
                break
            candidates = ["".join(units[:p] + units[p + 1:]) for p in positions]
            answers = self.ev.evaluate(candidates)
            ok = [k for k, answer in enumerate(answers) if answer]
            if not ok:
                i = j
                continue
            progressed = True
            first = positions[ok[0]]
            adopted = False
            if len(ok) > 1:
                for group in (ok, ok[: len(ok) // 2]):
                    if len(group) < 2:
                        continue
                    drop = {positions[k] for k in group}
                    combined = "".join(u for q, u in enumerate(units) if q not in drop)
                    if self.ev.evaluate([combined])[0]:
                        self.best = combined
                        adopted = True
                        break
            if not adopted:
                key, k = min((shortlex(candidates[k]), k) for k in ok)
                self.best = key[1]
                first = positions[k]
            units = split(self.best)
            i = max(first - 1, 0)
        return progressed

    def one_minimal(self) -> bool:
        progressed = False
        while True:
            tokens = self._delete_each(tokenize)
            chars = self._delete_each(list)
            if not tokens and not chars:
                return progressed
            progressed = True

    def settle(self) -> None:
        """Single deletions and JSON element removals, until neither removes anything: deleting
        characters can free a JSON element to go, and the other way round."""
        while self.one_minimal() | self.simplify_structure():
            pass


def shrink_text(text: str, test: TextTest, *, budget_s: float | None = None, max_tests: int | None = None,
                batch_size: int = DEFAULT_BATCH, status: dict | None = None) -> str:
    """The smallest text (shortlex) found that passes ``test``, 1-minimal when the budget allows.

    ``test(candidates) -> list[bool]`` is "still fails with the same signature". The result passes
    ``test``, is never longer than ``text``, and — unless ``budget_s`` or ``max_tests`` ran out —
    no single token (word, whitespace run, other character), no single character and no single
    JSON element (an item, a member) can be deleted from it. Stages: collapse long runs of a repeated fragment (batched bisection on the number of
    repeats, so a 200 KB repetition takes a handful of batches); simplify embedded JSON documents in
    place (drop members and items, empty or hoist containers, shorten strings, lower numbers); ddmin
    over tokens, then characters; then single deletions until none passes.

    ``status``, when given, gets ``complete``: False when the budget stopped the search early.
    Raises :class:`NotInteresting` when ``text`` itself does not pass.
    """
    ev, _ = Evaluator.starting(test, text, cache_key=text_id, passes=bool, budget_s=budget_s, max_tests=max_tests,
                               batch_size=batch_size, nothing="the input does not pass the predicate")
    shrinker = _TextShrinker(text, ev)
    run_stages(status, shrinker.collapse_runs, shrinker.simplify_structure, lambda: shrinker.ddmin(tokenize),
                lambda: shrinker.ddmin(list), shrinker.settle)
    return shrinker.best


def longest_repeat(text: str, min_count: int = 20) -> Optional[tuple]:
    """(start, unit, count) of the longest run (in characters) of one unit repeated back to back in
    ``text``, at least ``min_count`` times — a run as the first stage collapses them — or None."""
    runs = [(m.start(), m.group(1), (m.end() - m.start()) // len(m.group(1))) for m in _RUN.finditer(text)]
    runs = [r for r in runs if r[2] >= min_count]
    return max(runs, key=lambda r: len(r[1]) * r[2], default=None)


__all__ = ["longest_repeat", "shrink_text", "tokenize"]
