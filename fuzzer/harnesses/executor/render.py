"""How the executor harness's results read on the console (the one console handler prints
``result.summary_lines()``; these are the executor's).

Every number printed comes from the job's result or the finding (never counted here). A finding
prints as: verdict and signature, what rule broke, the minimal schedule, the virtual waits the
executor made, how often it was seen, and the reproduce command (runs as printed). A scenario
replayed (``--replay-scenario``, ``fuzz reproduce`` of an executor entry) prints its whole trace,
attempt by attempt, then the verdicts.
"""

from __future__ import annotations

from typing import Any, Optional

from fuzzer.reports.common import printable


def _one_line(text: Any) -> str:
    """A line of the summary: what the executor or its tools wrote (arguments, messages, values)
    with newlines and every control or line-separator character escaped, so it stays one line
    and cannot move a terminal's cursor."""
    return printable(str(text)).replace("\n", "\\n")


def _seconds(values: Any) -> str:
    values = list(values)
    if not values:
        return "none"
    shown = ", ".join(f"{v:g}" for v in values[:12]) + (", …" if len(values) > 12 else "")
    return f"{shown} s (total {sum(values):g} s)"


def summary_lines(result: Any) -> list[str]:
    lines = [f"executor {result.label}"]
    if getattr(result, "problem", None):
        lines.append(f"  tested nothing: {result.problem}")
    per_s = result.execs_per_s
    usage = result.usage
    lines.append(f"  {result.executions:,} scenarios ({usage.calls:,} calls) in {result.elapsed_s:.1f} s, "
                 f"{per_s:,.0f} scenarios/s; {usage.virtual_s:,.0f} s of virtual time "
                 f"in {usage.real_s:.1f} s of worker time")
    if result.policy is not None:
        lines.append(f"  policy: {result.policy.source} (see `fuzz executor --explain`)")
    backend = getattr(result, "backend", None) or {}
    if backend.get("name", "local") != "local":
        from fuzzer.backends import backend_line

        lines.append(f"  {backend_line(backend)}")
    lines.append(f"  stopped: {result.stop_reason}")
    for note in result.notes:
        lines.append(f"  note: {note}")
    if not result.findings:
        lines.append("  no violation found" if result.executions else "")
        return [line for line in lines if line]
    lines.append(f"  {len(result.findings)} violation{'s' if len(result.findings) != 1 else ''}:")
    for i, f in enumerate(result.findings, 1):
        lines += [""] + finding_lines(i, f)
    return lines


def finding_lines(i: int, f: Any) -> list[str]:
    shrunk = (f"shrunk from {len(f.scenario.steps)} to {len(f.best.steps)} call{'s' if len(f.best.steps) != 1 else ''}"
              if f.is_minimized else "not shrunk")
    if f.shrink_note:
        shrunk += f" ({f.shrink_note})"
    schedule = [_one_line(part) for part in f.schedule_text().split("\n")]  # several lines: no failing call
    lines = [f"  {i}. {f.verdict}  {f.signature.id}  {_one_line(f.signature.title)}",
             f"     {_one_line(f.best_violation.reason)}",
             f"     minimal schedule: {schedule[0]}", *(f"       {part}" for part in schedule[1:]),
             f"     virtual waits: {_seconds(f.waits)}",
             f"     seen in {f.count} scenario{'s' if f.count != 1 else ''}; {shrunk}"]
    exception = f.exception()
    if exception and f.verdict in ("crash", "hang"):
        lines.append(f"     exception: {_one_line(exception)}")
    if len(f.best.steps) > 1 and len(schedule) == 1:
        lines.append("     scenario:")
        lines += [f"       {_one_line(line)}" for line in f.best.describe().split("\n")]
    command = f.reproduce
    if command:
        lines.append(f"     reproduce: {command}")
    return lines


def replay_lines(result: Any) -> list[str]:
    """One scenario replayed (:class:`fuzzer.harnesses.executor.job.ScenarioRun`): the whole
    trace, attempt by attempt, then the verdicts."""
    lines = trace_lines(result.scenario, result.trace)
    cold = result.cold_trace
    if cold is not None and cold.kind == "ran":
        lines.append(f"(first run, in a fresh worker: {cold.data.get('real_s', 0) * 1000:.3f} ms)")
    lines += [f"note: {note}" for note in result.notes]
    if not result.findings:
        return lines + ["no violation"]
    lines.append(f"{len(result.findings)} violation{'s' if len(result.findings) != 1 else ''}:")
    for f in result.findings:
        lines += [f"  {f.verdict}  {f.signature.id}  {_one_line(f.signature.title)}",
                  f"     {_one_line(f.violation.reason)}"]
    return lines


def trace_lines(scenario: Any, trace: Any) -> list[str]:
    if trace is None:
        return ["(not run)"]
    if trace.kind != "ran":
        return [f"the scenario did not finish: {trace.kind} ({_one_line(trace.detail)})"]
    lines = []
    factory = trace.data.get("factory_error")
    if factory:
        lines.append(f"make_executor raised {factory['type']}: {_one_line(factory['message'])}")
    for i, (step, record) in enumerate(zip(scenario.steps, trace.steps), 1):
        gap = f" after {step.gap:g} s" if step.gap else ""
        lines.append(f"call {i}{gap}: {_one_line(step.call_text())}  -- {step.schedule.describe()}")
        previous: Optional[float] = None
        for inv in record.get("invocations", []):
            wait = f", after waiting {inv['t0'] - previous:g} s" if previous is not None else ""
            extra = f", Retry-After {inv['retry_after']:g} s" if inv.get("retry_after") is not None else ""
            state = "raised" if inv.get("raised") else "returned"
            lines.append(f"  attempt {inv['attempt']} of {inv['tool']} at {inv['t0'] - record['t0']:g} s{wait}: "
                         f"{inv['fault']} ({state}{extra})")
            previous = inv["t1"]
        outcome = record.get("outcome")
        if outcome == "returned":
            import json

            shown = json.dumps(record.get("value"), ensure_ascii=False)
            lines.append(f"  returned {_one_line(shown[:160])}{'…' if len(shown) > 160 else ''}")
        elif outcome == "raised":
            exc = record.get("exception") or {}
            lines.append(f"  raised {exc.get('type')}: {_one_line(exc.get('message'))}")
        else:
            lines.append(f"  aborted by toolfuzz ({record.get('abort')})")
        lines.append(f"  virtual time of the call: {record['t1'] - record['t0']:g} s; waits: "
                     f"{_seconds(record.get('sleeps', []))}")
    cpu = trace.data.get("cpu_s")
    lines.append(f"real time: {trace.data.get('real_s', 0) * 1000:.3f} ms"
                 + (f" ({cpu * 1000:.3f} ms of CPU)" if cpu is not None else "")
                 + f" for {trace.data.get('virtual_s', 0):g} s of virtual time")
    return lines


__all__ = ["finding_lines", "replay_lines", "summary_lines", "trace_lines"]
