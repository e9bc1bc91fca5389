"""A target module whose import never finishes (a module-level wait on a lock, a server, a loop).
It writes the importing process's id to ``import_hang.pid`` in the working directory first, so a
test can check that process was stopped."""

import os
import time

with open("import_hang.pid", "w", encoding="utf-8") as _fh:
    _fh.write(str(os.getpid()))

while True:
    time.sleep(0.05)


def parse(text):  # pragma: no cover - never reached
    return []
