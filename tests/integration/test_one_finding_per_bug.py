"""One finding per bug (issue 30): what a message copies of the input, and the format a rejection
was raised in, no longer make one bug many findings. Real campaigns through the CLI."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

TARGETS = Path(__file__).parent / "targets"
NAIVE = "fuzzer.targets.naive:parse"
QUOTING = "tests.integration.targets.quoting:parse"
APOSTROPHE = "tests.integration.targets.apostrophe:parse"

#: The naive parser's three rejection bugs of valid fenced and DeepSeek outputs (whose payload is a
#: fence), by what json's error says: an apostrophe turned into a quote, an upper-case ```JSON tag
#: the regex does not strip, a fence inside a string value that ends the regex's match early.
NAIVE_REJECTIONS = {"apostrophe": "Expecting <str> delimiter", "upper-case fence": "Expecting value",
                    "fence in a string": "Unterminated string"}


def test_the_naive_parsers_rejection_bugs_are_one_finding_each_listing_their_formats(cli):
    """Six findings before (each bug once per format), three now. (``--format deepseek`` is the
    family: the versions the naive parser cannot read are listed unsupported, not fuzzed. The
    fence-in-a-string bug shows in a few dozen of 20,000 outputs: a seed that meets it in both.)"""
    result = cli("campaign", "--tool", "get_weather", "--target", NAIVE, "--format", "fenced", "--format", "deepseek",
                 "--anomaly", "valid", "--max-examples", "20000", "--seed", "3", "--no-coverage",
                 "--report", "r.json", "-q")
    assert result.code == 1, result
    rejections = [f for f in result.report()["failures"] if f["verdict"] == "false_reject"]
    for bug, words in NAIVE_REJECTIONS.items():
        found = [f for f in rejections if words in f["title"]]
        assert len(found) == 1, (bug, [(f["signature"], f["title"]) for f in found])
        assert sorted(found[0]["formats"]) == ["deepseek", "fenced"], (bug, found[0]["formats"])
        assert re.search(r"valid (fenced, deepseek|deepseek, fenced) outputs rejected", found[0]["title"]), found[0]


def test_in_every_format_the_naive_parser_reads_each_rejection_bug_is_one_finding_and_two_causes_stay_two(cli):
    """The default formats: in a bare JSON output the apostrophe bug shows only when text after the
    JSON made the first ``json.loads`` fail, yet it is the fenced outputs' bug, one finding listing
    every format. "Expecting value" is two bugs worded alike: an upper-case fence tag (fenced and
    DeepSeek outputs) and prose before a bare JSON output; they stay two findings."""
    result = cli("campaign", "--tool", "get_weather", "--target", NAIVE, "--anomaly", "valid",
                 "--max-examples", "20000", "--seed", "3", "--no-coverage", "--report", "r.json", "-q")
    assert result.code == 1, result
    rejections = [f for f in result.report()["failures"] if f["verdict"] == "false_reject"]
    shown = [(f["signature"], f["formats"], f["title"]) for f in rejections]
    (apostrophe,) = [f for f in rejections if NAIVE_REJECTIONS["apostrophe"] in f["title"]]
    assert {"fenced", "deepseek", "json", "mcp", "llama3:json"} <= set(apostrophe["formats"]), shown
    value = [f for f in rejections if NAIVE_REJECTIONS["upper-case fence"] in f["title"]]
    (fence,) = [f for f in value if "fenced" in f["formats"]]
    assert sorted(fence["formats"]) == ["deepseek", "fenced"] and "```JSON" in fence["minimized_input"], shown
    (prose,) = [f for f in value if "json" in f["formats"]]
    assert not {"fenced", "deepseek"} & set(prose["formats"]), shown
    assert len(value) == 2, shown


def test_messages_that_quote_the_input_give_one_signature_each_over_a_30_s_campaign(cli):
    """A ReAct parser's ``Could not extract tool use from input text: <the text>`` and an
    ``assert not rest, rest``: one signature each, whatever text each failing input held."""
    result = cli("campaign", "--tool", "get_weather", "--target", QUOTING, "--budget", "30", "--seed", "1",
                 "--report", "r.json", "-q", timeout=240)
    assert result.code == 1, result
    failures = result.report()["failures"]
    # (a slow or hang finding on an input the parser then rejects says the same words: another bug)
    quoting = {f["signature"] for f in failures if f["verdict"] == "false_reject"
               and (f["exception"] or "").startswith("ValueError: Could not extract tool use from input text:")}
    asserts = {f["signature"] for f in failures if f["verdict"] == "crash"
               and (f["exception"] or "").startswith("AssertionError")}
    assert len(quoting) == 1, [f["title"] for f in failures]
    assert len(asserts) == 1, [f["title"] for f in failures]
    (react,) = [f for f in failures if f["signature"] in quoting]
    assert react["title"].endswith("(Could not extract tool use from input text: <str>)")


def test_one_bug_whether_its_quote_is_in_a_value_or_in_the_prose_around_the_call(cli):
    """A parser that refuses any output holding a single quote: a value's apostrophe and the
    prose's ("I'll look that up.") are one bug, one finding listing every format, in any order."""
    for seed in ("0", "3"):
        result = cli("campaign", "--tool", "get_weather", "--target", APOSTROPHE, "--format", "fenced", "--format",
                     "hermes", "--format", "json", "--anomaly", "valid", "--max-examples", "6000", "--seed", seed,
                     "--no-coverage", "--report", "r.json", "-q")
        assert result.code == 1, result
        quote = [f for f in result.report()["failures"] if (f["exception"] or "").startswith("ValueError")]
        assert [sorted(f["formats"]) for f in quote] == [["fenced", "hermes", "json"]], (seed, quote)


