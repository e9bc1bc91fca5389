"""Faults: what a tool does on one attempt.

A fault is a small typed record, like a toxiproxy "toxic" (STYLE.md §5.4): a registered *kind*
(``timeout``, ``http_429``, ``commit_then_timeout`` …) and a few scalar parameters (``after=5``,
``retry_after=30``, ``via=requests``). Records are easy to print, to store in a corpus entry and to
shrink; what a kind *does* lives here once, in :data:`FAULTS`, and the worker only applies it.

Every kind belongs to a **category** — the words the oracles and the signatures use, so that one
bug ("retries every 4xx") is one signature however many statuses exposed it:

=============  ==========================================================================
success        ok, slow: the tool returns (its side effect happened)
timeout        timeout, commit_then_timeout (the caller cannot tell them apart)
connection     connection_refused (nothing was sent), connection_reset (it may have been)
rate_limit     http_429 with ``Retry-After`` in seconds or as an HTTP date
server_error   http_500, http_502, http_503 (optionally with Retry-After), http_504
client_error   http_400, http_401, http_403, http_404, http_422, secret_error (a 401 whose
               message carries a canary secret)
bad_result     malformed_body (invalid JSON, wrong shape, empty), schema_drift (a field missing
               or renamed): the tool *returns*, but garbage
=============  ==========================================================================

``via`` says which library's exception the tool raises when it fails: ``builtin``
(``TimeoutError``, ``ConnectionRefusedError``, :class:`ToolHTTPError`), ``requests``
(``requests.Timeout``, ``requests.HTTPError`` with a real ``Response``) or ``httpx``
(``httpx.TimeoutException``, ``httpx.HTTPStatusError``). In HTTP mode the transports produce the
failure instead and ``via`` is ignored.

Parameters are drawn from a :class:`~strategies._internal.source.Source` with the simplest value
first, so a shrunk schedule says ``timeout(after=0)``, not ``timeout(after=30)``.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, Callable, Optional

from strategies.errors import ToolfuzzError
from strategies.registry import Registry

CATEGORIES = ("success", "timeout", "connection", "rate_limit", "server_error", "client_error", "bad_result")
#: Libraries a failing tool may raise from (``via``), simplest first.
FLAVORS = ("builtin", "requests", "httpx")

#: Drawn parameter values, simplest first (choices shrink toward index 0).
LATENCIES = (0.5, 2.0, 10.0, 60.0)
TIMEOUT_AFTER = (0.0, 5.0, 30.0)
RETRY_AFTER = (1, 2, 5, 30, 120)


class FaultError(ToolfuzzError, ValueError):
    """A fault record in a corpus entry or scenario file that is not valid; names the field."""


@dataclass(frozen=True)
class Fault:
    """One attempt's fault: ``kind`` (a name in :data:`FAULTS`) and its parameters."""

    kind: str
    params: tuple = ()  # sorted (name, value) pairs of JSON scalars: hashable and printable

    def get(self, name: str, default: Any = None) -> Any:
        for key, value in self.params:
            if key == name:
                return value
        return default

    def __getstate__(self) -> dict:
        """The fields only: a cached ``spec`` holds the kind's functions (scenarios drawn in a
        worker come back pickled, their faults looked up already)."""
        return {"kind": self.kind, "params": self.params}

    @functools.cached_property
    def spec(self) -> "FaultKind":
        """The registered kind (looked up once per record: the worker reads it several times per
        attempt, and a schedule's records are reused across the attempts and scenarios)."""
        return FAULTS[self.kind]

    @functools.cached_property
    def latency(self) -> float:
        """Virtual seconds the attempt takes before it answers or fails (see :func:`latency_of`)."""
        if self.kind == "slow":
            return float(self.get("latency", 0))
        if self.spec.category == "timeout":
            return float(self.get("after", 0))
        return 0.0

    @property
    def is_ok(self) -> bool:
        return self.kind == "ok"

    def describe(self) -> str:
        """``http_429(retry_after=30 as date)``: the kind and its parameters, short."""
        shown = [_show(k, v) for k, v in self.params if k != "via" or v != "builtin"]
        return f"{self.kind}({', '.join(shown)})" if shown else self.kind

    def __str__(self) -> str:
        return self.describe()

    def to_json(self) -> dict:
        return {"kind": self.kind, **dict(self.params)}

    @classmethod
    def from_json(cls, data: Any, where: str = "fault") -> "Fault":
        if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
            raise FaultError(f"{where}: expected an object with a string 'kind', got {data!r:.80}")
        kind = data["kind"]
        if kind not in FAULTS:
            raise FaultError(f"{where}: {FAULTS.unknown_message(kind)}")
        params = []
        for key, value in data.items():
            if key == "kind" or value is None:
                continue
            if value.__class__ not in _SCALARS and not isinstance(value, (str, int, float, bool)):
                raise FaultError(f"{where}.{key}: expected a JSON scalar, got {type(value).__name__}")
            params.append((key, value))
        params.sort()
        return cls(kind, tuple(params))  # what make(kind, **params) builds, without a second lookup


