"""``--html FILE``: one self-contained page — inline CSS and SVG, no script, nothing fetched when
it is viewed (a CI artifact opened offline shows everything).

Sections: the summary (executions, time, rate, test-case counts, stop reason), findings by
verdict, per-class handled percentages, the time-to-find plot (``finding.found_at_s``) and
executions over time (``result.timeline``), then every finding with its minimized and original
input, the expected-vs-returned diff of its calls, its exception and the command that reproduces
it, and any failed test case that is not a finding (a regressed corpus entry). Every number comes
from the result (:func:`fuzzer.reports.common.summary_of`).
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import Any, Optional

from fuzzer.reports.writers import FileWriter, writer
from fuzzer.reports.common import (Facts, Summary, bounded, calls_diff, describe_verdict, facts_of, failed_cases, pretty_json, printable, summary_of, toolfuzz_version)
from fuzzer.reports.svg import line_chart, step_chart

#: Characters of one input shown on the page (the JSON report has all of it).
INPUT_LIMIT = 20_000
VERDICT_COLORS = {"crash": "#c62828", "hang": "#6a1b9a", "corruption": "#ef6c00", "false_reject": "#1565c0",
                  "missed_anomaly": "#00838f", "nondeterminism": "#5d4037", "unsafe": "#ad1457", "slow": "#827717"}
OTHER_COLOR = "#455a64"

STYLE = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #ffffff; --panel: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif;
       color: var(--fg); background: var(--bg); }
h1 { margin: 0 0 4px; font-size: 24px; } h2 { margin: 28px 0 10px; font-size: 18px;
       border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { margin: 0 0 8px; font-size: 16px; } h4 { margin: 12px 0 4px; font-size: 13px; color: var(--muted); }
.target { color: var(--muted); font-family: ui-monospace, monospace; margin: 0; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 16px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px; min-width: 130px; }
.card .n { font-size: 22px; font-weight: 600; } .card .k { color: var(--muted); font-size: 12px; }
.card.bad .n { color: #c62828; } .card.good .n { color: #2e7d32; }
.chip { display: inline-block; color: #fff; border-radius: 12px; padding: 1px 10px; margin: 0 6px 6px 0; font-weight: 600; }
table { border-collapse: collapse; } td, th { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.bar { width: 160px; height: 10px; background: #fde0dc; border-radius: 5px; overflow: hidden; display: inline-block;
       vertical-align: middle; margin-right: 8px; }
.bar > span { display: block; height: 100%; background: #2e7d32; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; } figure { margin: 0; }
figcaption { color: var(--muted); font-size: 12px; margin-bottom: 4px; }
svg.chart text { font-size: 11px; fill: var(--muted); } svg.chart .title { font-size: 12px; fill: var(--fg); }
svg.chart .grid { stroke: #eaeef2; } svg.chart .axis { stroke: #8c959f; }
svg.chart .line { fill: none; stroke: #0969da; stroke-width: 2; } svg.chart .area { fill: #0969da22; }
.finding { border: 1px solid var(--line); border-left: 6px solid var(--c); border-radius: 8px; padding: 12px 16px;
           margin-bottom: 16px; background: var(--bg); }
.meta { color: var(--muted); margin: 0 0 6px; } .meta code { color: var(--fg); }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 0;
      white-space: pre-wrap; word-break: break-all; overflow-wrap: anywhere; overflow-x: auto; font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre.cmd { background: #0d1117; color: #e6edf3; border-color: #0d1117; }
.diff { width: 100%; font: 12px/1.45 ui-monospace, monospace; border: 1px solid var(--line); }
.diff td { border: 0; padding: 0 8px; white-space: pre-wrap; word-break: break-all; overflow-wrap: anywhere; }
.diff .del { background: #ffebe9; } .diff .add { background: #dafbe1; } .diff .tag { width: 1em; color: var(--muted); }
details > summary { cursor: pointer; color: var(--muted); margin-top: 8px; }
.empty { color: var(--muted); font-style: italic; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
"""


@writer("html")
class HtmlHandler(FileWriter):
    """Writes the HTML report when the job finishes."""

    def render(self, result: Any) -> str:
        return html_report(result)


def _e(text: Any) -> str:
    return html.escape(printable(str(text)), quote=True)


