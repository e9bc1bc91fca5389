"""What the SARIF, HTML and Markdown writers share: the file-writing handler, and the facts of a
result and of a finding, read once from the result's interface.

No writer counts anything: :func:`summary_of` takes the numbers from ``result.counts()``,
``result.to_report()`` and the result's own fields, and :func:`facts_of` takes a finding's from
its ``to_report()`` and ``location()``. Two optional attributes feed the plots and are read with
``getattr`` (absent: the plot is omitted):

* ``finding.found_at_s`` — seconds into the job when the finding was first recorded;
* ``result.timeline`` — ``[(elapsed_s, executions), ...]``, increasing.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from fuzzer.engine.results import FAILED

def describe_verdict(name: str, harness: Optional[str] = None) -> str:
    """What a verdict means, in its harness's words (:mod:`fuzzer.engine.verdicts`)."""
    from fuzzer.engine.verdicts import describe

    return describe(name, harness)


@dataclass(frozen=True)
class ClassRow:
    """One line of the per-class table: executions, failures and the handled share."""

    name: str
    executions: int
    failures: int

    @property
    def handled_pct(self) -> float:
        return 100.0 * (self.executions - self.failures) / self.executions if self.executions else 100.0


@dataclass(frozen=True)
class Summary:
    job: str
    label: str
    executions: int
    elapsed_s: float
    execs_per_s: float
    stop_reason: str
    problem: Optional[str]
    counts: dict  # passed / failed / skipped over the result's test cases
    findings: int
    by_class: list = field(default_factory=list)  # ClassRow
    formats: dict = field(default_factory=dict)  # {"supported": {...}, "unsupported": {...}}
    by_verdict: dict = field(default_factory=dict)  # verdict -> distinct findings
    report: dict = field(default_factory=dict)  # result.to_report()
    harness_of: dict = field(default_factory=dict)  # verdict -> the harness whose finding gave it


def summary_of(result: Any) -> Summary:
    report = _report_of(result)
    rows = [ClassRow(name, int(stats.get("executions", 0)), int(stats.get("failures", 0)))
            for name, stats in (report.get("by_class") or {}).items()]
    rows.sort(key=lambda r: (r.name != "valid", r.name))
    by_verdict: dict[str, int] = {}
    harness_of: dict[str, str] = {}
    for finding in result.findings:
        by_verdict[finding.verdict_name] = by_verdict.get(finding.verdict_name, 0) + 1
        harness_of.setdefault(finding.verdict_name, getattr(finding, "kind", ""))
    return Summary(job=getattr(result, "job", "job"), label=getattr(result, "label", ""),
                   executions=result.executions, elapsed_s=result.elapsed_s, execs_per_s=result.execs_per_s,
                   stop_reason=str(result.stop_reason), problem=getattr(result, "problem", None),
                   counts=dict(result.counts()), findings=len(result.findings), by_class=rows,
                   formats=report.get("formats") or {}, by_verdict=by_verdict, report=report,
                   harness_of=harness_of)


def _report_of(result: Any) -> dict:
    try:
        return result.to_report()
    except NotImplementedError:
        return {}


@dataclass(frozen=True)
class Facts:
    """A finding as every writer shows it."""

    signature: str
    title: str
    verdict: str
    count: int
    minimized: bool
    input: str
    minimized_input: str
    reason: str
    exception: Optional[str]
    reproduce: Optional[str]
    truth: Any
    returned: Any
    anomaly_class: Optional[str]
    operator: Optional[str]
    format: Optional[str]
    tool: Optional[str]
    note: Optional[str]
    location: Optional[tuple]  # (path, function)
    found_at_s: Optional[float]
    schedule: Optional[str] = None  # an executor finding's minimal schedule (its input is a scenario)
    harness: str = ""  # the harness whose finding it is ("parser", "executor", ...)

    @property
    def rule(self) -> str:
        """The SARIF rule of its verdict: the verdict's name for the parser harness (the rule ids
        code scanning already knows), ``harness.verdict`` for the others, so two harnesses' verdicts
        of one name (``crash``) are two rules, each described in its own words."""
        return self.verdict if self.harness in ("", "parser") else f"{self.harness}.{self.verdict}"

    @property
    def description(self) -> str:
        return describe_verdict(self.verdict, self.harness or None)

    @property
    def origin(self) -> str:
        """Where the failing input came from: the sample's class and format (a parser finding),
        or the failing call and the faults its attempts met (an executor finding)."""
        if self.schedule is not None:
            return f"schedule: {self.schedule}"
        sample = "/".join(x for x in (self.anomaly_class or "valid", self.operator) if x)
        return f"{sample} in {self.format or '?'}" + (f" for {self.tool}" if self.tool else "")

    @property
    def headline(self) -> str:
        """The title, starting with the verdict."""
        return self.title if self.title.startswith(self.verdict) else f"{self.verdict}: {self.title}"

    @property
    def what(self) -> str:
        """The title without its leading verdict (shown next to a verdict badge)."""
        return self.title[len(self.verdict):].lstrip(": ") if self.title.startswith(self.verdict) else self.title

    @property
    def shown_input(self) -> str:
        return self.minimized_input or self.input

    @property
    def has_calls_diff(self) -> bool:
        """Expected vs returned is worth showing: the target returned calls and the truth is known."""
        return self.verdict in ("corruption", "missed_anomaly") and self.returned is not None


