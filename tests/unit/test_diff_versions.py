"""`fuzz diff` between versions that live in two modules, and versions that test nothing.

The diff job runs here with in-process "pools" (each text run by the target in this process, as
the worker would report it), so the classification and the exit decision are checked without a
worker process. The versions are real modules made from source, as ``myparser_v1.py`` and
``myparser_v2.py`` next to each other would be.
"""

from __future__ import annotations

import string
import sys
import types
from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzer.engine.harness import ReplayContext
from fuzzer.engine.jobs.diff import DiffJob
from fuzzer.engine.pipeline import run_job
from fuzzer.engine.relative import TargetModule
from strategies._internal.tools import builtin_registry
from tests.integration.corpus_targets.harness import run_inprocess

PARSER = '''
import json


class ParseError(ValueError):
    """The parser's own rejection."""


class ShapeError(ValueError):
    """Only the changed version raises it."""


def parse(text):
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"not JSON: {exc}")
    calls = data if isinstance(data, list) else [data]
    out = []
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) \\
                or not isinstance(call.get("arguments"), dict):
            raise ParseError("not a tool call")
        out.append({"name": call["name"], "arguments": call["arguments"]})
    return out


def never(text):
    return []


def refuse(text):
    raise ParseError("no")
'''


def _module(name: str, source: str = PARSER) -> types.ModuleType:
    """A module named ``name`` whose code claims to be in ``name.py`` (as frames will show it)."""
    module = types.ModuleType(name)
    module.__file__ = f"{name}.py"
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    sys.modules[name] = module
    return module


@pytest.fixture
def versions() -> Any:
    names = ("myparser_v1", "myparser_v2", "myparser_v3")
    made = types.SimpleNamespace(v1=_module(names[0]), v2=_module(names[1]),
                                 v3=_module(names[2], PARSER.replace('raise ParseError("not a tool call")',
                                                                     'raise ShapeError("not a tool call")')))
    yield made
    for name in names:
        sys.modules.pop(name, None)


class InProcessPool:
    """What a WorkerPool reports for each text, computed in this process."""

    def __init__(self, target: Callable[[str], Any]):
        self.target = target

    def start(self) -> None:
        pass

    def run(self, texts: list, deadline: Any = None) -> list:
        return [run_inprocess(self.target, text) for text in texts]


def _diff(old: Callable, new: Callable, old_label: str, new_label: str, examples: int = 600,
          anomalies: Any = None) -> Any:
    job = DiffJob(builtin_registry(), old=old_label, new=new_label, context=ReplayContext(),
                  pools=(InProcessPool(old), InProcessPool(new)), tools=["get_weather"], seed=1, budget_s=None,
                  max_samples=examples, anomalies=anomalies)
    final = run_job(job)
    return final.result, final.exit_code


def test_the_same_code_in_two_module_files_differs_in_nothing(versions):
    """Every rejection used to read "rejected myparser_v1.ParseError" against
    "rejected myparser_v2.ParseError" and counted as changed."""
    result, code = _diff(versions.v1.parse, versions.v2.parse, "myparser_v1:parse", "myparser_v2:parse")
    rejected = [d for d in result.differences if d.old.outcome.kind == "rejected"]
    assert result.samples > 0 and result.kinds["same"] == result.samples, (result.kinds, rejected[:1])
    assert code == 0


def test_a_real_change_of_exception_type_between_module_files_is_still_changed(versions):
    result, code = _diff(versions.v1.parse, versions.v3.parse, "myparser_v1:parse", "myparser_v3:parse")
    assert result.kinds["changed"] > 0 and result.kinds["regression"] == result.kinds["fixed"] == 0
    for d in result.differences:
        assert (d.old.outcome.exception, d.new.outcome.exception) == ("myparser_v1.ParseError",
                                                                      "myparser_v3.ShapeError")
    assert code == 0


