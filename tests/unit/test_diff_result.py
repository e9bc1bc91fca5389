"""What a diff of two versions reports, for the parser's diff and the stream harness's alike:
the totals and every table count each compared input once, the console shows the same tables and
headings, and a diff that tested nothing is a failed JUnit case, never an empty suite."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from fuzzer.engine.diff_result import KINDS, VersionDiffResult
from fuzzer.engine.events import StopReason
from fuzzer.engine.jobs.diff import DiffResult, Difference, Side
from fuzzer.engine.results import FAILED, SKIPPED
from fuzzer.harnesses.stream.checks import StreamCase
from fuzzer.harnesses.stream.diff import Difference as StreamDifference, StreamDiffResult, diff_lines
from fuzzer.harnesses.stream.worker import StreamOutcome

CLASSES = st.sampled_from(["valid", "truncated_output", "wrong_type"])


@given(st.lists(st.tuples(st.sampled_from(KINDS), CLASSES, st.sampled_from(["json", "hermes"]))))
def test_every_table_counts_each_input_once_and_sums_to_the_totals(compared):
    result = VersionDiffResult()
    by_format: dict = {}
    for kind, cls, fmt in compared:
        result.count(kind, (result.by_class, cls), (by_format, fmt))
    assert sum(result.kinds.values()) == len(compared)
    for table in (result.by_class, by_format):
        for kind in KINDS:
            assert sum(row[kind] for row in table.values()) == result.kinds[kind]


def test_the_tables_show_valid_first_then_the_classes_in_order():
    result = VersionDiffResult()
    for kind, cls in (("fixed", "wrong_type"), ("same", "valid"), ("regression", "truncated_output")):
        result.count(kind, (result.by_class, cls))
    assert result.table_lines("class", result.by_class) == [
        "class                       same   fixed  regress  changed",
        "valid                          1       0        0        0",
        "truncated_output               0       0        1        0",
        "wrong_type                     0       1        0        0",
    ]


def _sample(**fields):
    base = dict(text='{"name": "x"}', anomaly_class="wrong_type", operator="swap", format="json", tool="x",
                calls=[], truth_known=False)
    return SimpleNamespace(**{**base, **fields})


def _parser_result() -> DiffResult:
    returned = SimpleNamespace(kind="returned", calls=[{"name": "x", "arguments": {}}], frames=(), detail=None)
    rejected = SimpleNamespace(kind="rejected", exception="m.ParseError", frames=(), detail=None)
    def row(same: int = 0, regression: int = 0) -> dict:
        return {"same": same, "fixed": 0, "regression": regression, "changed": 0}

    result = DiffResult(old="v1:parse", new="v2:parse", samples=3, stop_reason=StopReason.BUDGET,
                        kinds=row(2, 1), by_class={"wrong_type": row(regression=1), "valid": row(2)},
                        by_format={"json": row(1, 1), "hermes": row(1)})
    sample = _sample()
    result.differences = [Difference("regression", sample, Side(returned, "pass", None),
                                     Side(rejected, "false_reject", "abc"), count=2)]
    return result


def test_a_parser_diff_prints_its_totals_both_tables_and_each_difference():
    assert _parser_result().summary_lines() == [
        "3 samples: 2 same, 0 fixed, 1 regression, 0 changed [stopped: budget]",
        "anomaly class               same   fixed  regress  changed",
        "valid                          2       0        0        0",
        "wrong_type                     0       0        1        0",
        "format                      same   fixed  regress  changed",
        "hermes                         1       0        0        0",
        "json                           1       0        1        0",
        "",
        "[1] REGRESSION on wrong_type/swap in json (seen 2x)",
        '    input: "{\\"name\\": \\"x\\"}"',
        '    old:   pass           returned [{"name": "x", "arguments": {}}]',
        "    new:   false_reject   rejected m.ParseError",
    ]


def _stream_result() -> StreamDiffResult:
    case = StreamCase(text="abcd", cuts=(2,), format="hermes", anomaly_class=None, truth=None, truth_known=False)
    counts = {"same": 2, "fixed": 1, "regression": 0, "changed": 1}
    result = StreamDiffResult(old="v1:P", new="v2:P", streams=4, corpus_entries=1, stop_reason=StopReason.DONE,
                              kinds=dict(counts), by_class={"valid": dict(counts)})
    ran = ("run", StreamOutcome(calls=[], content="ab"))
    result.differences = [StreamDifference("changed", case, ran, ("run", StreamOutcome(calls=[], content="abcd")))]
    return result


def test_a_stream_diff_prints_its_totals_its_table_and_each_difference():
    assert diff_lines(_stream_result()) == [
        "4 streams (1 corpus entries): 2 same, 1 fixed, 0 regression, 1 changed [stopped: done]",
        "class                       same   fixed  regress  changed",
        "valid                          2       1        0        1",
        "",
        "[1] CHANGED on valid in hermes (seen 1x)",
        "    deltas: ['ab', 'cd']",
        "    old:    pass: []",
        "    new:    pass: []",
    ]


def test_each_difference_is_a_case_and_a_diff_that_tested_nothing_is_a_failed_one():
    parser, stream = _parser_result(), _stream_result()
    assert [(c.classname, c.status) for c in parser.test_cases()] == [("toolfuzz.diff", FAILED)]
    assert [(c.classname, c.status) for c in stream.test_cases()] == [("toolfuzz.stream_diff", SKIPPED)]
    parser.problem = stream.problem = "the new version returned no call"
    for result, where in ((parser, "toolfuzz.diff"), (stream, "toolfuzz.stream_diff")):
        last = result.test_cases()[-1]
        assert (last.classname, last.name, last.status) == (where, "diff", FAILED)
        assert last.message == "nothing tested: the new version returned no call"
    assert diff_lines(stream)[-1] == "nothing tested: the new version returned no call"
