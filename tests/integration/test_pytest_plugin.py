"""The pytest plugin in real pytest sessions (``pytester``, in subprocesses, plugin loaded from its
``pytest11`` entry point), with and without pytest-xdist.

The project under test has a corpus of four entries found by a real campaign on the naive parser
and the next version of that parser, ``naive:parse`` in the project (the same file, as a corpus
always meets the next version of its own parser), that fixes two of those bugs (it rejects ``{}``
and ``NaN``):

| entry                               | status | next version  | pytest   |
|-------------------------------------|--------|---------------|----------|
| crash on ``{}``                     | fixed  | passes        | passed   |
| corruption: ``NaN`` accepted        | open   | passes        | XPASS    |
| false_reject of a fenced apostrophe | open   | still fails   | xfailed  |
| corruption: a ``,`` removed         | fixed  | fails again   | FAILED   |

plus two tests using the ``toolfuzz_campaign`` fixture: the README's example (the reference
parser: passes) and the same on the naive parser (fails with its findings). Target and corpus come from the project's ``toolfuzz.toml``.
"""

from __future__ import annotations

import re

import pytest

from corpus.store import CorpusStore
from fuzzer.pytest_plugin import NEW_PREFIX, REGRESSION_PREFIX, XPASS_PREFIX
from tests.conftest import ROOT
from tests.integration.naive_campaign import TARGET, finding, naive_campaign

pytest_plugins = ["pytester"]

#: The naive parser's next version: its own source with two bugs fixed.
MYTARGET = (ROOT / "fuzzer" / "targets" / "naive.py").read_text(encoding="utf-8").replace(
    '''    """Extract tool calls from model output (bare JSON or a ```json fence)."""
''', '''    """Extract tool calls from model output (bare JSON or a ```json fence)."""
    if text.strip() == "{}" or "NaN" in text:
        raise ValueError("not a tool call")
''')
assert "not a tool call" in MYTARGET

#: The README's fixture example, run as written (against the bundled reference parser).
README_EXAMPLE = re.search(r"```python\n(def test_parser_survives_toolfuzz.*?)```",
                           (ROOT / "README.md").read_text(encoding="utf-8"), re.S).group(1)

CAMPAIGN_TESTS = README_EXAMPLE + '''

def test_naive_parser_under_toolfuzz(toolfuzz_campaign):
    toolfuzz_campaign("fuzzer.targets.naive:parse", tool="get_weather", max_examples=300)
'''


@pytest.fixture
def project(pytester):
    view = naive_campaign()
    entries = {
        "fixed_pass": finding(view, "crash", lambda r: r["minimized_input"] == "{}"),
        "open_pass": finding(view, "corruption", lambda r: "NaN" in r["minimized_input"]),
        "open_fail": finding(view, "false_reject"),
        "fixed_fail": finding(view, "corruption", lambda r: "altered" in r["title"] and "NaN" not in r["minimized_input"]),
    }
    store = CorpusStore(pytester.path / "fuzz-corpus")
    for f in entries.values():
        store.put(f.to_entry(target=TARGET, version=None))
    for name in ("fixed_pass", "fixed_fail"):
        store.mark_fixed(entries[name].signature.id)
    pytester.makepyfile(naive=MYTARGET, test_campaigns=CAMPAIGN_TESTS)
    pytester.path.joinpath("toolfuzz.toml").write_text('target = "naive:parse"\ncorpus = "fuzz-corpus"\n')
    return {name: f.signature.id for name, f in entries.items()}


@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_corpus_entries_are_tests_with_the_gates_judgment(pytester, project, xdist):
    result = pytester.runpytest_subprocess("--toolfuzz", "-v", "-p", "no:cacheprovider", *xdist)
    result.assert_outcomes(passed=2, failed=2, xfailed=1, xpassed=1)
    out = result.stdout.str()
    for name, outcome in (("fixed_pass", "PASSED"), ("open_pass", "XPASS"), ("open_fail", "XFAIL"),
                          ("fixed_fail", "FAILED")):
        result.stdout.re_match_lines([rf".*fuzz-corpus::{project[name]} .*{outcome}.*|.*{outcome}.* fuzz-corpus::{project[name]}.*"])
    assert f"{REGRESSION_PREFIX}: {project['fixed_fail']}" in out and "reproduce: " in out
    assert f"XPASS fuzz-corpus::{project['open_pass']}: {XPASS_PREFIX}: {project['open_pass']}" in out
    # the campaign fixture: the naive parser fails with its findings, the reference passes
    result.stdout.re_match_lines([r".*test_naive_parser_under_toolfuzz.*FAILED.*|.*FAILED.*test_naive_parser_under_toolfuzz.*"])
    assert "toolfuzz found" in out and "minimized:" in out
    assert f"{NEW_PREFIX}: " not in out
    result.stdout.re_match_lines([r".*test_parser_survives_toolfuzz.*PASSED.*|.*PASSED.*test_parser_survives_toolfuzz.*"])


