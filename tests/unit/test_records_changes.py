"""How a replayed record changed (fuzzer.records.changes, fuzzer.records.replay): pure functions
on records and outcomes, no worker."""

from __future__ import annotations

from typing import Any, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzer.records.replay_summary import replay_summary_lines
from fuzzer.harnesses.parser.outcome import Outcome
from fuzzer.records import changes
from fuzzer.records.changes import CHANGED, FIXED, REGRESSED, SAME, Seen
from fuzzer.records.baseline import baseline_document, compare_with_baseline
from fuzzer.records.replay_results import (RecordReplay, RecordsReplayResult, blocks, compare_parse,
                                           records_replay_exit_code)
from fuzzer.records.record import Record
from fuzzer.engine.relative import TargetModule

PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}}
LYON = {"name": "get_weather", "arguments": {"city": "Lyon", "unit": "celsius"}}
V2 = TargetModule.of("myparser_v2:parse")


def _record(status: Optional[str], calls: Optional[list] = None, error: Optional[str] = None, **more: Any) -> Record:
    return Record(record_id=more.pop("record_id", "r1"), timestamp="2026-12-01T00:00:00Z",
                  raw_model_output=more.pop("text", "output"), parsed_calls=calls, parse_status=status,
                  parse_error=error, parser_version="v1", **more)


def _returned(*calls: dict) -> Outcome:
    return Outcome("returned", calls=list(calls))


def _rejected(name: str = "myparser_v2.ParseError") -> Outcome:
    return Outcome("rejected", exception=name, message="not JSON")


@pytest.mark.parametrize("record, outcome, verdict", [
    # production failed; the record states the calls its output holds; they come back: a fix
    (_record("error", [PARIS], "myparser_v1.ParseError: not JSON"), _returned(PARIS), FIXED),
    # ... other calls come back: still wrong, but not worse than a failure
    (_record("error", [PARIS], "myparser_v1.ParseError: not JSON"), _returned(LYON), CHANGED),
    # production failed and vouches for nothing: a parse now is a change nobody can judge
    (_record("error", None, "myparser_v1.ParseError: not JSON"), _returned(PARIS), CHANGED),
    # the parser's own exception, in another module: the same
    (_record("error", None, "myparser_v1.ParseError: not JSON"), _rejected(), SAME),
    (_record("error", None, "myparser_v1.ParseError: not JSON"), _rejected("json.decoder.JSONDecodeError"), CHANGED),
    # production raised; a crash now: whether production's was one too nobody knows
    (_record("error", None, "ValueError: no"), Outcome("raised", exception="KeyError"), CHANGED),
    (_record("error", None, "ValueError: no"), Outcome("hung", detail="timeout"), REGRESSED),
    # production's calls were right (parsed and executed): anything else is a regression
    (_record("ok", [LYON]), _returned({"name": "get_weather", "arguments": {"city": "Lyon"}}), REGRESSED),
    (_record("ok", [LYON]), _rejected(), REGRESSED),
    (_record("ok", [LYON]), _returned(LYON), SAME),
    (_record("ok", [{"name": "f", "arguments": {"n": 2}}]), _returned({"name": "f", "arguments": {"n": 2.0}}), SAME),
    (_record("ok", [{"name": "f", "arguments": {"n": 2}}]), _returned({"name": "f", "arguments": {"n": "2"}}),
     REGRESSED),
    # calls production returned but could not execute are vouched for by nobody: a change
    (_record("ok", [LYON], execution_status="error", execution_error="TimeoutError: slow"), _rejected(), CHANGED),
    (_record("ok", [LYON], execution_status="error", execution_error="TimeoutError: slow"),
     Outcome("raised", exception="KeyError"), REGRESSED),
])
def test_each_replay_is_classified_against_what_the_record_vouches_for(record, outcome, verdict):
    row = compare_parse(record, outcome, V2)
    assert row.verdict == verdict, (row.verdict, row.change, row.difference)
    assert row.parse == ("match" if verdict == SAME else "changed")


def test_a_record_without_a_parse_is_unjudged():
    row = compare_parse(_record(None), _returned(PARIS), V2)
    assert (row.parse, row.verdict, row.judged) == ("unjudged", None, False)


def test_what_differs_names_the_call_and_the_argument():
    row = compare_parse(_record("ok", [PARIS, LYON]), _returned(PARIS, {"name": "get_weather",
                                                                         "arguments": {"city": "Lyon"}}), V2)
    assert row.difference == 'call 2 get_weather: arguments.unit dropped (was "celsius")'
    assert changes.difference(Seen("returned", [PARIS]), Seen("returned", [dict(PARIS, arguments={"city": "Pari"})])) \
        == 'call 1 get_weather: arguments.city "Paris" -> "Pari"'
    assert changes.difference(Seen("returned", [LYON, PARIS]), Seen("returned", [LYON])) == \
        "2 call(s) -> 1: dropped get_weather"
    nested = {"name": "f", "arguments": {"a": [1, {"b": True}]}}
    assert changes.difference(Seen("returned", [nested]),
                              Seen("returned", [{"name": "f", "arguments": {"a": [1, {"b": 1}]}}])) == \
        "call 1 f: arguments.a[1].b true -> 1"
    assert changes.difference(Seen("returned", [PARIS]), Seen("rejected", exception="ValueError")) == ""