def test_a_campaign_that_follows_a_corpus_files_each_cause_where_the_corpus_did_and_a_fix_of_one_leaves_the_other_open(
        cli, tmp_path):
    """Two causes worded alike, one per format (tests/integration/targets/two_causes.py), filed
    apart by a first campaign. A second campaign on the unchanged parser with another seed files
    them where the corpus did (it once filed the hermes rejections into the fenced finding, and the
    corpus entry of the fenced bug then showed a hermes input); fixing the hermes bug then marks
    only the hermes entry fixed, and a gate files the fenced bug as the known open failure it is."""
    shutil.copy(TARGETS / "two_causes.py", tmp_path / "pe.py")
    run = ("campaign", "--tool", "get_weather", "--target", "pe:parse", "--format", "fenced", "--format", "hermes",
           "--anomaly", "valid", "--max-examples", "6000", "--no-coverage", "--corpus", "c", "-q")
    first = cli(*run, "--seed", "0", "--report", "r0.json")
    assert first.code == 1, first
    causes = {f["format"]: f["signature"] for f in first.report("r0.json")["failures"]
              if (f["exception"] or "").startswith("ValueError")}
    assert sorted(causes) == ["fenced", "hermes"], first
    for seed in ("1", "2"):
        again = cli(*run, "--seed", seed, "--report", "r.json")
        assert again.code == 1, again
        for f in again.report()["failures"]:
            if (f["exception"] or "").startswith("ValueError"):
                assert f["formats"] == [f["format"]] and f["signature"] == causes[f["format"]], (seed, f)
                assert {v.split(" ")[0] for v in f["variants"]} == {f["format"]}, (seed, f)
    text = (tmp_path / "pe.py").read_text()
    (tmp_path / "pe.py").write_text(text.replace("def parse(text):\n    return _parse(text, repair=True)",
                                                 "def parse(text):\n    return _parse(text, repair=False)"))
    replay = cli("replay", "--corpus", "c", "--target", "pe:parse", "--update")
    assert f"updated {causes['hermes']}: open -> fixed" in replay.stdout, replay
    assert causes["fenced"] not in replay.stdout.split("updated", 1)[-1], replay
    gate = cli("gate", "--corpus", "c", "--target", "pe:parse", "--tool", "get_weather", "--format", "fenced",
               "--format", "hermes", "--max-examples", "3000", "--seed", "3")
    # (the gate fuzzes anomalies too, which the campaigns above left out: their bugs are new to it)
    assert "NEW false_reject" not in gate.stdout and "REGRESSION" not in gate.stdout, gate


def test_two_causes_a_first_input_trips_at_once_stay_two_findings(cli):
    """``Côte d'Ivoire`` trips both bugs of tests/integration/targets/two_triggers.py (an apostrophe
    the fence path refuses, a letter the hermes path does): the two formats' first failures each
    fail in the other's format too. The decision waits for the finding's smallest input, which
    trips one bug only; the two causes stay two findings, whatever the seed."""
    for seed in ("5", "6"):
        result = cli("campaign", "--tool", "get_weather", "--target", "tests.integration.targets.two_triggers:parse",
                     "--format", "fenced", "--format", "hermes", "--max-examples", "4000", "--seed", seed,
                     "--report", "r.json", "-q")
        assert result.code == 1, result
        refused = [f for f in result.report()["failures"] if (f["exception"] or "").startswith("ValueError")]
        assert sorted(f["formats"] for f in refused) == [["fenced"], ["hermes"]], (seed, refused)


def test_an_entry_seen_in_two_formats_is_not_fixed_while_one_of_them_still_fails(cli, tmp_path):
    """One finding listing fenced and hermes (tests/integration/targets/shared_trigger.py); the
    fence path fixed, the stored fenced input passes, but hermes outputs with an apostrophe are
    still rejected: the entry stays open, and says where it still fails."""
    shutil.copy(TARGETS / "shared_trigger.py", tmp_path / "pm.py")
    found = cli("campaign", "--tool", "get_weather", "--target", "pm:parse", "--format", "fenced", "--format", "hermes",
                "--anomaly", "valid", "--max-examples", "4000", "--seed", "0", "--no-coverage", "--corpus", "c",
                "--report", "r.json", "-q")
    assert found.code == 1, found
    (shared,) = [f for f in found.report()["failures"] if (f["exception"] or "").startswith("ValueError")]
    assert sorted(shared["formats"]) == ["fenced", "hermes"], shared
    fixed = tmp_path / "pm.py"
    fixed.write_text(fixed.read_text().replace("FENCE_FIXED = False", "FENCE_FIXED = True"))
    replay = cli("replay", "--corpus", "c", "--target", "pm:parse", "--update")
    assert f"updated {shared['signature']}: open -> fixed" not in replay.stdout, replay
    assert "written in" in replay.stdout and "still rejected" in replay.stdout, replay