def color_of(verdict: str) -> str:
    return VERDICT_COLORS.get(verdict, OTHER_COLOR)


def html_report(result: Any) -> str:
    summary = summary_of(result)
    facts = [facts_of(f) for f in result.findings]
    generated = summary.report.get("timestamp") or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = [
        _header(summary),
        _verdicts(summary),
        _classes(summary),
        _charts(summary, facts, getattr(result, "timeline", None)),
        _findings(facts),
        _cases(failed_cases(result)),
        _formats(summary),
        f"<footer>toolfuzz {_e(toolfuzz_version())} · {_e(summary.job)} · generated {_e(generated)}</footer>",
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>toolfuzz {_e(summary.job)}: {_e(summary.label)}</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(part for part in body if part) + "\n</body></html>\n")


def _card(key: str, value: str, tone: str = "") -> str:
    return f'<div class="card {tone}"><div class="n">{_e(value)}</div><div class="k">{_e(key)}</div></div>'


def _header(s: Summary) -> str:
    counts = s.counts
    cards = [_card("executions", f"{s.executions:,}"), _card("seconds", f"{s.elapsed_s:,.1f}"),
             _card("executions / s", f"{s.execs_per_s:,.0f}"),
             _card("distinct findings", f"{s.findings:,}",
                   "bad" if counts.get("failed") else "" if s.findings else "good"),  # known ones: not failures
             _card("test cases failed", f"{counts.get('failed', 0):,}", "bad" if counts.get("failed") else "good"),
             _card("passed / skipped", f"{counts.get('passed', 0):,} / {counts.get('skipped', 0):,}"),
             _card("stopped", s.stop_reason)]
    problem = f'<p class="empty">Nothing could be tested: {_e(s.problem)}</p>' if s.problem else ""
    return (f"<header><h1>toolfuzz {_e(s.job)}</h1><p class=\"target\">{_e(s.label)}</p></header>"
            f"<section class=\"cards\">{''.join(cards)}</section>{problem}")


def _verdicts(s: Summary) -> str:
    if not s.by_verdict:
        return "<h2>Findings by verdict</h2><p class=\"empty\">No failure found.</p>"
    chips = "".join(f'<span class="chip" style="background:{color_of(v)}" '
                    f'title="{_e(describe_verdict(v, s.harness_of.get(v) or None))}">'
                    f"{_e(v)} {n}</span>" for v, n in sorted(s.by_verdict.items()))
    return f"<h2>Findings by verdict</h2><div>{chips}</div>"


