"""``--report FILE.json``: the JSON report of DESIGN.md ("Report"), written atomically at the end."""

from __future__ import annotations

import json
from typing import Any

from fuzzer.reports import FileWriter, writer


@writer("report")
class JsonReportHandler(FileWriter):
    def render(self, result: Any) -> str:
        return json.dumps(result.to_report(), indent=2, ensure_ascii=True) + "\n"
