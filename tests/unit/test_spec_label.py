"""Every harness's worker spec names what its workers load the same way: the option the user
gave, then the reference as written (``--executor 'm:make'``). The label is built once, in
:class:`fuzzer.isolation.spec.Limits`; each spec only says which option and which of its fields."""

from __future__ import annotations

import pickle

import pytest

from fuzzer.harnesses.agent.worker import AgentSpec, Settings as AgentSettings
from fuzzer.harnesses.executor.worker import ExecutorSpec, WorkerConfig
from fuzzer.harnesses.stream.worker import Settings as StreamSettings, StreamSpec
from fuzzer.isolation.spec import ImportTimeout
from fuzzer.records.replay_worker import RecordedExecutionSpec

SPECS = [
    (AgentSpec(settings=AgentSettings(agent="loops:make")), "--agent 'loops:make'"),
    (ExecutorSpec(config=WorkerConfig(executor="tools_exec:make")), "--executor 'tools_exec:make'"),
    (RecordedExecutionSpec(executor="app:run_tools"), "--executor 'app:run_tools'"),
    (StreamSpec(settings=StreamSettings(parser="mine:StreamParser")), "--parser 'mine:StreamParser'"),
    (StreamSpec(settings=StreamSettings(consumer="mine:accumulate")), "--consumer 'mine:accumulate'"),
]


@pytest.mark.parametrize("spec, label", SPECS, ids=[label for _, label in SPECS])
def test_a_spec_names_what_it_loads_by_option_and_reference(spec: object, label: str) -> None:
    assert spec.label == label
    # the spec crosses to the zygote pickled: the label must survive the trip
    assert pickle.loads(pickle.dumps(spec)).label == label
    assert str(ImportTimeout(spec.label, 5.0)).startswith(f"{label}: importing it did not finish")


def test_option_and_reference_are_not_dataclass_fields() -> None:
    """They are class-level declarations: constructing a spec takes only its own fields."""
    from dataclasses import fields

    for spec, _ in SPECS:
        names = {f.name for f in fields(spec)}
        assert not {"option", "reference", "label"} & names


def test_a_spec_that_does_not_say_what_it_loads_fails_when_its_class_is_made() -> None:
    """A new harness's spec that forgets a declaration fails at import, naming what it forgot,
    rather than at the first message that would name its code."""
    from dataclasses import dataclass

    from fuzzer.isolation.spec import Limits

    with pytest.raises(TypeError, match="does not declare option, reference"):
        @dataclass(frozen=True, kw_only=True)
        class Forgetful(Limits, serve="m:serve"):  # noqa: F841 - made to fail
            target: str

    @dataclass(frozen=True, kw_only=True)
    class Mine(Limits, serve="m:serve", option="--mine", reference="target"):
        target: str

    @dataclass(frozen=True, kw_only=True)
    class Derived(Mine):  # inherits all three declarations
        extra: int = 0

    assert Derived(target="x:y").label == "--mine 'x:y'"
    assert Derived.serve == "m:serve"
