"""``--markdown FILE``, and the GitHub Actions job summary.

The same page in GitHub-flavoured Markdown: a summary table, per-class handled percentages, and
each finding with its minimized input, the expected-vs-returned diff of its calls and the command
that reproduces it. Under GitHub Actions (``GITHUB_ACTIONS=true`` with ``GITHUB_STEP_SUMMARY``
set), :func:`step_summary_handler` appends the same text to the job summary, so a failing gate
explains itself on the run's page. GitHub caps a step's summary at 1 MiB: inputs are cut to
:data:`INPUT_LIMIT` characters and at most :data:`FINDINGS_LIMIT` findings are detailed.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Optional

from fuzzer.engine.events import Event, JobFinished
from fuzzer.engine.pipeline import EventHandler
from fuzzer.reports.writers import FileWriter, writer
from fuzzer.reports.common import (Facts, Summary, bounded, calls_diff, facts_of, failed_cases, printable, summary_of)

INPUT_LIMIT = 1_000
FINDINGS_LIMIT = 50
SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


@writer("markdown")
class MarkdownHandler(FileWriter):
    """Writes the Markdown report when the job finishes."""

    def render(self, result: Any) -> str:
        return markdown_report(result)


class StepSummaryHandler(EventHandler):
    """Appends the Markdown report to ``$GITHUB_STEP_SUMMARY`` (appends: several jobs of one step
    each add their section)."""

    def __init__(self, path: str):
        self.path = path

    def handle_event(self, event: Event) -> None:
        if isinstance(event, JobFinished):
            with open(self.path, "a", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(markdown_report(event.result) + "\n")


def step_summary_handler(environ: Optional[dict] = None) -> Optional[StepSummaryHandler]:
    """The job-summary handler when running under GitHub Actions, else None. Commands attach it
    alongside the writers the user asked for."""
    env = os.environ if environ is None else environ
    path = env.get(SUMMARY_ENV)
    if env.get("GITHUB_ACTIONS") == "true" and path:
        return StepSummaryHandler(path)
    return None


def fence(text: str, language: str = "") -> str:
    """A fenced code block that ``text`` cannot close: the fence is longer than any run of
    backticks inside it (model outputs contain ```json fences)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def _cell(text: Any) -> str:
    """Inline text for a table cell or a line: one line, pipes escaped."""
    return printable(str(text)).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(text: Any) -> str:
    """Inline code that survives backticks inside."""
    body = printable(str(text)).replace("\n", " ").replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{ticks}{pad}{body}{pad}{ticks}"


def markdown_report(result: Any) -> str:
    summary = summary_of(result)
    facts = [facts_of(f) for f in result.findings]
    lines = _summary(summary)
    lines += _classes(summary)
    if facts:
        lines += ["", f"### Findings ({len(facts)})"]
        for number, f in enumerate(facts[:FINDINGS_LIMIT], 1):
            lines += _finding(number, f)
        if len(facts) > FINDINGS_LIMIT:
            lines += ["", f"… and {len(facts) - FINDINGS_LIMIT} more: see the JSON, HTML or SARIF report."]
    cases = failed_cases(result)
    if cases:
        lines += ["", f"### Failed test cases ({len(cases)})", ""]
        lines += [f"- {_code(c.name)}: {_cell(c.message)}" for c in cases]
    return "\n".join(lines) + "\n"


def _summary(s: Summary) -> list[str]:
    verdicts = ", ".join(f"{n} {v}" for v, n in sorted(s.by_verdict.items())) or "none"
    # the failed test cases decide, as they do the exit status and every other report: a gate's
    # known open findings are findings, not failures
    status = "❌ failures found" if s.counts.get("failed") else (
        "⚠️ nothing tested" if s.problem else
        "⚠️ interrupted: no failure found so far" if str(s.stop_reason) == "interrupted" else
        f"✅ no new failure ({s.findings} known)" if s.findings else "✅ no failure found")
    lines = [f"## toolfuzz {_cell(s.job)}: {status}", "", f"Target: {_code(s.label)}", "",
             "| executions | seconds | executions/s | distinct findings | findings by verdict | test cases (passed / failed / skipped) | stopped |",
             "|---:|---:|---:|---:|---|---|---|",
             f"| {s.executions:,} | {s.elapsed_s:,.1f} | {s.execs_per_s:,.0f} | {s.findings:,} | {_cell(verdicts)} | "
             f"{s.counts.get('passed', 0)} / {s.counts.get('failed', 0)} / {s.counts.get('skipped', 0)} | "
             f"{_cell(s.stop_reason)} |"]
    if s.problem:
        lines += ["", f"**Nothing could be tested:** {_cell(s.problem)}"]
    return lines


def _classes(s: Summary) -> list[str]:
    if not s.by_class:
        return []
    lines = ["", "| anomaly class | executions | failures | handled |", "|---|---:|---:|---:|"]
    lines += [f"| {_cell(r.name)} | {r.executions:,} | {r.failures:,} | {r.handled_pct:.1f}% |" for r in s.by_class]
    return lines


def _finding(number: int, f: Facts) -> list[str]:
    where = f" in {_code(f.location[1])} ({_cell(os.path.relpath(f.location[0]))})" if f.location else ""
    lines = ["", f"#### {number}. {_cell(f.headline)}", "",
             f"{_code(f.signature)} · seen {f.count:,}x · {_cell(f.origin)}{where}"]
    if f.reason:
        lines += ["", _cell(f.reason)]
    if f.schedule is not None:  # a scenario, one call per line: shown as it is
        label = "Minimized scenario" if f.minimized else "Scenario (not minimized)"
        lines += ["", f"{label}:", "", fence(printable(bounded(f.shown_input, INPUT_LIMIT)))]
    else:
        label = "Minimized input" if f.minimized else "Input (not minimized)"
        shown = bounded(json.dumps(f.shown_input, ensure_ascii=False), INPUT_LIMIT)
        lines += ["", f"{label} ({len(f.shown_input):,} characters, as a JSON string):", "", fence(printable(shown))]
    if f.exception and f.exception != f.reason:
        lines += ["", f"Exception: {_code(f.exception)}"]
    if f.has_calls_diff:
        diff = "\n".join(f"{tag} {text}" if tag != " " else f"  {text}" for tag, text in calls_diff(f.truth, f.returned))
        lines += ["", "Expected (-) vs returned (+) calls:", "", fence(printable(bounded(diff, 4 * INPUT_LIMIT)), "diff")]
    if f.reproduce:
        lines += ["", "Reproduce:", "", fence(printable(f.reproduce), "sh")]
    return lines


__all__ = ["MarkdownHandler", "StepSummaryHandler", "fence", "markdown_report", "step_summary_handler"]
