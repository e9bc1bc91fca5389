"""The one registry type: duplicates are programming errors, unknown names get close matches."""

from __future__ import annotations

import pytest

from fuzzer.engine.harness import HARNESSES, load_harnesses
from fuzzer.harnesses.parser.oracle import CHECKS
from fuzzer.reports import WRITERS
from strategies.errors import ToolfuzzError, UnknownName
from strategies.registry import DuplicateName, Registry


def test_a_duplicate_name_raises_naming_both_modules():
    r: Registry = Registry("thing")
    r.register("a", 1, module="first.module")
    with pytest.raises(DuplicateName) as info:
        r.register("a", 2, module="second.module")
    assert "first.module" in str(info.value) and "second.module" in str(info.value)
    assert not isinstance(info.value, ToolfuzzError)  # a traceback, never a usage error


def test_unknown_names_suggest_close_ones():
    r: Registry = Registry("format")
    for name in ("hermes", "json", "react"):
        r.register(name, name)
    with pytest.raises(UnknownName) as info:
        r["hermez"]
    assert "unknown format 'hermez'" in str(info.value) and "hermes" in str(info.value)
    assert isinstance(info.value, KeyError) and "hermez" not in r and list(r) == ["hermes", "json", "react"]


def test_the_decorator_registers_and_returns_the_object():
    r: Registry = Registry("check")

    @r.decorator()
    def crash():
        return 1

    assert r["crash"] is crash and crash() == 1 and r.module_of("crash") == __name__


def test_every_registry_of_the_engine_is_the_one_type():
    load_harnesses()
    for registry in (CHECKS, WRITERS, HARNESSES):
        assert isinstance(registry, Registry)
    assert {"crash", "hang", "false_reject", "missed_anomaly"} <= set(CHECKS)
    assert {"report", "junit"} <= set(WRITERS) and "parser" in HARNESSES
