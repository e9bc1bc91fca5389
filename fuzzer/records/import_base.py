"""What every records importer shares: the registry (:data:`IMPORTERS`, in which each importer
module registers itself), what an import returns, reading a file's text, JSON documents, JSON lines
and YAML with one-line errors, and the importer of toolfuzz's own record JSON. The importers of
other formats are :mod:`fuzzer.records.import_openai` and :mod:`fuzzer.records.import_otel`;
:func:`fuzzer.records.importers.import_file` picks one."""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from fuzzer.records.capture import tools_hash
from fuzzer.records.record import Record, RecordsError
from fuzzer.records.values import utc_now_iso
from strategies.registry import Registry


class ImportFormatError(RecordsError):
    """A file its importer cannot read; the message is one line naming the file."""


@dataclass
class Imported:
    """What one file gave: records, the tool sets they reference, and warnings for the user."""

    records: list = field(default_factory=list)
    tool_sets: dict = field(default_factory=dict)  # tools_hash -> tools
    warnings: list = field(default_factory=list)

    def add_tools(self, tools: Any) -> Optional[str]:
        if not tools:
            return None
        digest = tools_hash(tools)
        self.tool_sets.setdefault(digest, tools)
        return digest


@dataclass(frozen=True)
class Importer:
    name: str
    description: str
    sniff: Callable[[Any], bool]  # over the first decoded document
    load: Callable[[str, str, dict], Imported]  # (path, text, options)


IMPORTERS: Registry[Importer] = Registry("importer")


def importer(name: str, description: str, sniff: Callable[[Any], bool]) -> Callable:
    def register(fn: Callable) -> Callable:
        IMPORTERS.register(name, Importer(name, description, sniff, fn), module=fn.__module__)
        return fn

    return register


# --------------------------------------------------------------------------------------------
# Reading files


def read_text(path: str) -> str:
    if os.path.isdir(path):
        raise ImportFormatError(f"{path}: is a directory")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ImportFormatError(f"{path}: a broken gzip file ({exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise ImportFormatError(f"{path}: empty file")
    return text


def json_documents(path: str, text: str) -> list:
    """The JSON values of a file (see :func:`_numbered`)."""
    return [doc for _number, doc in _numbered(path, text)]


def _numbered(path: str, text: str) -> Iterator[tuple[int, Any]]:
    """(line number, document) for every JSON value of a file: one document (0; a list is
    spread), JSON lines, or concatenated pretty-printed objects (the OpenTelemetry console
    exporter). Errors name the file and the line."""
    stripped = text.strip()
    try:
        value = json.loads(stripped)
    except ValueError:
        pass
    else:
        for doc in (value if isinstance(value, list) else [value]):
            yield 0, doc
        return
    lines = text.splitlines()
    if len(lines) > 1 and lines[0].strip() in ("{", "["):  # concatenated objects, not one per line
        decoder = json.JSONDecoder()
        pos, n = 0, len(text)
        while True:
            while pos < n and text[pos] in " \t\r\n":
                pos += 1
            if pos >= n:
                return
            line = text.count("\n", 0, pos) + 1
            try:
                value, pos = decoder.raw_decode(text, pos)
            except ValueError as exc:
                raise ImportFormatError(f"{path}:{text.count(chr(10), 0, exc.pos) + 1}: not JSON ({exc.msg})") from None
            yield line, value
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except ValueError as exc:
            raise ImportFormatError(f"{path}:{number}: not JSON ({exc.msg})") from None


def _yaml(path: str, text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not YAML"
        raise ImportFormatError(f"{path}{where}: not YAML ({problem})") from None


def _defaults(record: Record, options: dict, source: str) -> Record:
    record.source = source
    if record.parser_version is None:
        record.parser_version = options.get("parser_version") or f"import:{source}"
    if record.session_id is None:
        record.session_id = options.get("session_id")
    if not record.timestamp:
        record.timestamp = utc_now_iso()
    return record


# --------------------------------------------------------------------------------------------
# toolfuzz records


@importer("records", "toolfuzz record JSON (fuzz records show), one object, a list or JSON lines",
          lambda d: "raw_model_output" in d or "record_id" in d or "parsed_calls" in d)
def import_records(path: str, text: str, options: dict) -> Imported:
    out = Imported()
    for number, doc in _numbered(path, text):
        where = f"{path}:{number}" if number else path
        record = Record.from_json(dict(doc) if isinstance(doc, dict) else doc, where=where)
        if record.parsed_calls is not None:
            from fuzzer.engine.calls import InvalidReturn, normalize_calls

            try:
                record.parsed_calls = normalize_calls(record.parsed_calls)
            except InvalidReturn as exc:
                raise ImportFormatError(f"{where}: parsed_calls: {exc}") from None
            if record.parse_status is None:
                record.parse_status = "ok" if record.parsed_calls else "no_call"
        record.source = record.source if record.source != "recorder" else "manual"
        out.records.append(_defaults(record, options, record.source))
    if not out.records:
        raise ImportFormatError(f"{path}: no records")
    return out


__all__ = ["IMPORTERS", "ImportFormatError", "Imported", "Importer", "import_records", "importer", "json_documents",
           "read_text"]
