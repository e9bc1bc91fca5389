"""The configuration file: ``[tool.toolfuzz]`` in ``pyproject.toml``, or a ``toolfuzz.toml``.

A CI gate should read ``fuzz gate``, not a 200-character command line. The file holds the same
settings as the command-line options, under the option's name::

    # toolfuzz.toml (or the same keys under [tool.toolfuzz] in pyproject.toml)
    target = "mypkg.parsing:parse"
    tools = "tools.json"
    corpus = "fuzz-corpus"
    seed = 1
    max_examples = 20000

    [tools.get_weather]          # per-tool overrides: [tool.toolfuzz.tools.get_weather]
    budget = 30
    formats = ["json", "hermes"]

TOML cannot hold both ``tools = "tools.json"`` and a ``[tools.NAME]`` table, so when a file has
per-tool tables the tools source goes into the table as ``tools.source = "tools.json"`` (a string
is the source, a table is a tool's overrides).

Precedence: command line > per-tool table > file > built-in defaults. Relative paths (``tools``,
``corpus``, ignore files) are relative to the file's directory, so a command run from a
subdirectory means the same thing. Without ``--config``, the file is searched for from the
current directory upward, stopping at the repository root (the directory holding ``.git``):
in each directory ``toolfuzz.toml`` first, then a ``pyproject.toml`` that has a
``[tool.toolfuzz]`` table.

Every problem — not TOML, an unknown key, a wrong type — is one :class:`ConfigFileError` line
naming the file, the key and the expected type (the CLI shows it and exits 2). The known keys are
registered in :data:`SETTINGS`, one :class:`Setting` each: that table is the documentation of the
file, the validation, and the map to command-line options (:attr:`Setting.option`).
"""

from __future__ import annotations

import difflib
import sys
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from fuzzer.datafiles import read_toml
from strategies.errors import ToolfuzzError
from strategies.registry import Registry

CONFIG_FILE = "toolfuzz.toml"
PYPROJECT = "pyproject.toml"
#: Where the per-tool override tables live (``[tools.NAME]``), and the source key inside it.
TOOLS_TABLE, TOOLS_SOURCE = "tools", "source"
#: Sub-tables read by the harnesses themselves: the executor's and the agent loop's declared
#: policies ([tool.toolfuzz.executor], [tool.toolfuzz.agent]).
POLICY_TABLES = ("executor", "agent")
#: ``<verdict>-<12 hex>``: an ignore entry that is a signature (anything else is a file of them).
SIGNATURE_RE = re.compile(r"^[a-z][a-z_]*-[0-9a-f]{12}$")


