"""Small inline SVG charts for the HTML report: drawn here, so the page needs no script, no font
and no network to show them.

* :func:`line_chart` — one increasing series (executions over time);
* :func:`step_chart` — a cumulative count with one marker per event (findings over time: the
  time-to-find plot), each marker coloured by its category and titled (hover) with its label.
"""

from __future__ import annotations

import math
from html import escape
from typing import Sequence

WIDTH, HEIGHT = 560, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 40


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """0 and round steps (1, 2, 5 x 10^k) up to at least ``high``."""
    if not high > 0 or not math.isfinite(high):
        return [0.0, 1.0]
    raw = high / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    ticks = [0.0]
    while ticks[-1] < high - 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def _label(value: float) -> str:
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if abs(value) >= 10_000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


class _Frame:
    """Axes from 0 to the last tick on both sides, with their labels."""

    def __init__(self, x_high: float, y_high: float, x_title: str, y_title: str):
        self.xt, self.yt = nice_ticks(x_high), nice_ticks(y_high)
        self.x_title, self.y_title = x_title, y_title

    def x(self, value: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * value / self.xt[-1]

    def y(self, value: float) -> float:
        return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * value / self.yt[-1]

    def axes(self) -> list[str]:
        parts = []
        for t in self.yt:
            y = self.y(t)
            parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" class="grid"/>')
            parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_label(t)}</text>')
        for t in self.xt:
            x = self.x(t)
            parts.append(f'<line x1="{x:.1f}" y1="{HEIGHT - BOTTOM}" x2="{x:.1f}" y2="{HEIGHT - BOTTOM + 4}" class="axis"/>')
            parts.append(f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{_label(t)}</text>')
        parts.append(f'<line x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" y2="{HEIGHT - BOTTOM}" class="axis"/>')
        parts.append(f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}" class="axis"/>')
        parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle" '
                     f'class="title">{escape(self.x_title)}</text>')
        parts.append(f'<text x="14" y="{(TOP + HEIGHT - BOTTOM) / 2:.0f}" text-anchor="middle" class="title" '
                     f'transform="rotate(-90 14 {(TOP + HEIGHT - BOTTOM) / 2:.0f})">{escape(self.y_title)}</text>')
        return parts


def _svg(label: str, parts: list[str]) -> str:
    return (f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
            f'aria-label="{escape(label)}">' + "".join(parts) + "</svg>")


def line_chart(points: Sequence[tuple[float, float]], *, x_title: str, y_title: str, label: str) -> str:
    """An SVG line through ``points`` (x increasing), area shaded below it."""
    frame = _Frame(max(p[0] for p in points), max(p[1] for p in points), x_title, y_title)
    coords = " ".join(f"{frame.x(x):.1f},{frame.y(y):.1f}" for x, y in points)
    base = f"{frame.x(points[-1][0]):.1f},{frame.y(0):.1f} {frame.x(points[0][0]):.1f},{frame.y(0):.1f}"
    parts = frame.axes()
    parts.append(f'<polygon points="{coords} {base}" class="area"/>')
    parts.append(f'<polyline points="{coords}" class="line"/>')
    return _svg(label, parts)


def step_chart(events: Sequence[tuple[float, str, str]], *, end: float, colors: dict[str, str],
               x_title: str, y_title: str, label: str) -> str:
    """Cumulative count of ``events`` — ``(time, category, label)`` — as a step line up to
    ``end``, with a marker per event coloured by category."""
    events = sorted(events)
    end = max([end] + [t for t, _, _ in events])
    frame = _Frame(end, len(events), x_title, y_title)
    coords = [f"{frame.x(0):.1f},{frame.y(0):.1f}"]
    markers = []
    for n, (t, category, text) in enumerate(events, 1):
        x = frame.x(t)
        coords.append(f"{x:.1f},{frame.y(n - 1):.1f}")
        coords.append(f"{x:.1f},{frame.y(n):.1f}")
        markers.append(f'<circle cx="{x:.1f}" cy="{frame.y(n):.1f}" r="5" fill="{colors.get(category, "#666")}">'
                       f"<title>{escape(text)} at {t:.2f} s</title></circle>")
    coords.append(f"{frame.x(end):.1f},{frame.y(len(events)):.1f}")
    parts = frame.axes()
    parts.append(f'<polyline points="{" ".join(coords)}" class="line"/>')
    return _svg(label, parts + markers)


__all__ = ["line_chart", "nice_ticks", "step_chart"]
