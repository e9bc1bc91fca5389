"""Replay one script against a loop, in this process: what a finding's reproduce command runs.

::

    python -c 'from fuzzer.harnesses.agent.reproduce import replay; r = replay("mypkg.agent:run", SCENARIO_JSON); print(r); raise SystemExit(r.exit_code)'

No worker process and no watchdog, so a debugger or a print in the loop works as usual (and a
loop that hangs hangs here too). It prints the script, what the loop did with it and every
violation; the exit status is 1 while the loop still breaks a promise on this script, else 0.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Optional, Union

from fuzzer.harnesses.agent.checks import Episode, judge
from fuzzer.harnesses.agent.policy import AgentPolicy, load_policy
from fuzzer.harnesses.agent.script import Script, ScriptCall, call_text, listing
from fuzzer.harnesses.agent.worker import loop_maker, play


@dataclass
class Replay:
    script: Script
    trace: dict
    violations: list

    @property
    def exit_code(self) -> int:
        return 1 if self.violations else 0

    def __str__(self) -> str:
        lines = [listing(self.script), "", "what the loop did:"]
        lines += ["  " + line for line in describe_trace(self.trace)]
        if self.trace.get("error"):
            lines += ["", self.trace["error"]["traceback"].rstrip()]
        lines.append("")
        if self.violations:
            lines += [f"{v.verdict}: {v.reason}   [{v.signature.id}]" for v in self.violations]
        else:
            lines.append("no violation: the loop kept every promise on this script")
        return "\n".join(lines)


def describe_trace(trace: dict) -> list[str]:
    """What happened, in order: requests, executions, and how ``run()`` ended."""
    lines = []
    by_window: dict[int, list] = {}
    for e in trace["executions"]:
        by_window.setdefault(e["window"], []).append(e)
    for e in by_window.get(-1, []):
        lines.append(f"ran {call_text(ScriptCall(e['name'], e['arguments']))} before asking the model")
    blocks: list[tuple[int, int, list]] = []  # (first request, last request, what ran): repeats collapsed
    for w in range(len(trace["requests"])):
        ran = [f"ran {call_text(ScriptCall(e['name'], e['arguments']))}" + (f" -> {e['error']}" if e["error"] else "")
               for e in by_window.get(w, [])]
        if blocks and blocks[-1][2] == ran and ran:
            blocks[-1] = (blocks[-1][0], w, ran)
        else:
            blocks.append((w, w, ran))
    for first, last, ran in blocks:
        lines.append(f"request {first + 1} to the model" if first == last else
                     f"requests {first + 1}-{last + 1} to the model, each followed by:")
        lines += ["  " + line for line in ran]
    if trace["error"]:
        lines.append(f"run() raised {trace['error']['exception']}: {trace['error']['message']}")
    elif trace["returned"]:
        lines.append(f"run() returned {trace['reply']!r:.300}")
    elif trace["aborted"]:
        lines.append(f"stopped by toolfuzz: the loop went past its {'max_turns' if trace['aborted'] == 'model' else 'max_tool_calls'}")
    return lines


def replay(agent: str, scenario: Union[str, dict, Script], *, tools: Optional[str] = None,
           policy: Union[None, str, dict, AgentPolicy] = None, cwd: Optional[str] = None) -> Replay:
    """Run a script against the loop ``agent`` (``M:A``) and judge it.

    ``scenario``: a script (JSON text, its dict, or a :class:`Script`), or a scenario as findings
    and corpus entries store it — ``{"script", "policy", "tools"}`` — whose policy (the one in
    effect when the finding was recorded) and tools file are used unless given here. ``policy``: a
    policy file, a policy table, or None for ``./pyproject.toml``'s table or the defaults.
    ``tools``: the tools file (default: the built-in registry)."""
    from fuzzer.engine.references import load_target
    from strategies._internal.tools import load_registry

    if isinstance(scenario, str):
        scenario = json.loads(scenario)
    if isinstance(scenario, dict) and "script" in scenario:
        policy = policy if policy is not None else scenario.get("policy")
        tools = tools if tools is not None else scenario.get("tools")
        scenario = scenario["script"]
    script = scenario if isinstance(scenario, Script) else Script.from_json(scenario)
    if isinstance(policy, dict):
        policy = AgentPolicy.from_json(policy)
    elif not isinstance(policy, AgentPolicy):
        policy = load_policy(policy, cwd=cwd)
    registry = load_registry(tools)
    from fuzzer.engine.exception_names import resolve

    make_loop = loop_maker(load_target(agent, cwd=cwd or os.getcwd()), agent)
    trace = play(script, make_loop, registry, policy.caps, declared=resolve(policy.errors))
    return Replay(script, trace, judge(Episode(script, trace, policy, registry)))


__all__ = ["Replay", "describe_trace", "replay"]
