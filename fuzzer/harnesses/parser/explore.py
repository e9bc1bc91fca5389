"""Coverage-guided exploration: find the outputs no operator anticipates.

The structured arm (formats x operators, with exact ground truth) only writes the shapes someone
thought of. This arm does what AFL and libFuzzer do with the feedback the worker sends
(:mod:`fuzzer.isolation.instrument`): it keeps a **seed pool** of inputs that reached target lines
nothing reached before (plus the probes and the corpus), and spends a share of the budget on
**havoc** — delete, duplicate, swap or repeat spans, splice two seeds, insert tokens from a
dictionary of the formats' structural tokens and the string constants of the target's own source
(libFuzzer's ``-dict``, AFL's auto-dictionary). Havoc inputs have no ground truth: they are judged
for robustness (crash, hang, unsafe, a return that is not a call, nondeterminism) and shrunk as
text.

The share of batches the arm gets follows what each arm finds per execution (new lines and new
signatures), HypoFuzz-style, within bounds, so a parser whose bugs the operators already reach is
not starved and one whose structure they miss gets explored.

:class:`SlowProbe` looks for super-linear time before it becomes a hang: it times the target on
1x, 2x, 4x and 8x repetitions of a fragment of a seed and fits the growth exponent.
"""

from __future__ import annotations

import ast
import math
import random
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Optional

from fuzzer.harnesses.parser.oracle import RAW_FORMAT
from strategies._internal.formats import FORMATS
from strategies._internal.sample import Sample

#: The exploration arm's class name in the statistics.
EXPLORATION = "exploration"
#: Seeds kept (the newest first out when full).
MAX_SEEDS = 400
#: The longest input kept as a seed (havoc on a longer one would mostly copy it around).
MAX_SEED_CHARS = 20_000
#: Structured executions before exploration starts (the scheduler's first pass tries every operator).
WARMUP = 1500
#: Bounds of the exploration share of batches.
MIN_SHARE, MAX_SHARE = 0.1, 0.6
#: Tokens every tool-call text is made of.
JSON_TOKENS = ("{", "}", "[", "]", '"', ":", ",", "\\", "\\n", "\\u0000", "null", "true", "false", "0", "-1",
               "1e999", "NaN", " ", "\n", "\t", "'", "`", "```", "```json", "<", ">", "/", "=", "(", ")")


def format_tokens() -> list[str]:
    tokens: set[str] = set()
    for fmt in FORMATS.values():
        for value in getattr(fmt, "envelope", {}).values():
            if isinstance(value, str) and value.strip():
                tokens.add(value)
    return sorted(tokens)


def source_tokens(path: Optional[str]) -> list[str]:
    """The short string constants of the target's source file (read, never run)."""
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
        return []
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and 1 <= len(node.value) <= 40:
            found.add(node.value)
    return sorted(found)


