"""Records from what users already have: chat-completion logs, OpenTelemetry spans, vcrpy cassettes.

Importers are registered in :data:`IMPORTERS` (a :class:`strategies.registry.Registry`); each
turns one file into :class:`~fuzzer.records.record.Record` objects plus the tool sets they use.
``kind="auto"`` picks the importer from the file's content. A file that is not what its importer
reads raises :class:`ImportFormatError`: one line naming the file (and the line, for JSON lines),
which ``fuzz records add`` turns into exit status 2.

* ``records`` — toolfuzz's own record JSON (what ``fuzz records show`` prints), one object, a
  list, or JSON lines: hand-made records.
* ``openai`` — OpenAI chat completions: a completion object, ``{"request", "response"}`` pairs,
  or Batch API output lines (``{"custom_id", "response": {"body": ...}}``), as JSON or JSON
  lines. Each assistant choice is one record: the message (``content`` and ``tool_calls``) is the
  raw output, the decoded ``function.arguments`` the parsed calls (arguments that are not JSON
  are a parse error: that is what the model sent). Tool results (``role: tool`` messages of later
  requests, matched by ``tool_call_id``) become the execution, and the answer to them the reply.
* ``otel`` — OpenTelemetry GenAI spans exported as JSON (OTLP JSON ``resourceSpans`` or the SDK's
  console exporter objects): ``chat`` spans' ``gen_ai.output.messages`` (or the older
  ``gen_ai.completion.N.tool_calls.M.*`` attributes) give the calls; ``execute_tool`` spans
  (``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``,
  ``gen_ai.tool.call.result``, ``error.type``) the execution. Arguments and results are opt-in in
  the conventions, so their absence is counted and warned about.
* ``vcr`` — vcrpy cassettes (YAML or JSON) whose responses are chat completions, plain, gzipped or
  streamed (server-sent events are assembled).
"""

from __future__ import annotations

from typing import Optional

# The built-in importers register themselves, in the order auto-detection tries them.
from fuzzer.records import import_openai as _openai  # noqa: F401  (registers "openai" and "vcr")
from fuzzer.records import import_otel as _otel  # noqa: F401  (registers "otel")
from fuzzer.records.import_base import IMPORTERS, ImportFormatError, Imported, _yaml, json_documents, read_text


def import_file(path: str, *, kind: str = "auto", parser_version: Optional[str] = None,
                session_id: Optional[str] = None) -> Imported:
    """Records of one file. ``kind``: an importer name or ``auto``; ``parser_version`` and
    ``session_id`` are given to records that carry none."""
    text = read_text(path)
    options = {"parser_version": parser_version, "session_id": session_id}
    if kind != "auto":
        return IMPORTERS[kind].load(path, text, options)
    if path.lower().endswith((".yaml", ".yml")):
        return IMPORTERS["vcr"].load(path, text, options)
    try:
        docs = json_documents(path, text)
    except ImportFormatError:
        data = _yaml(path, text) if text.lstrip().startswith(("interactions", "---", "version")) else None
        if isinstance(data, dict) and "interactions" in data:
            return IMPORTERS["vcr"].load(path, text, options)
        raise
    first = next((d for d in docs if isinstance(d, dict)), None)
    for item in IMPORTERS.values():
        if first is not None and item.sniff(first):
            return item.load(path, text, options)
    keys = ", ".join(sorted(first)[:6]) if isinstance(first, dict) else type(docs[0]).__name__ if docs else "nothing"
    raise ImportFormatError(f"{path}: not a records file this version can import (found {keys}; expected toolfuzz "
                            f"records, OpenAI chat completions, OpenTelemetry spans or a vcrpy cassette)")


__all__ = ["IMPORTERS", "ImportFormatError", "Imported", "import_file"]
