"""A finding: the Reportable protocol, its corpus entry, and a reproduce command that runs as printed."""

from __future__ import annotations


from corpus.store import Entry
from fuzzer.harnesses.agent.checks import Episode, judge
from fuzzer.harnesses.agent.findings import AgentFinding
from fuzzer.harnesses.agent.harness import HARNESS
from fuzzer.harnesses.agent.policy import AgentPolicy
from fuzzer.harnesses.agent.reproduce import replay
from fuzzer.harnesses.agent.generation import ScriptSetup, generate_script
from fuzzer.harnesses.agent.script import Script
from fuzzer.harnesses.agent.worker import loop_maker, play
from fuzzer.engine.harness import HARNESSES, load_harnesses
from fuzzer.engine.results import Reportable
from fuzzer.targets import agent_naive
from strategies._internal.source import RandomSource
from strategies._internal.tools import builtin_registry

REGISTRY = builtin_registry()
AGENT = "fuzzer.targets.agent_naive:run"


def a_finding(verdict: str, policy: AgentPolicy = AgentPolicy(max_turns=4)) -> AgentFinding:
    setup = ScriptSetup(REGISTRY, shape="openai", max_turns=policy.max_turns)
    for seed in range(500):
        source = RandomSource(seed)
        script = generate_script(source, setup)
        trace = play(script, loop_maker(agent_naive.run, AGENT), REGISTRY, policy.caps)
        for v in judge(Episode(script, trace, policy, REGISTRY)):
            if v.verdict == verdict:
                return AgentFinding(signature=v.signature, verdict=v.verdict, reason=v.reason, script=script,
                                    choices=tuple(source.choices), trace=trace, agent=AGENT, policy=policy)
    raise AssertionError(f"no {verdict} in 500 scripts")


def test_a_finding_is_reportable_and_becomes_an_agent_corpus_entry():
    finding = a_finding("nontermination")
    assert isinstance(finding, Reportable)
    assert finding.verdict_name == "nontermination" and not finding.is_minimized
    entry = Entry.loads(finding.to_entry(target=AGENT, version="sha256:x").dumps())
    assert (entry.kind, entry.signature, entry.verdict) == ("agent", finding.signature.id, "nontermination")
    assert Script.from_json(entry.scenario["script"]).to_json() == finding.script.to_json()
    assert entry.scenario["policy"]["max_turns"] == 4
    assert entry.text.startswith("user: ") and "  1. " in entry.text
    report = finding.to_report()
    assert {"signature", "verdict", "title", "reason", "input", "minimized_input", "minimized", "reproduce",
            "count", "script", "exception"} <= set(report)


def test_replay_takes_a_stored_scenario_with_its_policy():
    finding = a_finding("nontermination", AgentPolicy())
    result = replay(AGENT, finding.scenario())
    assert finding.signature.id in {v.signature.id for v in result.violations}
    assert replay("fuzzer.targets.agent_state_machine:run", finding.scenario()).exit_code == 0


def test_the_agent_harness_is_registered_for_replay_and_gate():
    load_harnesses()
    assert HARNESSES["agent"] is HARNESS and HARNESS.option == "--agent" and HARNESS.campaign_job is not None