class ConfigFileError(ToolfuzzError, ValueError):
    """A configuration file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Setting:
    """One key of the file: its type, the option it feeds, whether a tool table may override it."""

    name: str
    option: str  # the command-line option it is the default of, e.g. "--format"
    expected: str  # the type, in the words of the error message
    check: Callable[[Any], Any]  # value -> normalized value; raises ValueError when wrong
    help: str
    per_tool: bool = False
    path: bool = False  # resolved relative to the file's directory


SETTINGS: Registry[Setting] = Registry("setting")


def _setting(name: str, option: str, expected: str, check: Callable[[Any], Any], help: str, *,
             per_tool: bool = False, path: bool = False) -> None:
    SETTINGS.register(name, Setting(name, option, expected, check, help, per_tool, path), module=__name__)


# -- value checks: each returns the normalized value or raises ValueError ------------------------

def _string(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError
    return value


def _reference(value: Any) -> str:
    module, _, attr = _string(value).partition(":")
    if not module or not attr:
        raise ValueError
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError
    return list(value)


def _positive_number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise ValueError  # (nan fails both comparisons; 1e400 reads as inf)
    return float(value)


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError
    return value


def _positive_integer(value: Any) -> int:
    if _integer(value) < 1:
        raise ValueError
    return value


def _workers(value: Any) -> Any:
    return value if value == "auto" else _positive_integer(value)


def _one_of(*choices: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in choices:
            raise ValueError
        return value
    return check


def _formats(value: Any) -> list[str]:
    from strategies._internal.formats.versions import resolve
    from strategies.errors import UnknownName

    names = _strings(value)
    for name in names:
        try:
            resolve(name)
        except UnknownName:
            raise ValueError from None
    return names


def _format_names() -> str:
    from strategies._internal.formats.versions import known_selectors

    return ", ".join(known_selectors()) + "; a family or format may end in :single, :no_prose or :no_reasoning"


_setting("target", "--target", "a module:callable reference (string)", _reference,
         "The parser under test, M:A.")
_setting("tools", "--tools", "a string (a tools file or M:A)", _string,
         "The tools: a file (OpenAI, Anthropic, MCP or {name: schema}) or M:A naming pydantic models.",
         path=True)
_setting("level", "--level", "one of \"parse\", \"validate\"", _one_of("parse", "validate"),
         "Oracle level.", per_tool=True)
_setting("formats", "--format", "a list of format names (or families, e.g. \"hermes:single\")", _formats,
         "Formats the target supports (default: probe every format).", per_tool=True)
def _modules(value: Any) -> list[str]:
    """Module names of the user's own formats, imported now (their formats must exist before the
    ``formats`` key naming them is checked)."""
    import importlib
    import sys

    names = _strings(value)
    for name in names:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - any failure to import: the key's one-line error
            raise ValueError from None
    return names


_setting("formats_from", "--formats-from", "a list of importable module names", _modules,
         "Modules of your own formats (registered with @output_format).")
_setting("reject_on", "--reject-on", "a string or a list of strings (M:NAME)", _strings,
         "Exception types that count as a clean rejection.")
_setting("corpus", "--corpus", "a string (a directory)", _string, "The regression corpus directory.",
         path=True)
_setting("budget", "--budget", "a number of seconds > 0", _positive_number,
         "Seconds to run, shrinking included.", per_tool=True)
_setting("seed", "--seed", "an integer", _integer, "Random seed.", per_tool=True)
_setting("timeout", "--timeout", "a number of seconds > 0", _positive_number,
         "Seconds one input may run before it counts as a hang.")
_setting("workers", "--workers", "an integer >= 1 or \"auto\"", _workers, "Worker processes.")
_setting("backend", "--backend", "one of \"local\", \"ray\"", _one_of("local", "ray"),
         "Where the work runs: local worker processes, or Ray actors.")
_setting("ray_address", "--ray-address", "a string (HOST:PORT, ray://HOST:PORT or auto)", _string,
         "The Ray cluster to join (--backend ray).")
_setting("max_examples", "--max-examples", "an integer >= 1", _positive_integer,
         "Executions to run (with seed: deterministic).", per_tool=True)
_setting("ignore", "--ignore", "a string or a list of strings (signatures or files of them)", _strings,
         "Signatures never reported as failures: each entry a signature or a file listing them.",
         per_tool=True, path=True)


# -- the loaded file ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    """An effective setting and where it came from (for ``fuzz config show``)."""

    value: Any
    source: str  # "default", "toolfuzz.toml", "pyproject.toml [tool.toolfuzz.tools.get_weather]", ...


@dataclass
class Config:
    """The settings of one file (or none): ``values`` by key, ``tools`` per-tool overrides."""

    path: Optional[Path] = None
    values: dict[str, Any] = field(default_factory=dict)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: "[tool.toolfuzz]" for a pyproject.toml, "" for a toolfuzz.toml.
    table: str = ""

    @property
    def where(self) -> str:
        """The file and table, as messages name them."""
        if self.path is None:
            return "no config file"
        return f"{_shown(self.path)}{' ' + self.table if self.table else ''}"

    def tool_where(self, tool: str) -> str:
        prefix = self.table[1:-1] + "." if self.table else ""
        return f"{_shown(self.path)} [{prefix}{TOOLS_TABLE}.{tool}]" if self.path else "no config file"

    def get(self, key: str, default: Any = None, *, tool: Optional[str] = None) -> Any:
        return self.lookup(key, tool=tool).value if self.has(key, tool=tool) else default

    def has(self, key: str, *, tool: Optional[str] = None) -> bool:
        SETTINGS[key]  # an unknown key is a programming error here: raises with close matches
        return key in self.values or (tool is not None and key in self.tools.get(tool, {}))

    def lookup(self, key: str, *, tool: Optional[str] = None, default: Any = None) -> Value:
        """The value of ``key`` for ``tool`` (per-tool table first, then the file), or ``default``."""
        if tool is not None and key in self.tools.get(tool, {}):
            return Value(self.tools[tool][key], self.tool_where(tool))
        if key in self.values:
            return Value(self.values[key], self.where)
        return Value(default, "default")

    def for_tool(self, tool: str) -> dict[str, Any]:
        """Every setting the file gives ``tool``: the file's values with its table on top."""
        return {**self.values, **self.tools.get(tool, {})}

    def check_tools(self, names: Any) -> None:
        """Fail when a per-tool table names a tool the registry does not hold."""
        known = list(names)
        for tool in self.tools:
            if tool not in known:
                close = difflib.get_close_matches(tool, known, n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else f"; known tools: {', '.join(known)}"
                raise ConfigFileError(f"{self.tool_where(tool)}: unknown tool {tool!r}{hint}")


def _shown(path: Optional[Path]) -> str:
    if path is None:
        return ""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)
    return relative if not relative.startswith("..") else str(path)


