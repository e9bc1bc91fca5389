"""The loop's declared policy: what it promises, with defaults that match common practice.

A policy is read from a TOML file (``--policy FILE``): its ``[tool.toolfuzz.agent]`` table when it
has one (so it can live in ``pyproject.toml``), else its top-level keys. Without ``--policy``, a
``[tool.toolfuzz.agent]`` table in ``./pyproject.toml`` is used when there is one; otherwise the
defaults. Every key is optional::

    [tool.toolfuzz.agent]
    max_turns = 10                   # model requests per user input
    max_tool_calls = 30              # tool executions per user input
    duplicates = "forbid"            # "forbid": an identical call (JSON-equal arguments) never runs twice
    convergence = 3                  # stop after this many identical tool results in a row (0: no rule)
    must_notice_chain_break = false  # a call that uses nothing from the last result must not run
    errors = []                      # exception types run() may raise ("ValueError", "mypkg.AgentError");
                                     # a subclass or a re-export of one counts (resolved where the loop runs)
    validates_calls = true           # false: the loop promises no validation (unvalidated_execution off)

A key that is not one of these, or a value of the wrong type, is a :class:`PolicyError` — one line
naming the file, the table, the key and what was expected (the CLI exits 2).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, Optional

from fuzzer.harnesses.agent.trace import Caps
from fuzzer.datafiles import read_toml
from fuzzer.engine.exception_names import declared_by, written
from strategies.errors import ToolfuzzError

TABLE = "[tool.toolfuzz.agent]"
DUPLICATE_RULES = ("forbid", "allow")


class PolicyError(ToolfuzzError, ValueError):
    """A policy file that cannot be read, or a key with a value of the wrong type."""


@dataclass(frozen=True)
class AgentPolicy:
    """What the loop promises (see the module docstring for each key)."""

    max_turns: int = 10
    max_tool_calls: int = 30
    duplicates: str = "forbid"
    convergence: int = 3
    must_notice_chain_break: bool = False
    errors: tuple = ()
    validates_calls: bool = True
    #: Where the policy came from ("defaults", a file and table): shown, never compared.
    source: str = field(default="defaults", compare=False)

    @property
    def caps(self) -> Caps:
        """Where an episode is stopped: the first request or execution past the policy."""
        return Caps(max_turns=self.max_turns, max_tool_calls=self.max_tool_calls)

    def allows(self, exception: str) -> bool:
        """May run() raise this exception type (a qualified name), by the names as written?"""
        return bool(written(self.errors, [exception]))

    def declares(self, error: Optional[dict]) -> bool:
        """Whether an error run() raised, as the worker described it, is one ``errors`` declares:
        an instance of a class a name resolved to there (re-exports and subclasses included;
        :mod:`fuzzer.engine.exception_names`)."""
        return declared_by(self.errors, error)

    def to_json(self, *, compact: bool = False) -> dict:
        """Every key (``compact``: only those that differ from the defaults)."""
        data = asdict(self)
        data.pop("source")
        data["errors"] = list(self.errors)
        if compact:
            defaults = AgentPolicy().to_json()
            data = {k: v for k, v in data.items() if v != defaults[k]}
        return data

    @classmethod
    def from_json(cls, data: Any, *, source: str = "stored policy") -> "AgentPolicy":
        if not isinstance(data, dict):
            raise PolicyError(f"{source}: a policy must be a table, not {type(data).__name__}")
        return _build(data, source, "")


def _positive(value: Any) -> bool:
    return type(value) is int and value >= 1


def _convergence(value: Any) -> bool:
    return type(value) is int and (value == 0 or value >= 2)


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


#: key -> (is the value acceptable, what is expected, in words)
_KEYS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "max_turns": (_positive, "a positive integer"),
    "max_tool_calls": (_positive, "a positive integer"),
    "duplicates": (lambda v: v in DUPLICATE_RULES, f"one of {', '.join(repr(r) for r in DUPLICATE_RULES)}"),
    "convergence": (_convergence, "0 (no rule) or an integer >= 2"),
    "must_notice_chain_break": (lambda v: type(v) is bool, "true or false"),
    "errors": (_names, "a list of exception type names"),
    "validates_calls": (lambda v: type(v) is bool, "true or false"),
}
assert set(_KEYS) == {f.name for f in fields(AgentPolicy)} - {"source"}


def _kind(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string", list: "array",
            dict: "table"}.get(type(value), type(value).__name__)


def _build(table: dict, source: str, where: str) -> AgentPolicy:
    prefix = f"{source}: {where + ' ' if where else ''}"
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            close = difflib.get_close_matches(str(key), list(_KEYS), n=1)
            hint = f"did you mean {close[0]}?" if close else f"known keys: {', '.join(_KEYS)}"
            raise PolicyError(f"{prefix}unknown key {key!r}; {hint}")
        ok, expected = _KEYS[key]
        if not ok(value):
            raise PolicyError(f"{prefix}{key}: expected {expected}, got {value!r} ({_kind(value)})")
        values[key] = tuple(value) if key == "errors" else value
    return AgentPolicy(**values, source=f"{source} {where}".strip())


def _read_toml(path: str) -> dict:
    return read_toml(path, lambda reason: PolicyError(f"{path}: {reason}"))


def load_policy(path: Optional[str] = None, *, cwd: Optional[str] = None) -> AgentPolicy:
    """The policy in ``path`` (see the module docstring); with no path, ``./pyproject.toml``'s
    ``[tool.toolfuzz.agent]`` table if there is one, else the defaults."""
    if path is None:
        candidate = os.path.join(cwd or os.getcwd(), "pyproject.toml")
        if not os.path.isfile(candidate):
            return AgentPolicy()
        table = _agent_table(_read_toml(candidate), "pyproject.toml")
        return _build(table, "pyproject.toml", TABLE) if table is not None else AgentPolicy()
    data = _read_toml(path)
    table = _agent_table(data, path)
    if table is not None:
        return _build(table, path, TABLE)
    if "tool" in data or "project" in data:
        raise PolicyError(f"{path}: no {TABLE} table (a policy file holds that table or the keys at top level)")
    return _build(data, path, "")


def _agent_table(data: dict, source: str) -> Optional[dict]:
    table = data.get("tool", {})
    for key in ("toolfuzz", "agent"):
        table = table.get(key) if isinstance(table, dict) else None
        if table is None:
            return None
    if not isinstance(table, dict):
        raise PolicyError(f"{source}: {TABLE} must be a table, not {_kind(table)}")
    return table


__all__ = ["AgentPolicy", "DUPLICATE_RULES", "PolicyError", "load_policy"]
