"""Records from OpenAI chat completions (completion objects, ``{request, response}`` pairs, Batch
output lines) and from vcrpy cassettes whose responses are chat completions (plain, gzipped or
streamed): the ``openai`` and ``vcr`` importers."""

from __future__ import annotations

import gzip
import json
from typing import Any, Optional

from fuzzer.records.record import Record, new_record_id
from fuzzer.records.values import iso_time, storable
from fuzzer.records.import_base import ImportFormatError, Imported, _defaults, _numbered, _yaml, importer

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


__all__ = ["import_openai", "import_vcr"]
