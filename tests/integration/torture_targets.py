"""Targets that misbehave in every way a worker must survive — each only when asked to.

Each target misbehaves only when the text contains a trigger word (usually ``BOOM``) and
otherwise parses the text as JSON, so a test can mix good and bad inputs in one batch and check
that every other input still gets its own, right outcome.

Loaded by workers as ``tests.integration.torture_targets:NAME`` with the repository root as cwd.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import re
import sys
import time
from types import SimpleNamespace

import pydantic


def ok(text: str):
    """A well-behaved parser: one JSON object is one call."""
    return json.loads(text)


def _or_json(text: str, word: str = "BOOM") -> bool:
    return word in text


def hang_python(text):
    if _or_json(text):
        while True:
            pass
    return json.loads(text)


def hang_regex(text):
    """Catastrophic backtracking inside ``re``: holds the GIL, ignores signals."""
    if _or_json(text):
        re.match(r"(a+)+$", "a" * 64 + "b")
    return json.loads(text)


def sleepy(text):
    """Slow but within any reasonable timeout: must not be mistaken for a hang."""
    if _or_json(text, "SLOW"):
        time.sleep(0.3)
    return json.loads(text)


def segfault(text):
    if _or_json(text):
        ctypes.string_at(0)
    return json.loads(text)


def exit3(text):
    if _or_json(text):
        os._exit(3)
    return json.loads(text)


def always_die(text):
    os._exit(7)


def abort(text):
    if _or_json(text):
        os.abort()
    return json.loads(text)


def _recurse(n):
    return _recurse(n + 1) + 1


def recursion(text):
    if _or_json(text):
        _recurse(0)
    return json.loads(text)


def memory_hog(text):
    """Asks for 2 GiB at once; under a small RLIMIT_AS this raises MemoryError."""
    if _or_json(text):
        return bytearray(2 * 1024 ** 3)
    return json.loads(text)


def interrupt(text):
    if _or_json(text):
        raise KeyboardInterrupt
    return json.loads(text)


def sys_exit(text):
    if _or_json(text):
        sys.exit(5)
    return json.loads(text)


def generator_exit(text):
    if _or_json(text):
        raise GeneratorExit
    return json.loads(text)


def noisy(text):
    """Floods stdout and stderr, through Python and straight to fds 1 and 2."""
    chunk = "garbage \x00\xff" * 5000
    print(chunk)
    print(chunk, file=sys.stderr)
    os.write(1, b"\x80\x81 binary to fd 1 " * 20000)
    os.write(2, b"fd 2 noise " * 20000)
    sys.stdout.flush()
    return json.loads(text)


def key_error(text):
    data = json.loads(text)
    return {"name": data["name"], "arguments": data["missing"]}


class LookupFailed(Exception):
    """A project-specific rejection type for ``--reject-on``."""


def custom_reject(text):
    if _or_json(text):
        raise LookupFailed("no call here")
    return json.loads(text)


def non_call(text):
    """Returns things that are not calls, chosen by the text."""
    if "STRING" in text:
        return "get_weather(city='Paris')"
    if "NONAME" in text:
        return {"arguments": {}}
    if "BADARGS" in text:
        return {"name": "x", "arguments": "{not json"}
    if "DEEP" in text:
        value: list = []
        for _ in range(100_000):
            value = [value]
        return value
    return None


class CallModel(pydantic.BaseModel):
    name: str
    arguments: dict


@dataclasses.dataclass
class CallRecord:
    name: str
    arguments: dict


def shapes(text):
    """The same call in every shape the target contract allows, chosen by the text."""
    args = {"city": "Paris", "days": (1, 2)}
    if "PYDANTIC" in text:
        return [CallModel(name="get_weather", arguments={"city": "Paris", "days": [1, 2]})]
    if "DATACLASS" in text:
        return CallRecord("get_weather", args)
    if "NAMESPACE" in text:
        return (SimpleNamespace(name="get_weather", arguments=json.dumps(args)),)
    if "OPENAI" in text:
        return [{"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": json.dumps(args)}}]
    return []


class Parser:
    """``M:Cls.method`` targets: a bound method on a no-argument instance, and a staticmethod."""

    def __init__(self):
        self.prefix = "tool_"

    def parse(self, text):
        data = json.loads(text)
        return {"name": self.prefix + data["name"], "arguments": data["arguments"]}

    @staticmethod
    def parse_static(text):
        return json.loads(text)


not_callable = {"name": "a dict"}
