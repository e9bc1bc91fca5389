"""What the console prints at the end of each job: lines built from the job's result only.

Every number here is read from the result (its tally, its test cases, its gate decision); nothing
is counted again, so the console, the JSON report and the JUnit file agree.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from fuzzer.engine.text import compact, preview
from fuzzer.engine.results import FAILED, PASSED, SKIPPED, shown_input
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
    if len(getattr(finding, "variants", ())) > 1:
        lines.append(f"    seen in:   {', '.join(finding.variants)}")
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
        lines += [""] + corpus_replay_lines(result.replayed)
    lines.append("")
    lines += class_table(result.by_class)
    lines.append("")
    lines.append(f"{result.executions:,} executions in {result.elapsed_s:.1f} s ({result.execs_per_s:,.0f}/s), "
                 f"{len(result.findings)} distinct failure(s) [stopped: {result.stop_reason.value}]")
    if result.ignored:
        lines.append(f"{result.ignored:,} failing execution(s) matched an ignored signature")
    backend = getattr(result, "backend", None) or {}
    if backend.get("name", "local") != "local":
        lines.append(backend_line(backend))
    for i, finding in enumerate(result.findings, 1):
        lines += finding_lines(i, finding)
    for note in result.notes:
        lines.append(f"note: {note}")
    for hint in result.hints:
        lines.append(f"hint: {hint}")
    return lines


def backend_line(backend: dict) -> str:
    """Where a run's work ran, when not on this machine's worker processes (the report's ``backend``)."""
    line = (f"back end: {backend['name']} ({backend.get('address')}), {backend.get('workers')} actor(s) on "
            f"{backend.get('nodes')} node(s), start-up {backend.get('startup_s', 0):.1f} s")
    if backend.get("actors_lost"):
        line += (f"; {backend['actors_lost']} actor(s) lost, {backend.get('orders_rerun', 0)} order(s) re-run "
                 "elsewhere")
    return line


def corpus_replay_lines(replayed: list, version: Optional[str] = None) -> list[str]:
    """One line per entry; entries found with another version of the target say so, which tells a
    behaviour change of the new parser from an old finding."""
    marks = {"pass": "pass", "fail": "FAIL", "changed": "CHANGED", "regression": "REGRESSION", "unjudged": "UNJUDGED"}
    lines = []
    for r in replayed:
        now = f" now {r.signature}" if r.status == "changed" or (r.status == "regression" and
                                                                 r.signature != r.entry.signature) else ""
        if now and r.rekeyed:
            now += " (re-keyed: it fails exactly as filed)"
        found = r.entry.target_version
        older = f" (found with {found}; target is {version})" if found and version and found != version else ""
        why = f": {r.unjudged}" if r.unjudged else f": {r.note}" if r.note else ""
        lines.append(f"{marks[r.status]:<10} {r.entry.signature:<28} {r.entry.status:<6} "
                     f"{os.path.basename(r.path)}{now}{older}{why}")
    return lines


def regression_line(signature: str, title: str = "", where: str = "") -> str:
    """How a command that writes the corpus (a campaign, ``corpus add``, ``corpus import``) says a
    finding shows the bug of an entry marked fixed: the entry stays fixed, so the gate blocks.
    ``where``: the input's origin (" from record ID")."""
    about = f" ({title})" if title else ""
    return (f"REGRESSION {signature}{about}{where}: an entry marked fixed fails again; it stays fixed, so the gate "
            "blocks until the target is fixed (fuzz replay --update marks it open)")


def counts_line(counts: dict, what: str = "test cases") -> str:
    return f"{sum(counts.values())} {what}: {counts[PASSED]} passed, {counts[FAILED]} failed, {counts[SKIPPED]} skipped"


def replay_lines(result: Any) -> list[str]:
    lines = corpus_replay_lines(result.replayed, result.versions.get("parser"))
    statuses = result.status_counts()
    summary = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) or "no entries"
    lines.append(f"{len(result.replayed)} entries: {summary}")
    for signature, old, new in result.updates:
        lines.append(f"updated {signature}: {old} -> {new}")
    for problem in result.notes:
        lines.append(f"UNREADABLE corpus file {problem} (its regression test does not run; fix or remove it)")
    return lines


def gate_lines(result: Any) -> list[str]:
    d = result.decision
    regressions = len(d.corpus_regressions)
    moved_entries = [x for x in d.moved if hasattr(x, "entry")]
    lines = [f"replayed {len(result.replay.replayed)} corpus entries: {len(d.passed)} pass, {len(d.known)} known "
             f"open failures, {regressions} regression{'' if regressions == 1 else 's'}, "
             f"{len(d.corpus_new)} now failing differently, "
             + (f"{len(moved_entries)} moved, " if moved_entries else "")
             + f"{len(d.unjudged)} unjudged, {len(d.corpus_ignored)} ignored"]
    moved_findings = len(d.moved) - len(moved_entries)
    lines.append(f"campaign: {result.executions:,} executions, {len(result.findings)} signatures, "
                 f"{len(d.campaign_new)} new" + (f", {moved_findings} moved" if moved_findings else ""))
    for x in moved_entries:
        if x.rekeyed:
            lines.append(f"MOVED {x.entry.signature} -> {x.signature} (corpus entry {os.path.basename(x.path)} fails "
                         f"exactly as it was filed; only the signature's key changed: a known bug, not new)")
            continue
        lines.append(f"MOVED {x.entry.signature} -> {x.signature} (corpus entry {os.path.basename(x.path)} fails the "
                     f"same way from another place in the target: a known bug, not new)")
    # Campaign findings are any harness's (parser, executor, agent): read through their report.
    for x in d.regressions:
        if hasattr(x, "entry"):
            lines.append(f"REGRESSION {x.entry.signature} ({x.entry.title}): {preview(x.entry.text)}")
        else:
            report = x.to_report()
            lines.append(f"REGRESSION {x.signature.id} ({report['title']}): {preview(shown_input(report))}")
    for x in d.new:
        if hasattr(x, "entry"):
            lines.append(f"NEW {x.signature} (corpus entry {os.path.basename(x.path)} now fails differently): "
                         f"{preview(x.entry.text)}")
        else:
            report = x.to_report()
            lines.append(f"NEW {x.signature.id} ({report['title']})")
            lines.append(f"    {'minimized:' if x.is_minimized else 'input:    '} {preview(shown_input(report))}")
            if report.get("reproduce"):
                lines.append(f"    reproduce: {report['reproduce']}")
    for x in d.unjudged:
        lines.append(f"UNJUDGED {x.entry.signature}: {x.unjudged}")
    if d.nothing_tested:
        lines.append(f"NOTHING TESTED: {d.nothing_tested}")
    for problem in d.unreadable:
        lines.append(f"UNREADABLE corpus file {problem} (its regression test would be lost; fix or remove it)")
    lines.append(counts_line(result.counts()))
    lines.append("gate: BLOCKED" if d.blocked else "gate: passed")
    return lines


__all__ = ["campaign_lines", "class_table", "corpus_replay_lines", "counts_line", "finding_lines", "gate_lines",
           "regression_line", "replay_lines"]
