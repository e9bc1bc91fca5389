"""A target module whose import kills the process (a native extension crashing on load)."""

import os

os._exit(9)


def parse(text):  # pragma: no cover - never reached
    return []
