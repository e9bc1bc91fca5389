"""``fuzz reproduce FILE`` as a job: run one finding's input again, whatever harness found it.

FILE is a corpus entry of any kind, a reproducer document (a harness's file for a finding too
long for one command line: the parser writes them for long, history-dependent, slow and hang
findings), or a raw input (a model output, run on the parser given with ``--target``). The entry's
``kind`` (the document's ``kind``, the parser's by default) names the harness; its ``reproduce``
hook runs the input again and says what it does now. A harness without that hook is reproduced by
the one mechanism every harness has: its entry is replayed (``Harness.replay``), and its verdict
now is the answer — so an entry of any kind, a plugin's too, reproduces.

Exit status (:func:`fuzzer.engine.decisions.reproduce_exit_code`): 1 while it still fails, 0 once
it does not, 2 when it could not be run at all (a file that is no finding, no target to run it on,
a harness this toolfuzz lacks).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from fuzzer.engine.decisions import reproduce_exit_code
from fuzzer.engine.events import JobStarted, Phase, PhaseStarted
from fuzzer.engine.harness import ReplayContext, Reproduced, Reproducible, load_harnesses
from fuzzer.engine.pipeline import Job
from fuzzer.engine.results import FAILED, PASSED, JobResult, TestCase
from strategies.errors import ToolfuzzError


@dataclass
class ReproduceResult(JobResult):
    job: str = "reproduce"
    path: str = ""
    kind: Optional[str] = None
    lines: list = field(default_factory=list)
    failing: bool = False

    def summary_lines(self) -> list[str]:
        return list(self.lines)

    def test_cases(self) -> list[TestCase]:
        if self.problem:
            return [TestCase("toolfuzz.reproduce", self.path, FAILED, f"not run: {self.problem}")]
        return [TestCase("toolfuzz.reproduce", self.path, FAILED if self.failing else PASSED,
                         "still fails" if self.failing else "passes now", "\n".join(self.lines))]

    def to_report(self) -> dict[str, Any]:
        return {"job": self.job, "file": self.path, "kind": self.kind, "target": self.label,
                "failing": self.failing, "problem": self.problem, "lines": list(self.lines),
                "elapsed_s": round(self.elapsed_s, 3)}


def reproducible(path: str) -> Reproducible:
    """What ``path`` holds: a reproducer document, a corpus entry of any kind, or a raw input.
    Raises :class:`fuzzer.inputs.InputError` (one line naming the file) for what cannot be read."""
    from fuzzer.inputs import read_entry_text, read_text_exactly

    text = read_text_exactly(path)
    data: Any = None
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            data = None
    if isinstance(data, dict) and "toolfuzz_reproducer" in data:
        return Reproducible(path, str(data.get("kind") or "parser"), document=data)
    entry = read_entry_text(path, text)
    if entry is not None:
        return Reproducible(path, entry.kind, entry=entry)
    return Reproducible(path, "parser", text=text)


def replayed_again(harness: Any, given: Reproducible, reference: Optional[str], context: ReplayContext) -> Reproduced:
    """The mechanism every harness has: replay the entry and report its verdict now."""
    from fuzzer.engine.text import preview

    entry, reference = given.entry_on(reference)
    (replayed,) = harness.replay([(given.path, entry)], reference, context)
    lines = [f"{entry.kind} entry {entry.signature} ({entry.title or entry.verdict}), run on {reference}",
             f"input:  {preview(entry.text, 400)}"]
    if replayed.status == "unjudged":
        return Reproduced(lines, problem=f"{given.path}: not run: {replayed.unjudged}")
    if replayed.signature is None:
        return Reproduced(lines + ["passes now: it does not fail any more"], failing=False)
    same = "as filed" if replayed.signature == entry.signature else f"filed as {entry.signature}"
    note = f" ({replayed.note})" if replayed.note else ""
    return Reproduced(lines + [f"still fails: {replayed.verdict} {replayed.signature} ({same}){note}"], failing=True)


class ReproduceJob(Job):
    """Run the finding in ``path`` again on ``reference`` (default: the one the file names)."""

    name = "reproduce"

    def __init__(self, path: str, context: ReplayContext, *, reference: Optional[str] = None):
        super().__init__()
        self.path, self.context, self.reference = path, context, reference
        self.result_ = ReproduceResult(path=path, label=reference or "")
        self._t0 = time.monotonic()

    def run(self) -> Iterator[Any]:
        yield JobStarted(job=self.name, label=self.reference or self.path, settings={"file": self.path})
        yield PhaseStarted(Phase.REPLAYING, self.path)
        r = self.result_
        try:
            given = reproducible(self.path)
            r.kind = given.kind
            harnesses = load_harnesses()
            if given.kind not in harnesses:
                r.problem = f"{self.path}: a {given.kind} entry, but this toolfuzz has no {given.kind} harness"
                return
            harness = harnesses[given.kind]
            hook = harness.reproduce or (lambda *args: replayed_again(harness, *args))
            done = hook(given, self.reference, self.context)
        except ToolfuzzError as exc:
            r.problem = str(exc)
            return
        r.lines, r.failing, r.problem = list(done.lines), done.failing, done.problem
        r.executions = 0 if done.problem else 1

    def result(self) -> ReproduceResult:
        self.result_.elapsed_s = time.monotonic() - self._t0
        self.result_.stop_reason = self.stop_reason
        return self.result_

    def exit_code(self, result: ReproduceResult) -> int:
        return reproduce_exit_code(failing=result.failing, problem=result.problem, interrupted=self.interrupted)


__all__ = ["ReproduceJob", "ReproduceResult", "replayed_again", "reproducible"]
