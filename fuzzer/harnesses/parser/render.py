"""How the parser harness's campaign reads on the console: the formats probed, the per-class table,
the totals and each finding's block — every number read from the result (its tally, its findings),
so the console says what the JSON and JUnit files say."""

from __future__ import annotations

from typing import Any

from fuzzer.engine.jobs.replay import entry_lines
from fuzzer.engine.text import compact, preview
from strategies._internal.sample import ANOMALY_CLASSES

TRUTH_VERDICTS = ("corruption", "false_reject", "missed_anomaly")


def finding_lines(index: int, finding: Any) -> list[str]:
    """The block of one parser finding (its words describe the input shown)."""
    best = finding.best
    lines = ["", f"[{index}] {finding.verdict.value}  {finding.signature.id}  ({finding.title}, seen {finding.count}x)",
             f"    why:       {finding.reason}"]
    cls = finding.sample.anomaly_class or "valid"
    lines.append(f"    sample:    {cls}{'/' + finding.sample.operator if finding.sample.operator else ''}"
                 f" in {finding.sample.format}")
    size_note = f" (from {len(finding.sample.text)} chars)" if len(best.text) != len(finding.sample.text) else ""
    label = "minimized:" if finding.is_minimized else "input:    "
    lines.append(f"    {label} {preview(best.text)}{size_note}")
    if finding.history:
        lines.append(f"    after:     {len(finding.history)} earlier input(s): "
                     + ", ".join(preview(h, 60) for h in finding.history[:3]) + (" …" if len(finding.history) > 3 else ""))
    if finding.exception:
        lines.append(f"    exception: {finding.exception}")
    if best.truth_known and finding.verdict.value in TRUTH_VERDICTS:
        lines.append(f"    expected:  {compact(best.calls) if best.calls is not None else 'no call (the output denotes none)'}")
        outcome = finding.best_outcome
        if outcome is not None and outcome.kind == "returned":
            lines.append(f"    returned:  {compact(outcome.calls)}")
    for note in ([finding.shrink_note] if finding.shrink_note else []) + list(finding.notes):
        lines.append(f"    note:      {note}")
    lines.append(f"    reproduce: {finding.reproduce}")
    return lines


def class_table(by_class: dict) -> list[str]:
    lines = [f"{'anomaly class':<24}{'executions':>12}{'failures':>10}{'handled':>9}"]
    order = ["valid"] + list(ANOMALY_CLASSES) + sorted(set(by_class) - set(ANOMALY_CLASSES) - {"valid"})
    for name in order:
        stats = by_class.get(name)
        if stats is None:
            continue
        handled = 100.0 * (stats.executions - stats.failures) / stats.executions if stats.executions else 100.0
        lines.append(f"{name:<24}{stats.executions:>12,}{stats.failures:>10,}{handled:>8.1f}%")
    return lines


def unsupported_lines(unsupported: dict) -> list[str]:
    """Unsupported formats, one line per tool and reason (``tool: format`` keys when several tools
    were fuzzed): 15 formats times 3 tools made 45 lines of the same sentence."""
    groups: dict = {}
    for name, why in unsupported.items():
        tool, sep, fmt = name.partition(": ") if ": " in name else ("", "", name)
        groups.setdefault((tool, why), []).append(fmt)
    lines = []
    for (tool, why), formats in groups.items():
        lines.append(f"  unsupported  {tool + ': ' if tool else ''}{', '.join(formats)} ({why})")
    return lines


def campaign_lines(result: Any) -> list[str]:
    lines: list[str] = []
    if result.supported or result.unsupported:
        lines.append("formats:")
        for name, variations in result.supported.items():
            tool = name.split(": ", 1)[0] + ": " if ": " in name else ""
            lines.append(f"  supported    {tool}{', '.join(variations)}")
        lines += unsupported_lines(result.unsupported)
        for name, why in getattr(result, "failing", {}).items():
            lines.append(f"  failing      {name}: {why}")
        for line in getattr(result, "assumed", ()):
            lines.append(f"  assumed      {line}")
    if result.replayed:
        lines += [""] + entry_lines(result.replayed)
    lines.append("")
    lines += class_table(result.by_class)
    lines.append("")
    lines.append(f"{result.executions:,} executions in {result.elapsed_s:.1f} s ({result.execs_per_s:,.0f}/s), "
                 f"{len(result.findings)} distinct failure(s) [stopped: {result.stop_reason.value}]")
    if result.ignored:
        lines.append(f"{result.ignored:,} failing execution(s) matched an ignored signature")
    backend = getattr(result, "backend", None) or {}
    if backend.get("name", "local") != "local":
        from fuzzer.backends import backend_line

        lines.append(backend_line(backend))
    for i, finding in enumerate(result.findings, 1):
        lines += finding_lines(i, finding)
    for note in result.notes:
        lines.append(f"note: {note}")
    for hint in result.hints:
        lines.append(f"hint: {hint}")
    return lines


__all__ = ["campaign_lines", "class_table", "finding_lines", "unsupported_lines"]
