"""Records from OpenTelemetry GenAI spans exported as JSON (OTLP ``resourceSpans`` or the SDK's
console exporter objects): the ``otel`` importer."""

from __future__ import annotations

import json
from typing import Any, Iterator, Optional

from fuzzer.records.record import Record, RecordsError, new_record_id
from fuzzer.records.values import iso_time, storable
from fuzzer.records.import_base import ImportFormatError, Imported, _defaults, importer, json_documents
from fuzzer.records.import_openai import _decode_calls, _maybe_json

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
    from fuzzer.records.values import parse_since

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


__all__ = ["import_otel"]