_SCALARS = frozenset({str, int, float, bool})


def make(kind: str, **params: Any) -> Fault:
    """A fault record (``make("http_429", retry_after=30, form="date")``)."""
    FAULTS[kind]
    return Fault(kind, tuple(sorted((k, v) for k, v in params.items() if v is not None)))


OK = Fault("ok")


def _show(key: str, value: Any) -> str:
    if key == "retry_after":
        return f"retry_after={value:g}s"
    if key in ("after", "latency"):
        return f"{key}={value:g}s"
    if key == "canary":
        return "canary"
    return f"{key}={value}"


@dataclass(frozen=True)
class FaultKind:
    """A registered kind of fault: what it is and what the attempt it hits does.

    ``transient``: retrying is the right answer (the default ``retry_on`` of a policy);
    ``safe``: the request surely did not reach the service, so even a non-idempotent tool may be
    retried (the default ``retry_non_idempotent_on``); ``commits``: the side effect happened;
    ``returns``: the tool returns a value (possibly garbage) instead of raising.
    """

    name: str
    category: str
    description: str
    transient: bool = False
    safe: bool = False
    commits: bool = False
    returns: bool = False
    status: Optional[int] = None  # the HTTP status, for HTTP kinds
    draw: Callable[[Any, tuple], dict] = field(default=lambda source, flavors: {}, compare=False)


FAULTS: Registry[FaultKind] = Registry("fault kind")


def fault_kind(name: str, category: str, description: str, **traits: Any) -> FaultKind:
    if category not in CATEGORIES:
        raise ValueError(f"fault kind {name!r}: unknown category {category!r}")
    return FAULTS.register(name, FaultKind(name=name, category=category, description=description, **traits),
                           module=__name__)


def _via(source: Any, flavors: tuple) -> dict:
    return {"via": source.choice(flavors)} if len(flavors) > 1 else {"via": flavors[0]}


def _timeout(source: Any, flavors: tuple) -> dict:
    return {"after": source.choice(TIMEOUT_AFTER), **_via(source, flavors)}


def _retry_after(source: Any, flavors: tuple) -> dict:
    return {"retry_after": source.choice(RETRY_AFTER), "form": source.choice(("seconds", "date")),
            **_via(source, flavors)}


def _maybe_retry_after(source: Any, flavors: tuple) -> dict:
    return _retry_after(source, flavors) if source.boolean(0.3) else _via(source, flavors)


def _canary(source: Any, flavors: tuple) -> dict:
    return {"canary": canary_secret(source.integer(0, 2 ** 20)), **_via(source, flavors)}


def canary_secret(n: int) -> str:
    """A string shaped like an API key, unique enough never to occur by chance."""
    return "sk-tfz-" + hashlib.sha256(f"toolfuzz canary {n}".encode()).hexdigest()[:24]


