"""A well-built tool executor, in the style the resilience guides describe.

* **Validation first** — every call is checked before anything runs: an unknown tool or arguments
  that fail the tool's pydantic model (built from the tool's JSON Schema, strict mode, extra keys
  forbidden) get a structured error, and the tool is never invoked.
* **Retries only for transient failures** — tenacity, ``stop_after_attempt`` plus a deadline that
  accounts for the next wait, exponential backoff with jitter, and ``Retry-After`` honoured
  (seconds or an HTTP date) up to a cap; a longer ``Retry-After`` ends the retries. Timeouts,
  connection errors, 429 and 5xx are transient; 4xx, malformed results and the tool's own bugs are
  not. A tool that is not idempotent is retried only when the request surely did not arrive
  (connection refused, 429, 503), never after a timeout that may hide a committed side effect.
* **A circuit breaker per tool** — pybreaker, opened by consecutive transient failures (business
  errors such as 4xx do not count), tried again after its reset window.
* **A structured fallback** — every failure becomes ``{"error": {...}}``, never an exception, and
  never with the tool's error message in it (it may carry a secret); logs name the exception type
  only.

Run it with ``fuzz executor --executor fuzzer.targets.executor_robust:make_executor``. Its defaults
are toolfuzz's default policy (stamina's retry defaults, pybreaker's breaker defaults);
:func:`make_patient_executor` waits 2, 4, 8 and 16 s between 5 attempts (30 s of backoff).
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional, Union

import pybreaker
import tenacity
from pydantic import AfterValidator, ConfigDict, Field, ValidationError, create_model
from typing_extensions import Annotated

log = logging.getLogger(__name__)

#: HTTP statuses worth retrying, and those after which even a non-idempotent call may be
#: retried (the service says it did not process the request).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
SAFE_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryConfig:
    max_attempts: int = 10
    deadline: float = 45.0
    initial: float = 0.1
    multiplier: float = 2.0
    max_wait: float = 5.0
    jitter: float = 1.0
    retry_after_cap: float = 60.0
    fail_max: int = 5
    reset_timeout: float = 60.0


DEFAULT = RetryConfig()
PATIENT = RetryConfig(max_attempts=5, deadline=120.0, initial=2.0, max_wait=16.0, jitter=0.0)


@dataclass(frozen=True)
class Failure:
    """What an exception means for retrying."""

    label: str
    transient: bool
    safe: bool = False  # the request surely did not reach the service
    retry_after: Optional[float] = None


class RobustExecutor:
    retry_statuses = RETRY_STATUSES

    def __init__(self, tools: dict, config: RetryConfig = DEFAULT):
        self.tools = dict(tools)
        self.config = config
        self.breakers: dict = {}  # one per tool, made on first use
        self._classified: tuple = (None, None)

    # -- the entry point -------------------------------------------------------------------------
    def execute_tool(self, name: str, arguments: Any) -> Any:
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return error("unknown_tool", f"there is no tool named {str(name)[:80]!r}", tool=None)
        try:
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be an object")
            validated = model_for(getattr(tool, "schema", {})).model_validate(arguments, strict=True)
        except (ValidationError, ValueError) as exc:
            return error("invalid_arguments", _validation_summary(exc), tool=name)
        kwargs = validated.model_dump(mode="json", by_alias=True, exclude_unset=True)
        idempotent = bool(getattr(tool, "idempotent", False))
        breaker = self.breakers.get(name)
        if breaker is None:
            breaker = self.breakers[name] = pybreaker.CircuitBreaker(
                fail_max=self.config.fail_max, reset_timeout=self.config.reset_timeout, name=name,
                exclude=[lambda exc: not self.classify(exc).transient])  # 4xx and bugs do not count
        try:
            for attempt in self._retrying(idempotent):
                with attempt:
                    return breaker.call(tool, **kwargs)
        except pybreaker.CircuitBreakerError:
            log.warning("tool %s: circuit open", name)
            return error("circuit_open", "the service is failing; try again later", tool=name, retryable=True)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a structured error
            failure = self.classify(exc)
            log.warning("tool %s failed: %s", name, type(exc).__name__)
            return error(failure.label, "the tool failed", tool=name, retryable=failure.transient)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- retrying --------------------------------------------------------------------------------
    def _retrying(self, idempotent: bool) -> tenacity.Retrying:
        c = self.config

        def should_retry(exc: BaseException) -> bool:
            failure = self.classify(exc)
            return failure.transient and (idempotent or failure.safe)

        def wait(state: tenacity.RetryCallState) -> float:
            backoff = min(c.initial * c.multiplier ** (state.attempt_number - 1), c.max_wait)
            backoff += random.uniform(0, c.jitter) if c.jitter else 0.0
            retry_after = self.classify(state.outcome.exception()).retry_after if state.outcome else None
            return max(backoff, retry_after or 0.0)

        def past_deadline(state: tenacity.RetryCallState) -> bool:
            since = state.seconds_since_start or 0.0
            return since + state.upcoming_sleep > c.deadline

        def retry_after_too_long(state: tenacity.RetryCallState) -> bool:
            exc = state.outcome.exception() if state.outcome else None
            retry_after = self.classify(exc).retry_after if exc is not None else None
            return retry_after is not None and retry_after > c.retry_after_cap

        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(c.max_attempts) | tenacity.stop_any(past_deadline, retry_after_too_long),
            wait=wait, retry=tenacity.retry_if_exception(should_retry), reraise=True, sleep=time.sleep)

    def classify(self, exc: BaseException) -> Failure:
        """Transient or not, safe to repeat or not, and any Retry-After, for any client library
        (the breaker, the retry test, the wait and the stop all ask about the same exception)."""
        last, failure = self._classified
        if last is exc:
            return failure
        failure = self._classify(exc)
        self._classified = (exc, failure)
        return failure

    def _classify(self, exc: BaseException) -> Failure:
        if isinstance(exc, pybreaker.CircuitBreakerError):
            return Failure("circuit_open", transient=False)
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None) or getattr(exc, "status_code", None)
        if isinstance(status, int):
            headers = getattr(response, "headers", None) or getattr(exc, "headers", None) or {}
            return Failure(f"http_{status}", transient=status in self.retry_statuses, safe=status in SAFE_STATUSES,
                           retry_after=parse_retry_after(headers.get("Retry-After") if hasattr(headers, "get") else None))
        name = type(exc).__name__
        if _refused(exc):
            return Failure("connection_refused", transient=True, safe=True)
        if isinstance(exc, TimeoutError) or _is(exc, "requests.exceptions.Timeout", "httpx.TimeoutException"):
            return Failure("timeout", transient=True)
        if isinstance(exc, ConnectionError) or _is(exc, "requests.exceptions.ConnectionError", "httpx.TransportError"):
            return Failure("connection_error", transient=True)
        return Failure(f"tool_error:{name}", transient=False)


def make_executor(tools: dict) -> RobustExecutor:
    return RobustExecutor(tools)


def make_patient_executor(tools: dict) -> RobustExecutor:
    """5 attempts, waits of 2, 4, 8, 16 s: 30 s of backoff (see the README's virtual-time demo)."""
    return RobustExecutor(tools, PATIENT)


def error(kind: str, message: str, *, tool: Optional[str], retryable: bool = False) -> dict:
    """The structured error every failure becomes (never the tool's own message)."""
    return {"error": {"type": kind, "message": message, "tool": tool, "retryable": retryable}}


# ---------------------------------------------------------------------------------------------
# Exceptions of optional client libraries


def _is(exc: BaseException, *dotted: str) -> bool:
    for ref in dotted:
        module, _, name = ref.rpartition(".")
        import sys

        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None and isinstance(exc, cls):
            return True
    return False


def _refused(exc: BaseException) -> bool:
    """Connection refused: the request never left (``httpx.ConnectError``, or a refusal anywhere
    in the exception's causes, as ``requests`` wraps it)."""
    if _is(exc, "httpx.ConnectError"):
        return True
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ConnectionRefusedError):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
        seen += 1
    return False


