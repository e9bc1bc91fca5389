"""Redaction: secrets never reach the file, and every stored JSON document stays valid."""

from __future__ import annotations

import json
import secrets
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from fuzzer.records.recorder import Recorder
from fuzzer.records.redact import EMAIL_MARKER, Redactor, parse_path
from fuzzer.records.record import JSON_FIELDS, RecordsError
from fuzzer.records.store import RecordStore


@pytest.mark.parametrize("text, secret, kind", [
    ("key sk-proj-AbCdEfGhIjKlMnOpQrStUv123", "AbCdEfGhIjKlMnOpQrStUv123", "api_key"),
    ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz", "api_key"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789", "api_key"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "eyJhbGciOiJIUzI1NiJ9", "bearer_token"),
    ("AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE", "aws_access_key"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "aws_secret_key"),
    ("write to jane.doe+trips@example.co.uk", "jane.doe", "email"),
    ("call +1 (555) 010-2030", "010-2030", "phone"),
    ("call 555-010-2030 now", "555-010-2030", "phone"),
    ("+33 6 12 34 56 78", "12 34 56", "phone"),
    ("card 4111 1111 1111 1111", "4111 1111", "card_number"),
])
def test_default_rules_remove_secrets(text, secret, kind):
    redacted = Redactor().redact_text(text)
    assert (EMAIL_MARKER if kind == "email" else f"[REDACTED:{kind}]") in redacted
    assert secret not in redacted


@pytest.mark.parametrize("text", [
    "on 2026-12-05 at 10:30", "flight TF1234 for 2 passengers", "id 1733400000", "ip 192.168.1.100",
    "price 1234.56 EUR", "4111111111111112 is not a card", "sk-short", "bearer of bad news", "user@localhost",
])
def test_default_rules_leave_ordinary_values_alone(text):
    assert Redactor().redact_text(text) == text


secret_values = st.sampled_from(["sk-" + "a1B2" * 6, "bob@example.com", "+1 555 010 2030", "AKIAIOSFODNN7EXAMPLE",
                                 "Bearer abc.def.ghijkl"])
plain = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
leaves = st.one_of(plain, st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none(),
                   st.builds(lambda a, s, b: f"{a} {s} {b}", plain, secret_values, plain))
documents = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(plain | secret_values, inner, max_size=4), max_leaves=20)


SECRETS = ("sk-a1B2a1B2", "bob@example.com", "555 010 2030", "AKIAIOSFODNN7EXAMPLE", "abc.def.ghijkl")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@settings(max_examples=200, deadline=None)
@given(document=documents)
def test_redacted_documents_stay_valid_json_and_hold_no_secret(document):
    redacted = Redactor().redact_json(document)
    text = json.dumps(redacted, ensure_ascii=False, allow_nan=False)
    assert json.loads(text) == redacted
    for value in _strings(redacted):
        for secret in SECRETS:
            assert secret not in value


@settings(max_examples=100, deadline=None)
@given(document=documents)
def test_redacting_the_raw_text_of_a_json_document_keeps_it_json(document):
    raw = json.dumps(document, ensure_ascii=True)  # escapes everything non-ASCII: secrets may hide in \\u
    decoded = json.loads(Redactor().redact_text(raw))  # still JSON
    for value in _strings(decoded):
        for secret in SECRETS:
            assert secret not in value


def test_escaped_secrets_inside_json_strings_are_found():
    raw = '{"q": "s\\u006b-abcdefghijklmnopqrstuv", "mail": "bob\\u0040example.com"}'
    redacted = Redactor().redact_text(raw)
    assert json.loads(redacted) == {"q": "[REDACTED:api_key]", "mail": EMAIL_MARKER}


