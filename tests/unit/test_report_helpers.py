"""Properties of the helpers the SARIF / HTML / Markdown writers share."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from fuzzer.reports.common import calls_diff, pretty_json, printable
from fuzzer.reports.markdown import fence
from fuzzer.reports.svg import line_chart, nice_ticks, step_chart

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=12)


@given(st.text())
def test_printable_text_has_no_control_characters_or_surrogates_and_keeps_the_rest(text):
    shown = printable(text)
    shown.encode("utf-8")  # valid UTF-8: no lone surrogates
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]", shown)
    if not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]", text):
        assert shown == text


@given(st.text(alphabet=st.sampled_from("`a\n~ ")))
def test_a_fence_is_never_closed_by_its_content(text):
    block = fence(text, "sh")
    opening = re.match(r"`+", block).group(0)
    assert block.endswith("\n" + opening)
    inner = block[len(opening) + len("sh\n"):-len(opening) - 1]
    assert inner == text
    assert not any(re.fullmatch(rf"`{{{len(opening)},}}\s*", line) for line in inner.split("\n"))


@given(json_values, json_values)
def test_the_calls_diff_holds_both_sides(expected, returned):
    lines = calls_diff(expected, returned)
    assert "\n".join(t for tag, t in lines if tag in " -") == pretty_json(expected)
    assert "\n".join(t for tag, t in lines if tag in " +") == pretty_json(returned)
    if json.dumps(expected, sort_keys=True) == json.dumps(returned, sort_keys=True):
        assert all(tag == " " for tag, _ in lines)


@given(st.floats(min_value=1e-6, max_value=1e12))
def test_ticks_start_at_zero_cover_the_range_in_round_steps(high):
    ticks = nice_ticks(high)
    assert ticks[0] == 0 and ticks[-1] >= high * (1 - 1e-9) and 2 <= len(ticks) <= 12
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:])}
    assert len({f"{s:.3g}" for s in steps}) == 1


@given(st.lists(st.tuples(st.floats(0, 1e4), st.sampled_from(["crash", "hang"]), st.text(max_size=10)), min_size=1,
                max_size=20))
def test_the_time_to_find_chart_has_one_marker_per_finding(events):
    svg = step_chart(events, end=1.0, colors={"crash": "#c62828"}, x_title="s", y_title="n", label="t")
    assert svg.count("<circle") == len(events) and "<script" not in svg
    assert svg.startswith("<svg") and svg.endswith("</svg>")


def test_the_executions_chart_draws_the_series():
    svg = line_chart([(0.0, 0.0), (1.0, 500.0), (2.5, 2000.0)], x_title="seconds", y_title="executions", label="e")
    points = re.search(r'<polyline points="([^"]+)"', svg).group(1).split()
    assert len(points) == 3
    xs = [float(p.split(",")[0]) for p in points]
    ys = [float(p.split(",")[1]) for p in points]
    assert xs == sorted(xs) and ys == sorted(ys, reverse=True)  # time right, executions up
