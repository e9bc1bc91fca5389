"""Reading the data files a user points toolfuzz at: the config file, executor and agent policies,
a policy's fallback schema, a records baseline.

One reader per format, so every such file fails the same way: with one line, never a
traceback. The reader knows what went wrong with the file (no such file, a directory, unreadable,
not UTF-8, not valid TOML / JSON); the caller knows what the file was for and which error class
its command turns into an ``Error:`` line, so it passes ``fail(reason)``, which builds the
exception to raise from the reason.

Standard library only (``tomli`` on Python 3.10): every layer may use it.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: Builds the exception a caller raises from what went wrong (``"not valid TOML (...)"``).
Fail = Callable[[str], Exception]
PathLike = Union[str, "os.PathLike[str]"]


def read_toml(path: PathLike, fail: Fail) -> dict[str, Any]:
    """The TOML document in ``path``; any failure raises ``fail(reason)``."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(_unreadable(exc, "a TOML file")) from None
    except tomllib.TOMLDecodeError as exc:
        raise fail(f"not valid TOML ({exc})") from None


def read_json(path: PathLike, fail: Fail) -> Any:
    """The JSON value in ``path``; any failure raises ``fail(reason)``."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        return json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(_unreadable(exc, "a JSON file")) from None
    except RecursionError:
        raise fail("not JSON (nested too deeply to read)") from None
    except ValueError as exc:
        raise fail(f"not JSON ({exc})") from None


def _unreadable(exc: BaseException, expected: str) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return f"is a directory, not {expected}"
    return f"cannot read ({getattr(exc, 'strerror', None) or exc})"


__all__ = ["Fail", "read_json", "read_toml"]
