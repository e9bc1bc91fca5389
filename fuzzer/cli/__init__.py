"""The ``fuzz`` command line (click). Only this package imports click or prints for users."""

from __future__ import annotations

import functools
from typing import Any, Callable

import click

from fuzzer.cli.errors import ConfigError
from strategies.errors import ToolfuzzError


def translate_errors(command: Callable) -> Callable:
    """Turn toolfuzz's own errors into one-line exit-2 errors; let real bugs show tracebacks."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except ToolfuzzError as exc:
            raise ConfigError(str(exc)) from None

    return wrapper


def load_registry_or_fail(tools_file: str | None) -> Any:
    from strategies._internal.tools import load_registry

    return load_registry(tools_file)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="toolfuzz", prog_name="toolfuzz")
def main() -> None:
    """toolfuzz: property-based fuzzing for the code that parses LLM tool calls.

    Typical use: `fuzz campaign --tool get_weather --target mypkg.parsing:parse_tool_calls`.
    Exit status: 0 nothing wrong, 1 failures found, 2 usage or configuration error.
    """


from fuzzer.cli import inspect as _inspect  # noqa: E402,F401  (registers commands)
from fuzzer.cli import campaign as _campaign  # noqa: E402,F401
from fuzzer.cli import corpus_cmds as _corpus_cmds  # noqa: E402,F401
from fuzzer.cli import diff_cmd as _diff_cmd  # noqa: E402,F401