def test_keys_and_paths_blank_values_keep_types_and_scrub_the_raw_text():
    redactor = Redactor(keys=["password"], paths=["$.tool_io[*].result.token", "$..card"])
    record = {
        "raw_model_output": '{"name": "login", "arguments": {"user": "ann", "password": "hunter2!x", "card": 4111111111111111}}',
        "parsed_calls": [{"name": "login", "arguments": {"user": "ann", "password": "hunter2!x", "card": 4111111111111111}}],
        "tool_io": [{"tool": "login", "result": {"token": "tok-991", "ok": True}}],
        "execution_result": None, "metadata": None, "parse_error": None,
        "execution_error": "LoginError: bad password hunter2!x", "final_reply": "your token is tok-991",
    }
    redactor.redact_record(record)
    assert record["parsed_calls"][0]["arguments"] == {"user": "ann", "password": "[REDACTED]", "card": 0}
    assert record["tool_io"][0]["result"] == {"token": "[REDACTED]", "ok": True}
    for name in ("raw_model_output", "execution_error", "final_reply"):
        assert "hunter2!x" not in record[name] and "tok-991" not in record[name]
    assert json.loads(record["raw_model_output"])["arguments"] == record["parsed_calls"][0]["arguments"]


@pytest.mark.parametrize("path", ["$.a..", "$[x]", "", "$.a[-1]"])
def test_bad_paths_are_refused_in_one_line(path):
    with pytest.raises(RecordsError, match="redaction path"):
        parse_path(path)


def test_bad_patterns_are_refused_in_one_line():
    with pytest.raises(RecordsError, match="redaction pattern 'broken'"):
        Redactor(patterns={"broken": "(unclosed"})


def test_a_canary_secret_never_reaches_the_file(tmp_path: Path):
    """The must-show: a canary in arguments, results, errors, the reply and metadata, recorded
    through every wrapper, is in none of the database's files; every JSON document is valid."""
    canary = "sk-canary" + secrets.token_hex(12)
    password = "zebra-" + secrets.token_hex(6)
    email = f"canary.{secrets.token_hex(4)}@example.org"
    path = tmp_path / "canary.db"
    recorder = Recorder(db=path, enabled=True, redactor=Redactor(keys=["password"]),
                        tools=[{"name": "login", "description": f"key {canary}",
                                "input_schema": {"type": "object"}}])

    @recorder.parser
    def parse(text):
        if "broken" in text:
            raise ValueError(f"cannot parse {text}")
        return json.loads(text)

    @recorder.tool
    def login(user, password, api_key):
        if user == "eve":
            raise PermissionError(f"{user} may not use {api_key} ({password})")
        return {"session": f"Bearer {canary}", "echo": password, "contact": email}

    @recorder.executor
    def execute(call):
        return login(**call["arguments"])

    outputs = [json.dumps([{"name": "login", "arguments": {"user": user, "password": password, "api_key": canary}}])
               for user in ("ann", "eve")]
    outputs.append(json.dumps({"name": "login", "arguments": {"password": password, "key": canary}},
                              ensure_ascii=True).replace("sk", "s\\u006b") + " broken")
    for text in outputs:
        with recorder.turn(session_id="s", metadata={"auth": f"Bearer {canary}"}) as turn:
            try:
                for call in parse(text):
                    execute(call)
            except Exception as exc:  # noqa: BLE001
                turn.final_reply = f"failed: {exc} - write to {email}"
            else:
                turn.final_reply = f"done with {canary} for {email}"
    recorder.close()
    with RecordStore(path) as store:
        assert store.count() == 3
        conn = store.conn
        for column in JSON_FIELDS:
            assert conn.execute(f"SELECT count(*) FROM records WHERE {column} IS NOT NULL "
                                f"AND NOT json_valid({column})").fetchone()[0] == 0
        records = store.records()
    assert any(r.execution_status == "error" for r in records) and any(r.parse_status == "error" for r in records)
    for file in tmp_path.iterdir():
        data = file.read_bytes()
        for secret in (canary, password, email, canary.encode().hex()):
            assert secret.encode() not in data, (file.name, secret)
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
