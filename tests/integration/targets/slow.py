"""The bundled naive parser, a few milliseconds slower per call: an order of 256 inputs then runs
for a second or more, so a node removed when a round is sent still holds its orders."""

from __future__ import annotations

import time

from fuzzer.targets.naive import parse as _naive


def naive(text):
    time.sleep(0.005)
    return _naive(text)
