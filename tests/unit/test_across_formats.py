"""One rejection across formats (fuzzer/harnesses/parser/across_formats.py), on the bundled naive
parser run in this process: whether two formats' rejections with the same site and message are
one bug depends on the two failures only, never on which one a campaign met first, and it tells
the naive parser's causes apart.

Its bugs, as json's errors word them: an apostrophe the quote "repair" turns into a quote
("Expecting ',' delimiter"; in a bare JSON output only when something after the JSON made the
first ``json.loads`` fail), text after the JSON ("Extra data"), and two causes worded "Expecting
value": an upper-case ```` ```JSON ```` tag the fence regex leaves in (fenced and DeepSeek outputs),
and prose before a bare JSON output."""

from __future__ import annotations

from types import SimpleNamespace

from fuzzer.harnesses.parser.across_formats import same_reason
from fuzzer.harnesses.parser.oracle import Oracle
from fuzzer.harnesses.parser.outcome import outcome_of
from fuzzer.harnesses.parser.worker import Served
from fuzzer.targets.naive import parse
from strategies import builtin_registry
from strategies._internal.build import Unbuildable, build_sample
from strategies._internal.source import RandomSource

REGISTRY = builtin_registry()
ORACLE = Oracle(REGISTRY, "parse")
SERVED = Served(parse, (ValueError,), SimpleNamespace(coverage=False, audit=False, trace_share=0))
FORMATS = ("fenced", "deepseek", "json", "llama3:json", "mcp")
APOSTROPHE, TRAILING, VALUE = "Expecting <str> delimiter", "Extra data", "Expecting value"


def run(texts, deadline=None):
    return [outcome_of(SERVED.run(text, None)) for text in texts]


def _rejections() -> dict:
    """The first few valid outputs of each format the naive parser rejects, by (what json's
    error says, format): [(sample, signature id)]."""
    found: dict = {}
    for seed in range(6000):
        fmt = FORMATS[seed % len(FORMATS)]
        try:
            sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=REGISTRY["get_weather"], format=fmt)
        except Unbuildable:
            continue
        (outcome,) = run([sample.text])
        judgment = ORACLE.judge(sample, outcome)
        if not judgment.failed or outcome.kind != "rejected":
            continue
        signature = ORACLE.signature(sample, judgment, outcome)
        words = next((w for w in (APOSTROPHE, TRAILING, VALUE) if w in signature.title), None)
        if words is not None and len(found.setdefault((words, fmt), [])) < 3:
            found[(words, fmt)].append((sample, signature.id))
    return found


FOUND = _rejections()


def _same(a, b) -> bool:
    (shown, signature), (failing, other) = a, b
    assert signature == other  # one site, one message: the format-less signature
    return same_reason(oracle=ORACLE, registry=REGISTRY, run=run, shown=shown, failing=failing,
                       signature_id=signature)


def _pairs(words: str, formats_a, formats_b) -> list:
    pairs = [(a, b) for fa in formats_a for fb in formats_b if fa != fb
             for a in FOUND.get((words, fa), []) for b in FOUND.get((words, fb), [])]
    assert pairs, (words, sorted(FOUND))
    return pairs


def test_the_answer_does_not_depend_on_which_failure_came_first():
    for words in (APOSTROPHE, TRAILING, VALUE):
        for a, b in _pairs(words, FORMATS, FORMATS):
            assert _same(a, b) == _same(b, a), (words, a[0].text, b[0].text)


def test_the_apostrophe_is_one_bug_in_a_fence_and_in_bare_json_with_text_after_it():
    assert {fmt for words, fmt in FOUND if words == APOSTROPHE} == set(FORMATS), sorted(FOUND)
    for a, b in _pairs(APOSTROPHE, FORMATS, FORMATS):
        assert _same(a, b), (a[0].text, b[0].text)


def test_text_after_the_json_is_one_bug_in_every_bare_json_format():
    """Prose after one call, or the end-of-turn token an engine left in. (Several Llama 3 calls
    joined by ``; ``, which ``json.loads`` rejects the same way, are that format's own way of
    writing several calls: not asked here.)"""
    bare = ("json", "llama3:json", "mcp")
    single = [(a, b) for a, b in _pairs(TRAILING, bare, bare) if len(a[0].calls) == len(b[0].calls) == 1]
    assert {a[0].format for a, _ in single} == set(bare), sorted(FOUND)
    for a, b in single:
        assert _same(a, b), (a[0].text, b[0].text)


def test_an_upper_case_fence_tag_is_one_bug_and_prose_before_json_another():
    fences, bare = ("fenced", "deepseek"), ("json", "llama3:json", "mcp")
    for a, b in _pairs(VALUE, fences, fences):
        assert _same(a, b), (a[0].text, b[0].text)
    for a, b in _pairs(VALUE, fences, bare):
        assert not _same(a, b), (a[0].text, b[0].text)
