"""What ``fuzz records replay`` (and ``fuzz replay --records``) prints: pass rates by the parser
version each record was made with, the records that changed, and the baseline comparison — every
number read from the :class:`~fuzzer.records.replay_results.RecordsReplayResult` (its ``summary_lines``)."""

from __future__ import annotations

from typing import Any

#: Records listed one by one (the report lists every record).
SHOWN_CHANGES = 20


def _rate(passed: int, judged: int) -> str:
    return f"{100.0 * passed / judged:5.1f}% ({passed}/{judged})" if judged else "-"


def _parsed(result: Any) -> str:
    """How many distinct outputs were parsed: all of them once, or (interrupted) how many of them."""
    if result.parsed_outputs >= result.distinct_outputs:
        return f"{result.distinct_outputs:,} distinct outputs parsed once"
    return f"{result.parsed_outputs:,} of {result.distinct_outputs:,} distinct outputs parsed"


def replay_summary_lines(result: Any) -> list[str]:
    """The replay table: pass rates by recorded parser version, the records that changed, and the
    baseline comparison — every number read from the result."""
    lines = [f"replayed {len(result.rows):,} of {result.selected:,} records ({_parsed(result)}) with {result.target}" + (f" ({result.target_version})" if result.target_version else "")
             + (f" and executor {result.executor}" if result.executor else "") + f" in {result.elapsed_s:.1f} s"]
    lines.append(f"{'recorded with':<16} {'records':>8}  {'parse pass':<20} {'execution pass':<20} changed")
    for s in result.by_version():
        lines.append(f"{s.recorded_version:<16} {s.records:>8,}  {_rate(s.parse_passed, s.parse_judged):<20} "
                     f"{_rate(s.execution_passed, s.execution_judged):<20} {len(s.changed)}")
    for s in result.by_version():
        kinds = ", ".join(f"{s.kinds[k]} {k}" for k in ("regressed", "changed", "fixed") if s.kinds.get(k))
        lines.append(f"recorded with {s.recorded_version}, replayed with {result.replayed_label}: "
                     f"{len(s.changed)} changed" + (f" ({kinds})" if kinds else ""))
    lines += _changed_lines(result)
    if result.baseline_compared:
        counts = result.baseline_counts()
        lines.append(f"baseline {result.baseline_path}: "
                     + ", ".join(f"{n} {what}" for what, n in sorted(counts.items())))
    if result.baseline_saved:
        lines.append(f"baseline saved: {result.baseline_path}")
    return lines


#: The order records are listed in: what blocks first.
_SHOWN_FIRST = {"regressed": 0, "changed": 1, "fixed": 2, "new": 3, "same": 4}


def _changed_lines(result: Any) -> list[str]:
    """Each record that differs, once: against the baseline when one was compared (a record whose
    baseline class is "same" differs from production only as it did then), else production;
    regressions first, with the call or argument that differs."""
    rows = [r for r in result.rows if r.baseline not in ("same", None)] if result.baseline_compared \
        else result.changed()
    if not rows:
        return []
    rows = sorted(rows, key=lambda r: _SHOWN_FIRST.get(r.kind or "", 5))
    lines = ["changed records:" if not result.baseline_compared else "changed since the baseline:"]
    for row in rows[:SHOWN_CHANGES]:
        if row.parse == "changed" or row.at_baseline:
            what = f"parse {row.change}: {row.recorded} -> {row.replayed}" if row.parse == "changed" else \
                f"parse: {row.recorded} -> {row.replayed}"
            if row.at_baseline:
                what += f" (at baseline: {row.at_baseline})"
            if row.difference:
                what += f" — {row.difference}"
        else:
            what = f"execution: {row.execution_detail}"
        lines.append(f"  {row.record_id}  {row.parser_version or '-'}  {what} [{row.kind}]")
    if len(rows) > SHOWN_CHANGES:
        rest = rows[SHOWN_CHANGES:]
        blocking = sum(1 for r in rest if r.kind == "regressed")
        lines.append(f"  ... and {len(rest)} more" + (f", {blocking} of them regressed" if blocking else "")
                     + " (--report FILE.json lists every record)")
    return lines


__all__ = ["SHOWN_CHANGES", "replay_summary_lines"]
