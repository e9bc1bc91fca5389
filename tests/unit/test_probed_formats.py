"""The parser's and the stream harness's campaign results record the formats probe alike, and
every report reads it from the one ``formats`` block whichever harness wrote it."""

from __future__ import annotations

from fuzzer.harnesses.parser.campaign import CampaignResult
from fuzzer.harnesses.stream.job import StreamCampaignResult
from fuzzer.reports.common import summary_of
from fuzzer.reports.html import html_report


def test_both_harnesses_report_their_probed_formats_in_one_block_the_reports_read():
    parser = CampaignResult(tool="get_weather", target="m:parse", label="m:parse",
                            supported={"hermes": ["single", "several calls"]},
                            unsupported={"mistral": "every valid probe was rejected"},
                            failing={"hermes (prose)": "rejected"}, assumed=["hermes: several calls not supported"])
    stream = StreamCampaignResult(label="m:Parser", supported={"hermes": "streamed"},
                                  unsupported={"mistral": "no call streamed"})
    parser_block = parser.to_report()["formats"]
    assert parser_block == {"supported": {"hermes": ["single", "several calls"]},
                            "unsupported": {"mistral": "every valid probe was rejected"},
                            "failing": {"hermes (prose)": "rejected"},
                            "assumed": ["hermes: several calls not supported"]}
    assert stream.to_report()["formats"] == {"supported": {"hermes": "streamed"},
                                             "unsupported": {"mistral": "no call streamed"}}
    for result, handled, why in ((parser, "single, several calls", "every valid probe was rejected"),
                                 (stream, "streamed", "no call streamed")):
        assert summary_of(result).formats["unsupported"] == {"mistral": why}
        page = html_report(result)
        assert f"<b>supported</b> hermes: {handled}" in page and f"<b>not supported</b> mistral: {why}" in page
