"""The config file on the command line: the defaults it gives every command, and what a run took from it.

The ``main`` group calls :func:`apply_config` before any subcommand is parsed. It loads the file
(:mod:`fuzzer.config`) and sets click's ``Context.default_map``, keyed per subcommand: for each
option of each command whose flag is a setting's :attr:`~fuzzer.config.Setting.option`
(``--budget`` for ``budget``, ``--format`` for ``formats``), the file's value becomes the
option's default. Commands need no code of their own for it; an explicit command-line value still
wins, and ``required=True`` options are satisfied by a value from the file (click checks
``required`` after the default map). A per-tool table is the one layer click cannot express (it
depends on which tool is being run): a command applies it with :func:`tool_overrides`.
"""

from __future__ import annotations

from typing import Any, Optional

import click
from click.core import ParameterSource

from fuzzer.cli.errors import ConfigError
from fuzzer.config import SETTINGS, Config, ConfigFileError, load_config

#: Where the loaded :class:`~fuzzer.config.Config` is kept (``ctx.meta`` is shared by every context).
CONFIG_META = "toolfuzz.config"
#: Sources of a value the user typed for this run: they beat the config file.
_GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT, ParameterSource.PROMPT)


def apply_config(ctx: click.Context, path: Optional[str]) -> Config:
    """Load the config file (``path``, or the one found from the cwd) and make it the defaults
    of every subcommand. A bad file is one ``Error:`` line and exit status 2."""
    try:
        config = load_config(path)
    except ConfigFileError as exc:
        raise ConfigError(str(exc)) from None
    ctx.meta[CONFIG_META] = config
    ctx.default_map = defaults_for(ctx.command, config)
    return config


def current_config(ctx: Optional[click.Context] = None) -> Config:
    ctx = ctx or click.get_current_context()
    return ctx.meta.get(CONFIG_META) or Config()


def setting_of(param: click.Parameter) -> Optional[str]:
    """The config key an option takes its default from, or None."""
    if not isinstance(param, click.Option):
        return None
    for setting in SETTINGS.values():
        if setting.option in param.opts:
            return setting.name
    return None


def defaults_for(command: click.Command, config: Config) -> dict[str, Any]:
    """``default_map`` for ``command``: param name -> file value; for a group, per subcommand."""
    if isinstance(command, click.Group):
        return {name: defaults_for(sub, config) for name, sub in command.commands.items()}
    defaults: dict[str, Any] = {}
    for param in command.params:
        key = setting_of(param)
        if key is not None and config.has(key):
            defaults[param.name] = _as_param_value(param, config.get(key))
    return defaults


def _as_param_value(param: click.Parameter, value: Any) -> Any:
    if param.multiple or param.nargs != 1:
        return list(value) if isinstance(value, (list, tuple)) else [value]
    return value


def tool_overrides(ctx: click.Context, tool: str) -> dict[str, Any]:
    """The per-tool table of ``tool`` as ``{param name: value}``, for the params of ``ctx``'s
    command not given on the command line, nor replaced by an alternative that was (see
    :data:`ALTERNATIVES`; CLI > per-tool > file > defaults)."""
    table = current_config(ctx).tools.get(tool, {})
    overrides: dict[str, Any] = {}
    given = _given_keys(ctx)
    for param in ctx.command.params:
        key = setting_of(param)
        if key in table and key not in given and not _replaced(key, given):
            overrides[param.name] = _as_param_value(param, table[key])
    return overrides


#: Settings that bound one thing, how long a run goes: one given on the command line replaces the
#: others' values from the file. ``--budget 12`` beside a file's ``max_examples = 2000`` ran 2,000
#: executions and ignored the budget the user had just typed.
ALTERNATIVES = (frozenset({"budget", "max_examples"}),)
#: Where :func:`settle` keeps the lines that say what the run took from the file.
NOTE_META = "toolfuzz.config_note"


def _given_keys(ctx: click.Context) -> set[str]:
    """The settings the user gave this run on the command line (or in the environment)."""
    return {key for param in ctx.command.params
            if (key := setting_of(param)) and ctx.get_parameter_source(param.name) in _GIVEN}


def _replaced(key: str, given: set[str]) -> Optional[str]:
    """The given setting that replaces ``key``'s file value, if any."""
    for group in ALTERNATIVES:
        if key in group:
            return next((other for other in sorted(group - {key}) if other in given), None)
    return None


def settle(ctx: click.Context) -> None:
    """Run before a command's callback, once its options are parsed: file values that an option
    given on the command line replaces (:data:`ALTERNATIVES`) go back to the option's own default,
    and the lines saying which settings came from which file are kept for :func:`config_note`."""
    config = current_config(ctx)
    if config.path is None:
        return
    given = _given_keys(ctx)
    keys = {setting_of(param) for param in ctx.command.params} - {None}
    taken, dropped = [], []
    for param in ctx.command.params:
        key = setting_of(param)
        if key is None or ctx.get_parameter_source(param.name) is not ParameterSource.DEFAULT_MAP:
            continue
        instead = _replaced(key, given)
        if instead is None:
            taken.append(key)
            continue
        default = _default_of(param)
        ctx.params[param.name] = param.type_cast_value(ctx, default) if default is not None else None
        dropped.append(f"{key} (--{instead.replace('_', '-')} given)")
    tables = []
    selected = ctx.params.get("tool_names") or ()  # --tool NAME...: only their tables apply
    for tool, values in config.tools.items():
        if selected and tool not in selected:
            continue
        used = sorted(k for k in values if k in keys and k not in given and not _replaced(k, given))
        if used:
            tables.append(f"{tool} ({', '.join(used)})")
    if not (taken or dropped or tables):
        return
    parts = [", ".join(f"{key} = {_shown(config.get(key))}" for key in taken) or "nothing"]
    if tables:
        parts.append(f"per tool: {'; '.join(tables)}")
    if dropped:
        parts.append(f"not used: {', '.join(dropped)}")
    lines = [f"config {config.where}: {'; '.join(parts)}"]
    target = ctx.params.get("target")
    if "corpus" in taken and "target" in given and config.get("target") not in (None, target):
        lines.append(f"warning: the corpus {_shown(config.get('corpus'))} is the one {config.where} keeps for "
                     f"{config.get('target')}; this run's target is {target} (--corpus names another)")
    ctx.meta[NOTE_META] = lines


def config_note(ctx: Optional[click.Context] = None) -> list[str]:
    """What :func:`settle` noted for this run (the first lines a job prints), or []."""
    ctx = ctx or click.get_current_context(silent=True)
    return list(ctx.meta.get(NOTE_META, [])) if ctx is not None else []


#: click >= 8.3 marks "no default" with a sentinel rather than None.
_UNSET = getattr(click.core, "UNSET", None)


def _default_of(param: click.Parameter) -> Any:
    default = param.default
    if callable(default):
        default = default()
    if default is _UNSET:
        return None
    return list(default) if isinstance(default, tuple) else default


def _shown(value: Any) -> str:
    if value is None or value == []:
        return "(none)"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


__all__ = ["ALTERNATIVES", "apply_config", "config_note", "current_config", "defaults_for", "setting_of", "settle",
           "tool_overrides"]
