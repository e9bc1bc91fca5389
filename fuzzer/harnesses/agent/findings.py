"""A failure of the agent harness: one per signature, shown as the shortest script that shows it.

:class:`AgentFinding` offers the :class:`fuzzer.engine.results.Reportable` protocol. It prints the way
Hypothesis prints a failing stateful test — the numbered steps of the (minimized) script, then
what broke — and carries a reproduce command that replays that script against the loop from a
fresh interpreter (``sys.executable -c ...``, see :mod:`fuzzer.harnesses.agent.reproduce`). Its corpus entry
is ``Entry(kind="agent")`` with the script as ``scenario`` and the listing as ``text``.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from fuzzer.engine.results import ShrunkFinding, shown
from corpus.store import Entry
from fuzzer.harnesses.agent.policy import AgentPolicy
from fuzzer.harnesses.agent.reproduce import describe_trace
from fuzzer.harnesses.agent.script import Script, listing

#: Longest reproduce command printed; a longer script is replayed from the corpus or the report.
REPRODUCE_LIMIT = 4000
SCENARIO_VERSION = 1


@dataclass
class AgentFinding(ShrunkFinding):
    kind = "agent"
    first_input = "script"

    script: Script  # the first script that showed it (minimized: the shrunk one)
    choices: tuple
    trace: Optional[dict]  # None for a hang or a death
    agent: str
    policy: AgentPolicy
    tools: Optional[str] = None
    minimized_choices: tuple = ()
    minimized_trace: Optional[dict] = None
    minimized_reason: str = ""
    detail: Optional[str] = None  # how a hung / dead worker ended
    announced: bool = field(default=False, compare=False)

    # -- Reportable ------------------------------------------------------------------------------
    best_trace = shown("trace")
    best_reason = shown("reason")

    @property
    def exception(self) -> Optional[str]:
        trace = self.best_trace
        if trace and trace.get("error"):
            return f"{trace['error']['exception']}: {trace['error']['message']}"
        return self.detail

    def location(self) -> Optional[tuple]:
        trace = self.best_trace
        where = trace["error"].get("where") if trace and trace.get("error") else None
        return tuple(where) if where else None

    def reproduce(self) -> str:
        """A shell command replaying the (minimized) script against the loop, as printed: a loop
        found through the run's directory (the user's module, not an installed one) is looked up
        there, so the command runs pasted into a terminal anywhere, as a parser's does."""
        from fuzzer.harnesses.parser.reproduce import target_home

        scenario = {"script": self.best.to_json(compact=True), "policy": self.policy.to_json(compact=True)}
        if self.tools:
            scenario["tools"] = self.tools
        text = json.dumps(scenario, ensure_ascii=True, separators=(",", ":"))
        home = target_home(self.agent)
        where = f", cwd={json.dumps(home)}" if home else ""
        code = (f"from fuzzer.harnesses.agent.reproduce import replay; r = replay({json.dumps(self.agent)}, "
                f"{json.dumps(text)}{where}); print(r); raise SystemExit(r.exit_code)")
        command = f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"
        if len(command) > REPRODUCE_LIMIT:
            return (f"the script is long ({len(text):,} characters): replay it from the corpus "
                    f"(fuzz replay --corpus DIR --agent {self.agent}) or from --report (failures[].script)")
        return command

    def scenario(self) -> dict:
        return {"version": SCENARIO_VERSION, "shape": self.best.shape, "tools": self.tools,
                "policy": self.policy.to_json(), "choices": list(self.minimized_choices or self.choices),
                "script": self.best.to_json()}

    def to_report(self) -> dict[str, Any]:
        trace = self.best_trace
        return {
            "signature": self.signature.id,
            "title": self.signature.title,
            "verdict": self.verdict,
            "anomaly_class": None,
            "operator": None,
            "format": self.best.shape,
            "tool": None,
            "reason": self.best_reason,
            "input": listing(self.script),
            "minimized_input": listing(self.best),
            "minimized": self.is_minimized,
            "shrink_note": self.shrink_note,
            "confirmed": self.confirmed_again,
            "steps": len(self.best.steps()),
            "exception": self.exception,
            "traceback": trace["error"]["traceback"] if trace and trace.get("error") else None,
            "truth": None,
            "returned": trace["reply"] if trace else None,
            "trace": describe_trace(trace) if trace else [self.detail or "no trace"],
            "script": self.best.to_json(),
            "recipe": {"choices": list(self.minimized_choices or self.choices)},
            "reproduce": self.reproduce(),
            "count": self.count,
        }

    def to_entry(self, *, target: str, version: Optional[str]) -> Entry:
        return Entry(kind="agent", text=listing(self.best), scenario=self.scenario(), signature=self.signature.id,
                     title=self.signature.title, verdict=self.verdict, exception=self.exception, what=self.signature.what,
                     format=self.best.shape, target=target, target_version=version)

    # -- printing ----------------------------------------------------------------------------
    def text(self) -> str:
        """The block the console prints: what broke, the shortest script, what the loop did."""
        head = f"{self.verdict} {self.signature.id}: {self.signature.title}"
        lines = [head, f"  {self.best_reason}"]
        if not self.reproducible:
            lines.append("  (it did not happen again when the script was re-run: the loop is nondeterministic)")
        elif self.confirmed is None:
            lines.append("  (not confirmed: the script was not played again before the budget for it ran out)")
        note = "minimal script" if self.is_minimized else f"script ({self.shrink_note or 'not minimized'})"
        lines.append(f"  {note}, {len(self.best.steps())} step(s):")
        lines += ["    " + line for line in listing(self.best).splitlines()]
        trace = self.best_trace
        if trace is not None:
            lines.append("  what the loop did:")
            lines += ["    " + line for line in describe_trace(trace)]
        lines.append(f"  reproduce: {self.reproduce()}")
        if self.count > 1:
            lines.append(f"  seen in {self.count} episodes")
        return "\n".join(lines)


__all__ = ["AgentFinding", "SCENARIO_VERSION"]
