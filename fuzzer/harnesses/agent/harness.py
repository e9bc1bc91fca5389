"""The ``agent`` corpus entry kind: how ``fuzz replay`` and ``fuzz gate`` run agent entries.

An agent entry's ``scenario`` holds the (minimized) script, the policy in effect when it was found
and the tools file; ``text`` is the script's listing. Replaying plays the stored script — not a
regeneration from choices, so an entry means the same thing whatever later versions of the
generator draw — against the loop named by ``--agent``, judges it, and reports the failure it
shows now (or a pass). The policy used is ``--agent-policy`` when given (``ReplayContext.extra
["agent_policy"]``), else the stored one; the tools, ``--tools`` when given, else the stored file.
"""

from __future__ import annotations

from typing import Any, Optional

from fuzzer.harnesses.agent.policy import AgentPolicy, load_policy
from fuzzer.harnesses.agent.script import Script, ScriptError
from fuzzer.engine.harness import Harness, Replayed, ReplayContext, other_policy, register_harness
from fuzzer.harnesses.agent import checks as _verdicts  # noqa: F401 - registers the agent's verdicts


def _policy(entry: Any, context: ReplayContext) -> AgentPolicy:
    given = context.extra.get("agent_policy")
    if given:
        return load_policy(given, cwd=context.cwd)
    stored = (entry.scenario or {}).get("policy")
    return AgentPolicy.from_json(stored, source="the entry's policy") if stored is not None else AgentPolicy()


def replay(items: list, reference: Optional[str], context: ReplayContext) -> list:
    """One :class:`Replayed` per ``(path, Entry)``, in order."""
    from fuzzer.harnesses.agent.worker import EpisodeRunner
    from strategies._internal.tools import load_registry

    if not reference:
        return [Replayed(path, entry, verdict="unjudged", signature=None,
                         unjudged="agent entry: give the loop to run it against with --agent M:A")
                for path, entry in items]
    out: list = [None] * len(items)
    groups: dict[tuple, list] = {}
    for i, (path, entry) in enumerate(items):
        scenario = entry.scenario or {}
        try:
            script = Script.from_json(scenario.get("script"))
        except ScriptError as exc:
            out[i] = Replayed(path, entry, verdict="unjudged", signature=None, unjudged=f"scenario: {exc}")
            continue
        policy = _policy(entry, context)
        tools = context.tools_file or scenario.get("tools")
        groups.setdefault((tools, policy, script.shape, tuple(script.formats)), []).append((i, script))
    for (tools, policy, shape, formats), members in groups.items():
        registry = context.registry if context.registry is not None and tools == context.tools_file \
            else load_registry(tools)
        with EpisodeRunner(agent=reference, registry=registry, policy=policy, tools_file=tools, cwd=context.cwd,
                           timeout=context.timeout, workers=context.workers,
                           memory_limit_mb=context.memory_limit_mb, shape=shape, formats=formats) as runner:
            judged = runner.run([script for _i, script in members])
        for (i, _script), (trace, violations, _outcome) in zip(members, judged):
            path, entry = items[i]
            if violations is None:  # it could not run: never a pass (replay --update would mark it fixed)
                out[i] = Replayed(path, entry, verdict="unjudged", signature=None,
                                  unjudged=runner.notes[-1] if runner.notes else "the episode could not run")
                continue
            same = next((v for v in violations if v.signature.id == entry.signature), None)
            shown = same or (violations[0] if violations else None)
            out[i] = Replayed(path, entry, verdict=shown.verdict if shown else "pass",
                              signature=shown.signature.id if shown else None, outcome=trace,
                              what=shown.signature.what if shown else None,
                              held=None if shown else other_policy(entry, policy, context.extra.get("agent_policy"),
                                                                   "--agent-policy"))
    return out


def campaign_job(reference: str, context: ReplayContext) -> Any:
    """The short campaign ``fuzz gate`` runs after replaying the corpus."""
    from fuzzer.harnesses.agent.job import AgentCampaign, AgentSettings

    extra = context.extra
    policy = load_policy(extra.get("agent_policy"), cwd=context.cwd)
    settings = AgentSettings(agent=reference, tools_file=context.tools_file, shape=extra.get("model_shape", "openai"),
                             formats=tuple(extra.get("formats") or ("json",)), policy=policy, seed=context.seed,
                             budget_s=context.budget_s, max_examples=context.max_examples, timeout=context.timeout,
                             workers=context.workers, memory_limit_mb=context.memory_limit_mb, cwd=context.cwd,
                             # on the back end the gate was given (the replay stays local)
                             backend=extra.get("backend") or "local", ray_address=extra.get("ray_address"))
    return AgentCampaign(settings, registry=context.registry)


def reproduce(given: Any, reference: Optional[str], context: ReplayContext) -> Any:
    """``fuzz reproduce`` of an agent entry: its script played against the loop in this process (no
    worker: a debugger or a print in the loop works), listed with what the loop did and every
    violation (:func:`fuzzer.harnesses.agent.reproduce.replay`)."""
    from fuzzer.engine.harness import Reproduced
    from fuzzer.harnesses.agent.reproduce import replay as play_here

    entry, reference = given.entry_on(reference, "agent loop")
    try:
        played = play_here(reference, entry.scenario, tools=context.tools_file,
                           policy=context.extra.get("agent_policy"), cwd=context.cwd)
    except ScriptError as exc:
        return Reproduced(problem=f"{given.path}: scenario: {exc}")
    return Reproduced([f"agent: {reference}", *str(played).split("\n")], failing=bool(played.violations))


HARNESS = register_harness(Harness(kind="agent", option="--agent",
                                   description="a tool-use loop run(model, tools, user_input) against a scripted model",
                                   replay=replay, campaign_job=campaign_job, reproduce=reproduce))

__all__ = ["HARNESS", "campaign_job", "replay", "reproduce"]
