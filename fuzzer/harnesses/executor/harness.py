"""The executor harness, registered for the generic corpus commands (``kind="executor"``).

``fuzz replay`` and ``fuzz gate`` find this :class:`~fuzzer.engine.harness.Harness` in
:data:`fuzzer.engine.harness.HARNESSES` under the entry kind ``executor`` and the option ``--executor``:

* :func:`replay_entries` re-runs stored scenarios (``Entry.scenario``) against an executor and
  judges them with the same policy-driven checks, one :class:`~fuzzer.engine.harness.Replayed` per entry;
  the harness-specific options travel in ``ReplayContext.extra``: ``policy`` (a policy file),
  ``http`` (bool) and ``implementations`` (M:A, HTTP mode).
* :func:`gate_campaign` builds the short executor campaign the gate runs after replaying.

For ``fuzz diff`` (two executors, same scenarios): :func:`compare_executors` runs one stream of
scenarios against both and classifies each by the violation signatures it shows — ``same``,
``fixed`` (the old one violated, the new one does not), ``regression`` (the reverse) or
``changed`` — returning an :class:`ExecutorDiff` with the counts the diff report uses
(``{"same", "fixed", "regression", "changed"}``) and the differing scenarios;
:func:`fuzzer.engine.decisions.DiffDecision` takes ``regressions=diff.counts["regression"]``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from fuzzer.engine.harness import Harness, ReplayContext, Replayed, other_policy, register_harness
from fuzzer.harnesses.executor import checks as _verdicts  # noqa: F401 - registers the executor's verdicts


def _policy(context: ReplayContext, entry: Any = None) -> Any:
    """``--executor-policy`` when given, else the policy the entry was found under (kept in it),
    else the defaults (the project's config)."""
    from fuzzer.harnesses.executor.policy import Policy, load_policy

    given = context.extra.get("executor_policy")
    stored = (entry.scenario or {}).get("policy") if entry is not None and not given else None
    return Policy.from_json(stored) if stored is not None else load_policy(given, cwd=context.cwd)


def _registry(context: ReplayContext, tools_file: Optional[str] = None) -> Any:
    if context.registry is not None and tools_file == context.tools_file:
        return context.registry
    from strategies._internal.tools import load_registry

    return load_registry(tools_file if tools_file is not None else context.tools_file)


def _settings(reference: str, context: ReplayContext, **overrides: Any) -> Any:
    from fuzzer.harnesses.executor.job import ExecutorSettings

    overrides.setdefault("tools_file", context.tools_file)
    return ExecutorSettings(executor=reference, policy_file=context.extra.get("executor_policy"),
                            seed=context.seed, budget_s=context.budget_s, max_examples=context.max_examples,
                            timeout=context.timeout, memory_limit_mb=context.memory_limit_mb,
                            http=bool(context.extra.get("http")), implementations=context.extra.get("implementations"),
                            workers=context.workers, cwd=context.cwd or os.getcwd(), **overrides)


def replay_entries(items: list, reference: str, context: ReplayContext) -> list:
    """Run each ``(path, Entry)`` of kind executor again; one Replayed per entry, in order."""
    from fuzzer.harnesses.executor.checks import judge
    from fuzzer.harnesses.executor.job import open_pool, run_scenarios
    from fuzzer.harnesses.executor.scenario import scenario_from_json
    from strategies.errors import ToolfuzzError

    groups: dict = {}  # (tools file, policy) -> (registry, policy, [(index, scenario)]): one pool each
    registries: dict = {}  # tools file -> registry (read and checked once, not once per entry)
    out: list[Optional[Replayed]] = []
    for path, entry in items:
        try:
            if not entry.scenario:
                raise ToolfuzzError("the entry has no scenario")
            # the tools and policy the entry was found with, unless --tools / --executor-policy say otherwise
            tools = context.tools_file or entry.scenario.get("tools")
            policy = _policy(context, entry)
            registry = registries.get(tools)
            if registry is None:
                registry = registries[tools] = _registry(context, tools)
            scenario = scenario_from_json(entry.scenario, registry)
            unknown = sorted({s.name for s in scenario.steps} - set(registry.names()) - _anomalous_names(scenario))
            if unknown:
                raise ToolfuzzError(f"its scenario calls {', '.join(map(repr, unknown))}, which the tools "
                                    f"({tools or 'the built-in ones'}) do not have: give the tools file with --tools")
            key = (tools, json.dumps(policy.to_json(), sort_keys=True, default=repr))
            groups.setdefault(key, (registry, policy, []))[2].append((len(out), scenario))
            out.append(None)
        except ToolfuzzError as exc:
            out.append(Replayed(path=path, entry=entry, verdict="pass", signature=None, unjudged=str(exc)))
    for (tools, _policy_text), (registry, policy, loaded) in groups.items():
        settings = _settings(reference, context, tools_file=tools)
        with open_pool(settings, policy, registry) as pool:
            traces = run_scenarios(pool, [s for _i, s in loaded])
        for (i, scenario), trace in zip(loaded, traces):
            path, entry = items[i]
            violations = judge(scenario, trace, policy, registry)
            shown = next((v for v in violations if v.signature.id == entry.signature), None) or \
                (violations[0] if violations else None)
            out[i] = Replayed(path=path, entry=entry, verdict=shown.verdict if shown else "pass",
                              signature=shown.signature.id if shown else None, outcome=trace,
                              what=shown.signature.what if shown else None,
                              held=None if shown else other_policy(entry, policy, context.extra.get("executor_policy"),
                                                                   "--executor-policy"))
    return [r for r in out if r is not None]


def reproduce(given: Any, reference: Optional[str], context: ReplayContext) -> Any:
    """``fuzz reproduce`` of an executor entry: its scenario replayed (a cold run in a fresh worker,
    then warm ones), printed attempt by attempt with its verdicts, as ``--replay-scenario`` does."""
    from fuzzer.engine.harness import Reproduced
    from fuzzer.harnesses.executor.job import ScenarioReplay
    from fuzzer.harnesses.executor.scenario import scenario_from_json

    entry, reference = given.entry_on(reference, "executor")
    tools = context.tools_file or entry.scenario.get("tools")
    registry = _registry(context, tools)
    job = ScenarioReplay(_settings(reference, context, tools_file=tools), scenario_from_json(entry.scenario, registry),
                         registry=registry, policy=_policy(context, entry))
    for _event in job.events():
        pass
    result = job.result()
    return Reproduced([f"executor: {reference}", *result.summary_lines()], failing=bool(result.findings))


def _anomalous_names(scenario: Any) -> set:
    """Names a step calls on purpose although no tool has them (the unknown_function anomaly)."""
    return {s.name for s in scenario.steps if s.anomaly == "unknown_function"}


def gate_campaign(reference: str, context: ReplayContext) -> Any:
    """The short campaign the gate runs after replaying the corpus."""
    from fuzzer.harnesses.executor.job import ExecutorCampaign

    # on the back end the gate was given (--backend ray: the campaign on the cluster; replays stay local)
    settings = _settings(reference, context, backend=context.extra.get("backend") or "local",
                         ray_address=context.extra.get("ray_address"))
    return ExecutorCampaign(settings, registry=_registry(context), policy=_policy(context))


# ---------------------------------------------------------------------------------------------
# Differential: two executors, the same scenarios


@dataclass
class ScenarioDifference:
    kind: str  # fixed | regression | changed
    scenario: Any
    old: list  # signature ids
    new: list

    def to_json(self) -> dict:
        return {"kind": self.kind, "input": self.scenario.describe(), "scenario": self.scenario.to_json(),
                "old": self.old, "new": self.new}


@dataclass
class ExecutorDiff:
    old: str
    new: str
    scenarios: int = 0
    counts: dict = field(default_factory=lambda: {"same": 0, "fixed": 0, "regression": 0, "changed": 0})
    by_verdict: dict = field(default_factory=dict)  # verdict -> {"old": n, "new": n}
    differences: list = field(default_factory=list)

    def to_report(self) -> dict:
        return {"old": self.old, "new": self.new, "samples": self.scenarios, "counts": dict(self.counts),
                "by_class": self.by_verdict, "differences": [d.to_json() for d in self.differences]}


def classify(old: list, new: list) -> str:
    """same | fixed | regression | changed, from the signature ids of each side's violations
    (:func:`fuzzer.engine.decisions.change_kind`: no violation is right)."""
    from fuzzer.engine.decisions import change_kind

    return change_kind(same=set(old) == set(new), before_ok=not old, now_ok=not new)


def compare_executors(old: str, new: str, *, context: ReplayContext, count: int = 500,
                      max_differences: int = 50) -> ExecutorDiff:
    """Run ``count`` scenarios (seeded by ``context.seed``) against both executors and compare."""
    from fuzzer.harnesses.executor.checks import judge
    from fuzzer.harnesses.executor.job import available_flavors, open_pool, run_scenarios
    from fuzzer.harnesses.executor.scenario import ScenarioGenerator

    registry, policy = _registry(context), _policy(context)
    diff = ExecutorDiff(old=old, new=new)
    with open_pool(_settings(old, context), policy, registry) as old_pool, \
            open_pool(_settings(new, context), policy, registry) as new_pool:
        new_tools = (new_pool.info or {}).get("tools", [])
        tools = [t for t in (old_pool.info or {}).get("tools", []) if t in new_tools and t in registry]
        generator = ScenarioGenerator(registry, policy, tools=tools, flavors=available_flavors(policy), seed=context.seed)
        scenarios = [generator.generate() for _ in range(count)]
        for start in range(0, count, 256):
            chunk = scenarios[start:start + 256]
            for scenario, t_old, t_new in zip(chunk, run_scenarios(old_pool, chunk), run_scenarios(new_pool, chunk)):
                v_old = judge(scenario, t_old, policy, registry)
                v_new = judge(scenario, t_new, policy, registry)
                kind = classify([v.signature.id for v in v_old], [v.signature.id for v in v_new])
                diff.scenarios += 1
                diff.counts[kind] += 1
                for side, found in (("old", v_old), ("new", v_new)):
                    for verdict in {v.verdict for v in found}:
                        diff.by_verdict.setdefault(verdict, {"old": 0, "new": 0})[side] += 1
                if kind != "same" and len(diff.differences) < max_differences:
                    diff.differences.append(ScenarioDifference(kind, scenario, [v.signature.id for v in v_old],
                                                               [v.signature.id for v in v_new]))
    return diff


HARNESS = register_harness(Harness(
    kind="executor", option="--executor",
    description="a tool executor under injected faults: make_executor(tools) -> execute(name, arguments)",
    replay=replay_entries, campaign_job=gate_campaign, reproduce=reproduce))

__all__ = ["ExecutorDiff", "HARNESS", "classify", "compare_executors", "gate_campaign", "replay_entries", "reproduce"]
