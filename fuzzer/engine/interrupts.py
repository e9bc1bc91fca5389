"""A Ctrl-C that waits until the books balance.

Python raises ``KeyboardInterrupt`` between any two bytecodes. A failing execution moves two
books in separate steps — its anomaly class's failure count (the tally) and its finding's count
(the finding book) — so an interrupt that lands between them leaves a report whose class failures
and finding counts disagree by one (seen in CI: 1194 against 1193). A report is a promise; the
bookkeeping of one execution is therefore a block that a Ctrl-C does not cut: inside
``with BALANCED:`` the signal is noted, and ``KeyboardInterrupt`` is raised when the outermost
block ends.

:func:`ctrl_c_waits_for_books` installs the handler that does this for the life of a job (see
:func:`fuzzer.engine.pipeline.run_job`). Outside a block it raises at once, exactly like Python's
:func:`signal.default_int_handler`, so waiting on workers and printing stay interruptible. A block
costs two attribute updates (the engine enters one per failing execution); installing a handler
per block would cost a system call each. Python's own ``signal`` has no such deferral, and
nothing in the dependency list does this, hence the dozen lines here.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class _Balanced:
    """``with BALANCED:`` — a Ctrl-C inside the block is raised when the outermost block ends."""

    __slots__ = ("depth", "pending")

    def __init__(self) -> None:
        self.depth = 0
        self.pending = False

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc: object) -> bool:
        self.depth -= 1
        if self.pending and not self.depth:
            self.pending = False
            raise KeyboardInterrupt
        return False

    def on_sigint(self, signum: int, frame: object) -> None:
        if self.depth:
            self.pending = True
            return
        raise KeyboardInterrupt


BALANCED = _Balanced()


@contextmanager
def ctrl_c_waits_for_books() -> Iterator[None]:
    """Defer Ctrl-C inside ``BALANCED`` blocks while this context is open. Does nothing off the
    main thread (only it receives signals) or when someone else installed their own handler."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, BALANCED.on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        BALANCED.pending = False


__all__ = ["BALANCED", "ctrl_c_waits_for_books"]
