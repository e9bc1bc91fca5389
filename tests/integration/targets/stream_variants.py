"""A planted bug in the reference streaming parser: every call streamed at index 0 (Ollama #16212).
A new bug for a corpus of the naive parser's entries (which it passes: it is the reference otherwise)."""

from dataclasses import replace

from fuzzer.targets.stream_reference import ReferenceHermesParser


class IndexZero(ReferenceHermesParser):
    def feed(self, delta):
        return [replace(e, index=0) if hasattr(e, "index") else e for e in super().feed(delta)]


def index_zero():
    return IndexZero()


class MarkerLoss(ReferenceHermesParser):
    """A planted bug: the start of a marker held back at the end of a delta (``<tool``) loses its
    first character when the next delta comes, so the call reads as content. ``held`` is the
    shortest held-back start that loses it: 1 is the bug, 2 a partial fix (a cut one character
    into the marker is right, later cuts still lose the call)."""

    held = 1

    def feed(self, delta):
        if len(self.pending) >= self.held and not self.in_call and not self.thinking and "<tool_call>".startswith(self.pending):
            self.pending = self.pending[1:]
        return super().feed(delta)


class MarkerLossPartlyFixed(MarkerLoss):
    held = 2


def marker_loss():
    return MarkerLoss()


def marker_loss_partly_fixed():
    return MarkerLossPartlyFixed()
