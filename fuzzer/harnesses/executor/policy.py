"""The policy: what the executor promises, which the oracles check.

Declared in a TOML file (``--policy FILE``: its top level, or its ``[tool.toolfuzz.executor]``
table) or in ``[tool.toolfuzz.executor]`` of ``./pyproject.toml``; without either, the defaults.
The shape follows tenacity's three parts — *stop* (``max_attempts``, ``deadline``), *wait*
(``[backoff]``), *retry* (``retry_on``) — plus pybreaker's breaker::

    max_attempts = 10                  # tool invocations per call, first one included (false: no limit)
    deadline = 45.0                    # seconds a call may take, retries and waits included (false: none)
    retry_on = ["timeout", "connection_refused", ...]   # transient fault kinds: retried
                                       # ("timeout:httpx": only when raised by that library)
    retry_non_idempotent_on = ["connection_refused", "http_429", "http_503"]
    non_idempotent = "auto"            # or a list of tool names
    raises = []                        # exception types the executor may raise
    fallback_schema = {...}            # JSON Schema of its structured error (or a path to one)
    validates_calls = true             # false: it promises no validation (unvalidated_execution off)
    redacts_secrets = true             # false: it promises no redaction (leaked_secret off)

    [backoff]                          # wait before attempt k+1: min(initial * multiplier**(k-1), max)
    initial = 0.1                      #   + up to `jitter` seconds, or Retry-After if longer
                                       #   (full_jitter = true: anywhere from 0 to that)
    multiplier = 2.0
    max = 5.0                          # false: unbounded
    jitter = 1.0
    honour_retry_after = true
    retry_after_cap = 60.0             # a longer Retry-After may end the retries instead

    [breaker]                          # per tool: open after fail_max consecutive failures
    enabled = true
    fail_max = 5
    reset_timeout = 60.0
    half_open_trials = 1

The defaults are stamina's (10 attempts, 45 s, 0.1 s initial wait doubling to 5 s, 1 s jitter) and
pybreaker's (5 failures, 60 s), the libraries that set common practice. ``non_idempotent = "auto"``
treats tools whose name starts with a verb that changes the world (send, book, create, delete,
pay, …) as non-idempotent; ``fuzz executor --explain`` prints what that resolved to.

Errors name the file, the key and what was expected (:class:`PolicyError`, exit status 2).
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
from dataclasses import asdict, dataclass, field, fields
from collections.abc import Mapping
from typing import Any, Iterable, Optional

from fuzzer.datafiles import read_json, read_toml
from fuzzer.engine.exception_names import declared_by, normalized, written
from fuzzer.harnesses.executor.faults import FAULTS, FLAVORS, safe_kinds, transient_kinds
from strategies.errors import ToolfuzzError

TABLE = "tool.toolfuzz.executor"

#: The structured error a fallback must be, unless the policy says otherwise: an object with an
#: ``error`` (a message or an object), the shape OpenAI/Anthropic tool results and MCP's
#: ``isError`` results are usually mapped to.
DEFAULT_FALLBACK_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": ["string", "object"]}},
}

#: First words of tool names that change the world (``non_idempotent = "auto"``).
MUTATING_VERBS = ("add", "append", "book", "buy", "cancel", "charge", "create", "delete", "deposit",
                  "insert", "order", "pay", "post", "publish", "purchase", "put", "refund", "remove",
                  "reserve", "schedule", "send", "set", "submit", "transfer", "update", "upload", "withdraw",
                  "write")


class PolicyError(ToolfuzzError, ValueError):
    """A policy file that cannot be used; the message names the file, the key and the expectation."""


@dataclass(frozen=True)
class Backoff:
    initial: float = 0.1
    multiplier: float = 2.0
    max: Optional[float] = 5.0  # None: unbounded (backoff's expo without max_value)
    jitter: float = 1.0
    honour_retry_after: bool = True
    retry_after_cap: float = 60.0
    #: "full jitter" (tenacity's wait_random_exponential, AWS's advice): any wait up to the base
    full_jitter: bool = False

    def base(self, k: int) -> float:
        """The un-jittered wait before attempt ``k + 1`` (after ``k`` attempts)."""
        try:
            wait = self.initial * self.multiplier ** max(0, k - 1)
        except OverflowError:
            wait = float("inf")
        return wait if self.max is None else min(wait, self.max)


@dataclass(frozen=True)
class Breaker:
    enabled: bool = True
    fail_max: int = 5
    reset_timeout: float = 60.0
    half_open_trials: int = 1
    #: fault kinds that count as failures; None = the policy's retry_on (pybreaker users exclude
    #: business errors such as 4xx, which then count as successes and reset the count)
    counts: Optional[tuple] = None


@dataclass(frozen=True)
class Policy:
    max_attempts: Optional[int] = 10  # None: no attempt limit (backoff's max_time alone)
    deadline: Optional[float] = 45.0
    retry_on: tuple = field(default_factory=transient_kinds)
    retry_non_idempotent_on: tuple = field(default_factory=safe_kinds)
    non_idempotent: Any = "auto"  # "auto" or a tuple of tool names
    raises: tuple = ()
    #: it promises to validate calls against the tools' schemas (unvalidated_execution)
    validates_calls: bool = True
    #: it promises not to let a tool's secret out (leaked_secret)
    redacts_secrets: bool = True
    fallback_schema: Any = field(default_factory=lambda: dict(DEFAULT_FALLBACK_SCHEMA))
    #: fault kinds drawn (default: every kind); "ok" is always possible
    faults: tuple = field(default_factory=lambda: tuple(FAULTS))
    #: libraries the tools raise from (``via``); those not installed are skipped
    error_types: tuple = FLAVORS
    #: HTTP mode: the JSON body a healthy service answers, per tool (default {"ok": true})
    http_responses: dict = field(default_factory=dict)
    #: "auto": async tools for an async executor; true / false to force
    async_tools: Any = "auto"
    backoff: Backoff = field(default_factory=Backoff)
    breaker: Breaker = field(default_factory=Breaker)
    #: where it came from, for --explain and the report ("defaults" or a path)
    source: str = field(default="defaults", compare=False)

    # -- derived -----------------------------------------------------------------------------------
    @functools.cached_property
    def _retried(self) -> frozenset:
        """``retry_on`` with the kinds a caller cannot tell apart from one in it: a timeout whose
        side effect happened is, to the executor, the timeout it lists (FAULTS' category). Items
        are ``kind`` (raised by any library) or ``kind:via`` (by that library only)."""
        items = set(self.retry_on)
        for item in self.retry_on:
            kind, _, via = item.partition(":")
            if kind in FAULTS and FAULTS[kind].category == "timeout":
                items.update(name + (f":{via}" if via else "") for name, spec in FAULTS.items()
                             if spec.category == "timeout")
        return frozenset(items)

    @functools.cached_property
    def _retried_kinds(self) -> frozenset:
        return frozenset(item.partition(":")[0] for item in self._retried)

    def transient(self, kind: str, via: Optional[str] = None) -> bool:
        """Whether the policy retries ``kind`` raised through library ``via`` (``builtin``,
        ``requests``, ``httpx``); with no ``via``, whether it retries ``kind`` through any."""
        retried = self._retried
        if via is None:
            return kind in self._retried_kinds
        return kind in retried or f"{kind}:{via}" in retried

    def counts_for_breaker(self, kind: str, via: Optional[str] = None) -> bool:
        return kind in self.breaker.counts if self.breaker.counts is not None else self.transient(kind, via or "builtin")

    def is_idempotent(self, tool: str) -> bool:
        return tool not in self.non_idempotent_tools([tool])

    def non_idempotent_tools(self, names: Iterable[str]) -> list[str]:
        names = list(names)
        if self.non_idempotent == "auto":
            return [n for n in names if _first_word(n) in MUTATING_VERBS]
        return [n for n in names if n in self.non_idempotent]

    def declared(self, mro: Iterable[str]) -> bool:
        """Whether an exception with these qualified class names (its MRO) may be raised, by the
        names as written (a bare name matches that class in any module); where the worker resolved
        them, :meth:`declares` reads its answer instead."""
        return bool(written(self.raises, mro))

    def declares(self, exc: Optional[dict]) -> bool:
        """Whether an escaped exception, as the worker described it, is one ``raises`` declares:
        an instance of a class a name resolved to in the worker (re-exports and subclasses
        included, :mod:`fuzzer.engine.exception_names`)."""
        return declared_by(self.raises, exc)

    @classmethod
    def from_json(cls, data: Any, source: str = "the entry's policy") -> "Policy":
        """The policy :meth:`to_json` wrote (an executor corpus entry keeps the one it was found under)."""
        try:
            data = dict(data)
            backoff, breaker = Backoff(**data.pop("backoff", {})), dict(data.pop("breaker", {}))
            if breaker.get("counts") is not None:
                breaker["counts"] = tuple(breaker["counts"])
            for key in ("retry_on", "retry_non_idempotent_on", "raises", "faults", "error_types"):
                if key in data:
                    data[key] = tuple(data[key])
            if isinstance(data.get("non_idempotent"), list):
                data["non_idempotent"] = tuple(data["non_idempotent"])
            return cls(**data, backoff=backoff, breaker=Breaker(**breaker), source=source)
        except (TypeError, ValueError) as exc:
            raise PolicyError(f"{source}: not a policy toolfuzz wrote ({exc})") from None

    def to_json(self) -> dict:
        data = asdict(self)
        data.pop("source")
        for key in ("retry_on", "retry_non_idempotent_on", "raises", "faults", "error_types"):
            data[key] = list(data[key])
        if isinstance(data["non_idempotent"], tuple):
            data["non_idempotent"] = list(data["non_idempotent"])
        if data["breaker"]["counts"] is not None:
            data["breaker"]["counts"] = list(data["breaker"]["counts"])
        return data


@functools.lru_cache(maxsize=4096)
def _first_word(name: str) -> str:
    """The first word of a tool name, lowercased (cached: the oracles ask about every call)."""
    words = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)
    return words[0].lower() if words else name.lower()


# ---------------------------------------------------------------------------------------------
# Loading


def load_policy(path: Optional[str] = None, *, cwd: Optional[str] = None) -> Policy:
    """The policy in effect: ``path`` if given, else ``[tool.toolfuzz.executor]`` of
    ``cwd/pyproject.toml`` if it has that table, else the defaults."""
    if path is None:
        candidate = os.path.join(cwd or os.getcwd(), "pyproject.toml")
        if os.path.isfile(candidate):
            data = _read_toml(candidate)
            table = _dig(data, TABLE)
            if table is not None:
                return policy_from_mapping(table, source=f"{candidate} [{TABLE}]", base_dir=os.path.dirname(candidate))
        return Policy()
    if not os.path.exists(path):
        raise PolicyError(f"{path}: no such policy file")
    if os.path.isdir(path):
        raise PolicyError(f"{path}: is a directory, expected a TOML policy file")
    data = _read_toml(path)
    table = _dig(data, TABLE)
    if table is None:
        if "tool" in data and os.path.basename(path) == "pyproject.toml":
            raise PolicyError(f"{path}: no [{TABLE}] table")
        table, where = data, path
    else:
        where = f"{path} [{TABLE}]"
    return policy_from_mapping(table, source=where, base_dir=os.path.dirname(os.path.abspath(path)))


def _read_toml(path: str) -> dict:
    return read_toml(path, lambda reason: PolicyError(f"{path}: {reason}"))


def _dig(data: Mapping, dotted: str) -> Optional[Mapping]:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, Mapping) else None


class _Reader:
    """Typed access to one table, every error naming the source and the dotted key."""

    def __init__(self, table: Mapping, source: str, prefix: str, known: Iterable[str]):
        self.table, self.source, self.prefix = table, source, prefix
        known = list(known)
        for key in table:
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(known)})"
                raise PolicyError(f"{source}: unknown key {self.name(key)!r}{hint}")

    def name(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def fail(self, key: str, expected: str, value: Any) -> PolicyError:
        return PolicyError(f"{self.source}: {self.name(key)}: expected {expected}, got "
                           f"{_type_name(value)} {_short(value)}")

    def number(self, key: str, default: Any, *, minimum: float = 0.0, integer: bool = False,
               optional: bool = False) -> Any:
        if key not in self.table:
            return default
        value = self.table[key]
        if optional and value is False:
            return None
        kind = "an integer" if integer else "a number of seconds"
        expected = f"{kind} >= {minimum:g}" + (" (or false for none)" if optional else "")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
            raise self.fail(key, expected, value)
        if value < minimum or value != value or value == float("inf"):
            raise self.fail(key, expected, value)
        return int(value) if integer else float(value)

    def boolean(self, key: str, default: bool) -> bool:
        if key not in self.table:
            return default
        value = self.table[key]
        if not isinstance(value, bool):
            raise self.fail(key, "true or false", value)
        return value

    def names(self, key: str, default: tuple, *, known: Optional[Iterable[str]] = None, what: str = "name") -> tuple:
        if key not in self.table:
            return default
        value = self.table[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, f"a list of {what} strings", value)
        if known is not None:
            known = list(known)
            for item in value:
                if item not in known:
                    close = difflib.get_close_matches(item, known, n=3)
                    hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(known)}"
                    raise PolicyError(f"{self.source}: {self.name(key)}: unknown {what} {item!r}{hint}")
        return tuple(value)

    def table_of(self, key: str) -> Mapping:
        value = self.table.get(key, {})
        if not isinstance(value, Mapping):
            raise self.fail(key, "a table", value)
        return value


def policy_from_mapping(table: Mapping, *, source: str = "<policy>", base_dir: Optional[str] = None) -> Policy:
    """Validate a decoded policy table; :class:`PolicyError` names the first bad key."""
    top = _Reader(table, source, "", [f.name for f in fields(Policy) if f.name != "source"])
    kinds = list(FAULTS)
    defaults = Policy()
    backoff_table = _Reader(top.table_of("backoff"), source, "backoff.", [f.name for f in fields(Backoff)])
    breaker_table = _Reader(top.table_of("breaker"), source, "breaker.", [f.name for f in fields(Breaker)])
    backoff = Backoff(
        initial=backoff_table.number("initial", Backoff.initial),
        multiplier=backoff_table.number("multiplier", Backoff.multiplier, minimum=1.0),
        max=backoff_table.number("max", Backoff.max, optional=True),
        jitter=backoff_table.number("jitter", Backoff.jitter),
        honour_retry_after=backoff_table.boolean("honour_retry_after", Backoff.honour_retry_after),
        retry_after_cap=backoff_table.number("retry_after_cap", Backoff.retry_after_cap),
        full_jitter=backoff_table.boolean("full_jitter", Backoff.full_jitter),
    )
    if backoff.max is not None and backoff.max < backoff.initial:
        raise PolicyError(f"{source}: backoff.max: expected a number of seconds >= backoff.initial "
                          f"({backoff.initial:g}), got {backoff.max:g}")
    breaker = Breaker(
        enabled=breaker_table.boolean("enabled", Breaker.enabled),
        fail_max=breaker_table.number("fail_max", Breaker.fail_max, minimum=1, integer=True),
        reset_timeout=breaker_table.number("reset_timeout", Breaker.reset_timeout),
        half_open_trials=breaker_table.number("half_open_trials", Breaker.half_open_trials, minimum=1, integer=True),
        counts=breaker_table.names("counts", None, known=kinds, what="fault kind"),  # type: ignore[arg-type]
    )
    non_idempotent: Any = defaults.non_idempotent
    if "non_idempotent" in table:
        value = table["non_idempotent"]
        if value != "auto" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise top.fail("non_idempotent", '"auto" or a list of tool names', value)
        non_idempotent = value if value == "auto" else tuple(value)
    async_tools: Any = table.get("async_tools", "auto")
    if async_tools != "auto" and not isinstance(async_tools, bool):
        raise top.fail("async_tools", '"auto", true or false', async_tools)
    http_responses = table.get("http_responses", {})
    if not isinstance(http_responses, Mapping):
        raise top.fail("http_responses", "a table of tool name = JSON body", http_responses)
    policy = Policy(
        max_attempts=top.number("max_attempts", defaults.max_attempts, minimum=1, integer=True, optional=True),
        deadline=top.number("deadline", defaults.deadline, optional=True),
        retry_on=_retry_rules(top, defaults.retry_on, kinds),
        retry_non_idempotent_on=top.names("retry_non_idempotent_on", defaults.retry_non_idempotent_on,
                                          known=kinds, what="fault kind"),
        non_idempotent=non_idempotent,
        raises=tuple(normalized(n) for n in top.names("raises", (), what="exception type")),
        validates_calls=top.boolean("validates_calls", defaults.validates_calls),
        redacts_secrets=top.boolean("redacts_secrets", defaults.redacts_secrets),
        fallback_schema=_fallback_schema(table, top, base_dir),
        faults=top.names("faults", defaults.faults, known=kinds, what="fault kind"),
        error_types=top.names("error_types", defaults.error_types, known=FLAVORS, what="error type"),
        http_responses=dict(http_responses),
        async_tools=async_tools,
        backoff=backoff,
        breaker=breaker,
        source=source,
    )
    return policy


def _retry_rules(top: _Reader, default: tuple, kinds: list) -> tuple:
    """``retry_on``: fault kinds, each alone (retried whichever library raised it) or as
    ``kind:via`` (retried only when raised by that library: LangGraph's default rule retries an
    ``httpx`` timeout but not a ``requests`` one, which is an ``OSError``)."""
    rules = top.names("retry_on", default, what="fault kind")
    for rule in rules:
        kind, colon, via = rule.partition(":")
        if kind not in kinds:
            close = difflib.get_close_matches(kind, kinds, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(kinds)}"
            raise PolicyError(f"{top.source}: retry_on: unknown fault kind {kind!r}{hint}")
        if colon and via not in FLAVORS:
            raise PolicyError(f"{top.source}: retry_on: {rule!r}: unknown library {via!r} after the colon "
                              f"(known: {', '.join(FLAVORS)})")
    return rules


def _fallback_schema(table: Mapping, top: _Reader, base_dir: Optional[str]) -> Any:
    if "fallback_schema" not in table:
        return dict(DEFAULT_FALLBACK_SCHEMA)
    value = table["fallback_schema"]
    if isinstance(value, str):
        path = value if os.path.isabs(value) else os.path.join(base_dir or os.getcwd(), value)
        value = read_json(path, lambda reason: PolicyError(f"{top.source}: fallback_schema: {path}: {reason}"))
    if not isinstance(value, (Mapping, bool)):
        raise top.fail("fallback_schema", "a JSON Schema (a table) or the path of a JSON file", value)
    from jsonschema.exceptions import SchemaError

    from strategies._internal.schema import validator_for_schema
    from strategies.json_schemas import resolve_pointer, subschemas

    try:
        validator_for_schema(value).check_schema(value)
    except SchemaError as exc:
        raise PolicyError(f"{top.source}: fallback_schema: not a valid JSON Schema ({exc.message})") from None
    refs = [node["$ref"] for node in subschemas(value) if isinstance(node, Mapping) and isinstance(node.get("$ref"), str)]
    for ref in refs:  # jsonschema resolves a $ref only when a value meets it: mid-campaign
        try:
            resolve_pointer(value, ref)
        except (KeyError, TypeError, ValueError):
            raise PolicyError(f"{top.source}: fallback_schema: $ref {ref!r} does not resolve "
                              "(only references inside the schema, '#/...', are supported)") from None
    return dict(value) if isinstance(value, Mapping) else value


def _type_name(value: Any) -> str:
    return {str: "string", bool: "boolean", int: "integer", float: "number", list: "array",
            dict: "table"}.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_against_registry(policy: Policy, tool_names: Iterable[str]) -> None:
    """Tool names the policy mentions must exist (``non_idempotent``, ``http_responses``)."""
    names = list(tool_names)
    mentioned = [("http_responses", name) for name in policy.http_responses]
    if policy.non_idempotent != "auto":
        mentioned += [("non_idempotent", name) for name in policy.non_idempotent]
    for key, name in mentioned:
        if name not in names:
            close = difflib.get_close_matches(name, names, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else f" (tools: {', '.join(names)})"
            raise PolicyError(f"{policy.source}: {key}: unknown tool {name!r}{hint}")


def explain(policy: Policy, tool_names: Iterable[str]) -> list[str]:
    """The policy in effect as TOML lines, each value marked when it is not the default."""
    default = Policy()
    names = list(tool_names)
    lines = [f"# executor policy from {policy.source}", f"[{TABLE}]"]

    def show(key: str, value: Any, base: Any) -> None:
        mark = "" if value == base else "  # set"
        lines.append(f"{key} = {_toml(value)}{mark}")

    for f in fields(Policy):
        if f.name in ("source", "backoff", "breaker"):
            continue
        show(f.name, getattr(policy, f.name), getattr(default, f.name))
    lines.append(f"# non-idempotent tools: {', '.join(policy.non_idempotent_tools(names)) or 'none'}")
    for section, value, base in (("backoff", policy.backoff, default.backoff), ("breaker", policy.breaker, default.breaker)):
        lines.append("")
        lines.append(f"[{TABLE}.{section}]")
        for f in fields(value):
            if f.name == "counts" and value.counts is None:
                lines.append("# counts = the retry_on kinds (the default)")
                continue
            show(f.name, getattr(value, f.name), getattr(base, f.name))
    b = policy.backoff
    waits = ", ".join(f"{b.base(k):g}" for k in range(1, min(policy.max_attempts or 8, 8)))
    lines.append(f"# waits before attempts 2..: {waits or 'none'}{', ...' if policy.max_attempts is None else ''} s "
                 f"(+ up to {b.jitter:g} s jitter)")
    if policy.max_attempts is None:
        lines.append("# max_attempts = false: no attempt limit" + (" (and no deadline)" if policy.deadline is None else ""))
    if b.max is None:
        lines.append("# backoff.max = false: the waits grow without bound")
    if not policy.validates_calls:
        lines.append("# validates_calls = false: unvalidated_execution is not checked")
    if not policy.redacts_secrets:
        lines.append("# redacts_secrets = false: leaked_secret is not checked")
    return lines


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "false"
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


__all__ = ["Backoff", "Breaker", "DEFAULT_FALLBACK_SCHEMA", "Policy", "PolicyError", "check_against_registry",
           "explain", "load_policy", "policy_from_mapping"]
