"""Findings of the executor harness: one per signature, with the scenario that showed it first and
its shrunk form, implementing :class:`fuzzer.engine.results.Reportable`.

A finding reads as: the verdict, the rule broken (its reason), the *minimal schedule* — the
failing call and the faults each attempt met — the virtual waits the executor made between those
attempts, and a command that replays exactly that scenario. In the corpus it becomes an
``Entry(kind="executor")`` whose ``scenario`` is the structured input and whose ``text`` is the
readable rendering (``Scenario.describe``), so the corpus keeps the smallest text per signature.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from typing import Any, Optional

from fuzzer.engine.results import ShrunkFinding, shown


@dataclass
class ExecutorFinding(ShrunkFinding):
    kind = "executor"
    first_input = "scenario"

    scenario: Any  # the first failing Scenario (minimized: the shrunk one)
    trace: Any  # its Trace
    violation: Any  # its checks.Violation
    minimized_trace: Any = None
    minimized_violation: Any = None
    command: tuple = ()  # the fuzz command line prefix that replays a scenario (see reproduce)
    #: What the scenario was judged by, kept in its corpus entry (replay uses them unless told otherwise).
    tools_file: Optional[str] = None
    policy: Any = None

    # -- Reportable --------------------------------------------------------------------------------
    best_trace = shown("trace")  # the shrunk scenario's trace and violation come with it
    best_violation = shown("violation")

    def failing_step(self) -> Optional[Any]:
        index = self.best_violation.step
        steps = self.best.steps
        return steps[index] if index is not None and 0 <= index < len(steps) else None

    def schedule_text(self) -> str:
        """The minimal schedule: the failing call and what each of its attempts met."""
        step = self.failing_step()
        if step is None:
            return self.best.describe()
        return f"{step.call_text()} -- {step.schedule.describe()}"

    @property
    def waits(self) -> tuple:
        """The virtual waits the executor made during the failing call: every ``sleep`` it made,
        as the replay prints them (the waits between attempts when the trace has none)."""
        index, trace = self.best_violation.step, self.best_trace
        if trace is not None and trace.kind == "ran" and index is not None and index < len(trace.steps):
            sleeps = trace.steps[index].get("sleeps")
            if sleeps:
                return tuple(sleeps)
        return tuple(self.best_violation.waits)

    def exception(self) -> Optional[str]:
        index = self.best_violation.step
        trace = self.best_trace
        if trace is None:
            return None
        if trace.kind != "ran":
            return trace.detail
        if index is not None and index < len(trace.steps):
            exc = trace.steps[index].get("exception")
            if exc:
                return f"{exc['type']}: {exc['message']}" if exc.get("message") else exc["type"]
        factory = trace.data.get("factory_error")
        return f"{factory['type']}: {factory['message']}" if factory else None

    @property
    def reproduce(self) -> str:
        """A command that replays the best scenario, runnable as printed (same directory)."""
        if not self.command:
            return ""
        scenario = json.dumps(self.best.to_json(), ensure_ascii=True, separators=(",", ":"))
        return shlex.join([*self.command, "--replay-scenario", scenario])

    def to_report(self) -> dict[str, Any]:
        step = self.failing_step()
        trace = self.best_trace
        return {
            "signature": self.signature.id,
            "title": self.signature.title,
            "verdict": self.verdict,
            "anomaly_class": step.anomaly if step is not None else None,
            "operator": step.operator if step is not None else None,
            "format": None,
            "tool": step.name if step is not None else None,
            "reason": self.best_violation.reason,
            "input": self.scenario.describe(),
            "minimized_input": self.best.describe(),
            "minimized": self.is_minimized,
            "exception": self.exception(),
            "truth": None,
            "returned": None,
            "recipe": None,
            "reproduce": self.reproduce,
            "count": self.count,
            "schedule": self.schedule_text(),
            "step": (self.best_violation.step + 1) if self.best_violation.step is not None else None,
            "virtual_waits": list(self.waits),
            "virtual_s": trace.data.get("virtual_s") if trace is not None else None,
            "real_s": trace.data.get("real_s") if trace is not None else None,
            "scenario": self.scenario.to_json(),
            "minimized_scenario": self.best.to_json(),
            "shrink_note": self.shrink_note,
        }

    def to_entry(self, *, target: str, version: Optional[str]) -> Any:
        from corpus.store import Entry

        step = self.failing_step()
        scenario = self.best.to_json()
        if self.tools_file:
            scenario["tools"] = self.tools_file
        if self.policy is not None:
            scenario["policy"] = self.policy.to_json()
        return Entry(kind="executor", scenario=scenario, text=self.best.describe(),
                     signature=self.signature.id, verdict=self.verdict, title=self.signature.title,
                     tool=step.name if step is not None else None,
                     anomaly_class=step.anomaly if step is not None else None,
                     operator=step.operator if step is not None else None, exception=self.exception(),
                     what=self.signature.what,
                     truth_known=False, target=target, target_version=version)

    def location(self) -> Optional[tuple[str, str]]:
        trace = self.best_trace
        index = self.best_violation.step
        if trace is None or trace.kind != "ran" or index is None or index >= len(trace.steps):
            return None
        frames = (trace.steps[index].get("exception") or {}).get("frames") or []
        return (frames[-1][0], frames[-1][1]) if frames else None


def replay_command(*, executor: str, tools_file: Optional[str] = None, policy_file: Optional[str] = None,
                   http: bool = False, implementations: Optional[str] = None, timeout: Optional[float] = None,
                   cwd: Optional[str] = None) -> tuple:
    """``python -m fuzzer executor --executor M:A ...`` with the interpreter that runs toolfuzz;
    preceded by ``env PYTHONPATH=DIR`` when the executor (or the tool implementations) were found
    through the run's directory ``cwd`` rather than installed, so the command runs from anywhere."""
    from fuzzer.harnesses.parser.reproduce import target_home

    module, _, attribute = executor.partition(":")
    if cwd and ("/" in module or module.endswith(".py")):  # a file: by its absolute path
        executor = f"{os.path.abspath(os.path.join(cwd, module))}:{attribute}"
    homes = []
    for ref in (executor, implementations if http else None):
        home = target_home(ref, cwd) if ref and "/" not in ref.partition(":")[0] else None
        if home and home not in homes:
            homes.append(home)
    command = ["env", "PYTHONPATH=" + os.pathsep.join(homes)] if homes else []
    command += [sys.executable, "-m", "fuzzer", "executor", "--executor", executor]
    if tools_file:
        command += ["--tools", tools_file]
    if policy_file:
        command += ["--policy", policy_file]
    if http:
        command.append("--http")
        if implementations:
            command += ["--implementations", implementations]
    if timeout is not None and timeout != 2.0:
        command += ["--timeout", f"{timeout:g}"]
    return tuple(command)


__all__ = ["ExecutorFinding", "replay_command"]
