"""An executor shaped like ``@backoff.on_exception(backoff.expo, requests.RequestException,
max_time=60, giveup=<a 4xx>)``: full jitter over 1, 2, 4 ... s without a maximum, no attempt
limit — backoff's own loop, kept as it is, with its real bug: the elapsed time is read before the
call, so a slow failing call makes it stale and an attempt can start after ``max_time``."""

from __future__ import annotations

import datetime
import random
import time

MAX_TIME = 60


def expo(base=2, factor=1, max_value=None):
    yield  # advanced past by the first send(None)
    n = 0
    while True:
        a = factor * base ** n
        if max_value is None or a < max_value:
            yield a
            n += 1
        else:
            yield max_value


def full_jitter(value):
    return random.uniform(0, value)


def giveup(exc):
    response = getattr(exc, "response", None)
    return response is not None and response.status_code < 500


def on_exception(target):
    import requests

    def retry(*args, **kwargs):
        tries, start = 0, datetime.datetime.now()
        wait = expo()
        wait.send(None)
        while True:
            tries += 1
            elapsed = (datetime.datetime.now() - start).total_seconds()
            try:
                return target(*args, **kwargs)
            except requests.RequestException as exc:
                if giveup(exc) or elapsed >= MAX_TIME:
                    raise
                seconds = min(full_jitter(wait.send(exc)), MAX_TIME - elapsed)
                time.sleep(seconds)

    return retry


def make_executor(tools):
    def execute(name, arguments):
        tool = tools.get(name)
        if tool is None:
            return {"error": f"unknown tool {name!r}"}
        return on_exception(tool)(**arguments)

    return execute
