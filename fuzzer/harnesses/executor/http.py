"""HTTP mode: the user's real tool code runs unchanged and every request meets the injected fault.

Inside the executor worker, :func:`install` replaces the transports of the two HTTP clients tool
code is written with:

* ``requests``: ``requests.adapters.HTTPAdapter.send`` (every ``Session``, and the module-level
  ``requests.get``, sends through it);
* ``httpx``: ``httpx.HTTPTransport.handle_request`` and ``httpx.AsyncHTTPTransport.handle_async_request``
  (the default transport of every ``Client`` / ``AsyncClient``).

The replacement looks up the tool invocation that is running (a context variable the worker's tool
proxy sets, so concurrent async calls keep theirs apart), takes that attempt's fault and answers
with it: a real ``requests.Response`` / ``httpx.Response`` with the fault's status, headers
(``Retry-After``) and body, or the library's own exception (``requests.ReadTimeout``,
``httpx.ConnectError`` …) — exactly what the library raises or returns for a real failure, so the
tool's ``raise_for_status()`` and ``.json()`` behave as in production. These are transport
adapters of our own rather than ``responses``/``respx``: the fault depends on the attempt, which
those libraries' static routes do not know, and this is two small functions per library.

No socket is ever opened: the replaced transports never reach urllib3 or httpcore, and the worker
also installs an audit hook (:func:`block_network`) that refuses ``socket.connect`` and DNS lookups
outright and counts the attempts, so a tool using another client (``urllib``, a raw socket) fails
loudly instead of reaching the network.

This module also builds the library-shaped exceptions of direct mode (``via=requests`` /
``via=httpx``), so one place knows how those libraries say "timeout" or "429".
"""

from __future__ import annotations

import contextvars
import sys
from typing import Any

from fuzzer.harnesses.executor.faults import (OK, Fault, ToolHTTPError, http_parts, latency_of, memo,
                                             retry_after_header, tool_url)

#: The tool invocation running in this context (set by the worker's tool proxy).
CURRENT: contextvars.ContextVar = contextvars.ContextVar("toolfuzz_invocation", default=None)

_HOST_FAILURES = ("timeout", "connection")


# ---------------------------------------------------------------------------------------------
# Library-shaped failures


def library_error(via: str, fault: Fault, url: str, wall_now: float) -> BaseException:
    """The exception ``requests`` or ``httpx`` raises for ``fault`` on a request to ``url``.

    The exception is new every time (the worker tells an injected exception by identity); the
    request and response objects it carries are built once per distinct answer and shared, since
    building them costs far more than the rest of an attempt (hundreds of microseconds)."""
    if via == "requests":
        return _requests_failure(fault, _request(via, url), wall_now, None)
    return _httpx_failure(fault, _request(via, url), wall_now, None)


_REQUESTS: dict = {}
_RESPONSES: dict = {}


def _request(via: str, url: str) -> Any:
    def build() -> Any:
        if via == "requests":
            import requests

            return requests.Request("POST", url).prepare()
        import httpx

        return httpx.Request("POST", url)

    return memo(_REQUESTS, (via, url), build, 256)


def _shared_response(via: str, fault: Fault, request: Any, wall_now: float, build: Any) -> Any:
    value, _wait = retry_after_header(fault, wall_now)
    return memo(_RESPONSES, (via, id(request), fault, value), lambda: build(fault, request, wall_now, None), 1024)


def _host(url: str) -> str:
    return url.split("//", 1)[-1].split("/", 1)[0]


def _requests_failure(fault: Fault, request: Any, wall_now: float, ok_body: Any) -> BaseException:
    import requests

    host = _host(request.url or "")
    category = fault.spec.category
    if category == "timeout":
        return requests.exceptions.ReadTimeout(
            f"HTTPSConnectionPool(host='{host}', port=443): Read timed out. (read timeout={fault.get('after', 0):g})",
            request=request)
    if fault.kind == "connection_refused":
        error = requests.exceptions.ConnectionError(
            f"HTTPSConnectionPool(host='{host}', port=443): Max retries exceeded (Caused by "
            f"NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))",
            request=request)
        error.__cause__ = ConnectionRefusedError(111, "Connection refused")
        return error
    if fault.kind == "connection_reset":
        return requests.exceptions.ConnectionError(
            ("Connection aborted.", ConnectionResetError(104, "Connection reset by peer")), request=request)
    response = (requests_response(fault, request, wall_now, ok_body) if ok_body is not None else
                _shared_response("requests", fault, request, wall_now, requests_response))
    kind = "Client" if response.status_code < 500 else "Server"
    detail = f" ({http_parts(fault, host, wall_now, ok_body).message})" if fault.kind == "secret_error" else ""
    return requests.exceptions.HTTPError(
        f"{response.status_code} {kind} Error: {response.reason} for url: {request.url}{detail}", response=response,
        request=request)


