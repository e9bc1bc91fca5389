"""How the CLI reports a configuration error: one line, exit status 2, no traceback."""

from __future__ import annotations

import click


class ConfigError(click.ClickException):
    """A usage or configuration error (bad file, bad target, unknown name): exit status 2."""

    exit_code = 2