def test_a_bad_config_file_is_one_usage_error(pytester):
    pytester.path.joinpath("toolfuzz.toml").write_text('corpus = "c"\ntarget = 3\n')
    result = pytester.runpytest("--toolfuzz", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "toolfuzz: toolfuzz.toml: target: expected a module:callable reference (string), got integer 3" \
        in result.stderr.str()


def test_agent_entries_replay_on_the_loop_given_and_are_skipped_without_one(pytester):
    """Entries `fuzz agent --corpus` wrote are tests too: on the loop that has the bugs, an open one
    is xfail and a fixed one a regression; on the loop without them, the open ones XPASS; without
    --toolfuzz-agent they are skipped, naming the option (never failed as "cannot replay")."""
    from tests.conftest import run_cli

    made = run_cli(pytester.path, "agent", "--agent", "fuzzer.targets.agent_naive:run", "--max-examples", "60",
                   "--seed", "1", "--corpus", "fuzz-corpus", "-q")
    assert made.code == 1, made
    store = CorpusStore(pytester.path / "fuzz-corpus")
    signatures = sorted(e.signature for _, e in store.entries())
    assert len(signatures) >= 2 and {e.kind for _, e in store.entries()} == {"agent"}
    store.mark_fixed(signatures[0])
    naive = pytester.runpytest_subprocess("--toolfuzz", "--toolfuzz-corpus", "fuzz-corpus", "--toolfuzz-agent",
                                          "fuzzer.targets.agent_naive:run", "-p", "no:cacheprovider")
    naive.assert_outcomes(failed=1, xfailed=len(signatures) - 1)
    assert f"{REGRESSION_PREFIX}: {signatures[0]}" in naive.stdout.str()
    clean = pytester.runpytest_subprocess("--toolfuzz", "--toolfuzz-corpus", "fuzz-corpus", "--toolfuzz-agent",
                                          "fuzzer.targets.agent_state_machine:run", "-p", "no:cacheprovider", "-rX")
    clean.assert_outcomes(passed=1, xpassed=len(signatures) - 1)
    assert "--agent fuzzer.targets.agent_state_machine:run --update" in clean.stdout.str()
    skipped = pytester.runpytest_subprocess("--toolfuzz", "--toolfuzz-corpus", "fuzz-corpus", "--toolfuzz-target",
                                            "fuzzer.targets.naive:parse", "-p", "no:cacheprovider", "-rs")
    skipped.assert_outcomes(skipped=len(signatures))
    assert "give --toolfuzz-agent M:A to run it" in skipped.stdout.str()


def test_a_corpus_of_parser_and_agent_entries_runs_the_kind_given_and_skips_the_other(pytester):
    """Only --toolfuzz-agent: the agent entries are judged and the parser ones skipped (they were
    all failed with "cannot replay the corpus" while the parser's target was missing)."""
    from tests.conftest import run_cli

    for args in (("agent", "--agent", "fuzzer.targets.agent_naive:run"),
                 ("campaign", "--tool", "get_weather", "--target", "fuzzer.targets.naive:parse")):
        assert run_cli(pytester.path, *args, "--max-examples", "300", "--seed", "1", "--corpus", "fuzz-corpus",
                       "-q").code == 1
    kinds = [e.kind for _, e in CorpusStore(pytester.path / "fuzz-corpus").entries()]
    result = pytester.runpytest_subprocess("--toolfuzz", "--toolfuzz-corpus", "fuzz-corpus", "--toolfuzz-agent",
                                           "fuzzer.targets.agent_naive:run", "-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(xfailed=kinds.count("agent"), skipped=kinds.count("parser"))
    assert "give --toolfuzz-target M:A to run it" in result.stdout.str()


def test_the_campaign_fixture_fails_a_test_that_tested_nothing(pytester):
    """A parser that rejects every valid output supports no format: `fuzz campaign` exits 2 on it,
    and the fixture must not call that a pass."""
    pytester.makepyfile(rejects="def parse(text):\n    raise ValueError('not a tool call')\n",
                        test_nothing='''
def test_rejecting_parser(toolfuzz_campaign):
    toolfuzz_campaign("rejects:parse", tool="get_weather", max_examples=100)
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "toolfuzz_campaign: nothing was tested: no supported format" in result.stdout.str()


def test_an_unreadable_corpus_file_fails_as_the_gate_blocks_on_it(pytester):
    """A merge conflict left in a corpus entry: its regression test would be lost. The gate and
    replay block on it; the plugin fails it (it used to skip it)."""
    corpus = pytester.path / "fuzz-corpus"
    corpus.mkdir()
    (corpus / "0123456789abcdef.json").write_text('<<<<<<< HEAD\n{"signature": "crash-1"}\n', encoding="utf-8")
    pytester.path.joinpath("toolfuzz.toml").write_text('target = "fuzzer.targets.reference:parse"\n'
                                                      'corpus = "fuzz-corpus"\n')
    result = pytester.runpytest_subprocess("--toolfuzz", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "unreadable corpus file: " in result.stdout.str() and "0123456789abcdef.json" in result.stdout.str()


def test_entries_passing_on_a_target_that_tests_nothing_fail_as_the_gate_blocks(pytester, project):
    """A parser that rejects every valid output (a broken import caught and turned into a
    ValueError) "fixes" every crash entry: `fuzz gate` blocks on it (NOTHING TESTED) and `fuzz replay`
    exits 1, but `pytest --toolfuzz` passed the fixed entries and XPASSed the open ones (exit 0)."""
    pytester.makepyfile(rejecting='def parse(text):\n    raise ValueError("parser unavailable")\n')
    result = pytester.runpytest_subprocess("--toolfuzz", "-p", "no:cacheprovider", "--toolfuzz-target",
                                           "rejecting:parse", "-k", "fuzz-corpus")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == 0 and outcomes.get("xpassed", 0) == 0
    assert "tests nothing" in out and "parser unavailable" in out
