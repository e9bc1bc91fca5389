"""The first line of `fuzz records replay` counts the distinct outputs it parsed, not the ones it
meant to: a replay stopped by Ctrl-C says how many of them ran."""

from __future__ import annotations

from fuzzer.records.replay_results import RecordsReplayResult


def test_a_finished_replay_says_every_distinct_output_was_parsed_once():
    done = RecordsReplayResult(target="m:parse", selected=1000, distinct_outputs=561, parsed_outputs=561)
    assert "(561 distinct outputs parsed once)" in done.summary_lines()[0]


def test_an_interrupted_replay_does_not_claim_the_outputs_it_never_parsed():
    cut = RecordsReplayResult(target="m:parse", selected=1000, distinct_outputs=561, parsed_outputs=128)
    first = cut.summary_lines()[0]
    assert "561 distinct outputs parsed once" not in first
    assert "128 of 561 distinct outputs parsed" in first
    assert cut.to_report()["parsed_outputs"] == 128
