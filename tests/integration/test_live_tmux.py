"""The live display in a real terminal: tmux runs a script feeding job events to the handler;
a capture of the screen mid-run shows the bar, the phase, the rate, the time left and the
findings, drawn with colour escapes — and a target's escape codes in a finding title shown
escaped, not obeyed."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT

TMUX = shutil.which("tmux")


def _tmux(socket: str, *args: str) -> str:
    return subprocess.run([TMUX, "-L", socket, *args], capture_output=True, text=True, timeout=30).stdout


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed: `apt-get install -y tmux` (.ci/run does it)")
def test_a_terminal_shows_the_live_bar_mid_run(tmp_path):
    socket, stop = f"toolfuzz-live-{os.getpid()}", tmp_path / "stop"
    # (COLUMNS / LINES inherited from the test runner would override the terminal's real size)
    command = (f"unset COLUMNS LINES; cd {shlex.quote(str(ROOT))} && PYTHONPATH={shlex.quote(str(ROOT))} "
               f"{shlex.quote(sys.executable)} -m tests.integration.live_demo {shlex.quote(str(stop))}; sleep 60")
    _tmux(socket, "new-session", "-d", "-s", "live", "-x", "160", "-y", "12", command)
    try:
        deadline, screen = time.monotonic() + 60, ""
        while time.monotonic() < deadline and "fuzzing get_weather" not in screen:
            time.sleep(0.2)
            screen = _tmux(socket, "capture-pane", "-p", "-t", "live")
        bar = next((line for line in screen.splitlines() if "exec/s" in line), None)
        assert bar is not None, f"no live bar on the screen:\n{screen}"
        assert bar.startswith("fuzzing get_weather ") and "━" in bar
        assert " left " in bar and "executions" in bar and "1 crash" in bar and "2 corruption" in bar
        assert r"found crash crash-0123456789ab (crash: KeyError in parse \x1b[31mred\x1b[0m)" in screen
        coloured = _tmux(socket, "capture-pane", "-p", "-e", "-t", "live")
        assert "\x1b[" in coloured  # drawn by the terminal display, not plain lines
        stop.touch()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "demo finished" not in screen:
            time.sleep(0.2)
            screen = _tmux(socket, "capture-pane", "-p", "-t", "live")
        assert "demo finished" in screen
        assert sum("exec/s" in line for line in screen.splitlines()) == 1  # redrawn in place, not scrolled
    finally:
        _tmux(socket, "kill-server")
