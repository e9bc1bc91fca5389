"""An executor shaped like LangGraph: a ToolNode (validation errors go back to the model as an
error message) run under a RetryPolicy with LangGraph's defaults and its ``default_retry_on``.

``default_retry_on`` keeps LangGraph's real bug: ``if exc.response`` is false for a ``requests``
error response (``Response.__bool__`` is ``ok``), so every ``requests`` HTTP error is retried,
4xx included. Its timeouts differ by library: a ``requests`` timeout is an ``OSError`` (not
retried), an ``httpx`` one is not (retried) — what ``retry_on = ["timeout:httpx"]`` states."""

from __future__ import annotations

import random
import time

from jsonschema import Draft202012Validator, FormatChecker

INITIAL_INTERVAL, BACKOFF_FACTOR, MAX_INTERVAL, MAX_ATTEMPTS = 0.5, 2.0, 128.0, 3


def default_retry_on(exc: Exception) -> bool:
    import httpx
    import requests

    if isinstance(exc, ConnectionError):
        return True
    if isinstance(exc, httpx.HTTPStatusError):
        return 500 <= exc.response.status_code < 600
    if isinstance(exc, requests.HTTPError):
        return 500 <= exc.response.status_code < 600 if exc.response else True
    if isinstance(exc, (ValueError, TypeError, ArithmeticError, ImportError, LookupError, NameError, SyntaxError,
                        RuntimeError, ReferenceError, StopIteration, StopAsyncIteration, OSError)):
        return False
    return True


def run_with_retry(task):
    """LangGraph's run_with_retry: attempts, then a doubling interval plus up to 1 s of jitter."""
    attempts, interval = 0, INITIAL_INTERVAL
    while True:
        try:
            return task()
        except Exception as exc:
            if not default_retry_on(exc):
                raise
            attempts += 1
            if attempts >= MAX_ATTEMPTS:
                raise
            interval = min(MAX_INTERVAL, interval * BACKOFF_FACTOR) if attempts > 1 else interval
            time.sleep(interval + random.uniform(0, 1))


class ToolNode:
    def __init__(self, tools):
        self.tools = dict(tools)

    def invoke(self, name, arguments):
        tool = self.tools.get(name)
        if tool is None:
            return {"error": f"Error: {name} is not a valid tool, try one of [{', '.join(self.tools)}]."}
        problem = next(iter(Draft202012Validator(tool.schema, format_checker=FormatChecker()).iter_errors(arguments)), None)
        if problem is not None:
            return {"error": f"Error invoking tool {name!r}: {problem.message}"}
        return tool(**arguments)


def make_executor(tools):
    node = ToolNode(tools)
    return lambda name, arguments: run_with_retry(lambda: node.invoke(name, arguments))
