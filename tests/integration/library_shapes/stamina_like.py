"""An executor shaped like stamina's ``retry_context``: 10 attempts, a 45 s budget, waits of 0.1 s
doubling to 5 s plus up to 1 s of jitter — stamina's defaults — on httpx transport errors and
the statuses worth retrying, with jsonschema validation before the tool runs."""

from __future__ import annotations

import random
import time

from jsonschema import Draft202012Validator, FormatChecker

ATTEMPTS, TIMEOUT, WAIT_INITIAL, WAIT_MAX, WAIT_JITTER, WAIT_EXP_BASE = 10, 45.0, 0.1, 5.0, 1.0, 2


def retry_on(exc: Exception) -> bool:
    import httpx

    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in (429, 500, 502, 503, 504)
    return isinstance(exc, httpx.TransportError)


def retry_context(task):
    started = time.monotonic()
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return task()
        except Exception as exc:
            if not retry_on(exc) or attempt == ATTEMPTS:
                raise
            wait = min(WAIT_MAX, WAIT_INITIAL * WAIT_EXP_BASE ** (attempt - 1)) + random.uniform(0, WAIT_JITTER)
            if time.monotonic() - started + wait > TIMEOUT:
                raise
            time.sleep(wait)
    raise AssertionError("unreachable")


def make_executor(tools):
    def execute(name, arguments):
        tool = tools.get(name)
        if tool is None:
            return {"error": f"unknown tool {name!r}"}
        problem = next(iter(Draft202012Validator(tool.schema, format_checker=FormatChecker()).iter_errors(arguments)), None)
        if problem is not None:
            return {"error": problem.message}
        return retry_context(lambda: tool(**arguments))

    return execute
