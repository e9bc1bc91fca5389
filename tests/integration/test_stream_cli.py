"""`fuzz stream` end to end: contract breaks are one line and exit 2; the naive examples are caught
with small findings whose reproduce commands run as printed; the clean ones are clean; stream
entries are replayed, gated and diffed."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import time

import pytest

from tests.conftest import cli_command, cli_env, default_sigint

NAIVE = "fuzzer.targets.stream_naive:make_parser"
REFERENCE = "fuzzer.targets.stream_reference:make_parser"
INDEX_ZERO = "tests.integration.targets.stream_variants:index_zero"
MARKER_LOSS = "tests.integration.targets.stream_variants:marker_loss"
PARTLY_FIXED = "tests.integration.targets.stream_variants:marker_loss_partly_fixed"

BAD = [
    (("--parser", "tests.integration.targets.stream_bad:not_callable"), "not callable"),
    (("--parser", "tests.integration.targets.stream_bad:no_feed"), "without feed()"),
    (("--parser", "tests.integration.targets.stream_bad:odd_events", "--format", "hermes"), "unknown shape"),
    (("--parser", "tests.integration.targets.stream_bad:odd_events"), "unknown shape"),  # found while probing
    (("--consumer", "tests.integration.targets.stream_bad:generator_consumer"), "returned a generator"),
    (("--consumer", "tests.integration.targets.stream_bad:no_argument_consumer"), "cannot be called with the chunks"),
]


@pytest.mark.parametrize("args,words", BAD, ids=[f"{a[1].rsplit(':', 1)[-1]}{'-probed' if len(a) == 2 and 'odd' in a[1] else ''}"
                                                 for a, _w in BAD])
def test_a_contract_break_is_one_line_and_exit_2(cli, args, words):
    result = cli("stream", *args, "--budget", "10", "--max-examples", "200", "--tool", "get_weather", timeout=120)
    assert result.code == 2, result
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and words in errors[0], result
    assert errors[0].startswith(("Error: --parser '", "Error: --consumer '")), result
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_the_naive_parser_shows_six_small_bugs_whose_reproduce_commands_run_as_printed(cli, tmp_path):
    result = cli("stream", "--parser", NAIVE, "--tool", "get_weather", "--max-examples", "2500", "--report", "r.json",
                 timeout=300)
    assert result.code == 1, result
    report = result.report()
    assert list(report["formats"]["supported"]) == ["hermes"] and report["streams"] >= 2500
    small = [f for f in report["failures"] if f["minimized"] and len(f["minimized_input"]) <= 120
             and len(f["cuts"]) <= 3]
    assert len({f["signature"] for f in small}) >= 6, [(f["title"], len(f["input"])) for f in report["failures"]]
    for finding in small[:6]:
        assert finding["deltas"] and "".join(finding["deltas"]) == finding["minimized_input"]
        run = subprocess.run(finding["reproduce"], shell=True, cwd=tmp_path, env=cli_env(), capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 1, (finding["reproduce"], run.stdout, run.stderr)  # exit 1 while the bug is there
        assert finding["verdict"] in run.stdout or "Traceback" in run.stderr, run.stdout


@pytest.mark.slow
def test_the_reference_parser_is_clean_in_the_format_it_streams(cli):
    result = cli("stream", "--parser", REFERENCE, "--max-examples", "6000", "--report", "r.json", timeout=240)
    assert result.code == 0, result
    report = result.report()
    assert list(report["formats"]["supported"]) == ["hermes"] and report["streams"] >= 6000
    assert report["failures"] == [] and "json" in report["formats"]["unsupported"]


@pytest.mark.slow
def test_the_naive_accumulator_is_caught_and_the_reference_is_not(cli):
    naive = cli("stream", "--consumer", "fuzzer.targets.accumulator_naive:accumulate", "--max-examples", "3000",
                "--tool", "get_weather", "--report", "naive.json", timeout=170)
    assert naive.code == 1, naive
    verdicts = {f["signature"] for f in naive.report("naive.json")["failures"]}
    assert len(verdicts) >= 3, naive
    for shape in ("openai", "anthropic", "sse"):
        clean = cli("stream", "--consumer", "fuzzer.targets.accumulator_reference:accumulate", "--max-examples", "2000",
                    "--consumer-shape", shape, timeout=170)
        assert clean.code == 0, clean


@pytest.mark.slow
def test_a_stream_entry_is_replayed_gated_and_diffed(cli, tmp_path):
    found = cli("stream", "--parser", NAIVE, "--tool", "get_weather", "--max-examples", "1500", "--corpus", "corp",
                timeout=240)
    assert found.code == 1, found
    entries = [json.loads(open(p, encoding="utf-8").read()) for p in glob.glob(str(tmp_path / "corp" / "*.json"))]
    assert entries and all(e["kind"] == "stream" and e["scenario"]["mode"] == "parser" for e in entries)

    # replayed: the naive parser fails every entry again; an accumulator cannot replay a parser's entry
    again = cli("replay", "--corpus", "corp", "--stream-parser", NAIVE, "--report", "again.json")
    assert again.code == 1 and {r["status"] for r in again.report("again.json")["replayed"]} == {"fail"}, again
    other = cli("replay", "--corpus", "corp", "--stream-consumer", "fuzzer.targets.accumulator_reference:accumulate",
                "--report", "other.json")
    assert {r["status"] for r in other.report("other.json")["replayed"]} == {"unjudged"}, other
    assert other.code != 0, other
    # the reference passes them all: marked fixed
    fixed = cli("replay", "--corpus", "corp", "--stream-parser", REFERENCE, "--update", "--report", "fixed.json")
    assert fixed.code == 0 and len(fixed.report("fixed.json")["updates"]) == len(entries), fixed

    gate = ("gate", "--corpus", "corp", "--tool", "get_weather", "--max-examples", "600", "--report", "g.json")
    # a fixed entry failing again blocks
    regressed = cli(*gate, "--stream-parser", NAIVE)
    assert regressed.code == 1 and len(regressed.report("g.json")["regressions"]) == len(entries), regressed
    # a new bug blocks: the variant passes every entry, its short campaign finds what the corpus lacks
    new = cli(*gate, "--stream-parser", INDEX_ZERO)
    assert new.code == 1, new
    decided = new.report("g.json")
    assert decided["passed"] == len(entries) and decided["new"], decided
    assert {x["signature"] for x in decided["new"]}.isdisjoint(e["signature"] for e in entries)
    # and the reference passes
    assert cli(*gate, "--stream-parser", REFERENCE).code == 0

    # diffed: the same streams, the corpus's first, into two versions
    worse = cli("stream", "--parser", NAIVE, "--diff", REFERENCE, "--corpus", "corp", "--tool", "get_weather",
                "--max-examples", "300", "--report", "d.json")
    assert worse.code == 1, worse
    d = worse.report("d.json")
    assert d["corpus_entries"] == len(entries) and d["counts"]["regression"] >= len(entries), d["counts"]
    assert all(x["old"]["signatures"] == [] for x in d["differences"] if x["kind"] == "regression")
    better = cli("stream", "--parser", REFERENCE, "--diff", NAIVE, "--corpus", "corp", "--tool", "get_weather",
                 "--max-examples", "300", "--report", "d.json")
    assert better.code == 0 and better.report("d.json")["counts"]["fixed"] >= len(entries), better
    assert better.report("d.json")["counts"]["regression"] == 0


@pytest.mark.slow
def test_a_stream_campaign_that_meets_a_fixed_entry_s_bug_again_says_regression(cli, tmp_path):
    """A partial fix: the corpus's minimal streams pass (replay marks them fixed), the campaign still
    meets their bugs under other splits. It says REGRESSION, as `fuzz campaign` does, and the entry
    stays fixed: "kept" alone reads as a known open failure."""
    args = ("--tool", "get_weather", "--format", "hermes", "--seed", "1", "--max-examples", "400", "--corpus", "corp")
    found = cli("stream", "--parser", MARKER_LOSS, *args, timeout=240)
    assert found.code == 1, found
    update = cli("replay", "--corpus", "corp", "--stream-parser", PARTLY_FIXED, "--update", "--report", "u.json")
    fixed = {u["signature"] for u in update.report("u.json")["updates"]}
    assert fixed, update
    again = cli("stream", "--parser", PARTLY_FIXED, *args, "--report", "again.json", timeout=240)
    assert again.code == 1, again
    met = fixed & {f["signature"] for f in again.report("again.json")["failures"]}
    assert met, again  # the campaign met a fixed entry's bug under another split
    for signature in met:
        assert f"REGRESSION {signature}" in again.stdout, again.stdout
    entries = [json.loads(open(p, encoding="utf-8").read()) for p in glob.glob(str(tmp_path / "corp" / "*.json"))]
    assert {e["status"] for e in entries if e["signature"] in met} == {"fixed"}  # it stays fixed


def test_ctrl_c_keeps_every_finding_in_the_report_and_the_corpus(tmp_path):
    proc = subprocess.Popen(cli_command("stream", "--parser", NAIVE, "--budget", "60", "--report", "r.json",
                                        "--corpus", "corp"), cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    found = 0
    deadline = time.monotonic() + 60
    while found < 2 and time.monotonic() < deadline:
        found += "] found " in proc.stderr.readline()
    os.kill(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["stop_reason"] == "interrupted" and len(report["failures"]) >= 2
    stored = {json.loads(open(p, encoding="utf-8").read())["signature"] for p in glob.glob(str(tmp_path / "corp" / "*.json"))}
    assert {f["signature"] for f in report["failures"]} <= stored


def test_an_interrupted_stream_campaign_that_found_nothing_is_no_all_clear(tmp_path):
    proc = subprocess.Popen(cli_command("stream", "--parser", REFERENCE, "--budget", "60"), cwd=tmp_path, env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "fuzzing" not in proc.stderr.readline():
        pass
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "no failure in the" in out + err


def test_a_stream_target_that_does_not_load_in_replay_or_gate_names_the_option_typed(cli):
    """replay and gate name a stream parser with --stream-parser: an error about it must name that
    option (it said --parser, which neither command has)."""
    found = cli("stream", "--parser", MARKER_LOSS, "--tool", "get_weather", "--format", "hermes", "--seed", "1",
                "--max-examples", "200", "--corpus", "corp", timeout=240)
    assert found.code == 1, found
    for command, *more in (("replay",), ("gate", "--max-examples", "50")):
        result = cli(command, "--corpus", "corp", "--stream-parser", "tests.integration.targets.stream_variants:nope",
                     *more)
        errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
        assert result.code == 2 and len(errors) == 1, result
        assert errors[0].startswith("Error: --stream-parser 'tests.integration.targets.stream_variants:nope'"), result
        assert "Traceback" not in result.stderr
