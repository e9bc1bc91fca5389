"""The oracle's table (DESIGN.md "Oracles") on hand-made samples and outcomes, and its helpers."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from fuzzer.harnesses.parser.outcome import Outcome
from fuzzer.harnesses.parser.damage import corruption_key
from fuzzer.harnesses.parser.oracle import Oracle, Verdict
from strategies._internal.sample import json_equal
from strategies import Sample, builtin_registry

REGISTRY = builtin_registry()
CALL = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20)


def returned(calls):
    return Outcome(kind="returned", calls=calls)


def rejected():
    return Outcome(kind="rejected", exception="ValueError", message="no")


def sample(calls, anomaly_class=None, operator=None, fmt="json"):
    return Sample(text="...", format=fmt, anomaly_class=anomaly_class, operator=operator, calls=calls,
                  tool="get_weather")


@given(json_values)
def test_json_equal_is_reflexive_and_agrees_with_canonical_json(value):
    assert json_equal(value, json.loads(json.dumps(value)))


@given(json_values, json_values)
def test_json_equal_matches_comparing_canonical_dumps(a, b):
    canonical = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
    if canonical(a) == canonical(b):
        assert json_equal(a, b)


@pytest.mark.parametrize("a, b", [("2", 2), (True, 1), (False, 0), (None, 0), ([1, 2], [2, 1]),
                                  ({"a": 1}, {"a": 1, "b": 2}), (float("nan"), float("nan"))])
def test_json_equal_keeps_types_and_order(a, b):
    assert not json_equal(a, b)


def test_json_equal_ignores_key_order_and_int_float():
    assert json_equal({"a": 1, "b": [2.0]}, {"b": [2], "a": 1.0})


@pytest.mark.parametrize("level", ["parse", "validate"])
def test_valid_sample_table(level):
    oracle = Oracle(REGISTRY, level)
    s = sample([CALL])
    assert not oracle.judge(s, returned([CALL])).failed
    assert oracle.judge(s, rejected()).verdict is Verdict.FALSE_REJECT
    assert oracle.judge(s, returned([])).verdict is Verdict.FALSE_REJECT
    other = {"name": "get_weather", "arguments": {"city": "Pari"}}
    assert oracle.judge(s, returned([other])).verdict is Verdict.CORRUPTION


def test_faithful_anomaly_accepts_truth_or_rejection_only():
    oracle = Oracle(REGISTRY)
    s = sample([CALL], "malformed_json", "trailing_comma")
    assert not oracle.judge(s, returned([CALL])).failed
    assert not oracle.judge(s, rejected()).failed
    assert not oracle.judge(s, returned([])).failed
    assert oracle.judge(s, returned([{"name": "get_weather", "arguments": {}}])).verdict is Verdict.CORRUPTION


def test_truth_none_accepts_only_no_call():
    oracle = Oracle(REGISTRY)
    s = sample(None, "truncated_output", "truncate_anywhere")
    assert not oracle.judge(s, rejected()).failed
    assert not oracle.judge(s, returned([])).failed
    assert oracle.judge(s, returned([CALL])).verdict is Verdict.CORRUPTION


def test_semantic_anomaly_parse_level_wants_calls_as_written():
    oracle = Oracle(REGISTRY, "parse")
    written = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}
    s = sample([written], "constraint_violation", "enum_value_outside")
    assert not oracle.judge(s, returned([written])).failed
    assert not oracle.judge(s, rejected()).failed
    assert oracle.judge(s, returned([CALL])).verdict is Verdict.CORRUPTION  # "repaired" to celsius


def test_semantic_anomaly_validate_level_wants_rejection():
    oracle = Oracle(REGISTRY, "validate")
    written = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}
    s = sample([written], "constraint_violation", "enum_value_outside")
    assert not oracle.judge(s, rejected()).failed
    judged = oracle.judge(s, returned([written]))
    assert judged.verdict is Verdict.MISSED_ANOMALY and judged.key == "schema:enum"
    assert oracle.judge(s, returned([CALL])).verdict is Verdict.CORRUPTION


def test_duplicates_may_be_collapsed_at_validate_level():
    oracle = Oracle(REGISTRY, "validate")
    s = sample([CALL, CALL], "duplicate_call", "duplicate_call_adjacent")
    assert not oracle.judge(s, returned([CALL])).failed
    assert oracle.judge(s, returned([CALL, CALL])).verdict is Verdict.MISSED_ANOMALY


def test_schema_valid_injection_must_come_back_exactly_even_at_validate_level():
    oracle = Oracle(REGISTRY, "validate")
    written = {"name": "get_weather", "arguments": {"city": "Paris'; DROP TABLE users; --"}}
    s = sample([written], "injection_payload", "sql_injection")
    assert not oracle.judge(s, returned([written])).failed
    assert oracle.judge(s, returned([CALL])).verdict is Verdict.CORRUPTION


@pytest.mark.parametrize("outcome, verdict", [
    (Outcome(kind="raised", exception="KeyError", message="'name'", frames=(("p.py", "parse"),)), Verdict.CRASH),
    (Outcome(kind="died", detail="killed by SIGSEGV"), Verdict.CRASH),
    (Outcome(kind="hung", detail="no result within 2 s"), Verdict.HANG),
    (Outcome(kind="invalid", message="a bare string"), Verdict.CORRUPTION),
])
def test_robustness_verdicts_hold_for_every_sample(outcome, verdict):
    oracle = Oracle(REGISTRY)
    for s in (sample([CALL]), sample(None, "truncated_output", "truncate_anywhere"),
              Sample(text="x", format="raw", anomaly_class=None, operator=None, calls=None, truth_known=False)):
        assert oracle.judge(s, outcome).verdict is verdict


def test_crash_signature_ignores_line_numbers_and_values_but_not_functions_or_messages():
    oracle = Oracle(REGISTRY)
    s = sample([CALL])
    a = Outcome(kind="raised", exception="KeyError", message="'city'", frames=(("p.py", "parse"), ("p.py", "_one")))
    b = Outcome(kind="raised", exception="KeyError", message="'date'", frames=a.frames)
    c = Outcome(kind="raised", exception="KeyError", message="'city'", frames=(("p.py", "parse"), ("p.py", "_two")))
    d = Outcome(kind="raised", exception="KeyError", message="no such tool", frames=a.frames)
    sig = lambda o: oracle.signature(s, oracle.judge(s, o), o).id  # noqa: E731
    assert sig(a) == sig(b)  # another key: the same bug
    assert sig(a) != sig(c)  # another function
    assert sig(a) != sig(d)  # another raise site in the same function (frames carry no lines)
    assert sig(a).startswith("crash-")
    # len() of None and int() of None in one function: two bugs
    none_len = Outcome(kind="raised", exception="TypeError", message="object of type 'NoneType' has no len()",
                       frames=(("p.py", "parse"),))
    none_int = Outcome(kind="raised", exception="TypeError", frames=none_len.frames,
                       message="int() argument must be a string, a bytes-like object or a real number, not 'NoneType'")
    assert sig(none_len) != sig(none_int)


def test_a_decoder_error_is_one_crash_whatever_the_input_got_wrong():
    oracle = Oracle(REGISTRY)
    s = sample([CALL])
    frames = (("p.py", "parse"), ("decoder.py", "raw_decode"))
    messages = ["Expecting value: line 1 column 1 (char 0)", "Expecting ',' delimiter: line 1 column 9 (char 8)",
                "Unterminated string starting at: line 1 column 2 (char 1)"]
    sig = lambda o: oracle.signature(s, oracle.judge(s, o), o).id  # noqa: E731
    ids = {sig(Outcome(kind="raised", exception="json.decoder.JSONDecodeError", message=m, frames=frames))
           for m in messages}
    assert len(ids) == 1


def test_rejection_signatures_tell_rejection_bugs_apart_within_one_format():
    """Defect 3 of issue 8: two rejection bugs in one format are two signatures; the same rejection
    with other values in its message is one."""
    oracle = Oracle(REGISTRY)
    s = sample([CALL])
    quote = Outcome(kind="rejected", exception="ValueError", message="bad quote at 12",
                    frames=(("p.py", "parse"), ("p.py", "_unquote")))
    quote2 = Outcome(kind="rejected", exception="ValueError", message="bad quote at 40", frames=quote.frames)
    tag = Outcome(kind="rejected", exception="ValueError", message="unclosed tag", frames=(("p.py", "parse"), ("p.py", "_tags")))
    empty = Outcome(kind="returned", calls=[])
    sig = lambda o: oracle.signature(s, oracle.judge(s, o), o)  # noqa: E731
    assert all(oracle.judge(s, o).verdict is Verdict.FALSE_REJECT for o in (quote, tag, empty))
    assert sig(quote).id == sig(quote2).id
    assert len({sig(quote).id, sig(tag).id, sig(empty).id}) == 3
    assert "ValueError" in sig(quote).title and "_unquote" in sig(quote).title


def test_corruption_signature_is_the_kind_of_damage_not_the_operator():
    oracle = Oracle(REGISTRY)
    truth = [{"name": "get_weather", "arguments": {"city": "a, }"}}]
    damaged = [{"name": "get_weather", "arguments": {"city": "a}"}}]
    sigs = set()
    for op in ("trailing_comma", "sql_injection", "enum_value_outside"):
        s = sample(truth, "malformed_json", op)
        o = returned(damaged)
        sigs.add(oracle.signature(s, oracle.judge(s, o), o).id)
    assert len(sigs) == 1


@pytest.mark.parametrize("truth, got, key", [
    ([CALL], [], "calls:fewer"),
    ([CALL], [CALL, CALL], "calls:more"),
    ([CALL], [{"name": "get_forecast", "arguments": CALL["arguments"]}], "name"),
    ([CALL], [{"name": "get_weather", "arguments": {"city": "Paris"}}], "keys:dropped"),
    ([{"name": "f", "arguments": {"n": 2}}], [{"name": "f", "arguments": {"n": "2"}}], "type:number>string"),
    ([{"name": "f", "arguments": {"s": "O'Brien"}}], [{"name": "f", "arguments": {"s": "O"}}], "string:truncated"),
])
def test_corruption_key(truth, got, key):
    assert corruption_key(truth, got)[0] == key


def test_not_a_call_corruptions_are_keyed_by_the_part_that_is_wrong():
    oracle = Oracle(REGISTRY)
    s = sample([CALL])
    sig = lambda message: oracle.signature(s, oracle.judge(s, Outcome(kind="invalid", message=message)), # noqa: E731
                                           Outcome(kind="invalid", message=message)).id
    assert sig("call #0: name is NoneType, not a string") == sig("call #1: name is dict, not a string")
    assert sig("call #0: name is NoneType, not a string") != sig("call #0: arguments is list, not a mapping")
    assert sig("call #0: arguments string is not JSON (Expecting value: line 1 column 1 (char 0))") == \
        sig("call #0: arguments string is not JSON (Extra data: line 1 column 4 (char 3))")


@given(st.text(min_size=2, max_size=40), st.data())
def test_a_string_damaged_the_same_way_has_one_key_whatever_its_length(text, data):
    """Removing every occurrence of some characters is one kind of damage: a long string (too long
    to diff) gets the key a short one does, so one bug is one finding whatever it spoils."""
    from fuzzer.harnesses.parser.damage import _string_edit

    removed = data.draw(st.sets(st.sampled_from(sorted(set(text))), min_size=1))
    damage = lambda s: "".join(c for c in s if c not in removed)  # noqa: E731
    assume(damage(text) and not text.startswith(damage(text)))
    long_text = text * (20_000 // len(text) + 1)
    assert _string_edit(long_text, damage(long_text))[0] == _string_edit(text, damage(text))[0]


def test_a_whitespace_edit_names_the_whitespace_but_keeps_one_key():
    from fuzzer.harnesses.parser.damage import _string_edit

    vertical, tab = _string_edit("a\x0bb", "a\nb"), _string_edit("a\tb", "a\nb")
    assert vertical[0] == tab[0]  # one bug that rewrites whitespace: one finding
    assert "'\\x0b'" in vertical[1] and "'\\n'" in vertical[1] and "'\\t'" in tab[1]


_DRAFT4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
           "properties": {"n": {"type": "integer"}, "tag": {"type": "string", "maxLength": 3}},
           "required": ["n"], "additionalProperties": False}
_JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 2.0, 0.5, -0.0]),
                         st.text(max_size=5))


@example(calls=[{"name": "count", "arguments": {"n": v}} for v in (1, 1.0, True, "1")])
@given(calls=st.lists(st.fixed_dictionaries({
    "name": st.sampled_from(["count", "get_weather", "nope"]),
    "arguments": st.dictionaries(st.sampled_from(["n", "tag", "city", "x"]),
                                 st.recursive(_JSON_LEAVES, lambda inner: st.lists(inner, max_size=2), max_leaves=4),
                                 max_size=3)}), min_size=1, max_size=8))
def test_a_cached_promise_judges_every_call_as_an_uncached_one(calls):
    """The engine's promise caches verdicts per call by the arguments' repr; ``1``, ``1.0`` and
    ``True`` must stay apart (a draft-4 integer is not 1.0), whatever was judged before."""
    from fuzzer.harnesses.parser.promise import Promise
    from strategies._internal.tools import Registry, Tool

    registry = Registry({"get_weather": REGISTRY["get_weather"], "count": Tool(name="count", schema=_DRAFT4)})
    cached, fresh = Promise(registry), Promise(registry, cached=False)
    for i in range(len(calls)):
        for call in calls[:i + 1]:  # each call judged again after the others
            assert cached.call_ok(call) == fresh.call_ok(call)
        assert cached.problem_key(calls[:i + 1]) == fresh.problem_key(calls[:i + 1])


def test_a_nondeterminism_is_keyed_by_what_differed_not_by_the_input_s_class():
    """A target answering at random is one bug, not one per kind of input it met (it was: one
    nondeterminism per anomaly class and operator); a corpus entry filed so is still recognized
    (the legacy key)."""
    from fuzzer.harnesses.parser.oracle import rerun_judgment

    oracle = Oracle(REGISTRY, "parse")
    garbled = {"name": "get_weather", "arguments": {"city": "garbled", "unit": "celsius"}}
    valid, anomalous = sample([CALL]), sample([CALL], anomaly_class="malformed_json", operator="trailing_comma")
    ids = set()
    for s in (valid, anomalous):
        for first, second in ((returned([CALL]), returned([garbled])), (returned([garbled]), returned([CALL]))):
            judgment = rerun_judgment(first, second)
            assert judgment.verdict is Verdict.NONDETERMINISM
            ids.add(oracle.signature(s, judgment, first).id)
    assert len(ids) == 1
    other = rerun_judgment(rejected(), returned([CALL]))
    assert oracle.signature(valid, other, rejected()).id not in ids  # another kind of difference
    legacy = {oracle.legacy_signature(s, rerun_judgment(returned([CALL]), returned([garbled])), returned([CALL])).id
              for s in (valid, anomalous)}
    assert len(legacy) == 2 and not legacy & ids
    assert rerun_judgment(returned([CALL]), returned([CALL])) is None


def test_a_pure_removal_that_a_diff_aligns_as_a_replacement_keys_as_the_removal():
    """difflib aligns "01235455" -> "555" with a replacement, naming a '5' removed and another
    inserted; the long string of the same damage (counted) names only what was removed. One key."""
    from fuzzer.harnesses.parser.damage import _string_edit

    damage = lambda s: "".join(c for c in s if c not in "01234")  # noqa: E731
    assert _string_edit("01235455", damage("01235455"))[0] == "string:-01234+"
    assert _string_edit("01235455" * 3000, damage("01235455" * 3000))[0] == "string:-01234+"