class Explorer:
    """The seed pool, the havoc mutator and the arm scheduler for one tool."""

    def __init__(self, *, seed: int, tool: str, dictionary: list[str]):
        self.random = random.Random(seed ^ 0xE1F)
        self.tool = tool
        self.dictionary = list(dict.fromkeys(list(JSON_TOKENS) + format_tokens() + dictionary))
        self.seeds: deque = deque(maxlen=MAX_SEEDS)
        self._texts: set[str] = set()
        self.lines: set = set()  # every (file, line) of the target reached so far
        # per arm: executions, discoveries (new lines + new signatures)
        self.stats = {"structured": [0, 0], "exploration": [0, 0]}

    # -- the seed pool ---------------------------------------------------------------------------
    def add_seed(self, text: str, format: str) -> None:
        if text and text not in self._texts and len(text) <= MAX_SEED_CHARS:
            if len(self.seeds) == self.seeds.maxlen:
                self._texts.discard(self.seeds[0][0])
            self.seeds.append((text, format))
            self._texts.add(text)

    def observe(self, samples: list, outcomes: list) -> int:
        """Take the coverage of a batch: returns how many target lines were reached first; inputs
        that reached new lines become seeds."""
        return self.observe_seeds([(sample.text if hasattr(sample, "text") else sample.base.text[:sample.end],
                                    getattr(sample, "format", RAW_FORMAT), outcome.lines)
                                   for sample, outcome in zip(samples, outcomes)
                                   if outcome is not None and outcome.lines])

    def observe_seeds(self, reached: list) -> int:
        """``observe`` for (text, format, lines) of inputs that reached lines new to their worker
        (what a worker's order sends back)."""
        new = 0
        for text, fmt, lines in reached:
            fresh = [spot for spot in lines if spot not in self.lines]
            if fresh:
                self.lines.update(fresh)
                new += len(fresh)
                self.add_seed(text, fmt)
        return new

    # -- scheduling ------------------------------------------------------------------------------
    def credit(self, arm: str, executions: int, discoveries: int) -> None:
        stats = self.stats[arm]
        stats[0] += executions
        stats[1] += discoveries

    def share(self) -> float:
        """The exploration arm's share: its discoveries per execution against the structured arm's."""
        (se, sd), (he, hd) = self.stats["structured"], self.stats["exploration"]
        structured = (sd + 1) / (se + 200)
        exploration = (hd + 1) / (he + 200)
        return min(MAX_SHARE, max(MIN_SHARE, exploration / (structured + exploration)))

    def wants_turn(self) -> bool:
        """After the structured arm's first pass (every operator once), exploration takes its share."""
        return bool(self.seeds) and self.stats["structured"][0] >= WARMUP and self.random.random() < self.share()

    # -- havoc -----------------------------------------------------------------------------------
    def batch(self, size: int) -> list:
        out = []
        for _ in range(size):
            text, fmt = self.seeds[self.random.randrange(len(self.seeds))]
            mutated, how = self.havoc(text)
            out.append(Sample(text=mutated, format=fmt, anomaly_class=EXPLORATION, operator=how, calls=None,
                              tool=self.tool, truth_known=False, description=f"havoc ({how}) of a seed"))
        return out

    def havoc(self, text: str) -> tuple[str, str]:
        rnd = self.random
        done = []
        for _ in range(1 + int(rnd.expovariate(0.8)) % 4):
            name, edit = rnd.choice(_EDITS)
            text = edit(self, text, rnd)
            done.append(name)
        return text[:200_000], "+".join(done)

    def _span(self, text: str, rnd: random.Random) -> tuple[int, int]:
        if not text:
            return 0, 0
        start = rnd.randrange(len(text))
        length = min(len(text) - start, 1 + int(rnd.expovariate(0.15)))
        return start, start + length


def _delete(ex: Explorer, text: str, rnd: random.Random) -> str:
    a, b = ex._span(text, rnd)
    return text[:a] + text[b:]


def _duplicate(ex: Explorer, text: str, rnd: random.Random) -> str:
    a, b = ex._span(text, rnd)
    return text[:b] + text[a:b] + text[b:]


def _repeat(ex: Explorer, text: str, rnd: random.Random) -> str:
    a, b = ex._span(text, rnd)
    return text[:a] + text[a:b] * rnd.choice((4, 16, 64)) + text[b:]


def _swap(ex: Explorer, text: str, rnd: random.Random) -> str:
    a, b = ex._span(text, rnd)
    c, d = ex._span(text, rnd)
    if c < a:
        a, b, c, d = c, d, a, b
    if b > c:
        return text
    return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]


def _insert_token(ex: Explorer, text: str, rnd: random.Random) -> str:
    at = rnd.randrange(len(text) + 1)
    return text[:at] + rnd.choice(ex.dictionary) + text[at:]


def _replace_token(ex: Explorer, text: str, rnd: random.Random) -> str:
    a, b = ex._span(text, rnd)
    return text[:a] + rnd.choice(ex.dictionary) + text[b:]


