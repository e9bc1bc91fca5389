"""The corpus maintenance jobs: ``fuzz corpus add``, ``fuzz minimize`` and ``fuzz corpus cmin``.

Each is engine code on the pipeline (no printing, no exiting): a job whose result says what it did
(``summary_lines`` for the console, ``to_report`` for the JSON report).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from fuzzer.engine.budget import Budget
from fuzzer.engine.corpus_writer import REGRESSION, regression_line, store_finding
from fuzzer.engine.decisions import corpus_maintenance_exit_code, corpus_write_exit_code, minimize_exit_code
from fuzzer.engine.events import FindingRecorded, JobStarted, NonFatalError, Phase, PhaseStarted
from fuzzer.harnesses.parser.findings import Finding
from fuzzer.harnesses.parser.oracle import Oracle, Verdict
from fuzzer.engine.pipeline import Job
from fuzzer.engine.results import FAILED, PASSED, JobResult, TestCase
from fuzzer.harnesses.parser.harness import shown_path_signature
from fuzzer.harnesses.parser.shrink import FindingShrinker

#: Seconds ``corpus add`` spends shrinking one input at most.
ADD_SHRINK_S = 20.0


def _finding(oracle: Oracle, sample: Any, outcome: Any, judgment: Any, *, target: str, level: str,
             reject_on: tuple = (), reproduce_dir: Optional[str] = None, timeout: Optional[float] = None) -> Finding:
    finding = Finding(signature=oracle.signature(sample, judgment, outcome), verdict=judgment.verdict,
                      reason=judgment.reason, sample=sample, outcome=outcome, target=target, level=level,
                      reject_on=tuple(reject_on), reproduce_dir=reproduce_dir)
    if judgment.verdict is Verdict.HANG:
        finding.timeout = timeout  # as the campaign records it: its reproducer and margin use it
    return finding


def _shrink_into(finding: Finding, shrinker: FindingShrinker, oracle: Oracle, budget_s: float,
                 max_tests: int = 4000) -> None:
    shrunk = shrinker.shrink(finding.sample, finding.outcome, finding.verdict, finding.oracle_id,
                             budget_s=budget_s, max_tests=max_tests, hang_timeout=finding.timeout)
    finding.adopt_minimized(shrunk.sample, shrunk.observation, oracle, complete=shrunk.complete, note=shrunk.note,
                            one_minimal=shrunk.one_minimal)


def _file_as_campaign_does(finding: Finding, oracle: Oracle, run: Any) -> None:
    """A corruption is filed by the functions its shown (minimized) input runs, as the campaign
    files it, so `corpus add` and `minimize` name the signature a corpus entry of it has."""
    keyed = shown_path_signature(oracle, finding, run)
    if keyed is not None and keyed.id != finding.signature.id:
        finding.match_id = finding.match_id or finding.signature.id  # the oracle's: what shrinking kept
        finding.signature = keyed


# -- corpus add ------------------------------------------------------------------------------------

@dataclass
class AddResult(JobResult):
    job: str = "corpus add"
    inputs: int = 0
    #: (what, finding): what is added / replaced / kept, or "regression" for an input that shows
    #: the bug of an entry marked fixed (stored, and the entry kept fixed)
    stored: list = field(default_factory=list)
    passed: int = 0

    @property
    def regressions(self) -> list:
        return [f for what, f in self.stored if what == REGRESSION]

    def outcome_counts(self) -> dict[str, int]:
        """passed / added / replaced / kept / regression -> how many inputs."""
        counts = {"passed": self.passed}
        for what, _ in self.stored:
            counts[what] = counts.get(what, 0) + 1
        return {k: n for k, n in counts.items() if n}

    def summary_lines(self) -> list[str]:
        out = [(regression_line(f.signature.id, f.title) if what == REGRESSION else
                f"{what:<9} {f.signature.id} ({f.title})") + ("" if f.is_minimized else " (not minimized)")
               for what, f in self.stored]
        out.append(f"{self.inputs} inputs: " + ", ".join(f"{n} {k}" for k, n in sorted(self.outcome_counts().items())))
        return out

    def test_cases(self) -> list[TestCase]:
        cases = [TestCase("toolfuzz.corpus_add", f.signature.id, FAILED,
                          f"{what}: {f.title}" + (": an entry marked fixed fails again" if what == REGRESSION else ""))
                 for what, f in self.stored]
        cases += [TestCase("toolfuzz.corpus_add", f"input {i}", PASSED) for i in range(self.passed)]
        return cases

    def to_report(self) -> dict[str, Any]:
        return {"inputs": self.inputs, "passed": self.passed,
                "regressions": [f.signature.id for f in self.regressions],
                "stored": [{"what": w, **f.to_report()} for w, f in self.stored]}



class CorpusAddJob(Job):
    """Run captured outputs on the target; store those that fail (minimized) in ``store``."""

    name = "corpus add"

    def __init__(self, store: Any, samples: list, pool: Any, registry: Any, *, level: str, target: str,
                 version: Optional[str], shrink: bool = True, reject_on: tuple = (),
                 reproduce_dir: Optional[str] = None):
        super().__init__()
        self.reproduce_dir = reproduce_dir
        self.store, self.samples, self.pool, self.registry = store, samples, pool, registry
        self.level, self.target, self.version, self.shrink, self.reject_on = level, target, version, shrink, reject_on
        self.oracle = Oracle(registry, level)
        self.result_ = AddResult(label=target, inputs=len(samples))

    def run(self) -> Iterator[Any]:
        yield JobStarted(job=self.name, label=self.target, settings={"inputs": len(self.samples)})
        self.store.entries()  # reads the corpus: files that are not valid entries are reported
        for problem in self.store.problems:
            yield NonFatalError(f"skipped {problem}")
        self.pool.start()
        outcomes = self.pool.run([s.text for s in self.samples])
        shrinker = FindingShrinker(self.pool.run, self.oracle, self.registry)
        for sample, outcome in zip(self.samples, outcomes):
            judgment = self.oracle.judge(sample, outcome)
            self.result_.executions += 1
            if not judgment.failed:
                self.result_.passed += 1
                continue
            finding = _finding(self.oracle, sample, outcome, judgment, target=self.target, level=self.level,
                               reject_on=self.reject_on, reproduce_dir=self.reproduce_dir,
                               timeout=self.pool.spec.timeout)
            if self.shrink:
                yield PhaseStarted(Phase.SHRINKING, finding.signature.id)
                _shrink_into(finding, shrinker, self.oracle, ADD_SHRINK_S)
            elif finding.timeout is not None:  # a hang is stored with margin, shrunk or not
                kept = shrinker.with_hang_margin(finding.sample, finding.outcome, finding.oracle_id,
                                                 hang_timeout=finding.timeout, budget_s=ADD_SHRINK_S)
                note = "; ".join(n for n in ("not minimized: --no-shrink", kept.note) if n)
                if kept.sample is not finding.sample:
                    finding.adopt_minimized(kept.sample, kept.observation, self.oracle, complete=False, note=note)
                finding.shrink_note = note
            else:
                finding.shrink_note = "not minimized: --no-shrink"
            _file_as_campaign_does(finding, self.oracle, self.pool.run)
            stored = store_finding(self.store, finding, target=self.target, version=self.version)
            self.result_.stored.append((REGRESSION if stored.regression else stored.what, finding))
            yield FindingRecorded(finding)

    def result(self) -> AddResult:
        self.result_.findings = [f for _, f in self.result_.stored]
        self.result_.stop_reason = self.stop_reason
        return self.result_

    def exit_code(self, result: AddResult) -> int:
        return corpus_write_exit_code(regressions=len(result.regressions), interrupted=self.interrupted)


# -- minimize --------------------------------------------------------------------------------------


@dataclass
class MinimizeResult(JobResult):
    job: str = "minimize"
    sample: Any = None
    finding: Optional[Finding] = None
    outcome: Any = None  # when it does not fail
    path: str = ""  # the file the input came from

    def summary_lines(self) -> list[str]:
        from fuzzer.engine.text import preview

        f = self.finding
        if f is None:
            return [f"{self.path or 'the input'}: {self.problem}"]  # the one line (not an error: an answer)
        note = f" ({f.shrink_note})" if f.shrink_note else ""
        return [f"signature: {f.signature.id} ({f.title})",
                f"size: {len(f.sample.text):,} -> {len(f.best.text):,} characters{note}",
                f"{'minimized' if f.is_minimized else 'smallest found'}: {preview(f.best.text, 2000)}",
                f"reproduce: {f.reproduce}"]

    def to_report(self) -> dict[str, Any]:
        return {"input": self.sample.text if self.sample is not None else None,
                "failure": self.finding.to_report() if self.finding is not None else None,
                "problem": self.problem}


class MinimizeJob(Job):
    """Shrink one failing output to a 1-minimal one with the same signature."""

    name = "minimize"

    def __init__(self, sample: Any, pool: Any, registry: Any, *, level: str, target: str, budget_s: float,
                 reject_on: tuple = (), reproduce_dir: Optional[str] = None, path: str = ""):
        super().__init__()
        self.reproduce_dir = reproduce_dir
        self.sample, self.pool, self.registry, self.level, self.target = sample, pool, registry, level, target
        self.budget_s, self.reject_on = budget_s, reject_on
        self.oracle = Oracle(registry, level)
        self.result_ = MinimizeResult(label=target, sample=sample, path=path)

    def run(self) -> Iterator[Any]:
        yield JobStarted(job=self.name, label=self.target, budget_s=self.budget_s)
        budget = Budget(seconds=self.budget_s)
        self.pool.start()
        budget.start()
        outcome = self.pool.run([self.sample.text], deadline=budget.deadline)[0]
        self.result_.executions = 1
        if outcome is None:
            self.result_.problem = "the budget ran out before the input finished running"
            return
        judgment = self.oracle.judge(self.sample, outcome)
        if not judgment.failed:
            self.result_.outcome = outcome
            self.result_.problem = f"does not fail on {self.target} (outcome: {outcome.kind})"
            return
        finding = _finding(self.oracle, self.sample, outcome, judgment, target=self.target, level=self.level,
                           reject_on=self.reject_on, reproduce_dir=self.reproduce_dir,
                           timeout=self.pool.spec.timeout)
        self.result_.finding = finding
        yield PhaseStarted(Phase.SHRINKING, finding.signature.id)
        _shrink_into(finding, FindingShrinker(self.pool.run, self.oracle, self.registry), self.oracle,
                     budget.remaining() or 0.0, max_tests=100_000)
        _file_as_campaign_does(finding, self.oracle, self.pool.run)
        yield FindingRecorded(finding)

    def result(self) -> MinimizeResult:
        self.result_.findings = [self.result_.finding] if self.result_.finding else []
        self.result_.stop_reason = self.stop_reason
        return self.result_

    def exit_code(self, result: MinimizeResult) -> int:
        return minimize_exit_code(fails=not result.problem, interrupted=self.interrupted)


# -- cmin ------------------------------------------------------------------------------------------


@dataclass
class CminResult(JobResult):
    job: str = "corpus cmin"
    corpus: str = ""
    before: int = 0
    merged: list = field(default_factory=list)  # (directory, {added, replaced, kept}, problems)
    duplicates_removed: int = 0
    dropped: list = field(default_factory=list)  # (signature, file, now-signature, kept-signature)
    unjudged: list = field(default_factory=list)  # (signature, why): kept, never dropped
    problems: list = field(default_factory=list)
    after: int = 0
    #: Why the corpus could not be rewritten (read-only, full): exit 2, after what was done is shown.
    write_error: Optional[str] = None

    def summary_lines(self) -> list[str]:
        import os

        lines = [f"merged {directory}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
                 for directory, counts, _problems in self.merged]
        lines += [f"dropped {signature} ({os.path.basename(path)}): now fails as {now}, like {kept}"
                  for signature, path, now, kept in self.dropped]
        lines += [f"kept {signature}: not judged ({why})" for signature, why in self.unjudged]
        on = f", {len(self.dropped)} dropped as duplicates on {self.label}" if self.label else ""
        lines.append(f"{self.before} entries, {self.duplicates_removed} duplicates removed{on}, {self.after} left")
        return lines

    def to_report(self) -> dict[str, Any]:
        return {"job": self.job, "corpus": self.corpus, "target": self.label or None, "before": self.before,
                "after": self.after, "duplicates_removed": self.duplicates_removed,
                "dropped": [{"signature": s, "file": f, "now": n, "kept": k} for s, f, n, k in self.dropped],
                "unjudged": [{"signature": s, "why": w} for s, w in self.unjudged],
                "skipped_files": list(self.problems), "write_error": self.write_error}


class CminJob(Job):
    """``fuzz corpus cmin``: merge ``merge`` ([(directory, store)]) into ``store``, keep one entry per
    signature (the smallest), and — given a parser ``reference`` — drop entries whose failure has
    become a duplicate of another's. Entries that pass are kept (regression tests of fixed bugs);
    entries that cannot be judged are kept and listed; entries of another harness are not replayed."""

    name = "corpus cmin"

    def __init__(self, store: Any, merge: list = (), *, reference: Optional[str] = None, context: Any = None):
        super().__init__()
        self.store, self.merge, self.reference, self.context = store, list(merge), reference, context
        self.result_ = CminResult(corpus=str(getattr(store, "path", "")), label=reference or "")

    def run(self) -> Iterator[Any]:
        from corpus.store import CorpusWriteError

        yield JobStarted(job=self.name, label=self.result_.corpus, settings={"merge": [d for d, _ in self.merge]})
        try:
            self._minimize()
        except CorpusWriteError as exc:
            self.result_.write_error = str(exc)
        r = self.result_
        for _directory, _counts, problems in r.merged:
            for problem in problems:
                yield NonFatalError(f"skipped {problem}")
        r.problems = list(self.store.problems)
        for problem in r.problems:
            yield NonFatalError(f"skipped {problem}")

    def _minimize(self) -> None:
        r, store = self.result_, self.store
        for directory, other in self.merge:
            counts = store.merge(other)
            r.merged.append((directory, counts, list(other.problems)))
        r.before = len(store.entries())
        by_signature: dict[str, list] = {}
        for path, entry in store.entries():
            by_signature.setdefault(entry.signature, []).append((entry.key, path, entry))
        for items in by_signature.values():
            items.sort(key=lambda item: (item[0], item[1]))
            if len(items) > 1:
                store.put(items[0][2])  # keeps the smallest and drops the others
                r.duplicates_removed += len(items) - 1
        if self.reference:
            self._drop_duplicates(self._replay(store.entries()))
        r.after = len(store.entries())

    def _replay(self, items: list) -> list:
        from fuzzer.harnesses.parser.harness import replay_entries, target_spec
        from fuzzer.isolation import WorkerPool

        parser_items = [(p, e) for p, e in items if e.kind == "parser"]
        context = self.context
        with WorkerPool(target_spec(self.reference, context)) as pool:
            results = replay_entries(parser_items, run=pool.run, registry=context.registry, level="parse",
                                     timeout=context.timeout)
        self.result_.executions = len(parser_items)
        return results

    def _drop_duplicates(self, results: list) -> None:
        groups: dict[str, list] = {}
        for replayed in results:
            if replayed.status == "unjudged":
                self.result_.unjudged.append((replayed.entry.signature, replayed.unjudged))
            elif replayed.signature is not None:
                groups.setdefault(replayed.signature, []).append(replayed)
        for signature, group in sorted(groups.items()):
            # Prefer the entry stored under the signature it shows now, then the smallest.
            group.sort(key=lambda x: (x.entry.signature != signature, x.entry.key, x.path))
            for replayed in group[1:]:
                self.store.remove(replayed.entry.signature)
                self.result_.dropped.append((replayed.entry.signature, replayed.path, signature,
                                             group[0].entry.signature))

    def result(self) -> CminResult:
        self.result_.stop_reason = self.stop_reason
        return self.result_

    def exit_code(self, result: CminResult) -> int:
        return corpus_maintenance_exit_code(unsaved=result.write_error, interrupted=self.interrupted)


__all__ = ["REGRESSION", "AddResult", "CminJob", "CminResult", "CorpusAddJob", "MinimizeJob", "MinimizeResult"]