def parse_retry_after(value: Any) -> Optional[float]:
    """``Retry-After``: delay-seconds or an HTTP date (RFC 9110 §10.2.3), as seconds from now."""
    if value is None:
        return None
    text = str(value).strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _validation_summary(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['type']}" for e in exc.errors()[:5]]
        return "invalid arguments: " + "; ".join(parts)
    return f"invalid arguments: {exc}"


# ---------------------------------------------------------------------------------------------
# Pydantic models from the tools' JSON Schemas

_MODELS: dict = {}
_SUPPORTED = {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "minLength",
              "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
              "minItems", "maxItems", "uniqueItems", "anyOf", "description", "title", "default", "examples"}


def model_for(schema: Any) -> Any:
    """A strict pydantic model of an arguments schema (cached: executors are built often)."""
    hit = _MODELS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    key = json.dumps(schema, sort_keys=True)
    model = _MODELS.get(key)
    if model is None:
        model = _MODELS[key] = _object_model(schema if isinstance(schema, dict) else {}, "Arguments")
    _MODELS[id(schema)] = (schema, model)
    return model


def _object_model(schema: dict, name: str) -> Any:
    required = set(schema.get("required", []))
    fields = {}
    for i, (prop, sub) in enumerate((schema.get("properties") or {}).items()):
        annotation = _annotation(sub, f"{name}_{i}")
        # positional field names, the property names as aliases: no clash with BaseModel's own
        fields[f"f{i}"] = (annotation, Field(alias=prop) if prop in required else Field(default=None, alias=prop))
    extra = "forbid" if schema.get("additionalProperties") is False else "allow"
    model = create_model(name, __config__=ConfigDict(strict=True, extra=extra), **fields)
    checks = {k: v for k, v in schema.items()
              if k not in _SUPPORTED or (k == "additionalProperties" and isinstance(v, dict))
              or (k == "required" and not set(v) <= set(schema.get("properties") or {}))}
    if checks:  # what this converter does not translate, the schema itself checks
        return Annotated[model, AfterValidator(_schema_check(checks))]
    return model


