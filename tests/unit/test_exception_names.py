"""Exception names in policies resolve to classes, and an exception matches by isinstance."""

from __future__ import annotations

import pytest
import requests

from fuzzer.engine.exception_names import declared_by, resolve, written


class UnexpectedModelBehavior(Exception):
    """pydantic-ai's shape: the error a user declares ..."""


class IncompleteToolCall(UnexpectedModelBehavior):
    """... and the subclass the library raises."""


class Outer:
    class Inner(LookupError):
        pass


def test_a_re_exported_name_matches_the_class_it_names_and_its_subclasses():
    declared = resolve(["requests.RequestException"])
    assert not declared.problems
    # the class's own name is requests.exceptions.RequestException: as strings they never met
    assert requests.RequestException.__module__ == "requests.exceptions"
    assert declared.matching(requests.HTTPError) == ["requests.RequestException"]
    assert declared.matching(requests.Timeout) == ["requests.RequestException"]
    assert declared.matching(ValueError) == []


def test_a_bare_name_covers_its_subclasses_wherever_they_are_defined():
    declared = resolve(["UnexpectedModelBehavior"])
    assert not declared.problems
    assert declared.matching(IncompleteToolCall) == ["UnexpectedModelBehavior"]
    assert declared.matching(RuntimeError) == []


def test_a_builtin_is_the_builtin_class_not_any_class_of_that_name():
    shadow = type("ValueError", (Exception,), {"__module__": "other"})
    declared = resolve(["ValueError"])
    assert declared.matching(UnicodeDecodeError) == ["ValueError"]  # a subclass
    assert declared.matching(shadow) == []


@pytest.mark.parametrize("name", ["tests.unit.test_exception_names.Outer.Inner",
                                  "tests.unit.test_exception_names:IncompleteToolCall"])
def test_colon_and_nested_class_names_resolve(name):
    declared = resolve([name])
    assert not declared.problems, declared.problems
    assert declared.matching(Outer.Inner if "Inner" in name else IncompleteToolCall) == [name]


@pytest.mark.parametrize("name, why", [
    ("ValueErorr", "no loaded module defines an exception class of that name (did you mean 'ValueError'?)"),
    ("nosuchpkg.errors.ToolError", "module 'nosuchpkg.errors' cannot be imported"),
    ("json.dumps", "'dumps' in 'json': a function, not an exception class"),
    ("requests.NoSuchError", "'NoSuchError' in 'requests': not found"),
])
def test_a_name_that_does_not_resolve_says_why(name, why):
    declared = resolve([name])
    assert [n for n, _ in declared.problems] == [name]
    assert why in declared.problems[0][1]
    assert declared.matching(Exception) == []


def test_the_oracles_trust_what_the_worker_resolved_and_fall_back_to_the_written_names():
    names = ["requests.RequestException"]
    seen_in_worker = {"type": "requests.exceptions.HTTPError", "declared_by": ["requests.RequestException"],
                      "mro": ["requests.exceptions.HTTPError", "requests.exceptions.RequestException", "OSError"]}
    assert declared_by(names, seen_in_worker)
    assert not declared_by(names, {**seen_in_worker, "declared_by": []})
    # nothing resolved (an old trace): compared as written, as before
    assert not declared_by(names, {k: v for k, v in seen_in_worker.items() if k != "declared_by"})
    assert written(["RequestException"], seen_in_worker["mro"]) == ["RequestException"]
    assert declared_by(["ValueError"], {"exception": "ValueError"})
    assert not declared_by(["ValueError"], None)
