"""A corruption is keyed by the function that made the damage (issue 30): an unrelated refactor
of the functions around it — a list comprehension removed, a helper added — does not rename it.
Real worker processes trace the input and watch the target's return values."""

from __future__ import annotations

from fuzzer.harnesses.parser.outcome import TargetSpec
from fuzzer.isolation import WorkerPool
from fuzzer.harnesses.parser.oracle import Oracle
from fuzzer.harnesses.parser.harness import keyed_signature
from strategies import Sample, builtin_registry
from tests.conftest import ROOT

REFACTOR = "tests.integration.targets.refactor:"
CITY = "Xi\u2019an, the old capital"
TRUTH = [{"name": "get_weather", "arguments": {"city": CITY}}]
TEXT = '```json\n{"name": "get_weather", "arguments": {"city": "%s"}}\n```' % CITY


def keyed(target: str):
    oracle = Oracle(builtin_registry())
    sample = Sample(text=TEXT, format="fenced", anomaly_class=None, operator=None, calls=TRUTH, tool="get_weather")
    with WorkerPool(TargetSpec(REFACTOR + target, cwd=str(ROOT), coverage=True), workers=1) as pool:
        outcome = pool.run([TEXT])[0]
        judgment = oracle.judge(sample, outcome)
        assert judgment.failed, outcome
        return keyed_signature(oracle, sample, judgment, outcome, pool.run)


def test_the_function_that_made_the_damage_keys_the_bug_whatever_was_refactored_around_it():
    before, after = keyed("parse_v1"), keyed("parse_v2")
    assert before.key.endswith("|refactor.py:_repair"), before.key
    assert before.id == after.id
    assert before.title.endswith("(via _repair)")


def test_a_damage_whose_trace_found_no_maker_joins_the_finding_of_the_maker_its_input_ran(tmp_path):
    """Removing invisible characters: an input whose string was only such a character comes back
    empty, so its trace finds no function that returned the damage and keys it by every function
    the input ran — among them the maker another input's trace found. One bug, one finding."""
    from tests.conftest import run_cli

    result = run_cli(tmp_path, "campaign", "--target", "benchmarks.parsers.hermes_invisible:parse", "--format", "hermes",
                     "--seed", "0", "--max-examples", "30000", "--report", "r.json", "-q")
    assert result.code == 1, result
    altered = [f for f in result.report("r.json")["failures"] if "string argument was altered" in f["title"]]
    assert len(altered) == 1, [f["title"] for f in altered]
    assert altered[0]["title"].endswith("(via decode_at)")


def test_a_corruption_seen_on_a_valid_output_is_shown_and_stored_on_one(tmp_path):
    """An anomalous input may be rejected: a corruption stored on one ("missing argument") passed
    replay and was marked fixed once the parser rejected that input, the bug still there. When
    the corruption happens on valid outputs too, one of them is what it shows and stores."""
    from tests.conftest import run_cli

    result = run_cli(tmp_path, "campaign", "--target", "tests.integration.targets.buggy:strips_and_checks_required",
                     "--tool", "book_hotel", "--format", "hermes", "--seed", "3", "--max-examples", "6000",
                     "--corpus", "corpus", "--report", "r.json", "-q")
    assert result.code == 1, result
    altered = [f for f in result.report("r.json")["failures"] if f["verdict"] == "corruption"]
    assert altered, result
    for finding in altered:
        assert finding["anomaly_class"] is None, (finding["title"], finding["minimized_input"])