fault_kind("ok", "success", "the tool answers normally", commits=True, returns=True)
fault_kind("slow", "success", "the tool answers after a latency (virtual seconds)", commits=True, returns=True,
           draw=lambda s, f: {"latency": s.choice(LATENCIES)})
fault_kind("timeout", "timeout", "the call times out (TimeoutError, requests.Timeout, httpx.TimeoutException)",
           transient=True, draw=_timeout)
fault_kind("connection_refused", "connection", "connection refused: nothing reached the service",
           transient=True, safe=True, draw=_via)
fault_kind("connection_reset", "connection", "connection reset mid-request: it may have been processed",
           transient=True, draw=_via)
fault_kind("http_429", "rate_limit", "429 Too Many Requests with Retry-After (seconds or HTTP date)",
           transient=True, safe=True, status=429, draw=_retry_after)
for _status, _safe, _draw in ((500, False, _via), (502, False, _via), (503, True, _maybe_retry_after),
                              (504, False, _via)):
    fault_kind(f"http_{_status}", "server_error", f"HTTP {_status} from the service", transient=True,
               safe=_safe, status=_status, draw=_draw)
for _status in (400, 401, 403, 404, 422):
    fault_kind(f"http_{_status}", "client_error", f"HTTP {_status}: retrying cannot help", status=_status,
               draw=_via)
fault_kind("malformed_body", "bad_result", "the tool returns invalid JSON, the wrong shape, or nothing",
           returns=True, commits=True,
           draw=lambda s, f: {"variant": s.choice(("invalid_json", "wrong_shape", "empty"))})
fault_kind("schema_drift", "bad_result", "the result lost a field or has it under another name",
           returns=True, commits=True, draw=lambda s, f: {"variant": s.choice(("missing", "renamed"))})
fault_kind("commit_then_timeout", "timeout", "the side effect happens, then the caller sees a timeout",
           transient=True, commits=True, draw=_timeout)
fault_kind("secret_error", "client_error", "a 401 whose error message carries a canary secret",
           status=401, draw=_canary)

del _status, _safe, _draw


def transient_kinds() -> tuple[str, ...]:
    return tuple(name for name, k in FAULTS.items() if k.transient)


def safe_kinds() -> tuple[str, ...]:
    return tuple(name for name, k in FAULTS.items() if k.safe)


# ---------------------------------------------------------------------------------------------
# What an attempt returns or raises (direct mode; HTTP mode builds responses in fuzzer.harnesses.executor.http)


class ToolHTTPError(Exception):
    """The ``builtin`` flavour of an HTTP failure: a plain exception with ``status_code``,
    ``headers`` and a ``response`` carrying both, the duck type ``requests.HTTPError`` and
    ``httpx.HTTPStatusError`` share (``exc.response.status_code``)."""

    def __init__(self, message: str, *, status_code: int, headers: Optional[dict] = None):
        super().__init__(message)
        self.status_code = status_code
        self.headers = dict(headers or {})
        self.response = _PlainResponse(status_code, self.headers)


@dataclass
class _PlainResponse:
    status_code: int
    headers: dict


REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           422: "Unprocessable Entity", 429: "Too Many Requests", 500: "Internal Server Error",
           502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}


@dataclass(frozen=True)
class HTTPParts:
    """An HTTP answer a fault stands for: status, headers and body (both modes build on it)."""

    status: int
    headers: dict
    body: bytes
    message: str


def retry_after_header(fault: Fault, wall_now: float) -> tuple[Optional[str], Optional[float]]:
    """(header value, seconds the caller must wait from ``wall_now``) for a fault with Retry-After.

    An HTTP date has whole seconds, so the date is rounded up and the wait is measured from the
    exact virtual instant the answer was produced: an executor parsing the date against
    ``datetime.now()`` computes exactly the wait the oracle expects."""
    seconds = fault.get("retry_after")
    if seconds is None:
        return None, None
    if fault.get("form") == "date":
        import math

        at = math.ceil(wall_now + seconds)
        return _http_date(at), float(at - wall_now)
    return str(int(seconds)), float(seconds)


