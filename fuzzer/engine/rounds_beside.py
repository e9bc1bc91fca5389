"""The rounds of a unit, run beside the settling: a campaign under a time budget confirms and
shrinks its new findings in a worker of its own while its workers go on fuzzing
(:class:`fuzzer.engine.campaign.CampaignJob`)."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional


class RoundsBeside(threading.Thread):
    """Rounds of a unit, run in a thread while the campaign's thread confirms and shrinks findings
    in the settle pool. Nothing is filed here (the finding book is the campaign thread's): each
    round's orders and results wait, in order, for :meth:`finish`. The thread owns the campaign's
    pool until then."""

    def __init__(self, job: Any, unit: str, counts: list, stop_sending: Optional[float],
                 on_sent: Optional[Callable[[], None]] = None):
        super().__init__(name="toolfuzz-rounds", daemon=True)
        self.job, self.unit, self.counts = job, unit, counts
        self.stop_sending, self.on_sent = stop_sending, on_sent
        self.rounds: list = []
        self.error: Optional[BaseException] = None
        self._halt = threading.Event()  # no new round
        self._cut = threading.Event()  # and no more orders of the round running

    def run(self) -> None:
        try:
            while not self._halt.is_set():
                now = time.monotonic()
                if any(end is not None and now >= end for end in (self.job.budget.deadline, self.stop_sending)):
                    return
                on_sent, self.on_sent = self.on_sent, None
                self.rounds.append(self.job.run_round(self.unit, self.counts, self.stop_sending, on_sent=on_sent,
                                                      file=False, stop_when=self._cut.is_set))
        except BaseException as exc:  # noqa: BLE001 - raised again in the campaign's thread
            self.error = exc

    def cut(self) -> None:
        """A Ctrl-C or an error in the campaign's thread: the orders running finish (what they ran
        is filed), the rest of the round is not sent."""
        self._cut.set()
        self._halt.set()

    def finish(self) -> tuple[list, Optional[BaseException]]:
        """Stop after the round running; every round's (orders, results), and what the thread
        raised, if anything (to raise once those rounds are filed)."""
        self._halt.set()
        self.join()
        return self.rounds, self.error


__all__ = ["RoundsBeside"]