def _annotation(schema: Any, name: str) -> Any:
    if not isinstance(schema, dict) or not schema:
        return Any
    extra = {k: v for k, v in schema.items() if k not in _SUPPORTED}
    validators = []
    if "enum" in schema or "const" in schema or extra:
        validators.append(_schema_check({k: schema[k] for k in ("enum", "const") if k in schema} | extra))
    if "anyOf" in schema:
        base: Any = Union[tuple(_annotation(s, f"{name}_{i}") for i, s in enumerate(schema["anyOf"]))]  # type: ignore[misc]
    else:
        kinds = schema.get("type")
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
        options = [_typed(kind, schema, name) for kind in kinds] or [Any]
        base = options[0] if len(options) == 1 else Union[tuple(options)]  # type: ignore[misc]
    for check in validators:
        base = Annotated[base, AfterValidator(check)]
    return base


def _typed(kind: str, schema: dict, name: str) -> Any:
    if kind == "string":
        checks = []
        if "pattern" in schema:
            pattern = re.compile(schema["pattern"])
            checks.append(_predicate(lambda v: pattern.search(v) is not None, "does not match the pattern"))
        if "format" in schema:
            from jsonschema import FormatChecker

            checker, fmt = FormatChecker(), schema["format"]
            checks.append(_predicate(lambda v: checker.conforms(v, fmt), f"is not a valid {fmt}"))
        out: Any = Annotated[str, Field(min_length=schema.get("minLength"), max_length=schema.get("maxLength"))]
        for c in checks:
            out = Annotated[out, AfterValidator(c)]
        return out
    if kind in ("integer", "number"):
        bounds = Field(ge=schema.get("minimum"), le=schema.get("maximum"), gt=schema.get("exclusiveMinimum"),
                       lt=schema.get("exclusiveMaximum"))
        return Annotated[int if kind == "integer" else float, bounds]
    if kind == "boolean":
        return bool
    if kind == "null":
        return type(None)
    if kind == "array":
        items = _annotation(schema.get("items", {}), f"{name}_item")
        out = Annotated[list[items], Field(min_length=schema.get("minItems"), max_length=schema.get("maxItems"))]  # type: ignore[valid-type]
        if schema.get("uniqueItems"):
            out = Annotated[out, AfterValidator(_predicate(
                lambda v: len({json.dumps(x, sort_keys=True) for x in v}) == len(v), "has duplicate items"))]
        return out
    if kind == "object":
        return _object_model(schema, name) if "properties" in schema else dict[str, Any]
    return Any


def _predicate(test: Any, message: str) -> Any:
    def check(value: Any) -> Any:
        if not test(value):
            raise ValueError(message)
        return value

    return check


def _schema_check(schema: dict) -> Any:
    from jsonschema import Draft202012Validator, FormatChecker

    validator = Draft202012Validator(schema, format_checker=FormatChecker())

    def check(value: Any) -> Any:
        data = value.model_dump(mode="json", by_alias=True, exclude_unset=True) if hasattr(value, "model_dump") else value
        error_found = next(iter(validator.iter_errors(data)), None)
        if error_found is not None:
            raise ValueError(error_found.validator)
        return value

    return check
