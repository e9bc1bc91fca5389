"""`fuzz config show`: the settings a command would run with, and where each comes from (the file's
loading and applying is :mod:`fuzzer.cli.config_file`)."""

from __future__ import annotations

import json
from typing import Any, Optional

import click

from fuzzer.cli.app import main, translate_errors
from fuzzer.cli.config_file import _default_of, _shown, current_config, setting_of
from fuzzer.cli.errors import ConfigError
from fuzzer.config import SETTINGS


def _keys_help() -> str:
    lines = ["Keys (the option each one is the default of; * also per tool):", "", "\b"]  # \b: keep the table as is
    for s in SETTINGS.values():
        lines.append(f"  {s.name:<13}{s.option:<15}{'*' if s.per_tool else ' '} {s.expected}")
    return "\n".join(lines)


@main.group(help=f"""The configuration file: [tool.toolfuzz] in pyproject.toml, or toolfuzz.toml.

Searched for from the current directory up to the repository root (or given with `fuzz --config
FILE`). Each key is the default of the option of the same name in every command; per-tool
overrides go in [tool.toolfuzz.tools.NAME] tables (in toolfuzz.toml: [tools.NAME]), and the tools
source then as tools.source. Precedence: command line > per-tool table > file > defaults.
Relative paths are relative to the file.

\b
{_keys_help()}
""")
def config() -> None:
    pass


@config.command("show")
@click.option("--command", "command_name", default="campaign", show_default=True, metavar="NAME",
              help="Show the settings as this command would use them (its defaults fill what the file "
                   "does not set), e.g. gate.")
@click.option("--tool", default=None, metavar="NAME", help="Apply this tool's per-tool table.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {key: {value, source}}.")
@click.pass_context
@translate_errors
def config_show(ctx: click.Context, command_name: str, tool: Optional[str], as_json: bool) -> None:
    """Print every setting, its effective value and where it came from (file, tool table, default)."""
    config = current_config(ctx)
    command = _command(ctx, command_name)
    # A tool without a table of its own gets the file's settings (what a campaign on it uses).
    params = {setting_of(p): p for p in command.params if setting_of(p)}
    rows: dict[str, dict[str, Any]] = {}
    for key in SETTINGS:
        param = params.get(key)
        default = _default_of(param) if param is not None else None
        value = config.lookup(key, tool=tool, default=default)
        source = value.source
        if param is None:
            if source == "default":
                continue  # neither set nor used by this command
            source += f" (not an option of fuzz {command_name})"
        rows[key] = {"value": value.value, "source": source}
    if as_json:
        click.echo(json.dumps({"config_file": str(config.path) if config.path else None, "command": command_name,
                               "tool": tool, "settings": rows}, indent=2))
        return
    click.echo(f"config file: {config.where}" if config.path else
               "config file: none found (searched from the current directory up to the repository root)")
    sibling = config.path.with_name("pyproject.toml") if config.path and config.path.name == "toolfuzz.toml" else None
    if sibling is not None and sibling.is_file() and "[tool.toolfuzz" in sibling.read_text(errors="replace"):
        click.echo(f"  (its directory's pyproject.toml has a [tool.toolfuzz] table too: toolfuzz.toml wins, "
                   "that table is not read)")
    width = max(len(_shown(r["value"])) for r in rows.values()) if rows else 0
    width = min(max(width, 5), 60)
    for key, row in rows.items():
        click.echo(f"  {key:<13} {_shown(row['value']):<{width}}  {row['source']}")


def _command(ctx: click.Context, name: str) -> click.Command:
    path = name.split()
    command: Any = ctx.find_root().command
    for part in path:
        sub = command.commands.get(part) if isinstance(command, click.Group) else None
        if sub is None:
            import difflib

            known = sorted(command.commands) if isinstance(command, click.Group) else []
            close = difflib.get_close_matches(part, known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ConfigError(f"--command: no command {name!r}{hint}")
        command = sub
    return command
