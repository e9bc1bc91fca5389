"""``fuzz replay`` as a job: re-run every corpus entry with its harness and say what each does now.

Entries of each kind (``parser``, ``executor``, ``agent``) are replayed by their harness
(:mod:`fuzzer.engine.harness`) against the reference given for that kind; entries whose reference was
not given, or that cannot be judged (a validate-level entry whose tool is not in the registry),
are *unjudged*: reported with the reason, never counted as a pass, never deleted. ``update``
marks open entries that now pass as fixed and fixed ones that fail again as open, and the result
lists each change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional

from fuzzer.engine.confirm import PASS_RUNS
from fuzzer.engine.decisions import replay_exit_code
from fuzzer.engine.events import JobStarted, NonFatalError, Phase, PhaseStarted
from fuzzer.engine.harness import ReplayContext, Replayed, load_harnesses
from fuzzer.engine.pipeline import Job
from fuzzer.engine.results import FAILED, PASSED, SKIPPED, JobResult, TestCase

STATUS_CASE = {"pass": PASSED, "unjudged": SKIPPED}



def passes_run_again(harness: Any, replayed: list, reference: str, context: ReplayContext) -> list:
    """``replayed`` (one :class:`Replayed` per entry of one harness), with each passing entry run
    :data:`PASS_RUNS` - 1 more times, in one call of the harness's replay: an entry that fails in
    any of them fails as that run shows it (a fixed entry is then a regression)."""
    from dataclasses import replace

    from fuzzer.engine.verdicts import VERDICTS

    def timed(verdict: str) -> bool:
        info = VERDICTS.get(f"{harness.kind}:{verdict}")
        return info is not None and info.timed

    doubtful = [r for r in replayed if r.unjudged is None and r.status == "pass" and not timed(r.entry.verdict)]
    if not doubtful:
        return replayed
    again = harness.replay([(r.path, r.entry) for r in doubtful for _ in range(PASS_RUNS - 1)], reference, context)
    failing: dict[int, list] = {}
    ran: dict[int, int] = {}
    for r in again:
        if r.unjudged is None:
            ran[id(r.entry)] = ran.get(id(r.entry), 0) + 1
            if r.status != "pass":
                failing.setdefault(id(r.entry), []).append(r)
    out = []
    for r in replayed:
        key = id(r.entry)
        if key in failing:
            out.append(replace(failing[key][0], note=f"{len(failing[key])} failing run(s) in {1 + ran[key]}"))
        elif any(r is d for d in doubtful):
            out.append(replace(r, note=f"passed {1 + ran.get(key, 0)} runs"))
        else:
            out.append(r)
    return out


def entry_lines(replayed: list, version: Optional[str] = None) -> list[str]:
    """One line per corpus entry replayed (``fuzz replay``, a campaign given ``--corpus``); entries found with another version of the target say so, which tells a
    behaviour change of the new parser from an old finding."""
    marks = {"pass": "pass", "fail": "FAIL", "changed": "CHANGED", "regression": "REGRESSION", "unjudged": "UNJUDGED"}
    lines = []
    for r in replayed:
        now = f" now {r.signature}" if r.status == "changed" or (r.status == "regression" and
                                                                 r.signature != r.entry.signature) else ""
        if now and r.rekeyed:
            now += " (re-keyed: it fails exactly as filed)"
        found = r.entry.target_version
        older = f" (found with {found}; target is {version})" if found and version and found != version else ""
        said = [r.unjudged] if r.unjudged else [x for x in (r.note, r.held) if x]
        why = ": " + "; ".join(said) if said else ""
        lines.append(f"{marks[r.status]:<10} {r.entry.signature:<28} {r.entry.status:<6} "
                     f"{os.path.basename(r.path)}{now}{older}{why}")
    return lines


@dataclass
class ReplayResult(JobResult):
    job: str = "replay"
    corpus: str = ""
    replayed: list = field(default_factory=list)  # Replayed, in corpus order
    updates: list = field(default_factory=list)  # (signature, old status, new status), as saved
    #: Why ``--update`` could not save every change (the corpus cannot be written): exit 2, after
    #: the results are shown.
    write_error: Optional[str] = None
    versions: dict = field(default_factory=dict)  # kind -> version of the reference (target file hash)

    def status_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.replayed:
            counts[r.status] = counts.get(r.status, 0) + 1
        return counts

    def summary_lines(self) -> list[str]:
        lines = entry_lines(self.replayed, self.versions.get("parser"))
        statuses = self.status_counts()
        summary = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) or "no entries"
        lines.append(f"{len(self.replayed)} entries: {summary}")
        for signature, old, new in self.updates:
            lines.append(f"updated {signature}: {old} -> {new}")
        for problem in self.notes:
            lines.append(f"UNREADABLE corpus file {problem} (its regression test does not run; fix or remove it)")
        return lines

    def test_cases(self) -> list[TestCase]:
        return [TestCase(f"toolfuzz.corpus.{r.entry.kind}", f"{r.entry.signature} ({r.entry.status})",
                         STATUS_CASE.get(r.status, FAILED),
                         r.unjudged or ("" if r.status == "pass" else f"{r.status}: {r.entry.title}"
                                        + (f" (now {r.signature})" if r.status == "changed" else "")
                                        + (f" ({r.note})" if r.note else "")),
                         "" if r.status in STATUS_CASE else r.entry.text)
                for r in self.replayed] + [
            # a corpus file that cannot be read is a regression test that no longer runs
            TestCase("toolfuzz.corpus", problem.split(": ", 1)[0], FAILED, f"unreadable: {problem}")
            for problem in self.notes]

    def to_report(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "entries": len(self.replayed), "statuses": self.status_counts(),
                "counts": self.counts(), "elapsed_s": round(self.elapsed_s, 3), "stop_reason": self.stop_reason.value,
                "problem": self.problem, "write_error": self.write_error, "skipped_files": list(self.notes),
                "updates": [{"signature": s, "from": a, "to": b} for s, a, b in self.updates],
                "replayed": [{"signature": r.entry.signature, "kind": r.entry.kind, "file": r.path,
                              "entry_status": r.entry.status, "status": r.status, "verdict": r.verdict,
                              "now": r.signature, "unjudged": r.unjudged, "note": r.note, "title": r.entry.title,
                              "found_with": r.entry.target_version} for r in self.replayed]}


class ReplayJob(Job):
    """``references``: entry kind -> the reference to replay it on (``--target``, ``--executor``...)."""

    name = "replay"

    def __init__(self, store: Any, references: Mapping[str, Optional[str]], context: ReplayContext, *,
                 update: bool = False):
        super().__init__()
        self.store, self.references, self.context, self.update = store, dict(references), context, update
        self._empty = False  # the corpus holds no entry at all
        self.result_ = ReplayResult(corpus=str(getattr(store, "path", "")),
                                    label=", ".join(r for r in self.references.values() if r))
        import time

        self._t0 = time.monotonic()

    def run(self) -> Iterator[Any]:
        import time

        harnesses = load_harnesses()
        yield JobStarted(job=self.name, label=self.result_.label, settings={"corpus": self.result_.corpus,
                                                                            "update": self.update})
        yield PhaseStarted(Phase.REPLAYING, self.result_.corpus)
        items = self.store.entries()
        for problem in self.store.problems:
            self.result_.notes.append(problem)
            yield NonFatalError(f"skipped {problem}")
        by_kind: dict[str, list] = {}
        for item in items:
            by_kind.setdefault(item[1].kind, []).append(item)
        outcome: dict[int, Replayed] = {}
        order = {id(item[1]): i for i, item in enumerate(items)}
        for kind, group in by_kind.items():
            reference = self.references.get(kind)
            harness = harnesses.get(kind)
            if harness is None or not reference:
                option = harness.option if harness is not None else f"the {kind} harness"
                a = "an" if kind[:1] in "aeiou" else "a"
                why = (f"{a} {kind} entry: give {option} to replay it" if harness is not None
                       else f"{a} {kind} entry, but this toolfuzz has no {kind} harness")
                for path, entry in group:
                    outcome[order[id(entry)]] = Replayed(path, entry, "unjudged", None, unjudged=why)
                continue
            dead = harness.check_alive(group, reference, self.context) if harness.check_alive else None
            if dead:
                self.result_.problem = f"{reference}: {dead}"
                self.update = False  # never mark entries fixed against a target that tests nothing
            replayed = list(harness.replay(group, reference, self.context))
            if not harness.runs_passes_again:
                replayed = passes_run_again(harness, replayed, reference, self.context)
            for r in replayed:
                outcome[order[id(r.entry)]] = r
            if kind == "parser":
                from fuzzer.harnesses.parser.harness import target_version

                self.result_.versions[kind] = target_version(reference, self.context.cwd)
        self.result_.replayed = [outcome[i] for i in sorted(outcome)]
        if not items and self.result_.problem is None:
            where = self.result_.corpus or "the corpus"
            unreadable = len(self.result_.notes)
            self.result_.problem = (f"nothing to replay: {where} holds no entries" if not unreadable else
                                    f"nothing to replay: {where} holds no readable entry ({unreadable} file(s) "
                                    f"could not be read: {self.result_.notes[0]})")
            self._empty = True
        if self.update:
            self._apply_updates()
        self.result_.elapsed_s = time.monotonic() - self._t0

    def _apply_updates(self) -> None:
        from corpus.store import CorpusWriteError

        todo = [(r.entry.signature, "open", "fixed") for r in self.result_.replayed
                if r.status == "pass" and r.entry.status == "open" and r.held is None]
        todo += [(r.entry.signature, "fixed", "open") for r in self.result_.replayed if r.status == "regression"]
        for done, (signature, old, new) in enumerate(todo):
            try:
                (self.store.mark_fixed if new == "fixed" else self.store.mark_open)(signature)
            except CorpusWriteError as exc:
                self.result_.write_error = f"{exc}: {len(todo) - done} status update(s) not saved"
                return
            self.result_.updates.append((signature, old, new))

    def result(self) -> ReplayResult:
        self.result_.stop_reason = self.stop_reason
        return self.result_

    def exit_code(self, result: ReplayResult) -> int:
        return replay_exit_code(result.replayed, nothing_tested=result.problem, interrupted=self.interrupted,
                                unreadable=len(result.notes), empty=self._empty, unsaved=result.write_error)


__all__ = ["ReplayJob", "ReplayResult", "entry_lines"]
