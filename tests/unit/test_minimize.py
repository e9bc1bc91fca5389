"""The minimizers: results pass, never grow, are 1-minimal, deterministic, and respect budgets."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus.minimize import NotInteresting, shrink_choices, shrink_text, tokenize
from strategies._internal.source import ReplaySource


class Predicate:
    """A batched predicate built from a per-text one, recording every batch it was called with."""

    def __init__(self, fn):
        self.fn = fn
        self.batches: list[list] = []

    def __call__(self, candidates):
        self.batches.append(list(candidates))
        return [self.fn(c) for c in candidates]

    @property
    def tests(self) -> int:
        return sum(len(b) for b in self.batches)


def assert_one_minimal(text: str, fn) -> None:
    for i in range(len(text)):
        assert not fn(text[:i] + text[i + 1:]), f"deleting character {i} of {text!r} still passes"
    tokens = tokenize(text)
    for i in range(len(tokens)):
        shorter = "".join(tokens[:i] + tokens[i + 1:])
        assert not fn(shorter), f"deleting token {tokens[i]!r} of {text!r} still passes"


def bug_and_brace(s: str) -> bool:
    return "BUG" in s and "{" in s


def json_fails_with_brackets(s: str) -> bool:
    if "]]]" not in s:
        return False
    try:
        json.loads(s)
    except (ValueError, RecursionError):
        return True
    return False


chatter = st.text(alphabet=st.characters(exclude_categories=()), max_size=80)


@settings(max_examples=60, deadline=None)
@given(before=chatter, middle=chatter, after=chatter, brace_first=st.booleans())
def test_shrunk_text_passes_never_grows_and_is_one_minimal(before, middle, after, brace_first):
    text = before + ("{" if brace_first else "BUG") + middle + ("BUG" if brace_first else "{") + after
    pred = Predicate(bug_and_brace)
    result = shrink_text(text, pred)
    assert bug_and_brace(result) and len(result) <= len(text)
    assert len(result) == 4  # the only 1-minimal texts here: "{BUG", "BUG{", "B{UG"...: 4 characters
    assert_one_minimal(result, bug_and_brace)
    assert all(len(batch) <= 256 for batch in pred.batches)


@settings(max_examples=40, deadline=None)
@given(doc=st.recursive(st.none() | st.integers() | st.text(max_size=5),
                        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=4), c, max_size=4),
                        max_leaves=12),
       noise=st.text(alphabet="[]{},: x\"", max_size=20))
def test_broken_json_shrinks_to_a_one_minimal_failure(doc, noise):
    text = json.dumps(doc) + noise + "]]]"
    result = shrink_text(text, Predicate(json_fails_with_brackets))
    assert json_fails_with_brackets(result) and len(result) <= len(text)
    assert_one_minimal(result, json_fails_with_brackets)
    assert result == "]]]"  # 1-minimal and the shortest possible


def get_weather_named(s: str) -> bool:
    """A JSON object naming get_weather somewhere after the first brace (chatter allowed)."""
    i = s.find("{")
    if i < 0:
        return False
    try:
        value, _end = json.JSONDecoder().raw_decode(s, i)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("name") == "get_weather"


def two_kb_sample() -> str:
    doc = {"name": "get_weather",
           "arguments": {"city": "Paris, France " * 25, "days": list(range(0, 400, 7)),
                         "unit": "celsius", "nested": {"a": [{"b": "c" * 30, "d": [1.5, True, None]}] * 4}},
           "id": "call_0123456789"}
    text = "Sure! Let me look that up.\n```json\n" + json.dumps(doc, indent=2) + "\n```\nAnything else?"
    assert 1800 <= len(text) <= 2600
    return text


def test_two_kb_text_shrinks_to_the_known_minimum_in_few_batches():
    text = two_kb_sample()
    pred = Predicate(get_weather_named)
    result = shrink_text(text, pred)
    assert len(pred.batches) < 400  # what costs: batches sent to the worker pool (speed: benchmarks/)
    assert result == '{"name":"get_weather"}'
    assert_one_minimal(result, get_weather_named)


def test_structure_stage_keeps_the_surrounding_text():
    # The predicate needs the chatter intact and the object to stay valid JSON: only the structure
    # stage (edits in place) can drop the members, a character ddmin would need many more tests.
    text = 'PREFIX {"name": "f", "arguments": {"a": [1, 2, 3], "b": "long string here"}} SUFFIX'

    def fn(s: str) -> bool:
        if not (s.startswith("PREFIX {") and s.endswith("} SUFFIX")):
            return False
        try:
            value = json.loads(s[len("PREFIX "):-len(" SUFFIX")])
        except ValueError:
            return False
        return isinstance(value, dict) and "arguments" in value

    result = shrink_text(text, Predicate(fn))
    assert result == 'PREFIX {"arguments":0} SUFFIX'


def deeply_nested(s: str) -> bool:
    """At least 1,000 unclosed-or-closed brackets deep (a stand-in for a RecursionError crash whose
    threshold, unlike json's, does not depend on the caller's stack depth)."""
    depth = best = 0
    for ch in s:
        if ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    return best >= 1000


@pytest.mark.parametrize("text", [
    '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",  # 200 KB of nesting
    "[" * 200_000,
])
def test_long_repetition_shrinks_in_few_batches(text):
    pred = Predicate(deeply_nested)
    result = shrink_text(text, pred)
    assert deeply_nested(result) and len(result) == 1000 and set(result) <= set("[{")
    assert len(pred.batches) < 300


def test_repeated_fragment_collapses_to_the_needed_count():
    text = "call(x=1); " * 20_000  # 220 KB
    pred = Predicate(lambda s: s.count("call(x=1)") >= 7)
    result = shrink_text(text, pred)
    assert result.count("call(x=1)") == 7
    assert len(pred.batches) < 300
    assert_one_minimal(result, lambda s: s.count("call(x=1)") >= 7)


def test_same_input_same_output_and_same_questions():
    text = two_kb_sample() + " BUG " + two_kb_sample()
    runs = []
    for _ in range(2):
        pred = Predicate(lambda s: "BUG" in s and get_weather_named(s))
        runs.append((shrink_text(text, pred), pred.batches))
    assert runs[0] == runs[1]


def test_max_tests_is_respected_and_the_best_so_far_passes():
    text = two_kb_sample()
    for limit in (1, 10, 50, 300):
        pred = Predicate(get_weather_named)
        result = shrink_text(text, pred, max_tests=limit)
        assert pred.tests <= limit + 1  # +1: the input itself is checked first
        assert get_weather_named(result) and len(result) <= len(text)


def test_time_budget_is_respected():
    def slow(s: str) -> bool:
        return "BUG" in s

    calls = [0]

    def batched(candidates):
        calls[0] += 1
        time.sleep(0.02)
        return [slow(c) for c in candidates]

    text = "".join(f"word{i} " for i in range(3000)) + "BUG" + "x" * 500
    status: dict = {}
    result = shrink_text(text, batched, budget_s=0.3, status=status)
    # each batch sleeps 0.02 s: within 0.3 s at most 15 batches (+ the check of the input itself,
    # and the one that was running when the budget ran out)
    assert calls[0] <= 17 and status == {"complete": False}
    assert "BUG" in result and len(result) <= len(text)  # the best so far, whatever a loaded machine managed


def test_input_that_does_not_pass_is_refused():
    with pytest.raises(NotInteresting):
        shrink_text("fine", Predicate(lambda s: False))
    with pytest.raises(NotInteresting):
        shrink_choices((1, 2), Predicate(lambda c: None))


def test_lone_surrogates_and_control_characters_survive():
    text = "abc\ud800def\x00ghi" * 10
    fn = lambda s: "\ud800" in s and "\x00" in s  # noqa: E731
    result = shrink_text(text, Predicate(fn))
    assert sorted(result) == sorted("\ud800\x00")


def test_a_wrong_number_of_answers_is_an_error():
    with pytest.raises(ValueError, match="answers"):
        shrink_text("abcdef", lambda cs: [True])


# --- shrink_choices --------------------------------------------------------------------------------

def sum_over_100(c):
    return 0 if sum(c) > 100 else None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=30).filter(lambda c: sum(c) > 100))
def test_choices_shrink_to_a_locally_minimal_sequence(choices):
    start = tuple(choices)
    result = shrink_choices(start, Predicate(sum_over_100))
    assert sum(result) == 101  # lowering any choice by one would still pass otherwise
    assert len(result) <= len(start)
    for i in range(len(result)):  # no single deletion passes
        assert sum(result[:i] + result[i + 1:]) <= 100


def test_choices_minimize_the_key_first():
    # The key prefers a large first choice, so lowering it is worse even though the choices would
    # be smaller; only the second choice may go down.
    def key(c):
        return -c[0] if c and sum(c) > 100 else None

    result = shrink_choices((90, 20, 7), Predicate(key))
    assert result == (90, 11)


def replay_sample(choices) -> str:
    """A tiny generator on the real ReplaySource: a list of up to 5 numbers in 0..100."""
    src = ReplaySource(choices)
    return json.dumps([src.integer(0, 100) for _ in range(src.integer(0, 5))])


def test_choices_replayed_through_a_generator_reach_the_smallest_sample():
    def key(c):
        text = replay_sample(c)
        return (len(text), text) if any(v >= 50 for v in json.loads(text)) else None

    start = (5, 3, 99, 12, 77, 64, 8, 1, 2)
    assert key(start) is not None
    pred = Predicate(key)
    result = shrink_choices(start, pred)
    assert replay_sample(result) == "[50]"
    assert result == (1, 50)
    assert all(len(b) <= 256 for b in pred.batches)


def test_choices_deterministic_and_budgeted():
    start = tuple(range(60))
    runs = []
    for _ in range(2):
        pred = Predicate(lambda c: sum(c) if sum(c) > 500 else None)
        runs.append((shrink_choices(start, pred), pred.batches))
    assert runs[0] == runs[1]
    pred = Predicate(lambda c: sum(c) if sum(c) > 500 else None)
    result = shrink_choices(start, pred, max_tests=20)
    assert pred.tests <= 21 and sum(result) > 500 and len(result) <= len(start)


def balanced_and_deep(s: str) -> bool:
    """Well-formed nesting at least 1,000 deep: no single chunk deletion keeps the balance, so only
    collapsing both runs together (or single deletions, one at a time) makes progress."""
    depth = best = 0
    for ch in s:
        if ch == "[":
            depth += 1
            best = max(best, depth)
        elif ch == "]":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0 and best >= 1000


def test_paired_runs_collapse_together():
    text = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    pred = Predicate(balanced_and_deep)
    result = shrink_text(text, pred)
    assert result == "[" * 1000 + "]" * 1000
    assert len(pred.batches) < 300


def test_interleaved_deletions_are_taken_together():
    # 1,500 commas interleaved with what must stay: ddmin's contiguous chunks cannot remove them,
    # the 1-minimality pass removes them a batch at a time.
    pred = Predicate(lambda s: s.count("xyz") >= 1500)
    result = shrink_text("xyz," * 20_000, pred)
    assert result == "xyz" * 1500
    assert len(pred.batches) < 300
