"""The bug-finding benchmark's parsers: each declares its planted bug, and its hand-written trigger
shows that bug on ``parse`` and not on ``parse_fixed``.

Verdicts are checked the way the engine's oracle decides them (its own ``calls_equal``,
``corruption_key`` and validate-level ``Promise``), and each trigger, turned into the finding a
campaign would report, must satisfy the bug's ``match`` rule — so a rule that could never
recognize its bug fails here, not silently in the benchmark. Hangs are counted in executed lines
(no clock). The slow and unsafe triggers need a process of their own (a regex that runs for
minutes, an audit hook for good): tests/integration/test_bug_parsers_triggers.py.
"""

from __future__ import annotations

import re
import sys

import pytest

from benchmarks import parsers
from benchmarks.bugfinding import DEFAULT_MODE, EXPLORATION_OFF, EXPLORATION_ON, Run, parse_seeds, table
from corpus.signature import history_signature
from fuzzer.harnesses.parser.damage import corruption_key
from fuzzer.harnesses.parser.oracle import calls_equal
from fuzzer.harnesses.parser.promise import Promise
from strategies import FORMATS, builtin_registry

NAMES = parsers.names()
MODULES = {name: parsers.load(name) for name in NAMES}


def named(*verdicts: str) -> list:
    return [n for n in NAMES if MODULES[n].BUG["verdict"] in verdicts]


def outcome(function, text: str) -> tuple:
    """("returned", calls) | ("rejected", exc) | ("raised", exc), as the target contract reads it."""
    try:
        return "returned", function(text)
    except ValueError as exc:
        return "rejected", exc
    except Exception as exc:  # noqa: BLE001 - a crash is what some triggers must show
        return "raised", exc


def primed(module) -> None:
    for text in getattr(module, "PRIMERS", ()):
        for function in (module.parse, module.parse_fixed):
            outcome(function, text)


def finding(module, **fields) -> dict:
    """The failure entry a campaign report would hold for the trigger."""
    return {"verdict": module.BUG["verdict"], "input": module.TRIGGER, "minimized_input": module.TRIGGER,
            "title": "", "reason": "", "exception": None, **fields}