@pytest.mark.parametrize("old, new", [("never", "never"), ("refuse", "never"), ("refuse", "refuse")])
def test_versions_that_never_return_a_call_test_nothing(versions, old, new):
    """Both "511 same" (neither ever returns a call) and "511 changed" (one always
    rejects, the other always returns none) exited 0."""
    result, code = _diff(getattr(versions.v1, old), getattr(versions.v2, new), f"myparser_v1:{old}",
                         f"myparser_v2:{new}", examples=300)
    assert code == 2, (result.kinds, result.problem)
    assert result.problem.startswith("could test nothing: neither version returned a call")
    assert f"old myparser_v1:{old}" in result.problem and f"new myparser_v2:{new}" in result.problem
    assert any(case.status == "failed" and "nothing tested" in case.message for case in result.test_cases())


def test_a_version_that_never_returns_a_call_is_named(versions):
    result, code = _diff(versions.v1.refuse, versions.v2.parse, "myparser_v1:refuse", "myparser_v2:parse",
                         examples=300, anomalies=["valid"])
    assert result.kinds["fixed"] > 0 and result.kinds["regression"] == 0 and code == 2, result.kinds
    assert result.problem.startswith("could test nothing: the old version myparser_v1:refuse returned no call")
    assert "(the first: rejected myparser_v1.ParseError)" in result.problem


def test_a_regression_to_a_version_that_tests_nothing_still_exits_1(versions):
    result, code = _diff(versions.v1.parse, versions.v2.never, "myparser_v1:parse", "myparser_v2:never",
                         examples=300)
    assert result.kinds["regression"] > 0 and code == 1
    assert "the new version myparser_v2:never returned no call" in result.problem


def test_one_parser_against_itself_tests_something(versions):
    result, code = _diff(versions.v1.parse, versions.v1.parse, "myparser_v1:parse", "myparser_v1:parse",
                         examples=300)
    assert code == 0 and result.problem is None and result.kinds["same"] == result.samples > 0


# ---------------------------------------------------------------------------------------------
# Names relative to their target

identifiers = st.text(string.ascii_lowercase + "_", min_size=1, max_size=8).map(lambda s: "m" + s)
qualnames = st.lists(st.text(string.ascii_letters, min_size=1, max_size=6).map(lambda s: "E" + s),
                     min_size=1, max_size=2).map(".".join)


@given(identifiers, identifiers, qualnames)
def test_a_class_of_the_targets_own_module_has_one_name_in_every_version(a, b, qualname):
    assert TargetModule.of(f"{a}:parse").exception(f"{a}.{qualname}") == \
        TargetModule.of(f"git:main:{b}:parse").exception(f"{b}.{qualname}")
    assert TargetModule.of(f"pkg_{a}.parsing:parse").exception(f"pkg_{a}.errors.{qualname}") == \
        TargetModule.of(f"pkg_{b}.parsing:parse").exception(f"pkg_{b}.errors.{qualname}")


@given(identifiers, qualnames)
def test_names_outside_the_target_are_kept(a, qualname):
    target = TargetModule.of(f"{a}:parse")
    for name in ("ValueError", "json.decoder.JSONDecodeError", f"other_{a}.{qualname}"):
        assert target.exception(name) == name


def test_a_path_target_is_its_module_and_frames_in_its_file_are_the_targets():
    target = TargetModule.of("lib/myparser_v2.py:parse")
    assert target.module == "myparser_v2"
    assert target.frames((("myparser_v2.py", "parse"), ("decoder.py", "decode"))) == \
        (("<target>.py", "parse"), ("decoder.py", "decode"))


@pytest.mark.parametrize("recorded, raised, same", [
    ("myparser_v1.ParseError", "myparser_v2.ParseError", True),
    ("app.parsing.ParseError", "myparser_v2.ParseError", True),
    ("ValueError", "ValueError", True),
    ("json.decoder.JSONDecodeError", "myparser_v2.JSONDecodeError", False),  # stdlib is never the parser's
    ("myparser_v1.ParseError", "myparser_v2.ShapeError", False),
    ("myparser_v1.ParseError", "ValueError", False),
    ("ParseError", "myparser_v2.ParseError", False),
])
def test_a_recorded_exception_is_the_replayed_targets_own_by_its_qualified_name(recorded, raised, same):
    assert TargetModule.of("myparser_v2:parse").same_exception(recorded, raised) is same