def _splice(ex: Explorer, text: str, rnd: random.Random) -> str:
    other = ex.seeds[rnd.randrange(len(ex.seeds))][0]
    return text[:rnd.randrange(len(text) + 1)] + other[rnd.randrange(len(other) + 1):]


def _flip(ex: Explorer, text: str, rnd: random.Random) -> str:
    if not text:
        return text
    at = rnd.randrange(len(text))
    ch = text[at]
    other = ch.swapcase() if ch.isalpha() else chr((ord(ch) + rnd.choice((1, -1, 32, 128))) % 0x110000)
    if "\ud800" <= other <= "\udfff":
        other = "?"
    return text[:at] + other + text[at + 1:]


_EDITS: list[tuple[str, Callable]] = [("delete", _delete), ("duplicate", _duplicate), ("repeat", _repeat),
                                      ("swap", _swap), ("insert", _insert_token), ("replace", _replace_token),
                                      ("splice", _splice), ("flip", _flip)]


# -- super-linear time -----------------------------------------------------------------------------


@dataclass
class Growth:
    """Timings of one fragment repeated 1x, 2x, 4x, 8x inside a seed."""

    prefix: str
    fragment: str
    suffix: str
    counts: tuple
    seconds: tuple

    @property
    def exponent(self) -> float:
        """The growth exponent: the smaller of the last two doublings' (log of the time ratio over
        log of the size ratio), so one jump (a garbage collection, a cache miss on a loaded machine)
        cannot make a linear target look super-linear — the growth must hold twice."""
        slopes = []
        for i in (1, 2):
            size_ratio = len(self.text(self.counts[i + 1])) / max(1, len(self.text(self.counts[i])))
            time_ratio = max(self.seconds[i + 1], 1e-6) / max(self.seconds[i], 1e-6)
            slopes.append(math.log(time_ratio) / math.log(size_ratio) if size_ratio > 1 else 0.0)
        return min(slopes)

    def text(self, count: int) -> str:
        return self.prefix + self.fragment * count + self.suffix

    def sampled(self, timeout: float) -> tuple[str, float]:
        """The input whose stack is sampled to see where the time goes, and when to sample it:
        the fragment repeated until it should run about :data:`SAMPLE_S` (extrapolated with the
        exponent, at most a quarter of ``timeout``), sampled half way. The input that was timed
        is not enough: at a few milliseconds, starting a fresh worker and the target's code
        around the slow part take a share of its time, and a sample there files the finding
        under another signature."""
        last_count, last_s = self.counts[-1], max(self.seconds[-1], 1e-6)
        wanted = min(SAMPLE_S, timeout / 4)
        count = last_count
        if last_s < wanted:
            room = (4 * MAX_PROBE_CHARS - len(self.prefix) - len(self.suffix)) // max(1, len(self.fragment))
            count = max(last_count, min(room, int(last_count * (wanted / last_s) ** (1 / max(self.exponent, 1.0)))))
        expected = last_s * (len(self.text(count)) / len(self.text(last_count))) ** max(self.exponent, 1.0)
        return self.text(count), min(expected, wanted) / 2

    def describe(self) -> str:
        points = ", ".join(f"{len(self.text(c)):,} chars {t * 1000:.1f} ms" for c, t in zip(self.counts, self.seconds))
        return f"time grows as n^{self.exponent:.1f} ({points}) repeating {self.fragment!r}"


#: The largest input a probe grows to: a quadratic parser takes seconds well before 64 KB.
MAX_PROBE_CHARS = 64_000
#: How long the input whose stack is sampled should run (:meth:`Growth.sampled`).
SAMPLE_S = 0.2
#: Fragments whose long runs make naive regexes and loops super-linear.
SLOW_FRAGMENTS = (" ", "\n", "\t", "\\", '"', "'", "[", "{", "(", ",", ":", "a", "0", ", ", "\\n", "<", "`", "-")
#: Growth faster than this is super-linear (quadratic is 2; noise and constant costs pull it down).
SLOW_EXPONENT = 1.6
#: The largest probe must take at least this long for the exponent to mean anything (and the
#: second largest a tenth of it: timings of microseconds are noise).
SLOW_MIN_S = 0.03