def _classes(s: Summary) -> str:
    if not s.by_class:
        return ""
    rows = []
    for row in s.by_class:
        pct = row.handled_pct
        rows.append(f"<tr><td>{_e(row.name)}</td><td class=\"num\">{row.executions:,}</td>"
                    f"<td class=\"num\">{row.failures:,}</td><td><span class=\"bar\"><span style=\"width:{pct:.1f}%\">"
                    f"</span></span>{pct:.1f}%</td></tr>")
    return ("<h2>Anomaly classes: handled</h2><table><thead><tr><th>class</th><th class=\"num\">executions</th>"
            "<th class=\"num\">failures</th><th>handled</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _charts(s: Summary, facts: list[Facts], timeline: Optional[list]) -> str:
    figures = []
    found = [(f.found_at_s, f.verdict, f"{f.verdict} {f.signature}") for f in facts if f.found_at_s is not None]
    if found:
        chart = step_chart(found, end=s.elapsed_s, colors={v: color_of(v) for _, v, _ in found},
                           x_title="seconds", y_title="distinct findings", label="time to find")
        legend = " ".join(f'<span class="chip" style="background:{color_of(v)}">{_e(v)}</span>'
                          for v in sorted({v for _, v, _ in found}))
        figures.append(f"<figure><figcaption>Time to find: each finding when first recorded</figcaption>{chart}"
                       f"<div>{legend}</div></figure>")
    points = [(float(t), float(n)) for t, n in (timeline or [])]
    if len(points) >= 2 and points[-1][0] > 0:
        chart = line_chart(points, x_title="seconds", y_title="executions", label="executions over time")
        figures.append(f"<figure><figcaption>Executions over time</figcaption>{chart}</figure>")
    if not figures:
        return ""
    return f"<h2>Over time</h2><div class=\"charts\">{''.join(figures)}</div>"


def _findings(facts: list[Facts]) -> str:
    if not facts:
        return ""
    return f"<h2>Findings ({len(facts)})</h2>" + "".join(_finding(i, f) for i, f in enumerate(facts, 1))


def _finding(number: int, f: Facts) -> str:
    where = [f"<code>{_e(f.signature)}</code>", f"seen {f.count:,}x"]
    where.append(_e(f.origin))
    if f.found_at_s is not None:
        where.append(f"found at {f.found_at_s:.2f} s")
    if f.location:
        where.append(f"in <code>{_e(f.location[1])}</code> ({_e(f.location[0])})")
    parts = [f'<article class="finding" id="{_e(f.signature)}" style="--c:{color_of(f.verdict)}">',
             f'<h3>{number}. <span class="chip" style="background:{color_of(f.verdict)}">{_e(f.verdict)}</span>'
             f"{_e(f.what)}</h3>", f"<p class=\"meta\">{' · '.join(where)}</p>"]
    if f.reason:
        parts.append(f"<p>{_e(f.reason)}</p>")
    if f.schedule is not None:  # an executor finding: its input is a scenario, one call per line
        heading = "Minimized scenario" if f.minimized else "Scenario (not minimized)"
        parts.append(f"<h4>{heading}</h4><pre>{_e(bounded(f.shown_input, INPUT_LIMIT))}</pre>")
    else:
        heading = "Minimized input" if f.minimized else "Input (not minimized)"
        parts.append(f"<h4>{heading} ({len(f.shown_input):,} characters)</h4>"
                     f"<pre>{_e(bounded(f.shown_input, INPUT_LIMIT))}</pre>")
    if f.input and f.input != f.shown_input:
        parts.append(f"<details><summary>Original input ({len(f.input):,} characters)</summary>"
                     f"<pre>{_e(bounded(f.input, INPUT_LIMIT))}</pre></details>")
    if f.exception and f.exception != f.reason:
        parts.append(f"<h4>Exception</h4><pre>{_e(f.exception)}</pre>")
    if f.has_calls_diff:
        parts.append(_diff(f.truth, f.returned))
    elif f.truth is not None and f.verdict == "false_reject":
        parts.append(f"<h4>Expected calls</h4><pre>{_e(pretty_json(f.truth))}</pre>")
    if f.reproduce:
        parts.append(f"<h4>Reproduce</h4><pre class=\"cmd\">{_e(f.reproduce)}</pre>")
    if f.note:
        parts.append(f"<p class=\"meta\">{_e(f.note)}</p>")
    parts.append("</article>")
    return "".join(parts)


def _diff(expected: Any, returned: Any) -> str:
    rows = []
    for tag, text in calls_diff(expected, returned):
        cls = {"-": "del", "+": "add"}.get(tag, "")
        rows.append(f'<tr class="{cls}"><td class="tag">{_e(tag)}</td><td>{_e(text)}</td></tr>')
    return ("<h4>Expected (−) vs returned (+) calls</h4><table class=\"diff\"><tbody>" + "".join(rows)
            + "</tbody></table>")


def _cases(cases: list) -> str:
    if not cases:
        return ""
    rows = "".join(f"<tr><td><code>{_e(c.name)}</code></td><td>{_e(c.message)}</td>"
                   f"<td><pre>{_e(bounded(c.detail, 2000))}</pre></td></tr>" for c in cases)
    return (f"<h2>Failed test cases ({len(cases)})</h2><table><thead><tr><th>case</th><th>why</th><th>detail</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>")


def _formats(s: Summary) -> str:
    supported = s.formats.get("supported") or {}
    unsupported = s.formats.get("unsupported") or {}
    if not supported and not unsupported:
        return ""
    items = [f"<li><b>supported</b> {_e(name)}: {_e(', '.join(v) if isinstance(v, list) else v)}</li>"
             for name, v in supported.items()]
    items += [f"<li><b>not supported</b> {_e(name)}: {_e(why)}</li>" for name, why in unsupported.items()]
    return f"<h2>Formats</h2><ul>{''.join(items)}</ul>"


__all__ = ["HtmlHandler", "html_report"]
