"""Report writers: handlers that turn a job's final result into files (JSON, JUnit, ...).

Each writer is an :class:`fuzzer.engine.pipeline.EventHandler` that writes its file atomically when the
job finishes (``JobFinished``), from the result's own interface (:mod:`fuzzer.engine.results`), so every
format shows the same counts. Writers are registered in :data:`WRITERS` by option name
(``--report``, ``--junit``, ...; :mod:`fuzzer.reports.writers`); a subclass of :class:`FileWriter`
only says how to render. Importing this package registers every built-in writer.
"""

from __future__ import annotations

# (in this order: the order of the CLI's report options)
from fuzzer.reports import json_report as _json_report  # noqa: F401,I001  (registers "report")
from fuzzer.reports import junit as _junit  # noqa: F401  (registers "junit")
from fuzzer.reports import sarif as _sarif  # noqa: F401  (registers "sarif")
from fuzzer.reports import html as _html  # noqa: F401  (registers "html")
from fuzzer.reports import markdown as _markdown  # noqa: F401  (registers "markdown")
from fuzzer.reports.writers import WRITERS, FileWriter, writer

__all__ = ["FileWriter", "WRITERS", "writer"]
