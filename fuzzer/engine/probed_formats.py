"""Which output formats a campaign fuzzed, as probing found them (or the user declared them), and
why the others were left out: what a harness that renders model outputs (the parser's, the stream
harness's) records in its campaign result, and the report's ``formats`` block, which the HTML and
Markdown reports read whatever the harness (:mod:`fuzzer.reports.common`).

DESIGN.md: the engine probes each format with valid samples and reports the ones the target does
not handle instead of flooding false_reject.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ProbedFormats:
    """A campaign result's formats: a mixin beside :class:`fuzzer.engine.campaign_result.CampaignResult`.

    Keys are format names (``tool: format`` when a parser campaign fuzzed several tools)."""

    #: format -> what of it the target handles (the parser: the variants it parses; a stream
    #: target: "streamed")
    supported: dict = field(default_factory=dict)
    #: format -> why it was not fuzzed
    unsupported: dict = field(default_factory=dict)

    def formats_report(self) -> dict:
        """The report's ``formats`` block (a harness may add keys of its own after these)."""
        return {"supported": dict(self.supported), "unsupported": dict(self.unsupported)}


__all__ = ["ProbedFormats"]
