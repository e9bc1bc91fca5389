"""The campaign report: the JSON contract of DESIGN.md ("Report") and the terminal summary."""

from __future__ import annotations

import json
import os
import re
import shlex
from typing import Any, Optional

from strategies._internal.sample import ANOMALY_CLASSES


def campaign_report(result: Any, *, target: str, extra: Optional[dict] = None) -> dict[str, Any]:
    by_class = {name: {"executions": s.executions, "failures": s.failures}
                for name, s in sorted(result.by_class.items())}
    report = {
        "tool": result.tool,
        "target": target,
        "level": result.level,
        "seed": result.seed,
        "executions": result.executions,
        "elapsed_s": round(result.elapsed_s, 3),
        "execs_per_s": round(result.execs_per_s, 1),
        "failures": [f.to_report() for f in result.findings],
        "by_class": by_class,
        "formats": {"supported": result.supported, "unsupported": result.unsupported},
        "stop_reason": result.stop_reason,
    }
    if extra:
        report.update(extra)
    return report


def write_json_atomic(path: str, data: Any) -> None:
    """Write JSON so that a crash mid-write never leaves a half file (temp file + rename)."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=True) + "\n")


def write_text_atomic(path: str, text: str) -> None:
    """Write a text file atomically (see :func:`corpus.store.atomic_write`)."""
    from pathlib import Path

    from corpus.store import atomic_write

    atomic_write(Path(os.path.abspath(path)), text.encode("utf-8", "surrogateescape"))


def preview(text: str, limit: int = 160) -> str:
    """A one-line, escaped, bounded rendering of a model output."""
    shown = json_line(text)
    if len(shown) > limit:
        shown = f"{shown[:limit - 20]}…\" ({len(text)} chars)"
    return shown


#: Longest Python expression of an input that a reproduce command may carry.
REPRODUCE_LIMIT = 600
#: A run of one fragment (up to 16 characters) repeated 8 times or more: written as `'x' * n`.
_RUN = re.compile(r"(.{1,16}?)\1{7,}", re.S)


def python_literal(text: str) -> str:
    """A short Python expression for ``text``: long runs of a repeated fragment (deep nesting, huge
    strings, fence storms — what oversized inputs are made of) become ``'fragment' * n``."""
    if len(text) > 2_000_000:
        return repr(text)
    parts: list[str] = []
    position = 0
    for match in _RUN.finditer(text):
        fragment = match.group(1)
        count = len(match.group(0)) // len(fragment)
        if count * len(fragment) < 24:
            continue
        if match.start() > position:
            parts.append(repr(text[position:match.start()]))
        parts.append(f"{fragment!r} * {count}")
        position = match.start() + count * len(fragment)
    if position < len(text):
        parts.append(repr(text[position:]))
    return " + ".join(parts) if parts else "''"


def reproduce_snippet(target: str, text: str) -> str:
    """A one-line shell command that reproduces a finding on the target, from a fresh interpreter."""
    literal = python_literal(text)
    if len(literal) > REPRODUCE_LIMIT:
        return (f"the input is {len(text):,} characters: see minimized_input in --report, or save it and run "
                f"`fuzz minimize FILE --target {target}`")
    module, _, attr = target.partition(":")
    if "/" in module or module.endswith(".py") or "." in attr:
        # file paths and Class.method targets load exactly as the engine loads them
        code = f"from fuzzer.target import load_target; print(load_target({target!r})({literal}))"
    else:
        code = f"from {module} import {attr} as t; print(t({literal}))"
    env = ""
    tools = os.environ.get("TOOLFUZZ_TOOLS")
    if tools and target.startswith("fuzzer.targets.reference:"):
        env = f"TOOLFUZZ_TOOLS={shlex.quote(tools)} "
    return f"{env}python -c {shlex.quote(code)}"


def _plain(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def compact(value: Any, limit: int = 200) -> str:
    shown = json_line(value) if _plain(value) else repr(value)
    return shown if len(shown) <= limit else f"{shown[:limit - 20]}… ({len(shown)} chars)"


def summary_lines(result: Any, *, target: str) -> list[str]:
    lines: list[str] = []
    if result.supported or result.unsupported:
        lines.append("formats:")
        for name, variations in result.supported.items():
            lines.append(f"  supported    {', '.join(variations)}")
        for name, why in result.unsupported.items():
            lines.append(f"  unsupported  {name}: {why}")
    lines.append("")
    lines.append(f"{'anomaly class':<24}{'executions':>12}{'failures':>10}{'handled':>9}")
    order = ["valid"] + list(ANOMALY_CLASSES)
    for name in order:
        stats = result.by_class.get(name)
        if stats is None:
            continue
        handled = 100.0 * (stats.executions - stats.failures) / stats.executions if stats.executions else 100.0
        lines.append(f"{name:<24}{stats.executions:>12,}{stats.failures:>10,}{handled:>8.1f}%")
    lines.append("")
    lines.append(f"{result.executions:,} executions in {result.elapsed_s:.1f} s "
                 f"({result.execs_per_s:,.0f}/s), {len(result.findings)} distinct failure(s)"
                 + (f" [stopped: {result.stop_reason}]" if result.stop_reason else ""))
    for i, finding in enumerate(result.findings, 1):
        best = finding.best
        lines.append("")
        lines.append(f"[{i}] {finding.verdict.value}  {finding.signature.id}  ({finding.signature.title}, "
                     f"seen {finding.count}x)")
        lines.append(f"    why:       {finding.reason}")
        cls = finding.sample.anomaly_class or "valid"
        lines.append(f"    sample:    {cls}{'/' + finding.sample.operator if finding.sample.operator else ''}"
                     f" in {finding.sample.format}")
        size_note = f" (from {len(finding.sample.text)} chars)" if len(best.text) != len(finding.sample.text) else ""
        lines.append(f"    minimized: {preview(best.text)}{size_note}")
        if finding.exception:
            lines.append(f"    exception: {finding.exception}")
        if best.truth_known and finding.verdict.value in ("corruption", "false_reject", "missed_anomaly"):
            lines.append(f"    expected:  {compact(best.calls) if best.calls is not None else 'no call (the output denotes none)'}")
            outcome = finding.best_outcome
            if outcome is not None and outcome.kind == "returned":
                lines.append(f"    returned:  {compact(outcome.calls)}")
        if finding.shrink_note:
            lines.append(f"    note:      {finding.shrink_note}")
        lines.append(f"    reproduce: {reproduce_snippet(target, best.text)}")
    return lines


def json_line(value: Any) -> str:
    """One line of JSON, readable (non-ASCII kept) unless it holds lone surrogates, which must be
    escaped to stay valid UTF-8."""
    line = json.dumps(value, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True)
    # Characters str.splitlines() treats as line breaks can only sit inside JSON strings here:
    # escape them so the output stays one sample per line for every reader.
    for ch in _LINE_BREAKS:
        if ch in line:
            line = line.replace(ch, f"\\u{ord(ch):04x}")
    return line


_LINE_BREAKS = ("\x85", "\u2028", "\u2029")
