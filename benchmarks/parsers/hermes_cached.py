"""A Hermes parser behind a response cache, as a serving stack puts one in front of its parsers.

Streaming clients and retries send the same completion text again and again, so parsed calls are
cached in a fixed table of 2**20 slots indexed by the text's CRC-32 (cheap to compute, bounded
memory). Texts longer than 8 KB are not cached.

The planted bug: a hit is served without comparing the text stored in the slot with the new
one. Two different texts whose checksums share a slot get the same answer — the second caller
receives the first caller's tool call (or its "no call"). Nothing in a single input shows it; it
appears after a thousand or so earlier inputs (a birthday collision), and a shrunk input replayed
alone does not reproduce it. The fix compares the stored text.
"""

from __future__ import annotations

import copy
import zlib

from benchmarks.parsers import hermes_regex

BUG = {
    "verdict": "corruption",
    "level": "parse",
    "formats": ["hermes"],
    "description": "cache slots are indexed by crc32(text) and a hit is not compared with the text",
    # Only a finding filed as state kept between calls is this bug: a wrong answer from the cache
    # needs an earlier input in the same slot. Any corruption or rejection that a single input
    # shows belongs to the Hermes parser behind the cache (``parse_fixed`` has it too).
    "match": {"verdict": ["corruption", "false_reject"], "text": "depends on earlier inputs"},
}
SLOTS = 2 ** 20
MAX_CACHED = 8192
#: Two texts in the same slot (found by search): the first primes the slot, the second is answered
#: with the first one's calls.
PRIMERS = ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris 971"}}\n</tool_call>']
TRIGGER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris 27400"}}\n</tool_call>'
EXPECTED = [{"name": "get_weather", "arguments": {"city": "Paris 27400"}}]


class CachedParser:
    """``hermes_regex.parse_fixed`` behind a direct-mapped cache (``verify``: compare the text on a hit)."""

    def __init__(self, verify: bool):
        self.verify = verify
        self.slots: list = [None] * SLOTS

    def __call__(self, text: str) -> list:
        if len(text) > MAX_CACHED:
            return hermes_regex.parse_fixed(text)
        slot = zlib.crc32(text.encode("utf-8", "surrogatepass")) % SLOTS
        hit = self.slots[slot]
        if hit is not None and (not self.verify or hit[0] == text):
            return copy.deepcopy(hit[1])
        calls = hermes_regex.parse_fixed(text)
        self.slots[slot] = (text, copy.deepcopy(calls))
        return calls


parse = CachedParser(verify=False)
parse_fixed = CachedParser(verify=True)
