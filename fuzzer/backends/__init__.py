"""Back ends: where a job's work runs — local worker processes, or Ray actors on a cluster.

A back end is a pool with :class:`fuzzer.isolation.WorkerPool`'s API (``spec``, ``workers``,
``start``, ``close``, ``run``, ``run_orders``, ``sample_stack``, ``lines``), so the engine hands
its orders and texts to whichever the user chose and files what comes back the same way:
confirming, shrinking and the corpus stay in the driver either way. Nothing here (nor in the
back ends) knows which harness runs: an order is an opaque object with ``run``/``size``/``resume``.

Back ends are registered by name in :data:`BACKENDS`; the names are the words of ``--backend``.
``local`` is :class:`~fuzzer.isolation.WorkerPool` itself; ``ray`` (:mod:`fuzzer.backends.ray`)
is imported only when chosen, so Ray stays an optional extra (``toolfuzz[ray]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from strategies.errors import ToolfuzzError
from strategies.registry import Registry


class BackendError(ToolfuzzError):
    """A back end that cannot be used (not installed, a cluster that does not answer, no actor
    left); the message is one line naming the option, and the CLI exits 2 with it."""


@dataclass(frozen=True)
class Backend:
    """A named back end: ``make(spec, workers, address=, environ=, load_timeout=)`` builds its pool
    (not started). ``workers`` None means one per CPU the back end offers; ``load_timeout``: seconds
    loading the code under test may take in each worker's zygote (None: the spec's or the default)."""

    name: str
    description: str
    make: Callable[..., Any]
    #: Whether ``--ray-address`` (a cluster to join) means anything to it.
    takes_address: bool = False
    #: The module that implements it, when it needs an optional extra (imported only when chosen).
    module: str = ""


BACKENDS: Registry[Backend] = Registry("backend")


def _local(spec: Any, workers: Optional[int], *, address: Optional[str] = None,
           environ: Optional[Mapping[str, str]] = None, load_timeout: Optional[float] = None) -> Any:
    from fuzzer.isolation import WorkerPool

    if workers is None:
        import os

        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return WorkerPool(spec, workers=workers, environ=environ, load_timeout=load_timeout)


#: How to get Ray, in the one line ``--backend ray`` prints without it.
RAY_INSTALL = "pip install 'toolfuzz[ray]'"


def _import(module: str) -> Any:
    """A back end's module; without its extra, one line saying how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        name = exc.name or ""
        if name == "ray":
            raise BackendError(f"--backend ray: Ray is not installed; install it with {RAY_INSTALL}") from None
        if name.startswith("ray.") or not name:
            text = " ".join(str(exc).split())[:200]
            raise BackendError(f"--backend ray: Ray cannot be imported ({text}); reinstall it with {RAY_INSTALL}") from None
        raise  # toolfuzz's own import broke: a bug, not a missing extra


def _ray(spec: Any, workers: Optional[int], *, address: Optional[str] = None,
         environ: Optional[Mapping[str, str]] = None, load_timeout: Optional[float] = None) -> Any:
    return _import("fuzzer.backends.ray").RayPool(spec, workers, address=address, environ=environ,
                                                  load_timeout=load_timeout)


BACKENDS.register("local", Backend("local", "worker processes on this machine", _local), module=__name__)
BACKENDS.register("ray", Backend("ray", "Ray actors on a cluster (--ray-address), or on a Ray instance started "
                                        "for the run", _ray, takes_address=True, module="fuzzer.backends.ray"),
                  module=__name__)


def check_backend(name: str, address: Optional[str] = None) -> Backend:
    """Back end ``name``, usable with ``address``: ``--ray-address`` only for a back end that joins
    a cluster, and the back end's package importable (Ray is an extra). Raises :class:`BackendError`."""
    backend = BACKENDS[name]
    if address and not backend.takes_address:
        raise BackendError(f"--ray-address {address}: only with --backend ray (the {name} back end runs on "
                           "this machine)")
    if backend.module:
        _import(backend.module)
    return backend


def make_pool(name: str, spec: Any, workers: Optional[int], *, address: Optional[str] = None,
              environ: Optional[Mapping[str, str]] = None, load_timeout: Optional[float] = None) -> Any:
    """The pool of back end ``name`` (not started), after :func:`check_backend`."""
    backend = check_backend(name, address)
    return backend.make(spec, workers, address=address, environ=environ, load_timeout=load_timeout)


def workers_of(count: Any) -> Optional[int]:
    """``--workers`` as :func:`make_pool` takes it: None for ``auto`` (one per CPU of wherever the
    back end runs: this machine's cores, or the CPUs a cluster offers), else the number."""
    return None if getattr(count, "auto", False) else int(count)


def settling_pool(pool: Any, workers: int = 1) -> Any:
    """A local pool (not started) of ``pool``'s spec, for confirming and shrinking on this machine
    whatever back end runs the orders.

    Why local: a finding is confirmed in a fresh worker and shrunk in many small runs, each waiting
    for the one before; through a cluster every run would pay a call's latency, and a second pool
    of the cluster's back end would need a CPU the cluster has given to the run's actors already
    (a Ray pool waits for room to place its actor: on a full cluster until its start-up limit, then
    the run fails). The code under test is importable here too: the driver's own runs load it."""
    from fuzzer.isolation import WorkerPool

    return WorkerPool(pool.spec, workers=workers, environ=getattr(pool, "environ", None),
                      load_timeout=getattr(pool, "load_timeout", None))


def backend_line(backend: dict) -> str:
    """Where a run's work ran, when not on this machine's worker processes (the report's ``backend``)."""
    line = (f"back end: {backend['name']} ({backend.get('address')}), {backend.get('workers')} actor(s) on "
            f"{backend.get('nodes')} node(s), start-up {backend.get('startup_s', 0):.1f} s")
    if backend.get("actors_lost"):
        line += (f"; {backend['actors_lost']} actor(s) lost, {backend.get('orders_rerun', 0)} order(s) re-run "
                 "elsewhere")
    return line


def describe(pool: Any) -> dict:
    """What a report says about where the work ran: the back end's own account (a Ray pool's
    actors, nodes, lost actors and re-run orders), or the local pool's workers."""
    own = getattr(pool, "describe", None)
    if own is not None:
        return own()
    return {"name": "local", "workers": getattr(pool, "workers", 1)}


def notes(pool: Any) -> list[str]:
    """Lines a run's summary must show about its back end (work run again or given up)."""
    own = getattr(pool, "notes", None)
    return list(own()) if own is not None else []


__all__ = ["BACKENDS", "Backend", "BackendError", "RAY_INSTALL", "check_backend", "describe", "make_pool", "notes",
           "settling_pool", "workers_of"]