def find_config(start: Optional[Path] = None) -> Optional[Path]:
    """The file the commands read: from ``start`` (the cwd) upward to the repository root."""
    directory = Path(start or os.getcwd()).resolve()
    while True:
        candidate = directory / CONFIG_FILE
        if candidate.is_file():
            return candidate
        pyproject = directory / PYPROJECT
        if pyproject.is_file() and _has_toolfuzz_table(pyproject):
            return pyproject
        if (directory / ".git").exists() or directory.parent == directory:
            return None
        directory = directory.parent


def _has_toolfuzz_table(path: Path) -> bool:
    try:
        data = _read_toml(path)
    except ConfigFileError:
        return True  # a broken pyproject.toml is reported, not skipped silently
    return isinstance(data.get("tool"), dict) and "toolfuzz" in data["tool"]


def _read_toml(path: Path) -> dict[str, Any]:
    return read_toml(path, lambda reason: ConfigFileError(f"{_shown(path)}: {reason}"))


def load_config(path: Optional[str | os.PathLike[str]] = None, *, start: Optional[Path] = None) -> Config:
    """Read ``path`` (a ``pyproject.toml`` is read at ``[tool.toolfuzz]``, any other file whole),
    or the file :func:`find_config` finds; an empty :class:`Config` when there is none."""
    if path is None:
        found = find_config(start)
        if found is None:
            return Config()
        file = found
    else:
        file = Path(path)
        if not file.is_file():
            raise ConfigFileError(f"{path}: no such config file")
    file = file.resolve()
    data = _read_toml(file)
    table = ""
    if file.name == PYPROJECT:
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or "toolfuzz" not in tool:
            raise ConfigFileError(f"{_shown(file)}: has no [tool.toolfuzz] table")
        data, table = tool["toolfuzz"], "[tool.toolfuzz]"
        if not isinstance(data, dict):
            raise ConfigFileError(f"{_shown(file)}: tool.toolfuzz: expected a table")
    config = Config(path=file, table=table)
    _fill(config, data)
    return config


