"""``unsafe`` only for what the input caused (issue 30): a module's import side effects and the
code a library generates for itself at first use are not the parser touching the system; code
made from the input still is. Real worker processes, each parsing its first input."""

from __future__ import annotations

import json

import pytest

from fuzzer.harnesses.parser.outcome import TargetSpec
from fuzzer.isolation import WorkerPool
from tests.conftest import ROOT

LAZY = "tests.integration.targets.lazy:"
VALID = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}})


def first_outcomes(target: str, texts: list) -> list:
    with WorkerPool(TargetSpec(LAZY + target, cwd=str(ROOT)), workers=1) as pool:
        return pool.run(texts)


@pytest.mark.parametrize("target", ["lazy_network", "lazy_validator"])
def test_what_a_library_does_the_first_time_it_is_used_is_not_unsafe(target):
    """urllib3's IPv6 probe (a ``socket.bind`` at import, inside the first parse) and attrs'
    ``exec`` of the methods it generates for a new jsonschema validator class."""
    outcomes = first_outcomes(target, [VALID, VALID])
    assert [o.kind for o in outcomes] == ["returned", "returned"], outcomes
    assert [o.unsafe for o in outcomes] == [(), ()]


def test_the_network_probe_of_an_import_is_not_blocked_either():
    """Neither reported nor blocked: the module imported sees its probe succeed or fail as it
    would anywhere (blocking it turned urllib3's ``HAS_IPV6`` false inside toolfuzz only)."""
    outcomes = first_outcomes("lazy_network", [VALID])
    assert outcomes[0].kind == "returned" and outcomes[0].unsafe == ()


@pytest.mark.parametrize("target", ["eval_text", "library_eval"])
def test_code_made_from_the_input_is_still_unsafe(target):
    (outcome,) = first_outcomes(target, [VALID])
    events = [event for event, _words, _frames in outcome.unsafe]
    assert "exec" in events, outcome
