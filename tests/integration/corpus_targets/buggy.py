"""The reference parser with exactly one realistic bug, for the gate tests.

A debugging aid that remembers the first ``<tool_call>`` block assumes every opened tag is closed:
on an output cut off (or malformed) after ``<tool_call>`` there is no complete block and
``findall(...)[0]`` raises IndexError. Everything else is the reference parser, so a campaign on
this target finds one crash signature and nothing else. The generator reaches it within the first
few hundred samples: truncated hermes outputs are common.
"""

from __future__ import annotations

from fuzzer.targets import reference

#: the first block of the last hermes output seen, for log lines when a parse fails
last_block = [""]


def parse(text):
    if "<tool_call>" in text:
        start = text.find("<tool_call>") + len("<tool_call>")
        blocks = [text[start:text.find("</tool_call>", start)]] if "</tool_call>" in text[start:] else []
        last_block[0] = blocks[0][:200]  # BUG: IndexError when no block is closed
    return reference.parse(text)
