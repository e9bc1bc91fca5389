"""The ``fuzz`` group and what every command shares: one-line errors, the config file settled
before a command runs, the tools registry. Each command module registers itself on :data:`main`;
:mod:`fuzzer.cli` imports them all."""

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
            raise ConfigError(naming_the_file(str(exc))) from None

    return wrapper


def naming_the_file(message: str) -> str:
    """An error about an option's value (``--reject-on 'x:Y': ...``) whose value came from the
    config file names the file and key, not a flag the user never typed."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or not message.startswith("--"):
        return message
    from click.core import ParameterSource

    from fuzzer.cli.config_file import current_config, setting_of

    flag = message.split(" ", 1)[0].rstrip(":")
    param = next((p for p in ctx.command.params if flag in getattr(p, "opts", ())), None)
    key = setting_of(param) if param is not None else None
    if key is None or ctx.get_parameter_source(param.name) is not ParameterSource.DEFAULT_MAP:
        return message
    config = current_config(ctx)
    return f"{config.where}: {key}{message[len(flag):]}" if config.path else message


def load_registry(tools_file: str | None, budget_s: float | None = None) -> Any:
    """The tools to fuzz. A tools file given here also becomes the registry the bundled reference
    parser validates against (``TOOLFUZZ_TOOLS``, inherited by its worker processes). A Python
    reference (``mypkg.tools:Models``) is imported within the time a target's import gets
    (:func:`fuzzer.isolation.spec.load_timeout`: bounded by ``budget_s``)."""
    import os

    from fuzzer.isolation.spec import load_timeout
    from strategies._internal.tools import load_registry as load

    try:
        registry = load(tools_file, import_timeout=load_timeout(budget_s))
    except RecursionError:
        raise ConfigError(f"--tools: {tools_file}: nested too deeply to read") from None
    if tools_file:
        os.environ["TOOLFUZZ_TOOLS"] = os.path.abspath(tools_file) if os.path.exists(tools_file) else tools_file
    return registry


#: click >= 8.2 raises this for a bare group invocation; older versions print the help themselves.
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class FuzzCommand(click.Command):
    """click's command, settling the config file's values once the options are parsed (an option
    given on the command line replaces the file's alternatives to it; see
    :func:`fuzzer.cli.config_file.settle`) before the command runs."""

    def invoke(self, ctx: click.Context) -> Any:
        from fuzzer.cli.config_file import settle

        settle(ctx)
        return super().invoke(ctx)


class FuzzGroup(click.Group):
    """click's group, with usage errors shown as one line (``Error: ...``, exit 2) instead of the
    usage block: a demanding user wants the argument that is wrong, not the synopsis again.
    Its commands are FuzzCommand instances, its subgroups FuzzGroup instances."""

    command_class = FuzzCommand
    group_class = type  # subgroups (fuzz corpus, fuzz records, fuzz config) are FuzzGroups too

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        import sys

        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _NO_ARGS_IS_HELP as exc:  # bare `fuzz`: the help, as click shows it
            click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message(), err=True)
            sys.exit(2)
        except click.UsageError as exc:
            where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            click.echo(f"Error: {exc.format_message()}{where}", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=FuzzGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="toolfuzz", prog_name="toolfuzz")
@click.option("--config", "config_path", metavar="FILE", envvar="TOOLFUZZ_CONFIG", type=click.Path(dir_okay=False),
              help="Config file (toolfuzz.toml, or a pyproject.toml with [tool.toolfuzz]). Default: searched "
                   "from the current directory up to the repository root. See `fuzz config --help`.")
@click.pass_context
def main(ctx: click.Context, config_path: str | None) -> None:
    """toolfuzz: property-based fuzzing for the code that parses LLM tool calls.

    Typical use: `fuzz campaign --tool get_weather --target mypkg.parsing:parse_tool_calls`.
    Exit status: 0 something was tested and nothing failed, 1 failures found, 2 usage or configuration
    error (or nothing could be tested), 130 interrupted (Ctrl-C) before anything was found.
    """
    from fuzzer.cli.config_file import apply_config

    apply_config(ctx, config_path)


__all__ = ["FuzzCommand", "FuzzGroup", "load_registry", "main", "naming_the_file", "translate_errors"]