def requests_response(fault: Fault, request: Any, wall_now: float, ok_body: Any) -> Any:
    import requests
    from requests.structures import CaseInsensitiveDict

    parts = http_parts(fault, _host(request.url or ""), wall_now, ok_body)
    response = requests.Response()
    response.status_code = parts.status
    response.headers = CaseInsensitiveDict(parts.headers)
    response._content = parts.body
    response.encoding = "utf-8"
    response.url = request.url
    response.request = request
    from fuzzer.harnesses.executor.faults import REASONS

    response.reason = REASONS.get(parts.status, "OK")
    return response


def _httpx_failure(fault: Fault, request: Any, wall_now: float, ok_body: Any) -> BaseException:
    import httpx

    category = fault.spec.category
    if category == "timeout":
        return httpx.ReadTimeout("The read operation timed out", request=request)
    if fault.kind == "connection_refused":
        return httpx.ConnectError("[Errno 111] Connection refused", request=request)
    if fault.kind == "connection_reset":
        return httpx.ReadError("[Errno 104] Connection reset by peer", request=request)
    response = (httpx_response(fault, request, wall_now, ok_body) if ok_body is not None else
                _shared_response("httpx", fault, request, wall_now, httpx_response))
    kind = "Client" if response.status_code < 500 else "Server"
    detail = f" ({http_parts(fault, request.url.host, wall_now, ok_body).message})" if fault.kind == "secret_error" else ""
    return httpx.HTTPStatusError(
        f"{kind} error '{response.status_code} {response.reason_phrase}' for url '{request.url}'{detail}",
        request=request, response=response)


def httpx_response(fault: Fault, request: Any, wall_now: float, ok_body: Any) -> Any:
    import httpx

    parts = http_parts(fault, request.url.host, wall_now, ok_body)
    return httpx.Response(parts.status, headers=parts.headers, content=parts.body, request=request)


# ---------------------------------------------------------------------------------------------
# Transports


class Transports:
    """The replaced transports of one worker: they serve each request from the running attempt."""

    def __init__(self, clock: Any, bodies: dict):
        self.clock = clock
        self.bodies = bodies
        self.untracked = 0  # requests made outside any tool invocation (served as ok)

    def _attempt(self, via: str) -> tuple[Fault, Any]:
        invocation = CURRENT.get()
        if invocation is None:
            self.untracked += 1
            return OK, None
        invocation.requests += 1
        invocation.via = via  # the failure is this library's exception (a retry rule may depend on it)
        return invocation.fault, invocation

    def _body(self, invocation: Any) -> Any:
        tool = invocation.tool if invocation is not None else None
        return self.bodies.get(tool, {"ok": True})

    def _answered(self, fault: Fault, invocation: Any) -> None:
        """The answer is being produced now: note its Retry-After on the invocation."""
        _value, wait = retry_after_header(fault, self.clock.wall())
        if invocation is not None and wait is not None:
            invocation.retry_after = wait

    # -- requests --------------------------------------------------------------------------------
    def requests_send(self, adapter: Any, request: Any, stream: bool = False, timeout: Any = None,
                      verify: Any = True, cert: Any = None, proxies: Any = None) -> Any:
        fault, invocation = self._attempt("requests")
        self.clock.advance(latency_of(fault))
        self._answered(fault, invocation)
        if fault.spec.category in _HOST_FAILURES:
            raise _requests_failure(fault, request, self.clock.wall(), None)
        response = requests_response(fault, request, self.clock.wall(), self._body(invocation))
        response.connection = adapter
        return response

    # -- httpx -----------------------------------------------------------------------------------
    def httpx_handle(self, transport: Any, request: Any) -> Any:
        fault, invocation = self._attempt("httpx")
        self.clock.advance(latency_of(fault))
        self._answered(fault, invocation)
        return self._httpx_result(fault, invocation, request)

    async def httpx_handle_async(self, transport: Any, request: Any) -> Any:
        import asyncio

        fault, invocation = self._attempt("httpx")
        latency = latency_of(fault)
        if latency:
            await asyncio.sleep(latency)
        self._answered(fault, invocation)
        return self._httpx_result(fault, invocation, request)

    def _httpx_result(self, fault: Fault, invocation: Any, request: Any) -> Any:
        if fault.spec.category in _HOST_FAILURES:
            raise _httpx_failure(fault, request, self.clock.wall(), None)
        response = httpx_response(fault, request, self.clock.wall(), self._body(invocation))
        return response


