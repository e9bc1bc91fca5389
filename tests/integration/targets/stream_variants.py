"""A planted bug in the reference streaming parser: every call streamed at index 0 (Ollama #16212).
A new bug for a corpus of the naive parser's entries (which it passes: it is the reference otherwise)."""

from dataclasses import replace

from fuzzer.targets.stream_reference import ReferenceHermesParser


class IndexZero(ReferenceHermesParser):
    def feed(self, delta):
        return [replace(e, index=0) if hasattr(e, "index") else e for e in super().feed(delta)]


def index_zero():
    return IndexZero()
