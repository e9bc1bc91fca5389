"""Reproducer files: the input (and the earlier inputs, for a history-dependent finding) of every
finding whose reproduce command cannot fit on one line, run by ``fuzz reproduce FILE``."""

from __future__ import annotations

from fuzzer.engine.events import Event, FindingRecorded
from fuzzer.engine.pipeline import EventHandler


class ReproducerWriter(EventHandler):
    def handle_event(self, event: Event) -> None:
        if isinstance(event, FindingRecorded):
            finding = event.finding
            if getattr(finding, "needs_reproducer_file", False):
                from fuzzer.harnesses.parser.reproduce import reproducer_path, write_reproducer

                write_reproducer(reproducer_path(finding.reproduce_dir, finding.signature.id), finding.reproducer())