def _fill(config: Config, data: dict[str, Any]) -> None:
    if "formats_from" in data:  # first: the formats they register may be named by the other keys
        if config.path is not None and str(config.path.parent) not in sys.path:
            sys.path.insert(0, str(config.path.parent))
        config.values["formats_from"] = _checked(config, config.where, "formats_from", SETTINGS["formats_from"],
                                                 data["formats_from"])
    tools = data.get(TOOLS_TABLE)
    if isinstance(tools, dict):
        for name, value in tools.items():
            if name == TOOLS_SOURCE and not isinstance(value, dict):
                config.values["tools"] = _checked(config, config.where, "tools.source", SETTINGS["tools"], value)
            elif not isinstance(value, dict):
                raise ConfigFileError(f"{config.where}: {TOOLS_TABLE}.{name}: expected a table of per-tool "
                                      f"settings (or {TOOLS_TABLE}.{TOOLS_SOURCE} = the tools file)")
            else:
                where = config.tool_where(name)
                config.tools[name] = {key: _checked(config, where, key, _known(where, key, per_tool=True), v)
                                      for key, v in value.items()}
    for key, value in data.items():
        if (key in (TOOLS_TABLE, *POLICY_TABLES) and isinstance(value, dict)) or key == "formats_from":
            continue
        config.values[key] = _checked(config, config.where, key, _known(config.where, key), value)


def _known(where: str, key: str, *, per_tool: bool = False) -> Setting:
    names = [s.name for s in SETTINGS.values() if s.per_tool or not per_tool]
    if key in SETTINGS and key in names:
        return SETTINGS[key]
    if key in SETTINGS:
        raise ConfigFileError(f"{where}: {key!r} cannot be set per tool; per-tool keys: {', '.join(names)}")
    close = difflib.get_close_matches(key, names, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise ConfigFileError(f"{where}: unknown key {key!r}{hint}; known keys: {', '.join(names)}")


def _checked(config: Config, where: str, key: str, setting: Setting, value: Any) -> Any:
    try:
        value = setting.check(value)
    except ValueError:
        expected = setting.expected
        if setting.name == "formats":
            expected += f" ({_format_names()})"
        raise ConfigFileError(f"{where}: {key}: expected {expected}, got {_describe(value)}") from None
    if setting.path and config.path is not None:
        value = [_resolve(config.path.parent, v) for v in value] if isinstance(value, list) \
            else _resolve(config.path.parent, value)
    return value


def _describe(value: Any) -> str:
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "table"}.get(type(value), type(value).__name__)
    shown = repr(value)
    return f"{kind} {shown if len(shown) <= 40 else shown[:37] + '...'}"


def _resolve(base: Path, value: str) -> str:
    """A path relative to the config file's directory; signatures and M:A references unchanged."""
    if SIGNATURE_RE.match(value) or os.path.isabs(value):
        return value
    candidate = base / value
    if ":" in value and not candidate.exists():
        return value  # M:A (pydantic models), not a file
    return _shown(candidate.resolve() if candidate.exists() else candidate)


def ignored_signatures(entries: Any) -> set[str]:
    """The signatures an ``ignore`` setting names: each entry is a signature or a file of them
    (one per line; blank lines and ``#`` comments skipped)."""
    found: set[str] = set()
    for entry in entries or ():
        if SIGNATURE_RE.match(entry):
            found.add(entry)
            continue
        try:
            lines = Path(entry).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigFileError(f"ignore: {entry}: not a signature (verdict-<12 hex>) and not a readable "
                                  f"file ({exc.strerror or exc})") from None
        for number, line in enumerate(lines, 1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            if not SIGNATURE_RE.match(text):
                raise ConfigFileError(f"{entry}:{number}: {text!r} is not a signature (verdict-<12 hex>)")
            found.add(text)
    return found


__all__ = ["CONFIG_FILE", "Config", "ConfigFileError", "SETTINGS", "Setting", "Value", "find_config",
           "ignored_signatures", "load_config"]
