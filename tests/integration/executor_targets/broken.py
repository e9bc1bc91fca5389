"""Executors that are wrong in ways the harness must survive: they hang, die, loop forever."""

import os
import threading
import time

NOT_A_FACTORY = 42


def make_returns_int(tools):
    return 7


def make_raises(tools):
    raise RuntimeError("cannot build the executor")


def make_hangs(tools):
    def execute(name, arguments):
        if name == "calculate":
            threading.Event().wait(30)  # a real wait: only the watchdog can end it
        return tools[name](**arguments) if name in tools else {"error": "unknown"}
    return execute


def make_busy_hangs(tools):
    """Spins the CPU on calls to calculate (a retry loop that never sleeps, say): no virtual
    clock can end it, only the watchdog."""
    def execute(name, arguments):
        if name == "calculate":
            while True:
                pass
        return tools[name](**arguments) if name in tools else {"error": "unknown"}
    return execute


def make_dies(tools):
    def execute(name, arguments):
        if name == "calculate":
            os._exit(3)
        return {"error": "unknown"}
    return execute


def make_spins(tools):
    def execute(name, arguments):
        while True:  # retries forever, waiting in (virtual) time
            try:
                return tools[name](**arguments)
            except Exception:
                time.sleep(1)
    return execute


def make_socket_tool(tools):
    """HTTP mode helper: an executor that opens a raw socket itself (must be blocked)."""
    import socket

    def execute(name, arguments):
        try:
            socket.create_connection(("example.com", 80), timeout=1)
        except OSError as exc:
            return {"error": str(exc)}
        return {"error": "connected?!"}
    return execute