def grows_super_linearly(growth: Optional[Growth], *, slack: bool = False) -> bool:
    """The largest input took long enough to time and the time grew faster than SLOW_EXPONENT.
    ``slack``: the test of an entry already found slow, measured again (a loaded machine blurs
    timings both ways)."""
    time_s, exponent = (SLOW_MIN_S / 2, SLOW_EXPONENT * 0.8) if slack else (SLOW_MIN_S, SLOW_EXPONENT)
    return growth is not None and growth.seconds[-1] >= time_s and growth.exponent >= exponent


def remeasure(measure: Callable[[str, str, str, int], Optional[Growth]], stored: Any) -> tuple[Optional[Growth], bool]:
    """Time a stored slow entry again — the one test of replay and reproduce: (the growth
    measured, whether it is still super-linear). Where the stored sizes now run too fast to time
    (another process, a faster machine), the repetitions grow as the probe grew them; a growth
    that does not look slow is measured once more before the entry counts as fixed."""
    prefix, fragment, suffix = stored.get("prefix", ""), stored.get("fragment", ""), stored.get("suffix", "")
    last: Optional[Growth] = None
    for _attempt in range(2):
        count = max(1, int(stored.get("count", 1)))
        for _size in range(3):
            growth = measure(prefix, fragment, suffix, count)
            if growth is None:
                break
            last = growth
            if growth.seconds[-1] >= SLOW_MIN_S or len(growth.text(8 * count)) > 4 * MAX_PROBE_CHARS:
                break
            count *= 4
        if grows_super_linearly(last, slack=True):
            return last, True
    return last, False


#: Tokens longer than this are not tried as a repeated fragment (a sentence of the target's source).
FRAGMENT_CHARS = 12
#: One probe in this many repeats a token of the dictionary rather than one character or a piece.
TOKEN_PROBE_EVERY = 5
#: Fragments tried on a hang's input, and characters of it kept on each side of the run.
HANG_FRAGMENTS = 12
HANG_CONTEXT = 64