@functools.lru_cache(maxsize=1024)
def _http_date(at: int) -> str:
    """``Thu, 01 Jan 2026 00:00:30 GMT``: one attempt asks for the same date up to three times
    (its wait, its exception, its response), and scenarios start at the same epoch."""
    import email.utils

    return email.utils.formatdate(at, usegmt=True)


_PARTS: dict = {}


def http_parts(fault: Fault, tool: str, wall_now: float, ok_body: Any) -> HTTPParts:
    """The HTTP answer of a fault that has a status or a body (not timeouts or connection errors).
    Answers without a body of the caller's are cached: the same few repeat on every attempt."""
    if ok_body is not None:
        return _http_parts(fault, tool, wall_now, ok_body)
    key = (fault, tool, retry_after_header(fault, wall_now)[0])
    return memo(_PARTS, key, lambda: _http_parts(fault, tool, wall_now, None))


def memo(store: dict, key: Any, build: Callable[[], Any], limit: int = 4096) -> Any:
    """``store[key]``, built on a miss; the store is emptied when it reaches ``limit`` entries."""
    hit = store.get(key)
    if hit is None:
        if len(store) >= limit:
            store.clear()
        hit = store[key] = build()
    return hit


def _http_parts(fault: Fault, tool: str, wall_now: float, ok_body: Any) -> HTTPParts:
    import json

    spec = fault.spec
    if spec.status is not None:
        status = spec.status
        headers = {"Content-Type": "application/json"}
        value, _wait = retry_after_header(fault, wall_now)
        if value is not None:
            headers["Retry-After"] = value
        reason = REASONS.get(status, "Error")
        detail = f"invalid API key {fault.get('canary')}" if fault.kind == "secret_error" else reason
        message = f"{status} {reason}: {detail}"
        body = json.dumps({"error": {"status": status, "message": detail}}).encode()
        return HTTPParts(status, headers, body, message)
    headers = {"Content-Type": "application/json"}
    text = json.dumps(bad_result(fault, ok_body) if fault.kind == "schema_drift" else ok_body)
    if fault.kind == "malformed_body":
        variant = fault.get("variant")
        text = text[: max(1, len(text) // 2)] if variant == "invalid_json" else "[]" if variant == "wrong_shape" else ""
    return HTTPParts(200, headers, text.encode(), "200 OK")


def latency_of(fault: Fault) -> float:
    """Virtual seconds the attempt takes before it answers (or fails)."""
    return fault.latency


def ok_result(tool: str, attempt: int) -> dict:
    """What a healthy fake tool returns (direct mode)."""
    return {"tool": tool, "status": "ok", "data": {"request": attempt}}


def bad_result(fault: Fault, good: Any) -> Any:
    """The garbage a ``bad_result`` fault returns instead of ``good``."""
    variant = fault.get("variant")
    if fault.kind == "malformed_body":
        if variant == "invalid_json":
            import json

            text = json.dumps(good)
            return text[: max(1, len(text) // 2)]
        return [] if variant == "wrong_shape" else ""
    if not isinstance(good, dict) or not good:
        return {"unexpected": good} if variant == "renamed" else {}
    key = sorted(good)[-1]
    drifted = {k: v for k, v in good.items() if k != key}
    if variant == "renamed":
        drifted[f"{key}_v2"] = good[key]
    return drifted


@functools.lru_cache(maxsize=1024)
def tool_url(tool: str) -> str:
    """The URL a library-flavoured failure names (one per tool, built once)."""
    return f"https://{tool.replace('_', '-')}.tools.invalid/v1/{tool}"


__all__ = ["CATEGORIES", "FAULTS", "FLAVORS", "Fault", "FaultError", "FaultKind", "HTTPParts", "OK",
           "ToolHTTPError", "bad_result", "canary_secret", "http_parts", "latency_of", "make", "ok_result",
           "retry_after_header", "safe_kinds", "transient_kinds"]
