"""``--report FILE.json``: the JSON report of DESIGN.md ("Report"), written atomically at the end."""

from __future__ import annotations

import json
from typing import Any

from fuzzer.reports.writers import FileWriter, writer
from fuzzer.reports.common import run_facts


@writer("report")
class JsonReportHandler(FileWriter):
    """``--report FILE.json``: the job's result as JSON (keys added, never renamed), written when it ends."""

    def render(self, result: Any) -> str:
        """The run's facts (version, timestamp, command line, tools source), then the result's own keys."""
        return json.dumps({**run_facts(), **result.to_report()}, indent=2, ensure_ascii=True) + "\n"