def test_the_set_covers_every_verdict_with_at_least_twenty_parsers():
    assert len(NAMES) >= 20
    assert {MODULES[n].BUG["verdict"] for n in NAMES} == set(parsers.VERDICTS)
    assert {"parse", "validate"} == {MODULES[n].BUG["level"] for n in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_bug_is_declared_as_data(name):
    module = MODULES[name]
    bug = module.BUG
    assert set(bug) == {"verdict", "level", "formats", "description", "match"}
    assert bug["verdict"] in parsers.VERDICTS and bug["level"] in ("parse", "validate")
    assert bug["formats"] is None or (bug["formats"] and set(bug["formats"]) <= set(FORMATS))
    assert bug["description"].strip() and module.__doc__ and "planted bug" in module.__doc__
    rule = bug["match"]
    assert set(rule) <= set(parsers.MATCH_KEYS) and "verdict" in rule
    verdicts = rule["verdict"] if isinstance(rule["verdict"], list) else [rule["verdict"]]
    assert bug["verdict"] in verdicts and set(verdicts) <= set(parsers.VERDICTS) | {"nondeterminism"}
    for key in set(rule) - {"verdict"}:
        re.compile(rule[key])
    assert callable(module.parse) and callable(module.parse_fixed) and module.parse is not module.parse_fixed
    assert isinstance(module.TRIGGER, str) and module.TRIGGER


def test_match_rules_read_the_report_fields():
    rule = {"verdict": ["crash", "hang"], "text": "TypeError", "input": "x{2}", "operator": "^trunc"}
    hit = {"verdict": "hang", "exception": "TypeError: no", "input": "axx", "operator": "truncate_anywhere"}
    assert parsers.matches(rule, hit)
    assert not parsers.matches(rule, dict(hit, verdict="corruption"))
    assert not parsers.matches(rule, dict(hit, exception="KeyError"))
    assert not parsers.matches(rule, dict(hit, input="ax", minimized_input=None))
    assert parsers.matches(rule, dict(hit, input="ax", minimized_input="xx"))
    assert not parsers.matches(rule, dict(hit, operator="huge_string"))


@pytest.mark.parametrize("name", named("crash"))
def test_crash_trigger(name):
    module = MODULES[name]
    kind, exc = outcome(module.parse, module.TRIGGER)
    assert kind == "raised", f"parse() did not crash: {kind} {exc!r}"
    assert outcome(module.parse_fixed, module.TRIGGER)[0] in ("returned", "rejected")
    assert parsers.matches(module.BUG["match"], finding(module, exception=f"{type(exc).__name__}: {exc}",
                                                        title=f"crash: {type(exc).__name__}"))


@pytest.mark.parametrize("name", named("corruption"))
def test_corruption_trigger(name):
    module = MODULES[name]
    primed(module)
    kind, got = outcome(module.parse, module.TRIGGER)
    assert kind == "returned" and not calls_equal(got, module.EXPECTED), (kind, got)
    kind, fixed = outcome(module.parse_fixed, module.TRIGGER)
    assert kind == "returned" and calls_equal(fixed, module.EXPECTED), (kind, fixed)
    _, words = corruption_key(module.EXPECTED, got)
    title = history_signature("corruption").title if hasattr(module, "PRIMERS") else f"corruption: {words}"
    assert parsers.matches(module.BUG["match"], finding(module, title=title, reason=words))
    if hasattr(module, "PRIMERS"):  # a bug that needs earlier inputs is recognized only as such
        assert not parsers.matches(module.BUG["match"], finding(module, title=f"corruption: {words}", reason=words))


@pytest.mark.parametrize("name", named("false_reject"))
def test_false_reject_trigger(name):
    module = MODULES[name]
    kind, got = outcome(module.parse, module.TRIGGER)
    assert kind == "rejected" or (kind == "returned" and not got), (kind, got)
    kind, fixed = outcome(module.parse_fixed, module.TRIGGER)
    assert kind == "returned" and calls_equal(fixed, module.EXPECTED), (kind, fixed)
    assert parsers.matches(module.BUG["match"], finding(module, reason="a valid output: the target rejected it"))


@pytest.mark.parametrize("name", named("missed_anomaly"))
def test_missed_anomaly_trigger(name):
    module = MODULES[name]
    promise = Promise(builtin_registry())
    kind, got = outcome(module.parse, module.TRIGGER)
    assert kind == "returned" and got, (kind, got)
    problem = promise.problem_key(got)
    assert problem is not None, "the buggy parser returned calls that keep the validate-level promise"
    assert outcome(module.parse_fixed, module.TRIGGER)[0] == "rejected"
    reason = f"returned the calls as written despite {problem[1]}"
    assert parsers.matches(module.BUG["match"], finding(module, title=f"missed_anomaly: {problem[0]}", reason=reason))


class _TooManyLines(Exception):
    pass


def lines_executed(function, text: str, limit: int) -> int:
    """Python lines ``function(text)`` executes, or ``limit`` when it would run more (a hang)."""
    count = [0]

    def tracer(frame, event, arg):
        if event == "line":
            count[0] += 1
            if count[0] >= limit:
                raise _TooManyLines
        return tracer

    sys.settrace(tracer)
    try:
        outcome(function, text)
    except _TooManyLines:
        pass
    finally:
        sys.settrace(None)
    return count[0]


@pytest.mark.parametrize("name", named("hang"))
def test_hang_trigger_never_finishes_and_the_fix_does(name):
    module = MODULES[name]
    limit = 200_000
    assert lines_executed(module.parse, module.TRIGGER, limit) == limit
    assert lines_executed(module.parse_fixed, module.TRIGGER, limit) < 1_000
    assert outcome(module.parse_fixed, module.TRIGGER)[0] in ("returned", "rejected")


def test_seeds_option_and_the_table():
    assert parse_seeds("3") == [0, 1, 2] and parse_seeds("4,7") == [4, 7]
    name = NAMES[0]
    hit = {"verdict": MODULES[name].BUG["verdict"], "signature": "s1", "found_at_s": 2.0}
    runs = [Run(name, 0, EXPLORATION_ON, "parse", exit_code=1, matched=[hit], elapsed_s=30.0),
            Run(name, 1, EXPLORATION_ON, "parse", exit_code=0, elapsed_s=30.0),
            Run(name, 0, EXPLORATION_OFF, "parse", exit_code=0, others=2, elapsed_s=30.0),
            Run(name, 1, EXPLORATION_OFF, "parse", exit_code=0, elapsed_s=30.0)]
    control = Run(name, 0, EXPLORATION_ON, "parse_fixed", exit_code=0, elapsed_s=30.0)
    text = table([name], [EXPLORATION_ON, EXPLORATION_OFF], runs, {name: control}, budget=30, seeds=[0, 1])
    row = next(line for line in text.splitlines() if line.startswith(name))
    assert re.search(r"1/2\s+2\.0\s+1\s+0 \|\s+0/2\s+-\s+0\s+2 \| clean", row), row
    assert "exploration on       caught 1/2 runs; 1/1 bugs" in text
    assert "exploration off      caught 0/2 runs; 0/1 bugs" in text
    assert "no --no-coverage" not in text
    only_default = table([name], [DEFAULT_MODE], [], {}, budget=5, seeds=[0])
    assert "no --no-coverage option yet" in only_default
