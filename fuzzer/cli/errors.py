"""How the CLI reports a configuration error: one line, exit status 2, no traceback."""

from __future__ import annotations

import click


class ConfigError(click.ClickException):
    """A usage or configuration error (bad file, bad target, unknown name): exit status 2."""

    exit_code = 2


def check_writable_file(path: str, option: str) -> None:
    """Fail before any work if ``path`` cannot be written (not after a long campaign)."""
    import os
    import tempfile

    parent = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(parent):
        raise ConfigError(f"{option}: directory {parent} does not exist")
    if os.path.isdir(path):
        raise ConfigError(f"{option}: {path} is a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".tmp-", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ConfigError(f"{option}: cannot write in {parent} ({exc.strerror or exc})") from None


def check_corpus_dir(path: str, option: str = "--corpus") -> None:
    """The corpus directory exists (or can be made) and is writable."""
    import os
    import tempfile

    if os.path.exists(path) and not os.path.isdir(path):
        raise ConfigError(f"{option}: {path} is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".tmp-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ConfigError(f"{option}: cannot write in {path} ({exc.strerror or exc})") from None