class SlowProbe:
    """Times repetitions of fragments of seeds; ``run(texts) -> outcomes`` runs them isolated.

    ``fragments``: tokens to repeat besides :data:`SLOW_FRAGMENTS` — the exploration's dictionary
    (the formats' structural tokens: fences, tags, markers; the target's own string constants).
    A fence stripper that loops ``while "```" in t: t = t.replace("```", "", 1)`` is quadratic
    in the number of fences, which no run of one character shows as fast as a run of fences."""

    def __init__(self, *, seed: int, run: Callable[[list], list], timeout: float, fragments: Any = ()):
        self.reduced_fully = True
        self.stopped_because = ""  # why the last reduction was not complete (for the finding's note)
        self.hung = False  # the last measure returned None because an input hung (not the budget)
        self.out_of_time = False  # the last measure returned None because the budget ran out
        self.random = random.Random(seed ^ 0x510)
        self.run = run
        self.timeout = timeout
        self._tokens = random.Random(seed ^ 0x70C)
        self.fragments = tuple(dict.fromkeys([*SLOW_FRAGMENTS, *(f for f in fragments
                                                                if isinstance(f, str) and 0 < len(f) <= FRAGMENT_CHARS)]))

    def measure(self, prefix: str, fragment: str, suffix: str, base_count: int,
                careful: bool = False) -> Optional[Growth]:
        """The growth of ``fragment`` repeated 1, 2, 4 and 8 times ``base_count``; None when an
        input hung or would (:attr:`hung`), or the budget ran out. ``careful``: the sizes run one
        by one, and once one took so long that the rest, growing at least as fast as
        SLOW_EXPONENT, would reach the timeout, they are not run (each would cost a whole
        timeout and a new worker) — for sizes that may be much slower than any timed so far."""
        counts = (base_count, 2 * base_count, 4 * base_count, 8 * base_count)
        texts = [prefix + fragment * c + suffix for c in counts]
        self.hung = self.out_of_time = False
        if not careful:
            outcomes = self.run(texts)
            if None in outcomes:
                self.out_of_time = True
                return None  # the budget ran out
            self.hung = any(o.kind == "hung" for o in outcomes)
            return None if self.hung else Growth(prefix, fragment, suffix, counts, tuple(o.elapsed for o in outcomes))
        seconds: list = []
        for text in texts:
            outcome = self.run([text])[0]
            if outcome is None:
                self.out_of_time = True
                return None
            after = len(texts) - 1 - len(seconds)  # sizes still to run
            # each doubling multiplies the time by 3 (2 ** SLOW_EXPONENT) at least, or by what the last one did
            factor = max(3.0, outcome.elapsed / seconds[-1]) if seconds and seconds[-1] >= 0.001 else 3.0
            if outcome.kind == "hung" or outcome.elapsed * factor ** after > self.timeout:
                self.hung = True
                return None
            seconds.append(outcome.elapsed)
        return Growth(prefix, fragment, suffix, counts, tuple(seconds))

    def probe(self, text: str) -> Optional[Growth]:
        """One random fragment of ``text``: its growth when it looks super-linear, else None."""
        if len(text) < 2:
            return None
        rnd = self.random
        start = rnd.randrange(len(text))
        if rnd.random() < 0.7:  # runs of one structural character are what backtracking regexes choke on
            present = [f for f in SLOW_FRAGMENTS if f in text]  # the ones this format's parser looks for
            # whitespace twice as often: most super-linear regexes of parsers are a \s* or \s+
            # that can match a run in more than one way (stripping, "\s*```", "\s+$")
            fragment = rnd.choice([f for f in present for _ in range(2 if f.isspace() else 1)] or SLOW_FRAGMENTS)
            prefix, suffix = text[:start], text[start:]
        else:
            fragment = text[start:start + rnd.choice((1, 2, 3, 4, 8))]
            prefix, suffix = text[:start], text[start + len(fragment):]
        if rnd.random() < 0.5:
            # cut off after the run, as a model's output is when it hits its token limit: a
            # backtracking search for a closing bracket is quadratic only when none comes. One
            # more character stays (unless it closes something): a `\s+$` is quadratic only when
            # the run is not at the very end.
            suffix = suffix[:1] if suffix[:1] not in ("]", "}", ")", "") else ""
        return self.grow(prefix, fragment, suffix)

    def probe_token(self, text: str) -> Optional[Growth]:
        """A token of :attr:`fragments` beyond single characters that ``text`` holds (a fence, a
        tag, a marker of the formats; a constant of the target's source), repeated where it first
        stands: its growth when it looks super-linear, else None. Drawn with a generator of its
        own, so the other probes stay the ones a seed always made."""
        tokens = [f for f in self.fragments[len(SLOW_FRAGMENTS):] if f in text]
        if not tokens:
            return None
        fragment = self._tokens.choice(tokens)
        at = text.find(fragment)
        return self.grow(text[:at], fragment, text[at:])

    def grow(self, prefix: str, fragment: str, suffix: str, limit: int = MAX_PROBE_CHARS) -> Optional[Growth]:
        """The growth of ``fragment`` repeated between ``prefix`` and ``suffix``, from a base size
        grown until the largest input is measurable, when it is super-linear (twice, and one size
        further); else None. ``limit``: the characters the largest input may grow to (a hang's
        input may be larger: its path is measured up to the size that hung)."""
        count = max(1, 128 // len(fragment))
        # Grow the base size until the largest probe is measurable (or the inputs get too big).
        growth, last, step = None, 0, 4.0
        while True:
            # four times the repetitions can be 4 ** 3 times slower: carefully near the timeout
            measured = self.measure(prefix, fragment, suffix, count,
                                    careful=growth is not None and growth.seconds[-1] * step ** 3 > self.timeout)
            if measured is None:
                if growth is None or self.out_of_time or step < 1.5:
                    return None
                # the step jumped from too fast to time past what may run under the timeout (a
                # quadratic path: 16 times slower per step, where the window is 10 times wide):
                # a smaller step from the last size that ran
                step = step ** 0.5
                count = max(last + 1, int(last * step))
                continue
            growth, last = measured, count
            if growth.seconds[-1] >= SLOW_MIN_S or len(growth.text(8 * count)) > limit \
                    or growth.seconds[-1] > self.timeout / 4:
                break
            count = max(count + 1, int(count * step))
        if not self._super_linear(growth):
            return None
        again = self.measure(prefix, fragment, suffix, count)  # not a hiccup of a loaded machine
        if again is None or not self._super_linear(again):
            return None
        return again if self._keeps_growing(again) else None

    def from_hang(self, text: str, tokens: Any = ()) -> Optional[Growth]:
        """Whether the input of a hang is a super-linear path met too late: the growth of a
        fragment it repeats — its longest run of one repeated piece, then the structural tokens
        it holds (``tokens`` first: the format's envelope, then :attr:`fragments`) — measured at
        sizes far below the hang, with a little of the input around the first occurrence (and
        with none). None when nothing grows: a real hang (an endless loop)."""
        from corpus.minimize import longest_repeat

        small = self.run([text[:HANG_CONTEXT]])[0]
        if small is None or small.kind == "hung":
            self.out_of_time = small is None
            return None  # a few characters of it hang too: an endless loop, whatever the size
        candidates: list = []
        found = longest_repeat(text, min_count=4)
        if found is not None:
            start, unit, _count = found
            candidates.append((unit, start))
        present = [f for f in dict.fromkeys([*tokens, *self.fragments]) if f and len(f) <= FRAGMENT_CHARS and f in text]
        # the longer and the rarer first: "```" says more than "`", a fence more than a space
        present.sort(key=lambda f: (-len(f), text.count(f)))
        candidates += [(f, text.find(f)) for f in present]
        tried: set = set()
        stuck = 0  # candidates that hung at their smallest size: a path that hangs, not one that grows
        for fragment, at in candidates[:HANG_FRAGMENTS]:
            for prefix, suffix in ((text[max(0, at - HANG_CONTEXT):at],
                                    text[at + len(fragment):at + len(fragment) + HANG_CONTEXT]), ("", "")):
                if (prefix, fragment, suffix) in tried:
                    continue
                tried.add((prefix, fragment, suffix))
                # up to the hang's own size: a quadratic path that hangs at 263,000 characters
                # took 15 ms at the probe's usual 64,000, too fast to call slow
                growth = self.grow(prefix, fragment, suffix, limit=max(MAX_PROBE_CHARS, len(text)))
                if growth is not None:
                    return growth
                if self.out_of_time:
                    return None
                stuck += self.hung
                if stuck >= 3:
                    return None
        return None

    @staticmethod
    def _super_linear(growth: Growth) -> bool:
        """A first finding also needs the second largest input timed (a tenth of the minimum)."""
        return growth.seconds[-2] >= SLOW_MIN_S / 10 and grows_super_linearly(growth)

    def _keeps_growing(self, growth: Growth) -> bool:
        """One size further (16x), the time must still grow super-linearly — unless that run
        would take so long it nears the timeout (then the growth is plain to see already)."""
        last = growth.seconds[-1]
        if last * 4 > self.timeout / 2:
            return True
        counts = growth.counts[-1] * 2
        outcome = self.run([growth.text(counts)])[0]
        if outcome is None or outcome.kind == "hung":
            return outcome is not None
        ratio = len(growth.text(counts)) / len(growth.text(growth.counts[-1]))
        return math.log(max(outcome.elapsed, 1e-6) / max(last, 1e-6)) / math.log(ratio) >= SLOW_EXPONENT

    #: Measurements the reduction of the text around the run may take, half on each side (each
    #: runs four inputs).
    CONTEXT_TRIES = 64

    def reduce(self, growth: Growth) -> Growth:
        """The shortest fragment (a piece of the one found) whose repetition still grows as fast,
        then the least of the seed around the run that keeps it growing. :attr:`reduced_fully`
        says afterwards whether every measurement it tried ran (not cut off by the budget)."""
        self.reduced_fully, self.stopped_because = True, ""
        return self._reduce_context(self._reduce_fragment(growth))

    def _incomplete(self, because: str) -> None:
        self.reduced_fully = False
        self.stopped_because = self.stopped_because or because

    #: What the largest input of a reduction's measurement should take: well above SLOW_MIN_S
    #: (a loaded machine's noise), far below the second a run found slow can take (dozens of
    #: measurements of that would stall the campaign).
    REDUCE_S = 0.1

    @classmethod
    def _economical(cls, growth: Growth) -> int:
        """Base repetitions at which ``growth``'s largest input should take about :attr:`REDUCE_S`."""
        last = growth.seconds[-1]
        if last <= 2 * cls.REDUCE_S:
            return growth.counts[0]
        return max(1, int(growth.counts[0] / (last / cls.REDUCE_S) ** (1 / max(growth.exponent, 1.0))))

    def _tried(self, prefix: str, fragment: str, suffix: str, count: int) -> Optional[Growth]:
        """The growth of a candidate. One that hangs at these repetitions is slower than the run
        it came from (a smaller context can make a regex cubic): it is timed again at a quarter
        of them, down to one, instead of counting as "does not grow"; one too fast to time (a
        smaller context can make it faster) is timed again at four times them."""
        tried = self.measure(prefix, fragment, suffix, count, careful=True)
        while tried is None and self.hung and count > 1:
            count = max(1, count // 4)
            tried = self.measure(prefix, fragment, suffix, count, careful=True)
        if tried is None:
            self._incomplete("a candidate hung even at one repetition" if self.hung else "the budget ran out")
        elif tried.seconds[-1] < SLOW_MIN_S and len(tried.text(32 * count)) <= MAX_PROBE_CHARS:
            tried = self.measure(prefix, fragment, suffix, 4 * count, careful=True) or tried
        return tried

    def _reduce_fragment(self, growth: Growth) -> Growth:
        for size in range(1, len(growth.fragment)):
            for start in range(0, len(growth.fragment) - size + 1):
                piece = growth.fragment[start:start + size]
                count = self._economical(growth) * len(growth.fragment) // len(piece)
                tried = self._tried(growth.prefix, piece, growth.suffix, max(1, count))
                if grows_super_linearly(tried):
                    return tried
        return growth

    def _reduce_context(self, growth: Growth) -> Growth:
        """Delete chunks of the prefix, then of the suffix (halves, quarters, … as in ddmin), keeping
        each deletion after which the run still grows super-linearly: the finding shows the run
        and what the slow code needs around it (an opening quote, a tag), not the whole seed."""
        best = growth
        for side in ("prefix", "suffix"):
            chunks, tries = 1, self.CONTEXT_TRIES // 2
            while tries > 0 and getattr(best, side):
                part = getattr(best, side)
                size = -(-len(part) // chunks)
                for i in range(chunks):
                    if tries <= 0:
                        break
                    tries -= 1
                    rest = part[:i * size] + part[(i + 1) * size:]
                    prefix, suffix = (rest, best.suffix) if side == "prefix" else (best.prefix, rest)
                    tried = self._tried(prefix, best.fragment, suffix, self._economical(best))
                    if grows_super_linearly(tried):
                        best = tried
                        chunks = max(1, chunks - 1)
                        break
                else:
                    if size <= 1:
                        break
                    chunks = min(len(part), chunks * 2)
            if tries <= 0 and len(getattr(best, side)) > 1:
                self._incomplete(f"out of measurements ({self.CONTEXT_TRIES}) before every character was tried")
        return best


__all__ = ["EXPLORATION", "Explorer", "Growth", "SlowProbe", "format_tokens", "grows_super_linearly", "remeasure", "source_tokens"]
