"""The bug-finding benchmark's parsers: each declares its planted bug, and its hand-written trigger
shows that bug on ``parse`` and not on ``parse_fixed``.

Verdicts are checked the way the engine's oracle decides them (its own ``calls_equal``,
``corruption_key`` and validate-level ``Promise``), and each trigger, turned into the finding a
campaign would report, must satisfy the bug's ``match`` rule — so a rule that could never
recognize its bug fails here, not silently in the benchmark. Hangs are counted in executed lines
(no clock); super-linear regexes run in a subprocess that must not finish a trigger sized to take
minutes; unsafe parsers run under an audit hook in a subprocess.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time

import pytest

from benchmarks import parsers
from benchmarks.bugfinding import DEFAULT_MODE, EXPLORATION_OFF, EXPLORATION_ON, Run, parse_seeds, table
from corpus.signature import history_signature
from fuzzer.harnesses.parser.oracle import Promise, calls_equal, corruption_key
from strategies import FORMATS, builtin_registry

NAMES = parsers.names()
MODULES = {name: parsers.load(name) for name in NAMES}
ROOT = parsers.__path__[0].rsplit("/benchmarks/", 1)[0]


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


def test_slow_triggers_take_minutes_and_the_fixes_do_not():
    """Each trigger is sized so the planted regex needs minutes (its polynomial backtracking) while
    the fix needs microseconds; the buggy run must still be going after 3 s."""
    slow = named("slow")
    assert slow
    procs = {}
    for name in slow:
        code = f"from benchmarks.parsers import {name} as m\ntry:\n    m.parse(m.TRIGGER)\nexcept ValueError:\n    pass"
        procs[name] = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    deadline = time.monotonic() + 3
    try:
        for name in slow:
            module = MODULES[name]
            assert outcome(module.parse_fixed, module.TRIGGER)[0] in ("returned", "rejected")
        for name, proc in procs.items():
            with pytest.raises(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()


AUDIT_PROBE = textwrap.dedent("""
    import json, sys
    from benchmarks import parsers
    names = sys.argv[1:]
    modules = [parsers.load(n) for n in names]
    for m in modules:  # warm up: lazy imports are not the parser's doing
        for f in (m.parse, m.parse_fixed):
            try:
                f(m.TRIGGER)
            except Exception:
                pass
    seen = []
    sys.addaudithook(lambda event, args: seen.append(event) if event in (
        "exec", "compile", "os.system", "subprocess.Popen", "socket.connect", "pickle.find_class") else None)
    result = {}
    for name, m in zip(names, modules):
        for label in ("parse", "parse_fixed"):
            del seen[:]
            try:
                getattr(m, label)(m.TRIGGER)
            except Exception:
                pass
            result[f"{name}:{label}"] = sorted(set(seen))
    print(json.dumps(result))
""")


def test_unsafe_triggers_execute_code_and_the_fixes_do_not():
    unsafe = named("unsafe")
    assert unsafe
    out = subprocess.run([sys.executable, "-c", AUDIT_PROBE, *unsafe], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    events = json.loads(out)
    for name in unsafe:
        assert "exec" in events[f"{name}:parse"], (name, events[f"{name}:parse"])
        # ast.parse raises the "compile" event too; only running code ("exec") or the system is unsafe.
        assert not set(events[f"{name}:parse_fixed"]) - {"compile"}, (name, events[f"{name}:parse_fixed"])


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
