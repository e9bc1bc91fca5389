"""A module that probes the network when it is imported, as urllib3's ``connection.py`` does
(``HAS_IPV6 = _has_ipv6("::1")``): imported lazily inside a parse, its ``socket.bind`` runs
while the target parses its first input."""

from __future__ import annotations

import socket


def _has_ipv6(host: str) -> bool:
    sock = None
    try:
        sock = socket.socket(socket.AF_INET6)
        sock.bind((host, 0))
        return True
    except Exception:  # noqa: BLE001 - no IPv6 (or the bind refused): the probe says no
        return False
    finally:
        if sock is not None:
            sock.close()


HAS_IPV6 = _has_ipv6("::1")