seen = st.one_of(
    st.builds(Seen, st.just("returned"), st.lists(st.sampled_from([PARIS, LYON]), max_size=2)),
    st.builds(Seen, st.sampled_from(["rejected", "raised"]),
              exception=st.sampled_from(["ValueError", "<target>.ParseError"])),
    st.builds(Seen, st.sampled_from(["hung", "died", "invalid"])),
)


@given(seen, seen, st.lists(st.sampled_from([PARIS, LYON]), min_size=1, max_size=2))
def test_with_a_truth_a_fix_one_way_is_a_regression_the_other(a, b, truth):
    there, back = changes.classify(a, b, truth, V2), changes.classify(b, a, truth, V2)
    assert (there == FIXED) == (back == REGRESSED)
    assert (there == SAME) == (back == SAME)
    assert changes.classify(a, a, truth, V2) == SAME


@given(seen, seen)
def test_without_a_truth_nothing_is_fixed(a, b):
    assert changes.classify(a, b, None, V2) != FIXED


def test_against_a_baseline_a_fix_is_fixed_and_only_a_regression_blocks():
    """A record the baseline failed like production (so it "matched") and that now
    parses to the calls it vouches for used to be marked regressed, and the replay exited 1."""
    fix = _record("error", [PARIS], "myparser_v1.ParseError: not JSON", record_id="fix")
    bug = _record("ok", [LYON], record_id="bug")
    unsure = _record("error", None, "myparser_v1.ParseError: not JSON", record_id="unsure")
    v1 = TargetModule.of("myparser_v1:parse")
    then = RecordsReplayResult(rows=[compare_parse(fix, _rejected("myparser_v1.ParseError"), v1),
                                     compare_parse(bug, _returned(LYON), v1),
                                     compare_parse(unsure, _rejected("myparser_v1.ParseError"), v1)])
    assert all(row.verdict == SAME for row in then.rows)
    baseline = baseline_document(then)["records"]

    now = [compare_parse(fix, _returned(PARIS), V2), compare_parse(bug, _returned(LYON), V2),
           compare_parse(unsure, _returned(PARIS), V2)]
    assert compare_with_baseline(now, baseline, V2) == []
    assert [row.baseline for row in now] == [FIXED, SAME, CHANGED]
    result = RecordsReplayResult(rows=now, baseline_compared=True, baseline_path="base.json")
    assert records_replay_exit_code(result, interrupted=False) == 0
    assert not any(blocks(row, True) for row in now)

    broken = [compare_parse(bug, _returned({"name": "get_weather", "arguments": {"city": "Lyon"}}), V2)]
    compare_with_baseline(broken, baseline, V2)
    assert broken[0].baseline == REGRESSED
    assert records_replay_exit_code(RecordsReplayResult(rows=broken, baseline_compared=True), interrupted=False) == 1


def test_without_a_baseline_a_fix_passes_and_a_change_blocks():
    fix = compare_parse(_record("error", [PARIS], "ValueError: x", record_id="fix"), _returned(PARIS), V2)
    assert records_replay_exit_code(RecordsReplayResult(rows=[fix]), interrupted=False) == 0
    assert RecordsReplayResult(rows=[fix]).test_cases()[0].status == "passed"
    unsure = compare_parse(_record("error", None, "ValueError: x", record_id="unsure"), _returned(PARIS), V2)
    assert records_replay_exit_code(RecordsReplayResult(rows=[fix, unsure]), interrupted=False) == 1


def test_a_baseline_compares_calls_by_their_arguments():
    """A record the baseline already got wrong, now wrong differently with the same function
    name: "changed", not "same" (version 1 kept "1 call(s): get_weather" for both)."""
    record = _record("ok", [LYON])
    then = compare_parse(record, _returned(PARIS), V2)
    now = [compare_parse(record, _returned(dict(PARIS, arguments={"city": "Pari"})), V2)]
    compare_with_baseline(now, baseline_document(RecordsReplayResult(rows=[then]))["records"], V2)
    assert now[0].baseline == CHANGED and "arguments.city" in now[0].difference


def test_each_changed_record_is_printed_once():
    """Every regression used to be listed under "changed records" and again as a
    REGRESSED line."""
    rows = [RecordReplay(f"rec{i:017d}", "v1", None, "changed", "different calls", "1 call(s): get_weather",
                         "1 call(s): get_weather", baseline="regressed") for i in range(3)]
    result = RecordsReplayResult(rows=rows, selected=3, baseline_compared=True, baseline_path="base.json")
    lines = replay_summary_lines(result)
    for row in rows:
        assert sum(row.record_id in line for line in lines) == 1, lines
    assert "baseline base.json: 3 regressed" in lines
