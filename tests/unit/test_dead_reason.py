"""Whether a replay's target tests anything (fuzzer/harnesses/parser/harness.py ``dead_reason``),
on a JSON-only parser run in this process. The check runs before ``fuzz replay`` and ``fuzz gate``
replay a corpus, outside any ``--budget``: it must stop at the first format the target reads (a
parser taking a second per input made a 10 s gate run for minutes while every other format was
probed) and probe only the formats the run declared, as the gate's campaign does."""

from __future__ import annotations

import json
from types import SimpleNamespace

from fuzzer.harnesses.parser.harness import dead_reason
from fuzzer.harnesses.parser.outcome import outcome_of
from fuzzer.harnesses.parser.worker import Served
from strategies import builtin_registry

REGISTRY = builtin_registry()


def json_only(text: str):
    """Reads one bare JSON call; anything else is a clean rejection."""
    obj = json.loads(text)
    return [{"name": obj["name"], "arguments": obj["arguments"]}]


def reject_all(text: str):
    raise ValueError("never")


def counting_run(parse, seen: list):
    served = Served(parse, (ValueError, KeyError, TypeError), SimpleNamespace(coverage=False, audit=False,
                                                                              trace_share=0))

    def run(texts, deadline=None, on_result=None, **_):
        seen.extend(texts)
        return [outcome_of(served.run(text, None)) for text in texts]
    return run


def test_a_target_alive_in_the_first_format_is_not_run_on_every_other_format():
    seen: list = []
    assert dead_reason(counting_run(json_only, seen), REGISTRY, ["get_weather"], "parse") is None
    assert seen
    assert not [t for t in seen if "<tool_call>" in t or "[TOOL_CALLS]" in t], "went on probing other formats"


def test_only_the_declared_formats_are_probed():
    seen: list = []
    reason = dead_reason(counting_run(json_only, seen), REGISTRY, ["get_weather"], "parse", formats=["hermes"])
    assert reason is not None and "rejects" in reason
    assert seen and all("<tool_call>" in t for t in seen)


def test_a_declared_format_rejected_whole_is_still_dead():
    # a declared format is fuzzed even when rejected (false_reject): for liveness it must still count as dead,
    # or `replay --update` would mark crash entries fixed against a target that rejects everything
    seen: list = []
    reason = dead_reason(counting_run(reject_all, seen), REGISTRY, ["get_weather"], "parse", formats=["json"])
    assert reason is not None and "ValueError: never" in reason


def test_a_target_that_rejects_everything_is_dead_in_every_format():
    seen: list = []
    reason = dead_reason(counting_run(reject_all, seen), REGISTRY, ["get_weather"], "parse")
    assert reason is not None and "ValueError: never" in reason
    assert any("<tool_call>" in t for t in seen) and any(t.lstrip().startswith("{") for t in seen)
