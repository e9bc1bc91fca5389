"""Every verdict a harness can report is described in that harness's own words: SARIF rules, the
HTML legend and ``--explain`` read :mod:`fuzzer.engine.verdicts`, and a verdict missing there would
be described by the generic fallback sentence ("A failure toolfuzz reports as ...")."""

import ast
from pathlib import Path

import pytest

from fuzzer.engine.harness import load_harnesses
from fuzzer.engine.verdicts import VERDICTS, describe, of_harness
from fuzzer.harnesses.parser.oracle import Verdict
from fuzzer.reports.common import describe_verdict

HARNESSES = Path(__file__).resolve().parents[2] / "fuzzer" / "harnesses"


def _literal_verdicts(harness: str) -> set:
    """The verdict names a harness's code writes as literals: ``Violation("name", ...)`` and
    ``_sig("name", ...)`` / ``_violation("name", ...)`` calls."""
    names = set()
    for path in (HARNESSES / harness).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if called in ("Violation", "_violation", "_sig"):
                    names.add(node.args[0].value)
    return names


@pytest.mark.parametrize("harness", ["executor", "agent", "stream"])
def test_every_verdict_a_harness_writes_is_registered_in_its_own_words(harness):
    load_harnesses()
    written = _literal_verdicts(harness)
    assert written, f"no verdict found in the {harness} harness's code (the scan is broken)"
    registered = {v.name: v.description for v in of_harness(harness)}
    assert written <= set(registered), sorted(written - set(registered))
    for name in written:
        words = describe(name, harness)
        assert words == registered[name] and "A failure toolfuzz reports as" not in words


def test_the_parser_verdicts_are_registered_and_no_two_verdicts_of_a_harness_share_words():
    load_harnesses()
    assert {v.value for v in Verdict} - {"pass"} <= {v.name for v in of_harness("parser")}
    by_harness: dict = {}
    for info in VERDICTS.values():
        assert info.description.strip(), info.key
        by_harness.setdefault(info.harness, []).append(info.description)
    for harness, words in by_harness.items():
        assert len(words) == len(set(words)), harness
    # the same name in two harnesses means two things, each said its own way
    assert describe("crash", "stream") != describe("crash", "parser")
    assert describe_verdict("hang", "agent") == describe("hang", "agent")
