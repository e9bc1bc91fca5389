"""A target whose import takes 1.5 s (a heavy parser): start-up must show in elapsed_s."""

import time

time.sleep(1.5)

from fuzzer.targets.reference import parse  # noqa: E402,F401
