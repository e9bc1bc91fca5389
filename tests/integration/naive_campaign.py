"""One real campaign against the bundled naive parser, shared by the report and plugin tests.

Run once per test process (an xdist worker included) with a fixed seed and a bounded number of
executions, through the real worker pool, so the writers are built and checked against what the
engine really produces — several verdicts, minimized inputs, corruptions with expected and
returned calls, crashes with traceback frames — not against hand-made findings.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from tests.conftest import ROOT

TARGET = "fuzzer.targets.naive:parse"
TOOLS = ("get_weather", "search_flights")
SEED, MAX_EXAMPLES = 2, 3000


@functools.lru_cache(maxsize=1)
def naive_campaign() -> Any:
    """The campaign's result as the writers read it (a :class:`fuzzer.engine.results.JobResult`)."""
    from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation import WorkerPool
    from fuzzer.engine.pipeline import run_job
    from strategies._internal.tools import load_registry

    registry = load_registry(None)
    settings = CampaignSettings(tools=list(TOOLS), target=TARGET, seed=SEED, budget_s=None,
                                max_examples=MAX_EXAMPLES, shrink_cap_s=3.0, explore=False, slow=False)
    with WorkerPool(TargetSpec(TARGET, cwd=str(ROOT)), workers=2) as pool:
        return run_job(CampaignJob(registry, settings, pool)).result


def finding(view: Any, verdict: str, predicate: Any = lambda report: True) -> Any:
    """The first finding of ``verdict`` whose report satisfies ``predicate`` (fails clearly if none)."""
    for f in view.findings:
        if f.verdict_name == verdict and predicate(f.to_report()):
            return f
    found = [(f.verdict_name, f.signature.title) for f in view.findings]
    raise AssertionError(f"the naive campaign found no such {verdict}; it found {found}")


def source_line(path: str, text: str) -> int:
    """The 1-based line of ``path`` that starts with ``text``."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.startswith(text):
                return number
    raise AssertionError(f"{path} has no line starting with {text!r}")
