"""Record production tool calls, replay them against a new parser, fuzz from what models really sent.

* :mod:`fuzzer.records.recorder` — runs inside users' applications (imports only the standard
  library and this package's store and redaction);
* :mod:`fuzzer.records.record` — a record, its fields and statuses, its id, the record filters;
* :mod:`fuzzer.records.values` — what a record's JSON columns can hold, and its times;
* :mod:`fuzzer.records.store` — the SQLite store (WAL, versioned schema);
* :mod:`fuzzer.records.writer` — the background writer the recorder stores through;
* :mod:`fuzzer.records.redact` — secrets scrubbed before anything is written;
* :mod:`fuzzer.records.detect` — detectors tagging anomaly classes, the unknown-anomaly pool;
* :mod:`fuzzer.records.replay` — the replay job (parse_match, execution_match, baselines);
* :mod:`fuzzer.records.importers` — OpenAI logs, OpenTelemetry GenAI spans, vcrpy cassettes;
* :mod:`fuzzer.records.inject` — recorded outputs as campaign seeds and class weights.

This module imports nothing, so ``import fuzzer.records.recorder`` stays light.
"""
