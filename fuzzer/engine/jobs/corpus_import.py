"""``fuzz corpus import --records DB`` as a job: recorded production outputs that fail on a parser
become corpus entries.

Every distinct raw output of the records (those the filters select) runs on the target in isolated
workers and is judged: where a record says its parse was right, the recorded calls are the truth
(false_reject and corruption are judged); other records for robustness only (crash, hang, non-call
returns). One entry per signature (its smallest input), each keeping the id of the record it came
from and of the others that showed the same failure. Entries are written through the one corpus
write route (:func:`fuzzer.engine.corpus_writer.store_finding`): an output that shows the bug of an
entry marked fixed is a regression (exit 1), and that entry stays fixed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from fuzzer.engine.corpus_writer import REGRESSION, regression_line, store_finding
from fuzzer.engine.decisions import corpus_write_exit_code
from fuzzer.engine.events import FindingRecorded, JobStarted, NonFatalError, Phase, PhaseStarted
from fuzzer.engine.harness import ReplayContext
from fuzzer.engine.pipeline import Job
from fuzzer.engine.results import FAILED, JobResult, TestCase

#: Seconds spent shrinking one imported crash or hang (as text: a record has no recipe).
IMPORT_SHRINK_S = 5.0


@dataclass
class ImportResult(JobResult):
    job: str = "corpus import"
    db: str = ""
    outputs: int = 0  # distinct recorded outputs run
    judged: int = 0  # ... of which with a known truth
    #: (what, finding, record ids): what the store did (added / replaced / kept), or "regression"
    stored: list = field(default_factory=list)

    @property
    def regressions(self) -> list:
        return [f for what, f, _ids in self.stored if what == REGRESSION]

    def outcome_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for what, _f, _ids in self.stored:
            counts[what] = counts.get(what, 0) + 1
        return counts

    def summary_lines(self) -> list[str]:
        lines = []
        for what, finding, ids in self.stored:
            more = f" (+{len(ids) - 1} more record(s))" if len(ids) > 1 else ""
            where = f" from record {ids[0] if ids else None}{more}"
            lines.append(regression_line(finding.signature.id, finding.signature.title, where) if what == REGRESSION
                         else f"{what:<9} {finding.signature.id} ({finding.signature.title}){where}")
        counts = self.outcome_counts()
        lines.append(f"{self.outputs} distinct recorded outputs ({self.judged} with a known truth): "
                     f"{len(self.stored)} failing signature(s)"
                     + (": " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) if counts else ""))
        return lines

    def test_cases(self) -> list[TestCase]:
        return [TestCase("toolfuzz.corpus_import", f.signature.id, FAILED,
                         f"{what}: {f.title}" + (": an entry marked fixed fails again" if what == REGRESSION else ""))
                for what, f, _ids in self.stored]

    def to_report(self) -> dict[str, Any]:
        return {"job": self.job, "db": self.db, "target": self.label, "outputs": self.outputs, "judged": self.judged,
                "problem": self.problem, "regressions": [f.signature.id for f in self.regressions],
                "stored": [{"what": w, "records": ids, **f.to_report()} for w, f, ids in self.stored]}


def recorded_registry(records: Any) -> Optional[Any]:
    """The tools recorded with the records, when they all share one tool set (else None)."""
    from fuzzer.records.detect import Classifier

    hashes = [row[0] for row in records.conn.execute("SELECT tools_hash FROM tool_sets")]
    return Classifier(records).registry_for(hashes[0]) if len(hashes) == 1 else None


class CorpusImportJob(Job):
    """Import the records of ``db`` (those ``filters`` select) that fail on ``reference`` into
    ``store``. ``context``: the registry (None with no ``tools_file``: the recorded tools when they
    share one tool set, else the built-in ones), level, timeout, memory limit and declared rejections."""

    name = "corpus import"

    def __init__(self, store: Any, db: str, reference: str, context: ReplayContext, *, filters: Any = None,
                 shrink: bool = True, version: Optional[str] = None):
        super().__init__()
        self.store, self.db, self.reference, self.context = store, db, reference, context
        self.filters, self.shrink, self.version = filters, shrink, version
        self.result_ = ImportResult(db=db, label=reference)
        self._t0 = time.monotonic()

    def run(self) -> Iterator[Any]:
        from fuzzer.harnesses.parser.harness import target_spec
        from fuzzer.harnesses.parser.oracle import Oracle
        from fuzzer.isolation import WorkerPool
        from fuzzer.records.detect import Classifier
        from fuzzer.records.inject import fuzz_seeds, seed_samples
        from fuzzer.records.record import RecordFilter
        from fuzzer.records.store import RecordStore

        yield JobStarted(job=self.name, label=self.reference, settings={"db": self.db})
        yield PhaseStarted(Phase.LOADING, self.db)
        r, context = self.result_, self.context
        filters = self.filters or RecordFilter()
        with RecordStore(self.db, must_exist=True) as records:
            classifier = Classifier(records)
            classifier.run()
            for problem in classifier.problems:
                yield NonFatalError(problem)
            registry = context.registry
            if context.tools_file is None:
                registry = recorded_registry(records) or registry
            if registry is None:
                from strategies._internal.tools import builtin_registry

                registry = builtin_registry()
            pairs = seed_samples(records, registry, filters=filters, with_ids=True)
        if not pairs:
            r.problem = (f"{self.db}: no records with a raw output to import"
                         + (" match the filters" if filters.where()[0] else ""))
            return
        ids_of = {sample.text: ids for sample, ids in pairs}
        samples = [sample for sample, _ in pairs]
        r.outputs, r.judged = len(samples), sum(1 for sample in samples if sample.truth_known)
        level = context.level
        oracle = Oracle(registry, level)
        yield PhaseStarted(Phase.REPLAYING, self.db)
        with WorkerPool(target_spec(self.reference, context)) as pool:
            members: dict = {}
            findings = fuzz_seeds(samples, pool.run, oracle, registry=registry,
                                  shrink_budget_s=IMPORT_SHRINK_S if self.shrink else 0.0, members=members)
            r.executions = len(samples)
            for finding in findings:
                all_ids = [rid for s in members.get(finding.signature.id, [finding.sample])
                           for rid in ids_of.get(s.text, [])]
                first = ids_of.get(finding.sample.text, all_ids)[:1] or all_ids[:1]
                finding.target, finding.level = self.reference, level
                entry = finding.to_entry(target=self.reference, version=self.version)
                entry.scenario = {"record_id": first[0] if first else None, "records": all_ids[:100], "db": self.db}
                stored = store_finding(self.store, finding, target=self.reference, entry=entry)
                ids = ([first[0]] if first else []) + [rid for rid in all_ids if rid not in first]
                r.stored.append((REGRESSION if stored.regression else stored.what, finding, ids))
                yield FindingRecorded(finding)
        for problem in self.store.problems:
            yield NonFatalError(f"skipped {problem}")

    def result(self) -> ImportResult:
        r = self.result_
        r.findings = [f for _what, f, _ids in r.stored]
        r.elapsed_s = time.monotonic() - self._t0
        r.stop_reason = self.stop_reason
        return r

    def exit_code(self, result: ImportResult) -> int:
        return corpus_write_exit_code(regressions=len(result.regressions), interrupted=self.interrupted,
                                      nothing_tested=result.problem)


__all__ = ["CorpusImportJob", "IMPORT_SHRINK_S", "ImportResult", "recorded_registry"]
