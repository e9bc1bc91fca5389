"""Targets that misbehave in every way a campaign must survive, each only on SOME generated inputs.

Every target is the bundled reference parser (which passes its own campaign) plus one kind of
misbehaviour, so the only findings a campaign can report are the ones planted here. The trigger
is a hash of the text, hit by about one generated input in ``RARITY``: generated inputs are what
the engine produces (no magic word the generator would never write), it is deterministic (a
re-run of the same input misbehaves again), and a shrunk text almost never keeps the same hash,
so a hang (which costs the whole ``--timeout`` per run) is not re-run hundreds of times while
the text minimizer works. The crash-style targets trigger on content instead (a ``[`` in the
text), which is frequent and cheap, so their findings also get shrunk for real. ``hang_always``
hangs on every input: it is what checks that ``--budget`` holds whatever the target does.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import zlib

from fuzzer.targets.reference import parse as _reference

#: About one input in RARITY triggers a rare target: with --max-examples 3000, ~10 triggers.
RARITY = 300


def rare(text: str) -> bool:
    return zlib.crc32(text.encode("utf-8", "surrogatepass")) % RARITY == 7


def _recurse(n: int) -> int:
    return _recurse(n + 1) + 1


def hang_python(text):
    """A pure-Python infinite loop."""
    if rare(text):
        while True:
            pass
    return _reference(text)


def hang_regex(text):
    """Catastrophic backtracking inside ``re``: C code that holds the GIL and ignores signals."""
    if rare(text):
        re.match(r"(a+)+$", "a" * 64 + "b")
    return _reference(text)


def segfault(text):
    if rare(text):
        ctypes.string_at(0)
    return _reference(text)


def hard_exit(text):
    if rare(text):
        os._exit(3)
    return _reference(text)


def recursion(text):
    if "[" in text:
        _recurse(0)
    return _reference(text)


def memory(text):
    """Asks for 64 GiB at once: MemoryError under the worker's address-space limit."""
    if "[" in text:
        return bytearray(64 * 1024 ** 3)
    return _reference(text)


def interrupt(text):
    if "[" in text:
        raise KeyboardInterrupt
    return _reference(text)


def system_exit(text):
    if "[" in text:
        sys.exit(5)
    return _reference(text)


_GARBAGE = "garbage \x00\xff {\"name\": \"get_weather\"} Traceback (most recent call last):\n" * 200


def _spew() -> None:
    print(_GARBAGE)
    print(_GARBAGE, file=sys.stderr)
    os.write(1, b"\x80\x81 binary to fd 1 " * 500)
    os.write(2, b"fd 2 noise " * 500)


def noisy(text):
    """Writes garbage to stdout and stderr on every call (Python streams and fds 1 and 2), and
    crashes with a LookupError when the text has a ``[``."""
    _spew()
    if "[" in text:
        raise LookupError("noisy target fails here")
    return _reference(text)


def noisy_correct(text):
    """Garbage on every call, but the right answer: the campaign must find nothing."""
    _spew()
    return _reference(text)


def hang_always(text):
    """Never returns: a parser stuck on every input (waiting on a lock, a socket...)."""
    while True:
        pass


def system_on_broken_json(text):
    """Runs a command on every input it cannot read as JSON, then cleanly rejects it: unsafe on
    exactly the inputs a truncation sweep expects to be declined."""
    import json

    try:
        json.loads(text)
    except ValueError:
        try:
            os.system("true")
        except PermissionError:  # blocked by the worker's audit hook
            pass
        raise ValueError("not JSON") from None
    return _reference(text)
