"""A naive tool executor, the kind that works in a demo: it retries everything, validates
nothing and lets errors through.

    fuzz executor --executor fuzzer.targets.executor_naive:make_executor --budget 30

finds, among others: a call to an unknown tool crashing with ``KeyError``; wrongly typed or
missing arguments reaching the tool; a 404 retried; more attempts than promised; a constant wait
that ignores ``Retry-After``; no circuit breaker; an email sent twice after a timeout that hid a
delivered message; a tool's API key leaking out with the error it raised.
"""

from __future__ import annotations

import time
from typing import Any, Callable

ATTEMPTS = 12
WAIT_S = 1.0


def make_executor(tools: dict[str, Callable[..., Any]]) -> Callable[[str, dict], Any]:
    def execute(name: str, arguments: dict) -> Any:
        tool = tools[name]
        last: Exception | None = None
        for _attempt in range(ATTEMPTS):
            try:
                return tool(**arguments)
            except Exception as exc:  # every failure looks transient to this executor
                last = exc
                time.sleep(WAIT_S)
        assert last is not None
        raise last

    return execute
