"""Detectors: each names what it sees in the operators' vocabulary; the pool keeps the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from fuzzer.records import detect, detectors, scan
from fuzzer.records.detect import DETECTORS, Classifier, classify, in_pool, pool, record_classes
from fuzzer.records.record import Record, new_record_id
from fuzzer.records.store import RecordStore
from strategies._internal.formats import FORMATS, render
from strategies._internal.sample import ANOMALY_CLASSES
from strategies._internal.source import RandomSource
from strategies._internal.tools import builtin_registry
from strategies.errors import UnknownName
from strategies.registry import DuplicateName

REGISTRY = builtin_registry()
CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


def _record(text, status="error", calls=None, **fields) -> Record:
    return Record(record_id=new_record_id(), raw_model_output=text, parse_status=status, parsed_calls=calls, **fields)


#: One output per detector that must fire on it (and the class it must be tagged with).
EXAMPLES = {
    "huge_output": '{"name": "get_weather", "arguments": {"city": "' + "P" * 70_000 + '"}}',
    "deep_nesting": '{"name": "get_weather", "arguments": {"city": ' + "[" * 80 + "]" * 80 + "}}",
    "number_out_of_range": '{"name": "get_weather", "arguments": {"city": 1e999}}',
    "fragment_run": "{" * 5000 + CALL,
    "utf8_bom": "\ufeff" + CALL + ",",
    "smart_quotes": CALL.replace('"', "\u201c", 2),
    "raw_control_char": '{"name": "get_weather", "arguments": {"city": "Pa\nris"}}',
    "lone_surrogate": '{"name": "get_weather", "arguments": {"city": "\\ud83d"}}',
    "invalid_escape": '{"name": "get_weather", "arguments": {"city": "\\x41"}}',
    "unclosed_tag": "<tool_call>" + CALL,
    "misspelled_tag": "<toolcall>" + CALL + "</toolcall>",
    "unclosed_fence": "```json\n" + CALL,
    "mistral_tag_error": "[TOOL_CALL] [" + CALL + "]",
    "llama3_tag_error": "<|python_tag|><|python_tag|>" + CALL,
    "react_keyword_variant": 'action: get_weather\nAction Input: {"city": "Paris"}',
    "double_encoded_arguments": '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}',
    "truncated": '{"name": "get_weather", "arguments": {"city": "Par',
    "missing_closing_brace": '{"name": "get_weather", "arguments": {"city": "Paris"}',
    "trailing_comma": '{"name": "get_weather", "arguments": {"city": "Paris",}}',
    "single_quotes": "{'name': 'get_weather', 'arguments': {'city': 'Paris'}}",
    "python_literals": '{"name": "get_weather", "arguments": {"city": "Paris", "x": None}}',
    "unquoted_keys": '{name: "get_weather", arguments: {city: "Paris"}}',
    "json_comments": '{"name": "get_weather", /* the tool */ "arguments": {"city": "Paris"}}',
    "nan_value": '{"name": "get_weather", "arguments": {"city": NaN}}',
    "trailing_garbage": CALL + "}",
    "duplicate_key": '{"name": "get_weather", "arguments": {"city": "Paris", "city": "Paris"}}',
    "unknown_function": '{"name": "fetch_weather", "arguments": {"city": "Paris"}}',
    "wrong_argument_type": '{"name": "get_weather", "arguments": {"city": 42}}',
    "missing_argument": '{"name": "get_weather", "arguments": {}}',
    "unexpected_argument": '{"name": "get_weather", "arguments": {"city": "Paris", "verbose": true}}',
    "constraint_violation": '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}',
    "duplicate_call": f"[{CALL}, {CALL}]",
    "injection_payload": '{"name": "get_weather", "arguments": {"city": "Paris; rm -rf /"}}',
}
EXECUTION_EXAMPLES = {
    "unexpected_keyword_error": "TypeError: get_weather() got an unexpected keyword argument 'verbose'",
    "missing_argument_error": "TypeError: get_weather() missing 1 required positional argument: 'city'",
    "unknown_tool_error": "LookupError: unknown tool 'fetch_weather'",
}


def test_every_detector_has_an_example_and_a_real_anomaly_class():
    assert set(EXAMPLES) | set(EXECUTION_EXAMPLES) == set(DETECTORS)
    assert all(d.anomaly_class in ANOMALY_CLASSES and d.description for d in DETECTORS.values())


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_detector_fires_on_its_example_with_its_class(name):
    text = EXAMPLES[name]
    tags = classify(_record(text), REGISTRY)
    assert (name, DETECTORS[name].anomaly_class) in [(d, c) for d, c, _ in tags], tags
    evidence = dict((d, e) for d, _, e in tags)[name]
    assert isinstance(evidence, str) and evidence


@pytest.mark.parametrize("name", sorted(EXECUTION_EXAMPLES))
def test_execution_detectors_read_executor_errors(name):
    record = _record(CALL.replace("get_weather", "fetch_weather") if name == "unknown_tool_error" else CALL, "ok",
                     [{"name": "fetch_weather" if name == "unknown_tool_error" else "get_weather",
                       "arguments": {"city": "Paris"}}], execution_status="error",
                     execution_error=EXECUTION_EXAMPLES[name])
    assert name in [d for d, _, _ in classify(record, None)]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), multi=st.booleans(), chatter=st.booleans())
def test_clean_outputs_of_every_format_show_no_anomaly(fmt, seed, multi, chatter):
    from strategies._internal.build import Unbuildable, build_sample

    try:
        sample = build_sample(RandomSource(seed), registry=REGISTRY, tool=REGISTRY["search_flights"], format=fmt,
                              multi=multi, chatter=chatter)
    except Unbuildable:
        return
    tags = classify(_record(sample.text, "ok", sample.calls), REGISTRY)
    assert [t for t in tags if t[0] != "duplicate_call"] == [], (sample.text, tags)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300) | st.from_regex(r"[\[\]{}\"',:a-z0-9\\ \n]{0,80}", fullmatch=True))
def test_detectors_never_raise_on_any_text(text):
    for tags in (classify(_record(text), REGISTRY), classify(_record(text, "ok", [{"name": "x", "arguments": {}}]))):
        assert all(cls in ANOMALY_CLASSES for _, cls, _ in tags)
    scan.repair(text)


def test_a_detector_name_cannot_be_registered_twice():
    with pytest.raises(DuplicateName):
        detectors.detector("trailing_comma", "malformed_json", "text")(lambda ev: None)
    with pytest.raises(ValueError, match="not an anomaly class"):
        detectors.detector("new_one", "made_up_class", "text")


def test_failed_records_no_detector_explains_go_to_the_pool_and_labels_stay(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    yaml_like = _record("name: get_weather\narguments:\n  city: Paris")
    refusal = _record("I cannot help with that.")
    explained = _record(EXAMPLES["trailing_comma"])
    clean = _record(CALL, "ok", [{"name": "get_weather", "arguments": {"city": "Paris"}}])
    with RecordStore(tmp_path / "p.db") as store:
        store.add([yaml_like, refusal, explained, clean])
        assert Classifier(store).run() == 4
        assert Classifier(store).run() == 0  # classified once per detector version
        assert [r.record_id for r in pool(store)] == [yaml_like.record_id, refusal.record_id]
        by_id = {r.record_id: r for r in store.records()}
        assert record_classes(by_id[clean.record_id]) == ["valid"]
        assert record_classes(by_id[explained.record_id]) == ["malformed_json"]
        assert by_id[yaml_like.record_id].anomaly_type == "unknown"

        store.add_label(yaml_like.record_id, "envelope_error", note="YAML instead of JSON", reviewer="ann")
        monkeypatch.setattr(detectors, "DETECTORS_REVISION", detectors.DETECTORS_REVISION + 1)
        assert Classifier(store).run() == 4  # a new detector version classifies everything again
        labeled = store.get(yaml_like.record_id)
        assert labeled.labels == [{"label": "envelope_error", "note": "YAML instead of JSON", "reviewer": "ann",
                                   "created": labeled.labels[0]["created"]}]
        assert labeled.anomaly_type == "envelope_error" and record_classes(labeled) == ["envelope_error"]
        assert not in_pool(labeled)
        assert [r.record_id for r in pool(store)] == [refusal.record_id]
        assert [r.record_id for r in pool(store, include_labeled=True)] == [yaml_like.record_id, refusal.record_id]


def test_labels_must_be_known_classes_unless_new_ones_are_asked_for():
    assert detect.check_label("envelope_error") == "envelope_error"
    assert detect.check_label("valid") == "valid"
    assert detect.check_label("yaml_output", new_class=True) == "yaml_output"
    with pytest.raises(UnknownName, match="did you mean envelope_error"):
        detect.check_label("envelope_eror")


def test_semantic_detectors_use_the_tools_recorded_with_the_record(tmp_path: Path):
    tools = {"book": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    with RecordStore(tmp_path / "t.db") as store:
        store.put_tool_set("sha256:aaaa", tools)
        good = _record('{"name": "book", "arguments": {"n": 1}}', "ok", [{"name": "book", "arguments": {"n": 1}}],
                       tools_hash="sha256:aaaa")
        bad = _record('{"name": "book", "arguments": {"n": "1"}}', "ok", [{"name": "book", "arguments": {"n": "1"}}],
                      tools_hash="sha256:aaaa")
        untooled = _record('{"name": "book", "arguments": {"n": "1"}}', "ok",
                           [{"name": "book", "arguments": {"n": "1"}}])
        store.add([good, bad, untooled])
        Classifier(store).run()
        classes = {r.record_id: record_classes(r) for r in store.records()}
    assert classes == {good.record_id: ["valid"], bad.record_id: ["invalid_argument_type"],
                       untooled.record_id: ["valid"]}


def test_the_scan_reads_prose_around_json_without_false_alarms():
    text = "Here's what I'll do: " + json.dumps({"name": "get_weather", "arguments": {"city": "L'Aquila"}}) + \
           " — let me know if that's right"
    assert classify(_record(text, "ok", [{"name": "get_weather", "arguments": {"city": "L'Aquila"}}]), REGISTRY) == []