def facts_of(finding: Any) -> Facts:
    report = finding.to_report()
    location = finding.location() if hasattr(finding, "location") else None
    text = report.get("input") or ""
    return Facts(signature=str(report.get("signature") or finding.signature.id),
                 title=str(report.get("title") or finding.signature.title),
                 verdict=finding.verdict_name, count=int(report.get("count") or finding.count),
                 minimized=bool(finding.is_minimized), input=text,
                 minimized_input=report.get("minimized_input") or text, reason=report.get("reason") or "",
                 exception=report.get("exception"), reproduce=report.get("reproduce"),
                 truth=report.get("truth"), returned=report.get("returned"),
                 anomaly_class=report.get("anomaly_class"), operator=report.get("operator"),
                 format=report.get("format"), tool=report.get("tool"), note=report.get("note"),
                 location=tuple(location) if location else None,
                 found_at_s=getattr(finding, "found_at_s", None), schedule=report.get("schedule"),
                 harness=getattr(finding, "kind", ""))


def calls_diff(expected: Any, returned: Any) -> list[tuple[str, str]]:
    """Line diff of the expected and returned calls as indented JSON (keys sorted: key order
    does not count). Each line is ``(tag, text)``, tag ``" "``, ``"-"`` (expected only) or ``"+"``."""
    old = pretty_json(expected).split("\n")  # (not splitlines: strings may hold \x85, \u2028)
    new = pretty_json(returned).split("\n")
    lines: list[tuple[str, str]] = []
    for line in difflib.ndiff(old, new):
        tag, text = line[:1], line[2:]
        if tag in (" ", "-", "+"):
            lines.append((tag, text))
    return lines


def pretty_json(value: Any) -> str:
    try:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def bounded(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters in all)"


def printable(text: str) -> str:
    """``text`` safe for any UTF-8 document and terminal: control characters other than tab and
    newline (C0, DEL, C1 — ``\\x9b`` is a terminal's CSI), Unicode line separators and lone
    surrogates, written as escapes (``\\x1b``, ``\\ud800``), so what the target choked on stays
    visible and the file stays valid."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\t\n" or (code >= 32 and not 0x7F <= code <= 0x9F and not 0xD800 <= code <= 0xDFFF
                             and ch not in "\u2028\u2029"):
            out.append(ch)
        else:
            out.append(f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}")
    return "".join(out)


def failed_cases(result: Any) -> list:
    """Failed test cases that are not findings (a replayed corpus entry that regressed)."""
    signatures = {f.signature.id for f in result.findings}
    return [c for c in result.test_cases() if c.status == FAILED and c.name not in signatures]


def target_source(target: str, cwd: Optional[str] = None) -> Optional[str]:
    """The source file of the target ``M:A`` (or ``path/file.py:A``), found without importing it."""
    module = target.split(":", 1)[0]
    cwd = cwd or os.getcwd()
    if module.endswith(".py") or "/" in module:
        path: Optional[str] = module if os.path.isabs(module) else os.path.join(cwd, module)
    else:
        from fuzzer.harnesses.parser.harness import module_file

        path = module_file(module, cwd)
    return path if path and os.path.isfile(path) else None


from fuzzer.harnesses.parser.harness import defined_names  # noqa: E402  (one reader of definitions)


def toolfuzz_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolfuzz")
    except PackageNotFoundError:
        return "0+unknown"


def run_facts() -> dict[str, Any]:
    """What a report says about the run that wrote it, beside its results: which toolfuzz, when,
    the command as typed, and where the tools came from (``--tools`` reaches the workers, and
    this, as ``$TOOLFUZZ_TOOLS``)."""
    import shlex
    import sys
    from datetime import datetime, timezone

    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if program in ("", "__main__.py", "fuzz"):  # the console script, or `python -m fuzzer`: the same command
        program = "fuzz"
    return {"toolfuzz_version": toolfuzz_version(),
            "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command_line": shlex.join([program, *sys.argv[1:]]),
            "tools_source": os.environ.get("TOOLFUZZ_TOOLS") or "built-in registry"}


__all__ = ["ClassRow", "Facts", "Summary", "bounded", "run_facts",
           "calls_diff", "defined_names", "describe_verdict", "facts_of", "failed_cases", "pretty_json", "printable", "summary_of",
           "target_source", "toolfuzz_version"]
