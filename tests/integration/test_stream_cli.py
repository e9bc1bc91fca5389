"""`fuzz stream` end to end: contract breaks are one line and exit 2; the naive examples are caught."""

from __future__ import annotations

import pytest

BAD = [
    (("--parser", "tests.integration.targets.stream_bad:not_callable"), "not callable"),
    (("--parser", "tests.integration.targets.stream_bad:no_feed"), "without feed()"),
    (("--parser", "tests.integration.targets.stream_bad:odd_events", "--format", "hermes"), "unknown shape"),
    (("--consumer", "tests.integration.targets.stream_bad:generator_consumer"), "returned a generator"),
]


@pytest.mark.parametrize("args,words", BAD, ids=[a[1].rsplit(":", 1)[-1] for a, _w in BAD])
def test_a_contract_break_is_one_line_and_exit_2(cli, args, words):
    result = cli("stream", *args, "--budget", "10", "--max-examples", "200", "--tool", "get_weather", timeout=120)
    assert result.code == 2, result
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and words in errors[0], result
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_the_naive_accumulator_is_caught_and_the_reference_is_not(cli):
    naive = cli("stream", "--consumer", "fuzzer.targets.accumulator_naive:accumulate", "--max-examples", "3000",
                "--tool", "get_weather", "--report", "naive.json", timeout=170)
    assert naive.code == 1, naive
    verdicts = {f["signature"] for f in naive.report("naive.json")["failures"]}
    assert len(verdicts) >= 3, naive
    clean = cli("stream", "--consumer", "fuzzer.targets.accumulator_reference:accumulate", "--max-examples", "3000",
                "--tool", "get_weather", "--consumer-shape", "sse", timeout=170)
    assert clean.code == 0, clean
