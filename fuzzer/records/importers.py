"""Records from what users already have: chat-completion logs, OpenTelemetry spans, vcrpy cassettes.

Importers are registered in :data:`IMPORTERS` (a :class:`strategies.registry.Registry`); each
turns one file into :class:`~fuzzer.records.store.Record` objects plus the tool sets they use.
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

import gzip
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from fuzzer.records.recorder import tools_hash
from fuzzer.records.store import Record, RecordsError, iso_time, new_record_id, storable, utc_now_iso
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


# --------------------------------------------------------------------------------------------
# OpenAI chat completions


def _completion_of(doc: Any) -> Optional[dict]:
    """The chat completion inside a log entry, or None."""
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("choices"), list):
        return doc
    response = doc.get("response")
    if isinstance(response, dict):
        if isinstance(response.get("choices"), list):
            return response
        body = response.get("body")
        if isinstance(body, dict) and isinstance(body.get("choices"), list):
            return body
    return None


def _request_of(doc: Any) -> Optional[dict]:
    if not isinstance(doc, dict):
        return None
    request = doc.get("request")
    if isinstance(request, dict):
        body = request.get("body")
        return body if isinstance(body, dict) and "messages" in body else request
    if isinstance(doc.get("body"), dict) and "messages" in doc["body"]:
        return doc["body"]
    return None


def _looks_openai(doc: Any) -> bool:
    return _completion_of(doc) is not None or (isinstance(doc, dict) and "request" in doc and "response" in doc)


class _Exchanges:
    """Request/completion pairs of a log, turned into records (shared by the OpenAI and vcrpy
    importers)."""

    def __init__(self, path: str, options: dict, source: str):
        self.path, self.options, self.source = path, options, source
        self.out = Imported()
        self.pairs: list[tuple[Optional[dict], dict, str]] = []  # (request, completion, where)

    def add(self, request: Optional[dict], completion: dict, where: str) -> None:
        if not isinstance(completion.get("choices"), list):
            raise ImportFormatError(f"{where}: a chat completion needs a 'choices' list")
        self.pairs.append((request, completion, where))

    def build(self) -> Imported:
        results: dict[str, Any] = {}
        replies: dict[str, str] = {}
        has_requests = False
        for request, completion, _where in self.pairs:
            if request is None:
                continue
            has_requests = True
            answered = []
            for message in request.get("messages") or []:
                if isinstance(message, dict) and message.get("role") == "tool" and message.get("tool_call_id"):
                    results[str(message["tool_call_id"])] = message.get("content")
                    answered.append(str(message["tool_call_id"]))
            content = _first_content(completion)
            if answered and content is not None:
                for call_id in answered:
                    replies[call_id] = content
        missing = 0
        for request, completion, where in self.pairs:
            tools_ref = self.out.add_tools((request or {}).get("tools"))
            for choice in completion["choices"]:
                record = self._record(request, completion, choice, where, tools_ref)
                if record is None:
                    continue
                ids = [str(c.get("id")) for c in _tool_calls(choice) if isinstance(c, dict) and c.get("id")]
                if ids and record.parse_status == "ok":
                    missing += self._attach(record, ids, results, replies)
                self.out.records.append(_defaults(record, self.options, self.source))
        if not self.out.records:
            raise ImportFormatError(f"{self.path}: no assistant message in any chat completion")
        if missing:
            why = "" if has_requests else " (the log holds responses only)"
            self.out.warnings.append(f"{self.path}: {missing} tool call(s) have no tool result in this log{why}: "
                                     f"their execution is not imported")
        return self.out

    def _record(self, request: Optional[dict], completion: dict, choice: Any, where: str,
                tools_ref: Optional[str]) -> Optional[Record]:
        if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
            raise ImportFormatError(f"{where}: a choice needs a 'message' object")
        message = choice["message"]
        calls = _tool_calls(choice)
        metadata = {k: v for k, v in (("model", completion.get("model")),
                                      ("finish_reason", choice.get("finish_reason"))) if v is not None}
        created = completion.get("created")
        record = Record(record_id=new_record_id(), trace_id=str(completion.get("id")) if completion.get("id") else None,
                        timestamp=iso_time(float(created)) if isinstance(created, (int, float)) else "",
                        session_id=_session(request), tools_hash=tools_ref, metadata=metadata or None)
        if calls:
            shown = {"content": message.get("content"), "tool_calls": calls}
            if shown["content"] is None:
                del shown["content"]
            record.raw_model_output = json.dumps(shown, ensure_ascii=False)
            record.parsed_calls, record.parse_status, record.parse_error = _decode_calls(calls)
        elif isinstance(message.get("content"), str):
            record.raw_model_output = message["content"]  # text only: whether it holds a call is unknown
        else:
            return None
        return record

    def _attach(self, record: Record, ids: list, results: dict, replies: dict) -> int:
        missing = 0
        executions, tool_io = [], []
        for call_id, call in zip(ids, record.parsed_calls or []):
            if call_id not in results:
                missing += 1
                continue
            result = _maybe_json(results[call_id])
            tool_io.append({"tool": call["name"], "arguments": call["arguments"], "status": "ok", "result": result})
            executions.append({"call": call, "status": "ok", "result": result})
        if executions:
            record.execution_result, record.tool_io = storable(executions), storable(tool_io)
            record.execution_status = "ok"
            record.final_reply = next((replies[i] for i in ids if i in replies), None)
        return missing


def _tool_calls(choice: dict) -> list:
    calls = (choice.get("message") or {}).get("tool_calls")
    return calls if isinstance(calls, list) else []


def _first_content(completion: dict) -> Optional[str]:
    for choice in completion.get("choices") or []:
        content = (choice.get("message") or {}).get("content") if isinstance(choice, dict) else None
        if isinstance(content, str):
            return content
    return None


def _session(request: Optional[dict]) -> Optional[str]:
    if not request:
        return None
    metadata = request.get("metadata") if isinstance(request.get("metadata"), dict) else {}
    for value in (metadata.get("session_id"), metadata.get("conversation_id"), request.get("user")):
        if isinstance(value, str) and value:
            return value
    return None


def _decode_calls(calls: list) -> tuple[Optional[list], str, Optional[str]]:
    """OpenAI tool calls -> (calls, parse_status, parse_error): ``function.arguments`` decoded."""
    out = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return None, "invalid", "a tool call without function.name"
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError as exc:
                return None, "error", f"json.decoder.JSONDecodeError: {exc}"
        if not isinstance(arguments, dict):
            return None, "error", f"ValueError: arguments is {type(arguments).__name__}, not an object"
        out.append({"name": function["name"], "arguments": storable(arguments)})
    return out, "ok" if out else "no_call", None


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    if isinstance(value, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in value):
        return _maybe_json("".join(str(p.get("text", "")) for p in value))
    return storable(value)


@importer("openai", "OpenAI chat completions: completion objects, {request, response} pairs, Batch output lines",
          _looks_openai)
def import_openai(path: str, text: str, options: dict) -> Imported:
    exchanges = _Exchanges(path, options, "openai")
    for number, doc in _numbered(path, text):
        where = f"{path}:{number}" if number else path
        completion = _completion_of(doc)
        if completion is None:
            if isinstance(doc, dict) and doc.get("error") and isinstance(doc.get("response"), (dict, type(None))):
                continue  # a failed Batch request: nothing the model sent
            what = ", ".join(sorted(doc)[:5]) if isinstance(doc, dict) else type(doc).__name__
            raise ImportFormatError(f"{where}: not a chat completion (found {what}; expected 'choices', "
                                    f"or 'response' holding one)")
        exchanges.add(_request_of(doc), completion, where)
    return exchanges.build()


# --------------------------------------------------------------------------------------------
# vcrpy cassettes


def _looks_vcr(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("interactions"), list)


def _body_text(body: Any, headers: Any) -> Optional[str]:
    if isinstance(body, dict):
        body = body.get("string", body.get("body"))
    if body is None:
        return None
    if isinstance(body, str):
        return body
    if isinstance(body, (bytes, bytearray)):
        raw = bytes(body)
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8", "replace")
    return json.dumps(body)


def _sse_completion(text: str) -> Optional[dict]:
    """A streamed chat completion (``data: {...}`` chunks) assembled into one completion."""
    choices: dict[int, dict] = {}
    head: dict = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            chunk = json.loads(data)
        except ValueError:
            return None
        head.setdefault("id", chunk.get("id"))
        head.setdefault("model", chunk.get("model"))
        head.setdefault("created", chunk.get("created"))
        for part in chunk.get("choices") or []:
            choice = choices.setdefault(part.get("index", 0), {"message": {"role": "assistant", "content": None},
                                                               "finish_reason": None})
            delta = part.get("delta") or {}
            if isinstance(delta.get("content"), str):
                choice["message"]["content"] = (choice["message"]["content"] or "") + delta["content"]
            for call in delta.get("tool_calls") or []:
                calls = choice["message"].setdefault("tool_calls", [])
                index = call.get("index", len(calls))
                while len(calls) <= index:
                    calls.append({"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                target = calls[index]
                if call.get("id"):
                    target["id"] = call["id"]
                function = call.get("function") or {}
                target["function"]["name"] += function.get("name") or ""
                target["function"]["arguments"] += function.get("arguments") or ""
            if part.get("finish_reason"):
                choice["finish_reason"] = part["finish_reason"]
    if not choices:
        return None
    return dict(head, object="chat.completion", choices=[dict(choices[i], index=i) for i in sorted(choices)])


@importer("vcr", "vcrpy cassettes (YAML or JSON) whose responses are chat completions", _looks_vcr)
def import_vcr(path: str, text: str, options: dict) -> Imported:
    data = _yaml(path, text)
    if not _looks_vcr(data):
        raise ImportFormatError(f"{path}: not a vcrpy cassette (no 'interactions' list)")
    exchanges = _Exchanges(path, options, "vcr")
    for number, interaction in enumerate(data["interactions"], 1):
        where = f"{path}: interaction {number}"
        if not isinstance(interaction, dict) or not isinstance(interaction.get("response"), dict):
            raise ImportFormatError(f"{where}: an interaction needs 'request' and 'response'")
        request = interaction.get("request") or {}
        response = interaction["response"]
        body = _body_text(response.get("body"), response.get("headers"))
        if not body:
            continue
        completion = None
        try:
            decoded = json.loads(body)
        except ValueError:
            completion = _sse_completion(body)
        else:
            completion = decoded if isinstance(decoded, dict) and isinstance(decoded.get("choices"), list) else None
        if completion is None:
            continue  # not a chat completion (another endpoint, an error page)
        request_body = _body_text(request.get("body"), request.get("headers"))
        try:
            parsed_request = json.loads(request_body) if request_body else None
        except ValueError:
            parsed_request = None
        exchanges.add(parsed_request if isinstance(parsed_request, dict) else None, completion, where)
    if not exchanges.pairs:
        raise ImportFormatError(f"{path}: a vcrpy cassette, but no interaction's response is a chat completion")
    return exchanges.build()


# --------------------------------------------------------------------------------------------
# OpenTelemetry GenAI spans


def _looks_otel(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    if "resourceSpans" in doc or "resource_spans" in doc:
        return True
    attributes = doc.get("attributes")
    return "context" in doc and isinstance(attributes, (dict, list)) and "name" in doc


def _otlp_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "arrayValue" in value:
        return [_otlp_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return {kv.get("key"): _otlp_value(kv.get("value")) for kv in (value["kvlistValue"] or {}).get("values") or []}
    return None


def _attributes(raw: Any) -> dict:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, list):
        return {a.get("key"): _otlp_value(a.get("value")) for a in raw if isinstance(a, dict)}
    return {}


def _nanos(value: Any) -> Optional[float]:
    try:
        return int(value) / 1e9
    except (TypeError, ValueError):
        return None


def _spans(path: str, docs: list) -> Iterator[dict]:
    """Every span of the documents, normalized: trace_id, span_id, name, start, attributes,
    error (error.type or the status message when the status is an error)."""
    from fuzzer.records.store import parse_since

    for doc in docs:
        if not isinstance(doc, dict):
            raise ImportFormatError(f"{path}: expected span objects, found {type(doc).__name__}")
        resource_spans = doc.get("resourceSpans", doc.get("resource_spans"))
        if resource_spans is not None:
            for resource in resource_spans or []:
                for scope in (resource or {}).get("scopeSpans", (resource or {}).get("instrumentationLibrarySpans")) or []:
                    for span in (scope or {}).get("spans") or []:
                        status = span.get("status") or {}
                        failed = status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR")
                        yield _span(span.get("traceId"), span.get("spanId"), span.get("name"),
                                    _nanos(span.get("startTimeUnixNano")), _attributes(span.get("attributes")),
                                    status.get("message") if failed else None)
            continue
        if not _looks_otel(doc):
            keys = ", ".join(sorted(doc)[:5])
            raise ImportFormatError(f"{path}: expected span objects (OTLP resourceSpans, or console exporter spans "
                                    f"with name, context and attributes), found {keys or 'an empty object'}")
        context = doc.get("context") or {}
        status = doc.get("status") or {}
        start = None
        if isinstance(doc.get("start_time"), str):
            try:
                start = parse_since(doc["start_time"])
            except RecordsError:
                start = None
        failed = status.get("status_code") in ("ERROR", "STATUS_CODE_ERROR")
        yield _span(context.get("trace_id"), context.get("span_id"), doc.get("name"), start,
                    _attributes(doc.get("attributes")), status.get("description") if failed else None)


def _span(trace_id: Any, span_id: Any, name: Any, start: Any, attributes: dict, status_error: Optional[str]) -> dict:
    error = attributes.get("error.type") or (status_error and f"Error: {status_error}")
    if error and status_error and attributes.get("error.type"):
        error = f"{attributes['error.type']}: {status_error}"
    return {"trace_id": str(trace_id) if trace_id else None, "span_id": span_id, "name": str(name or ""),
            "start": start, "attributes": attributes, "error": error}


def _operation(span: dict) -> str:
    op = span["attributes"].get("gen_ai.operation.name")
    if isinstance(op, str):
        return op
    return span["name"].split(" ", 1)[0]


def _chat_calls(attributes: dict) -> Optional[list]:
    """Tool calls a chat span reports as the model's output: ``gen_ai.output.messages`` parts of
    type ``tool_call``, or the older ``gen_ai.completion.N.tool_calls.M.*`` attributes."""
    messages = attributes.get("gen_ai.output.messages")
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except ValueError:
            messages = None
    calls: list = []
    if isinstance(messages, list):
        for message in messages:
            for part in (message or {}).get("parts") or [] if isinstance(message, dict) else []:
                if isinstance(part, dict) and part.get("type") == "tool_call":
                    calls.append({"id": part.get("id"), "name": part.get("name"), "arguments": part.get("arguments")})
        return calls
    found: dict[tuple, dict] = {}
    for key, value in attributes.items():
        parts = str(key).split(".")
        if len(parts) == 6 and parts[:2] == ["gen_ai", "completion"] and parts[3] == "tool_calls":
            found.setdefault((int(parts[2]) if parts[2].isdigit() else 0, int(parts[4]) if parts[4].isdigit() else 0),
                             {})[parts[5]] = value
    if not found:
        return None
    return [{"id": v.get("id"), "name": v.get("name"), "arguments": v.get("arguments")} for _, v in sorted(found.items())]


def _openai_shape(calls: list) -> list:
    out = []
    for call in calls:
        arguments = call.get("arguments")
        out.append({"id": call.get("id"), "type": "function", "function": {
            "name": call.get("name"), "arguments": arguments if isinstance(arguments, str) or arguments is None
            else json.dumps(arguments, ensure_ascii=False)}})
    return out


@importer("otel", "OpenTelemetry GenAI spans exported as JSON (OTLP resourceSpans or console exporter objects)",
          _looks_otel)
def import_otel(path: str, text: str, options: dict) -> Imported:
    spans = list(_spans(path, json_documents(path, text)))
    if not spans:
        raise ImportFormatError(f"{path}: no spans")
    out = Imported()
    tools = [s for s in spans if _operation(s) == "execute_tool"]
    chats = [s for s in spans if _operation(s) != "execute_tool" and (
        _operation(s) in ("chat", "text_completion", "generate_content") or _chat_calls(s["attributes"]) is not None)]
    by_call_id = {str(s["attributes"]["gen_ai.tool.call.id"]): s for s in tools if s["attributes"].get("gen_ai.tool.call.id")}
    used: set = set()
    no_arguments = no_result = no_output = 0
    for chat in chats:
        calls = _chat_calls(chat["attributes"])
        if calls is None:
            no_output += 1
            continue
        if not calls:
            continue
        record = Record(record_id=new_record_id(), trace_id=chat["trace_id"],
                        timestamp=iso_time(chat["start"]) if isinstance(chat["start"], float) else (chat["start"] or ""),
                        metadata={k: v for k, v in (("model", chat["attributes"].get("gen_ai.request.model")),)
                                  if v is not None} or None)
        shaped = _openai_shape(calls)
        record.raw_model_output = json.dumps({"tool_calls": shaped}, ensure_ascii=False)
        record.parsed_calls, record.parse_status, record.parse_error = _decode_calls(shaped)
        executions, tool_io = [], []
        for call, decoded in zip(calls, record.parsed_calls or []):
            span = by_call_id.get(str(call.get("id")))
            if span is None:
                continue
            used.add(id(span))
            entry = _execution_entry(span, decoded)
            if entry is None:
                no_result += 1
                continue
            executions.append(entry[0])
            tool_io.append(entry[1])
        _set_execution(record, executions, tool_io)
        out.records.append(_defaults(record, options, "otel"))
    for span in tools:
        if id(span) in used:
            continue
        arguments = span["attributes"].get("gen_ai.tool.call.arguments")
        if arguments is None:
            no_arguments += 1
            continue
        name = span["attributes"].get("gen_ai.tool.name") or span["name"].split(" ", 1)[-1]
        shaped = _openai_shape([{"id": span["attributes"].get("gen_ai.tool.call.id"), "name": name,
                                 "arguments": arguments}])
        record = Record(record_id=new_record_id(), trace_id=span["trace_id"],
                        timestamp=iso_time(span["start"]) if isinstance(span["start"], float) else (span["start"] or ""))
        record.raw_model_output = json.dumps({"tool_calls": shaped}, ensure_ascii=False)
        record.parsed_calls, record.parse_status, record.parse_error = _decode_calls(shaped)
        entry = _execution_entry(span, (record.parsed_calls or [None])[0]) if record.parsed_calls else None
        if entry is None and record.parsed_calls:
            no_result += 1
        _set_execution(record, [entry[0]] if entry else [], [entry[1]] if entry else [])
        out.records.append(_defaults(record, options, "otel"))
    if no_arguments:
        out.warnings.append(f"{path}: {no_arguments} execute_tool span(s) carry no gen_ai.tool.call.arguments "
                            f"(opt-in in the GenAI conventions: enable capturing tool call content); "
                            f"they are not imported")
    if no_result:
        out.warnings.append(f"{path}: {no_result} tool call(s) carry no gen_ai.tool.call.result (opt-in) and no "
                            f"error.type: their execution is not imported")
    if no_output and not out.records:
        out.warnings.append(f"{path}: {no_output} chat span(s) carry no gen_ai.output.messages (opt-in)")
    if not out.records:
        raise ImportFormatError(f"{path}: no tool call could be imported"
                                + (f" ({'; '.join(w.split(': ', 1)[1] for w in out.warnings)})" if out.warnings else
                                   " (no chat span with tool calls and no execute_tool span)"))
    return out


def _execution_entry(span: dict, call: Optional[dict]) -> Optional[tuple[dict, dict]]:
    attributes = span["attributes"]
    if call is None:
        return None
    if span["error"]:
        error = str(span["error"])
        return ({"call": call, "status": "error", "error": error},
                {"tool": call["name"], "arguments": call["arguments"], "status": "error", "error": error})
    if "gen_ai.tool.call.result" not in attributes:
        return None
    result = _maybe_json(attributes["gen_ai.tool.call.result"])
    return ({"call": call, "status": "ok", "result": result},
            {"tool": call["name"], "arguments": call["arguments"], "status": "ok", "result": result})


def _set_execution(record: Record, executions: list, tool_io: list) -> None:
    if not executions:
        return
    record.execution_result, record.tool_io = storable(executions), storable(tool_io)
    errors = [e["error"] for e in executions if e["status"] == "error"]
    record.execution_status = "error" if errors else "ok"
    record.execution_error = errors[0] if errors else None


__all__ = ["IMPORTERS", "ImportFormatError", "Imported", "Importer", "import_file", "json_documents"]
