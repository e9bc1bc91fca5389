"""Seeds from recorded outputs and class weights from production, driving the real engine parts."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from fuzzer.harnesses.parser import schedule
from fuzzer.harnesses.parser.oracle import RAW_FORMAT, Oracle
from fuzzer.records.inject import (RECORDED_FORMAT, class_weights, fuzz_seeds, mutated_seeds, seed_samples,
                                   text_mutations)
from fuzzer.records.record import Record, new_record_id
from fuzzer.records.store import RecordStore
from fuzzer.targets import records_app
from fuzzer.targets.records_app import TOOLS
from strategies._internal.mutations import OPERATORS
from strategies._internal.sample import ANOMALY_CLASSES
from strategies._internal.tools import _from_data
from tests.integration.corpus_targets.harness import run_inprocess

REGISTRY = _from_data(TOOLS, "records_app.TOOLS")
WEATHER = {"name": "get_weather", "arguments": {"city": "Paris"}}
FLIGHT = {"name": "search_flights", "arguments": {"origin": "CDG", "destination": "JFK", "date": "2026-05-01"}}


def _record(text, status="ok", calls=None, **fields) -> Record:
    return Record(record_id=new_record_id(), raw_model_output=text, parse_status=status, parsed_calls=calls,
                  tools_hash="sha256:app", **fields)


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "seeds.db"
    with RecordStore(path) as store:
        store.put_tool_set("sha256:app", TOOLS)
        store.add([
            _record(json.dumps(WEATHER), calls=[WEATHER], execution_status="ok"),
            _record(json.dumps(WEATHER), calls=[WEATHER], execution_status="ok"),  # the same output again
            _record(json.dumps(WEATHER)[:-2] + ",}}", calls=[WEATHER], execution_status="ok"),  # repaired
            _record(json.dumps([WEATHER, FLIGHT]), calls=[WEATHER, FLIGHT], execution_status="ok"),
            _record('{"name": "get_wether", "arguments": {"city": "Paris"}}', calls=[dict(WEATHER, name="get_wether")],
                    execution_status="error", execution_error="LookupError: unknown tool 'get_wether'"),
            _record(json.dumps(FLIGHT), calls=[FLIGHT], execution_status="error", execution_error="TimeoutError: slow"),
            _record("name: get_weather", status="error", parse_error="ValueError: not JSON"),
            _record('{"name": "get_weather", "arguments": {"city": NaN}}',
                    calls=[{"name": "get_weather", "arguments": {"city": {"$float": "nan"}}}]),
        ])
    return str(path)


def test_seeds_carry_the_recorded_truth_only_where_the_record_vouches_for_it(db: str):
    pairs = seed_samples(db, REGISTRY, with_ids=True)
    by_text = {s.text: (s, ids) for s, ids in pairs}
    assert len(pairs) == 7  # one per distinct output
    clean, ids = by_text[json.dumps(WEATHER)]
    assert (clean.format, clean.anomaly_class, clean.truth_known, clean.calls) == (RECORDED_FORMAT, None, True, [WEATHER])
    assert len(ids) == 2
    repaired = by_text[json.dumps(WEATHER)[:-2] + ",}}"][0]
    assert (repaired.anomaly_class, repaired.truth_known, repaired.calls) == ("malformed_json", True, [WEATHER])
    typo = by_text['{"name": "get_wether", "arguments": {"city": "Paris"}}'][0]
    assert (typo.anomaly_class, typo.truth_known) == ("unknown_function", True)  # read right, the model erred
    for text in (json.dumps(FLIGHT), "name: get_weather", '{"name": "get_weather", "arguments": {"city": NaN}}'):
        sample = by_text[text][0]
        assert (sample.format, sample.truth_known, sample.calls) == (RAW_FORMAT, False, None)
    only_flights = seed_samples(db, REGISTRY, tool="search_flights", include_raw=False)
    assert [s.calls for s in only_flights] == [[WEATHER, FLIGHT]]


def test_the_operators_mutate_recorded_calls_and_state_the_truth(db: str):
    seeds = seed_samples(db, REGISTRY)
    mutated = mutated_seeds(seeds, REGISTRY, seed=3, per_seed=6)
    assert mutated
    for sample in mutated:
        operator = OPERATORS[sample.operator]
        assert sample.anomaly_class == operator.anomaly_class and sample.truth_known
        assert sample.text not in {s.text for s in seeds}
    assert len({s.anomaly_class for s in mutated}) >= 3
    edits = text_mutations(seeds, seed=1, per_seed=3)
    assert len(edits) == 3 * len(seeds) and all(not s.truth_known for s in edits)


def _in_process(parse):
    """What a worker pool's ``run`` reports for each text, computed in this process."""
    return lambda texts, **_: [run_inprocess(parse, text) for text in texts]


def test_seeds_find_the_planted_bug_the_recorded_outputs_reach(db: str):
    seeds = seed_samples(db, REGISTRY)
    findings = fuzz_seeds(seeds, _in_process(records_app.parse_v4), Oracle(REGISTRY, "parse"))
    keys = {f.signature.key for f in findings}
    assert "corruption|calls:fewer" in keys  # v4 keeps only the first of two recorded calls
    # production's parser: clean
    assert fuzz_seeds(seeds, _in_process(records_app.parse_v3), Oracle(REGISTRY, "parse")) == []




def test_class_weights_follow_production_with_a_floor(db: str):
    weights = class_weights(db, floor=0.1)
    assert set(weights) == set(ANOMALY_CLASSES)
    assert weights["malformed_json"] > 1 and weights["unknown_function"] > 1
    assert weights["injection_payload"] == 0.1  # never seen: still tried
    # two malformed records (a trailing comma, a NaN), one unknown function
    assert weights["malformed_json"] == pytest.approx(2 * weights["unknown_function"])


def test_class_weights_of_a_clean_database_are_uniform(tmp_path: Path):
    path = tmp_path / "clean.db"
    with RecordStore(path) as store:
        store.add([_record(json.dumps(WEATHER), calls=[WEATHER], execution_status="ok")])
    assert set(class_weights(str(path)).values()) == {1.0}


def _class_draws(seed: int, weights: dict | None = None) -> Counter:
    tool = REGISTRY["get_weather"]
    arms = {"json": [name for name, op in OPERATORS.items() if op.applies(tool, "json")]}
    scheduler = schedule.Scheduler(seed=seed, formats={"json": (False, False)}, arms=arms,
                                   operator_class={n: o.anomaly_class for n, o in OPERATORS.items()},
                                   class_weights=weights)
    counts: Counter = Counter()
    for _ in range(400):
        _variation, ops = scheduler.next_family(6)
        counts.update(OPERATORS[op].anomaly_class if op else "valid" for op in ops)
    return counts


def test_weights_from_production_steer_the_campaign_scheduler():
    plain = _class_draws(7)
    production = {name: 0.1 for name in ANOMALY_CLASSES}
    production["truncated_output"] = 8.0
    steered = _class_draws(7, production)
    share = lambda c: c["truncated_output"] / sum(c.values())  # noqa: E731
    assert share(steered) > 3 * share(plain)
    assert steered["malformed_json"] < plain["malformed_json"]
