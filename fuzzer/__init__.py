"""toolfuzz's engine, harnesses and jobs: what a program (a CI script, a test, a plugin harness)
imports to run toolfuzz without its command line.

::

    from fuzzer import GateJob, ReplayContext, run_job
    final = run_job(GateJob(store, {"parser": "mypkg.parse:parse"}, ReplayContext(registry=...)))
    raise SystemExit(final.exit_code)

* jobs: :class:`CampaignJob` (any harness's campaign, over a :class:`Subject`), :class:`ReplayJob`,
  :class:`GateJob`, :class:`DiffJob`, :class:`ReproduceJob`, :class:`CorpusAddJob`,
  :class:`CorpusImportJob`, :class:`CminJob`, :class:`MinimizeJob`; :func:`run_job` feeds a job's
  events to handlers and returns the final :class:`JobFinished` (its ``exit_code``);
* handlers: :class:`EventHandler`, :class:`CorpusWriter` (the one route into the corpus), the report
  writers (:class:`JsonReportHandler`, :class:`JUnitHandler`, :class:`SarifHandler`,
  :class:`HtmlHandler`, :class:`MarkdownHandler`);
* a harness of your own: :class:`Harness` and :func:`register_harness`, :class:`Subject` and
  :class:`Failure`, :class:`ShrunkFinding`, :func:`verdict` and :data:`VERDICTS`, :class:`Order`;
* the recorder that runs inside an application: :mod:`recorder` (``fuzzer.records.recorder``) and
  its :class:`Recorder`.

Every name is resolved when first used (PEP 562): ``import fuzzer.records.recorder`` inside an
application, and every worker process, import nothing more than they need.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    # the pipeline
    "EventHandler": "fuzzer.engine.pipeline",
    "Job": "fuzzer.engine.pipeline",
    "run_job": "fuzzer.engine.pipeline",
    "ExitCode": "fuzzer.engine.events",
    "JobFinished": "fuzzer.engine.events",
    "StopReason": "fuzzer.engine.events",
    # jobs
    "CampaignJob": "fuzzer.engine.campaign",
    "CampaignResult": "fuzzer.engine.campaign_result",
    "CampaignSettings": "fuzzer.engine.campaign",
    "ReplayJob": "fuzzer.engine.jobs.replay",
    "GateJob": "fuzzer.engine.jobs.gate",
    "DiffJob": "fuzzer.engine.jobs.diff",
    "ReproduceJob": "fuzzer.engine.jobs.reproduce",
    "CorpusAddJob": "fuzzer.engine.jobs.corpus",
    "CminJob": "fuzzer.engine.jobs.corpus",
    "MinimizeJob": "fuzzer.engine.jobs.corpus",
    "CorpusImportJob": "fuzzer.engine.jobs.corpus_import",
    # handlers
    "CorpusWriter": "fuzzer.engine.corpus_writer",
    "JsonReportHandler": "fuzzer.reports.json_report",
    "JUnitHandler": "fuzzer.reports.junit",
    "SarifHandler": "fuzzer.reports.sarif",
    "HtmlHandler": "fuzzer.reports.html",
    "MarkdownHandler": "fuzzer.reports.markdown",
    # harnesses
    "HARNESSES": "fuzzer.engine.harness",
    "Harness": "fuzzer.engine.harness",
    "ReplayContext": "fuzzer.engine.harness",
    "Replayed": "fuzzer.engine.harness",
    "Reproduced": "fuzzer.engine.harness",
    "Reproducible": "fuzzer.engine.harness",
    "load_harnesses": "fuzzer.engine.harness",
    "register_harness": "fuzzer.engine.harness",
    "Subject": "fuzzer.engine.subject",
    "Failure": "fuzzer.engine.subject",
    "ShrunkFinding": "fuzzer.engine.results",
    "Order": "fuzzer.engine.orders",
    "VERDICTS": "fuzzer.engine.verdicts",
    "verdict": "fuzzer.engine.verdicts",
    # decisions
    "GateDecision": "fuzzer.engine.decisions",
    "decide_gate": "fuzzer.engine.decisions",
    # the recorder
    "Recorder": "fuzzer.records.recorder",
}
#: Modules exported under a name of their own.
_MODULES: dict[str, str] = {"recorder": "fuzzer.records.recorder"}

__all__ = sorted([*_EXPORTS, *_MODULES])


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value = importlib.import_module(_MODULES[name])
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module 'fuzzer' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
