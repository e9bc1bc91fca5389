"""Joining a Ray cluster, or starting one, for the Ray back end (:mod:`fuzzer.backends.ray`).

Ray's own ``ray.init`` retries an address where nothing answers, or where something that is no
Ray cluster answers, for minutes while its client logs a line a second. A fuzzing run must instead
say in one line what is wrong with ``--ray-address`` within :data:`CONNECT_TIMEOUT` +
:data:`INIT_TIMEOUT` seconds: a TCP connection first, then a join in a child process that is
stopped at the timeout, then the join itself.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
from typing import Optional

import ray

from fuzzer.backends import BackendError
from fuzzer.engine.interrupts import BALANCED

#: Seconds a TCP connection to ``--ray-address`` may take before the address counts as unreachable.
CONNECT_TIMEOUT = 5.0
#: Seconds ``ray.init`` may take to join a cluster that accepted the connection.
INIT_TIMEOUT = 20.0
#: Ray's default port for ``ray start --head``.
DEFAULT_PORT = 6379


def one_line(exc: BaseException) -> str:
    """An exception's words on one line, cut at 200 characters (Ray's run to pages)."""
    text = " ".join(str(exc).split())
    return text[:200] + ("..." if len(text) > 200 else "")


def connect(address: Optional[str], workers: Optional[int]) -> bool:
    """Join ``address`` or start a Ray instance; True when this call connected (to disconnect,
    and for a started instance, to stop it)."""
    if ray.is_initialized():
        return False  # the caller's own connection (a test, a notebook): used, left as it is
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # a fuzzing run reports nowhere
    quiet: dict = {"logging_level": logging.ERROR, "log_to_driver": False}
    if not address:
        cpus = os.cpu_count() or 1
        # "local": a new instance even when `ray start` left one (or RAY_ADDRESS names one). A Ctrl-C
        # waits until it is up (seconds): one cut short leaves Ray's agent processes running, while
        # one raised after it reaches close(), which stops them all.
        with BALANCED:
            ray.init(address="local", num_cpus=max(cpus, workers or 0), include_dashboard=False, **quiet)
        return True
    target = _reachable(address)
    _probe(address, target)
    box: dict = {}

    def join() -> None:
        try:
            ray.init(address=target, **quiet)
        except BaseException as exc:  # noqa: BLE001 - reported on the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=join, name="toolfuzz-ray-init", daemon=True)
    thread.start()
    thread.join(INIT_TIMEOUT)
    if thread.is_alive():  # (it answered the probe a moment ago)
        raise BackendError(f"--ray-address {address}: the cluster at {target} stopped answering while joining it")
    if "error" in box:
        raise BackendError(f"--ray-address {address}: cannot join the cluster: {one_line(box['error'])}")
    return True


#: What :func:`_probe` runs: join and leave, the way the run is about to join.
_PROBE = ("import logging, sys, ray; ray.init(address=sys.argv[1], logging_level=logging.ERROR, log_to_driver=False); "
          "ray.shutdown()")


def _probe(address: str, target: str) -> None:
    """Join ``target`` once in a child process first. Something that accepts connections but is no
    Ray cluster (a typo'd port, a proxy answering every address) makes ``ray.init`` retry for
    minutes while Ray's client logs a line a second; the child is stopped at :data:`INIT_TIMEOUT`
    and its lines stay in it, so the user gets one line."""
    import subprocess

    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, target], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                              timeout=INIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise BackendError(f"--ray-address {address}: {target} accepts connections but did not answer as a Ray "
                           f"cluster within {INIT_TIMEOUT:g} s (is it the address `ray start --head` printed?)") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
        why = next((line for line in reversed(lines) if "Error" in line or "error" in line), lines[-1] if lines else
                   f"exit status {done.returncode}")
        raise BackendError(f"--ray-address {address}: cannot join the cluster at {target}: {why[:200]}")


def _reachable(address: str) -> str:
    """The address ``ray.init`` is to join, once something answers there; else one clear error."""
    if address == "auto":
        try:
            from ray._private.services import canonicalize_bootstrap_address_or_die

            address_found = canonicalize_bootstrap_address_or_die("auto")
        except Exception as exc:  # noqa: BLE001 - Ray's wording varies by version
            raise BackendError(f"--ray-address auto: no running Ray cluster found on this machine ({one_line(exc)}); "
                               "start one with `ray start --head`") from None
        host_port = address_found
    else:
        host_port = address.split("://", 1)[1] if "://" in address else address
    host, _, port_text = host_port.rpartition(":")
    if not host:
        host, port_text = port_text, str(DEFAULT_PORT)
    try:
        port = int(port_text)
    except ValueError:
        raise BackendError(f"--ray-address {address}: {port_text!r} is not a port number (expected HOST:PORT, "
                           "ray://HOST:PORT or auto)") from None
    try:
        with socket.create_connection((host.strip("[]"), port), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise BackendError(f"--ray-address {address}: nothing answers at {host}:{port} ({why}); start a cluster with "
                           "`ray start --head` and pass the address it prints") from None
    return address if address != "auto" else host_port


__all__ = ["CONNECT_TIMEOUT", "DEFAULT_PORT", "INIT_TIMEOUT", "connect", "one_line"]
