"""Classifying records: which anomaly classes each recorded output shows (the detectors of
:mod:`fuzzer.records.detectors`, run once per record and kept in the store), its primary class, the
distribution per parser version and session, and the unknown-anomaly pool.

A record that failed (parse error, invalid return, a repair the application reported, an
execution error) and that no detector explains belongs to the **unknown-anomaly pool**
(``fuzz records pool``). A reviewer's label (:meth:`RecordStore.add_label`) is kept forever and
becomes the record's class; classification never overwrites it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable, Optional

from fuzzer.records.detectors import DETECTORS, Evidence, detectors_version
from fuzzer.records.record import Record, RecordFilter
from fuzzer.records.store import RecordStore
from strategies._internal.sample import ANOMALY_CLASSES
from strategies.registry import Registry

#: Labels a reviewer may give besides the anomaly classes.
EXTRA_LABELS = ("valid",)
FAILED_PARSE = ("error", "invalid", "repaired")


# --------------------------------------------------------------------------------------------
# Classification


def needs_review(record: Record) -> bool:
    """A failed record: its parse failed, returned a non-call or was repaired, or its
    execution failed."""
    return record.parse_status in FAILED_PARSE or record.execution_status == "error"


def classify(record: Record, registry: Any = None) -> list[tuple[str, str, str]]:
    """The (detector, anomaly class, evidence) tags of ``record``, in detector order."""
    ev = Evidence(record=record, registry=registry)
    tags: list[tuple[str, str, str]] = []
    text_stage = bool(ev.text) and not ev.clean
    for det in DETECTORS.values():
        if det.stage in ("always", "text") and not ev.text:
            continue
        if det.stage == "text" and not text_stage:
            continue
        if det.stage == "calls" and not ev.calls:
            continue
        try:
            words = det.check(ev)
        except Exception:  # noqa: BLE001 - a detector bug must not hide what the others found
            continue
        if words:
            tags.append((det.name, det.anomaly_class, words))
    return tags


def primary_class(record: Record, tags: list) -> Optional[str]:
    """The record's class for ``anomaly_type``: its first tag's, ``unknown`` for a failed
    record no detector explains, None for a clean one."""
    if tags:
        return tags[0][1]
    return "unknown" if needs_review(record) else None


def record_classes(record: Record) -> list[str]:
    """The classes a record counts under in statistics: its latest label; else the recorder's
    anomaly type and its tags' classes; else ``unknown`` (the pool) or ``valid``."""
    if record.labels:
        return [record.labels[-1]["label"]]
    classes: list[str] = []
    if record.anomaly_source == "recorder" and record.anomaly_type:
        classes.append(record.anomaly_type)
    for _detector, cls, _evidence in record.tags:
        if cls not in classes:
            classes.append(cls)
    if classes:
        return classes
    return ["unknown"] if needs_review(record) else ["valid"]


def in_pool(record: Record) -> bool:
    """Unexplained: failed, no tag, no label, no class from the recorder."""
    return needs_review(record) and not record.tags and not record.labels and record.anomaly_source != "recorder"


def check_label(label: str, *, new_class: bool = False) -> str:
    """A reviewer label: an anomaly class, ``valid``, or (``new_class``) a new name."""
    if label in ANOMALY_CLASSES or label in EXTRA_LABELS:
        return label
    if new_class and re.fullmatch(r"[a-z][a-z0-9_]{1,40}", label):
        return label
    from strategies.errors import UnknownName

    known = Registry("label")
    for name in list(ANOMALY_CLASSES) + list(EXTRA_LABELS):
        known.register(name, name, module=__name__)
    hint = " (or pass --new-class to introduce a snake_case class name)"
    raise UnknownName(known.unknown_message(label) + hint)


class Classifier:
    """Classifies a store's records once per detector version (results saved in the store), with
    one tools registry per recorded tool set."""

    def __init__(self, store: RecordStore):
        self.store = store
        self.version = detectors_version()
        self._registries: dict[Optional[str], Any] = {}
        self.problems: list[str] = []

    def registry_for(self, tools_hash: Optional[str]) -> Any:
        if tools_hash not in self._registries:
            registry = None
            data = self.store.tool_set(tools_hash)
            if data is not None:
                from strategies._internal.tools import _from_data
                from strategies.errors import ToolfuzzError

                try:
                    registry = _from_data(data, f"{self.store.path} tool set {tools_hash}")
                except ToolfuzzError as exc:
                    self.problems.append(str(exc))
            self._registries[tools_hash] = registry
        return self._registries[tools_hash]

    def run(self) -> int:
        """Classify every record not classified by this version; returns how many."""
        pending = self.store.unclassified(self.version)
        if not pending:
            return 0
        results = []
        for record in pending:
            tags = classify(record, self.registry_for(record.tools_hash))
            results.append((record.record_id, tags, primary_class(record, tags)))
            if len(results) >= 500:
                self.store.save_classification(results, self.version)
                results = []
        if results:
            self.store.save_classification(results, self.version)
        return len(pending)


def class_distribution(records: Iterable[Record], by: str) -> dict[str, Counter]:
    """{group (the record's ``by`` field): Counter(class -> records)}, plus ``"records"`` counts
    under the key ``""`` of each counter."""
    groups: dict[str, Counter] = {}
    for record in records:
        key = getattr(record, by) or "-"
        counter = groups.setdefault(key, Counter())
        counter[""] += 1
        for cls in record_classes(record):
            counter[cls] += 1
    return groups


def pool(store: RecordStore, flt: Optional[RecordFilter] = None, *, include_labeled: bool = False) -> list[Record]:
    """The unknown-anomaly pool: failed records no detector explains (with ``include_labeled``,
    also those a reviewer has labeled since)."""
    out = []
    for record in store.iter_records(flt):
        if in_pool(record) or (include_labeled and record.labels and needs_review(record) and not record.tags):
            out.append(record)
    return out


__all__ = ["DETECTORS", "EXTRA_LABELS", "FAILED_PARSE", "Classifier", "check_label", "class_distribution", "classify",
           "in_pool", "needs_review", "pool", "primary_class", "record_classes"]