def install(clock: Any, bodies: dict) -> Transports:
    """Replace the transports of every HTTP client library that is installed."""
    transports = Transports(clock, bodies)
    try:
        import requests.adapters
    except ModuleNotFoundError:
        pass
    else:
        def send(adapter: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
            return transports.requests_send(adapter, request, *args, **kwargs)

        requests.adapters.HTTPAdapter.send = send  # type: ignore[method-assign]
    try:
        import httpx
    except ModuleNotFoundError:
        pass
    else:
        def handle(transport: Any, request: Any) -> Any:
            return transports.httpx_handle(transport, request)

        async def handle_async(transport: Any, request: Any) -> Any:
            return await transports.httpx_handle_async(transport, request)

        httpx.HTTPTransport.handle_request = handle  # type: ignore[method-assign]
        httpx.AsyncHTTPTransport.handle_async_request = handle_async  # type: ignore[method-assign]
        _hollow_httpx_transports(httpx)
    return transports


def _hollow_httpx_transports(httpx: Any) -> None:
    """httpx's transports build a connection pool and an SSL context (loading the CA bundle, tens
    of milliseconds) in their constructor; with requests answered here they need neither, so
    constructing, entering and closing one does nothing (``Client`` still works unchanged)."""

    def init(transport: Any, *args: Any, **kwargs: Any) -> None:
        transport._toolfuzz = True

    def close(transport: Any) -> None:
        return None

    async def aclose(transport: Any) -> None:
        return None

    def enter(transport: Any) -> Any:
        return transport

    def leave(transport: Any, *exc_info: Any) -> None:
        return None

    async def aenter(transport: Any) -> Any:
        return transport

    async def aleave(transport: Any, *exc_info: Any) -> None:
        return None

    for cls, sync in ((httpx.HTTPTransport, True), (httpx.AsyncHTTPTransport, False)):
        cls.__init__ = init
        if sync:
            cls.close, cls.__enter__, cls.__exit__ = close, enter, leave
        else:
            cls.aclose, cls.__aenter__, cls.__aexit__ = aclose, aenter, aleave


class NetworkGuard:
    """Refuses real network access in this process (an audit hook) and counts the attempts."""

    EVENTS = frozenset({"socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
                        "socket.gethostbyaddr", "socket.getnameinfo"})

    def __init__(self) -> None:
        self.blocked: list[str] = []
        self.created = 0  # sockets created at all (asyncio's loop makes a socketpair; HTTP calls none)

    def __call__(self, event: str, args: tuple) -> None:
        if event == "socket.__new__":
            self.created += 1
        elif event in self.EVENTS:
            self.blocked.append(f"{event}{_short_args(args)}")
            raise ConnectionRefusedError(f"toolfuzz: real network access is blocked in the executor worker "
                                         f"({event})")


def _short_args(args: tuple) -> str:
    text = repr(args[1:] if args and hasattr(args[0], "fileno") else args)
    return text if len(text) <= 80 else text[:77] + "..."


def block_network() -> NetworkGuard:
    """Install the guard (audit hooks cannot be removed: only in a worker process)."""
    guard = NetworkGuard()
    sys.addaudithook(guard)
    return guard



def failure_for(fault: Fault, tool: str, wall_now: float) -> BaseException:
    """The exception a failing attempt raises, in the fault's ``via`` flavour (direct mode)."""
    spec = fault.spec
    via = fault.get("via", "builtin")
    if via != "builtin":
        return library_error(via, fault, tool_url(tool), wall_now)
    if spec.category == "timeout":
        return TimeoutError(f"{tool}: timed out after {fault.get('after', 0):g} s")
    if fault.kind == "connection_refused":
        return ConnectionRefusedError(111, "Connection refused")
    if fault.kind == "connection_reset":
        return ConnectionResetError(104, "Connection reset by peer")
    parts = http_parts(fault, tool, wall_now, None)
    return ToolHTTPError(parts.message, status_code=parts.status, headers=parts.headers)


__all__ = ["failure_for", "CURRENT", "NetworkGuard", "Transports", "block_network", "install", "library_error"]
