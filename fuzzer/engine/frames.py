"""Which frames of a stack name the code under test: one rule for crash, rejection, hang and slow keys.

A stack ends wherever inside a library call the target made: ``json.loads`` raises from
``decoder.py:raw_decode`` for one malformed input and from ``decoder.py:decode`` for another, and
a stack sampled mid-run lands in ``re``'s ``search`` or ``_compile``. Keying findings by those
innermost frames split one bug ("the loop calls json.loads on the model's arguments unguarded")
into as many findings as the library has raise sites. The target's frame that made the call is
the stable part, so the standard library's innermost frames are dropped — all of them only when
nothing else is left (a target that *is* ``json.loads``). Packages installed beside the standard
library (site-packages) are third-party code the user chose and stay.
"""

from __future__ import annotations

import functools
import os
from typing import Iterable, Sequence


#: Where the standard library lives: the directory of ``os``'s own file (lib-dynload is under it).
#: Not looked up through ``sysconfig``: this runs inside workers, where importing a module the
#: target did not import would be reported as the target's unsafe action.
_STDLIB = os.path.dirname(os.path.abspath(os.__file__)) + os.sep


@functools.lru_cache(maxsize=4096)
def in_stdlib(path: str) -> bool:
    """A file of the standard library (not of a package installed beside it in site-packages),
    or importlib's frozen bootstrap."""
    if path.startswith("<frozen "):
        return True
    path = os.path.abspath(path)
    return path.startswith(_STDLIB) and "-packages" + os.sep not in path


def without_library_tail(frames: Sequence[tuple[str, str]]) -> Sequence[tuple[str, str]]:
    """``frames`` (full path, function), innermost last, without the standard library's innermost
    frames; unchanged when every frame is the standard library's."""
    end = len(frames)
    while end and in_stdlib(frames[end - 1][0]):
        end -= 1
    return frames[:end] if end else frames


def named(frames: Iterable[tuple[str, str]], limit: int) -> list[tuple[str, str]]:
    """The innermost ``limit`` frames as (file base name, function): what signatures are built from."""
    return [(os.path.basename(path), func) for path, func in list(frames)[-limit:]]
