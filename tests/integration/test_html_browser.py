"""The HTML report renders in a real headless Chromium (Debian's ``chromium`` package; .ci/run
installs it): a screenshot of the page is taken in the test's temp dir and its pixels are checked
— size, dimensions, many colours, not a blank page, and the verdict colours of the report drawn."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from fuzzer.reports.html import VERDICT_COLORS, html_report
from tests.integration.naive_campaign import naive_campaign
from tests.integration.png import read_png

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH, HEIGHT = 1280, 2000


def _rgb(color: str) -> bytes:
    return bytes.fromhex(color.lstrip("#"))


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: `apt-get install -y chromium` "
                                             "(.ci/run does it) to run the browser test")
def test_html_report_renders_in_headless_chromium(tmp_path):
    view = naive_campaign()
    page = tmp_path / "report.html"
    page.write_text(html_report(view), encoding="utf-8")
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}",
         page.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert shot.exists(), f"no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}"
    data = shot.read_bytes()
    assert len(data) > 40_000, f"a {len(data)}-byte screenshot is a blank or broken page"
    image = read_png(data)
    assert (image.width, image.height) == (WIDTH, HEIGHT)
    pixels = image.sample(step=4)
    colours = set(pixels)
    assert len(colours) > 100, f"only {len(colours)} distinct colours: the page did not render"
    assert sum(p != b"\xff\xff\xff" for p in pixels) / len(pixels) > 0.05
    drawn = {_rgb(VERDICT_COLORS[f.verdict_name]) for f in view.findings}
    assert drawn <= colours, "the verdict badges were not drawn"
