"""``--report FILE.json``: the JSON report of DESIGN.md ("Report"), written atomically at the end."""

from __future__ import annotations

from typing import Any

from fuzzer.events import Event, JobFinished
from fuzzer.pipeline import EventHandler
from fuzzer.reports import writer


@writer("report")
class JsonReportHandler(EventHandler):
    def __init__(self, path: str):
        self.path = path

    def handle_event(self, event: Event) -> None:
        if isinstance(event, JobFinished):
            from fuzzer.report import write_json_atomic

            write_json_atomic(self.path, self.document(event.result))

    def document(self, result: Any) -> dict:
        return result.to_report()
