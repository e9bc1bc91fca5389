"""Run user code in worker processes under a watchdog, many inputs per message.

Why processes: a pure-Python hang could be interrupted in-process, but a regex backtracking inside
``re`` holds the GIL and ignores signals, and a segfault or ``os._exit`` ends the process. Only a
separate process that can be SIGKILLed from outside survives all of these (DESIGN.md, "Isolation").

Why batches: one text per message costs a pipe round trip per execution (~7,000/s); 256 texts
per message make isolation nearly free (DESIGN.md, "Performance design").

Isolation knows nothing of any harness: a harness hands it a *spec* (:mod:`fuzzer.isolation.spec`)
naming the function that loads what the workers serve, and receives plain-data results.

Shape of the machinery::

    engine (WorkerPool, never imports user code)
      '- zygote: loads what the spec serves once (the harness imports the user's code there), then
         forks a worker per request (fork is ~1 ms; re-importing a heavy parser after every crash
         would not be)
           '- worker 0..n-1: loop { receive (base, payloads); for each: publish seq; served.run(payload) }

Each worker writes the sequence number of the input it is about to run into shared memory. The
supervisor polls it: an unchanged number for ``timeout`` seconds is a hang, pinned on exactly that
input; a closed pipe is a death, pinned the same way. The worker is then killed and re-forked, the
culprit gets its outcome, and the other inputs of the batch (their results died with the worker)
are queued again, so every input gets its own outcome and each is re-run at most once per death.

An *order* (:meth:`WorkerPool.run_orders`) is the other kind of message: instead of texts it
carries a small object that builds its own inputs in the worker, runs them, and sends back one
result (the parser campaign's structured arm, :mod:`fuzzer.harnesses.parser.orders`: the engine process had
become the bottleneck generating and judging every input). Before each input it writes the text
into this worker's part of a shared *pin buffer*, so a hang or a death is still pinned on exactly
that input.

Workers send only plain data (the harnesses' served objects return normalized calls, exception
type *names*, strings), so the engine never unpickles a user class. Their fds 0-2 point at /dev/null, they ignore SIGINT (Ctrl-C is
the engine's to handle), and on Linux they die with their parent (``PR_SET_PDEATHSIG``); the
zygote exits on EOF from the engine and reaps every worker, so no zombie or orphan outlives it.
"""

from __future__ import annotations

from fuzzer.isolation.pool import Lost, Started, WorkerPool
from fuzzer.isolation.spec import BATCH_SIZE, Fault, WorkerSpec

__all__ = ["BATCH_SIZE", "Fault", "Lost", "Started", "WorkerPool", "WorkerSpec"]
