"""``fuzz campaign`` as a job: the engine's campaign over the parser harness's subject.

One :class:`CampaignJob` covers every selected tool (they share the budget in equal slices) and
keeps one finding per signature across them (one bug seen through several tools is one finding).
The loop — replay the corpus, per tool probe and fuzz in rounds, confirm in a fresh worker, shrink
within the budget's shrink share, announce; whatever the budget or Ctrl-C leaves pending announced
unshrunk, marked not minimized, never dropped — is the engine's
(:class:`fuzzer.engine.campaign.CampaignJob`); what is the parser's own is in
:class:`fuzzer.harnesses.parser.subject.ParserSubject`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from fuzzer.engine.campaign import CampaignJob as EngineCampaignJob, CampaignResult as EngineCampaignResult
from fuzzer.engine.probed_formats import ProbedFormats
from fuzzer.harnesses.parser.hints import reject_on_hints  # noqa: F401  (part of this module's API)
from fuzzer.harnesses.parser.subject import ParserSubject
from fuzzer.harnesses.parser.tool import ToolCampaign

@dataclass
class CampaignSettings:
    tools: list
    target: str
    level: str = "parse"
    formats: Optional[list] = None  # None: probe every format
    anomalies: Optional[list] = None  # classes or operator names; None: all
    seed: int = 0
    budget_s: Optional[float] = 60.0
    max_examples: Optional[int] = None
    batch_size: int = 256
    shrink: bool = True
    shrink_share: float = 0.3
    shrink_cap_s: float = 10.0
    reject_on: tuple = ()
    reproduce_dir: Optional[str] = None
    max_failures: Optional[int] = None
    ignore: frozenset = frozenset()
    confirm: bool = True
    #: Coverage-guided exploration (the pool's spec must trace: TargetSpec(coverage=True)).
    explore: bool = True
    #: Look for super-linear time (the slow verdict).
    slow: bool = True
    #: Share of the fuzzing time the slow probe may use.
    slow_share: float = 0.08
    #: Under a time budget, confirm and shrink findings in a worker of their own while the
    #: workers go on fuzzing (CampaignJob._settle_beside); False: between rounds, the workers waiting.
    beside: bool = True
    #: Per-tool overrides from the config file: tool -> {level, formats, seed, budget_s,
    #: max_examples, ignore}. A tool's budget or max_examples replaces its equal share.
    per_tool: dict = field(default_factory=dict)
    #: Recorded production outputs run first (``--seeds-from``): Samples, truth known where the
    #: record vouches for the parse; they also seed the exploration.
    seeds: list = field(default_factory=list)
    #: Anomaly class -> weight for the scheduler (``--weights-from``).
    class_weights: Optional[dict] = None
    #: How orders are planned past the scheduler's first pass (fuzzer/harnesses/parser/drawn.py):
    #: "engine" (by the engine's scheduler, one stream of draws), "snapshots" (from its snapshot and
    #: each order's seed, by the engine) or "workers" (the same, by the workers: the same samples as
    #: "snapshots"); None: "workers" on a large pool, else "engine".
    planning: Optional[str] = None
    #: Corpus entries whose filing this campaign follows without a corpus of its own (the gate's
    #: short campaign): a rejection goes to the finding of its formats the corpus holds, whatever
    #: this run meets first (see :meth:`fuzzer.harnesses.parser.across_formats.FormatRoutes.learn`).
    known: tuple = ()

    def of(self, tool: str, key: str) -> Any:
        """The setting ``key`` for ``tool``: its override, else the job's."""
        return self.per_tool.get(tool, {}).get(key, getattr(self, key))


@dataclass
class CampaignResult(EngineCampaignResult, ProbedFormats):
    job: str = "campaign"
    tool: str = ""
    target: str = ""
    level: str = "parse"
    #: variants of supported formats that failed on every probe (their failures are findings)
    failing: dict = field(default_factory=dict)
    #: what the user declared unsupported (``--format hermes:single``), one line per format
    assumed: list = field(default_factory=list)
    hints: list = field(default_factory=list)
    lines: set = field(default_factory=set)  # (file, line) of the target reached (with coverage)
    exploration_share: dict = field(default_factory=dict)  # tool -> final share of exploration batches

    @property
    def case_label(self) -> str:
        return self.tool or "campaign"

    @property
    def corpus_passing(self) -> list:
        return [r for r in self.replayed if r.status == "pass"]

    def summary_lines(self) -> list[str]:
        """The console's lines (:func:`fuzzer.harnesses.parser.render.campaign_lines`)."""
        from fuzzer.harnesses.parser.render import campaign_lines

        return campaign_lines(self)

    def to_report(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "target": self.target,
            "level": self.level,
            **self.base_report(),
            "formats": {**self.formats_report(), "failing": self.failing, "assumed": self.assumed},
            "hints": self.hints,
            "coverage": self.coverage_report(),
        }

    def coverage_report(self) -> Optional[dict]:
        if not self.lines:
            return None
        files: dict[str, int] = {}
        for file, _line in self.lines:
            files[file] = files.get(file, 0) + 1
        return {"lines": len(self.lines), "files": dict(sorted(files.items())),
                "exploration_share": {k: round(v, 3) for k, v in self.exploration_share.items()}}


class CampaignJob(EngineCampaignJob):
    """``pool`` is a :class:`fuzzer.isolation.WorkerPool` (started here, so start-up time is part
    of ``elapsed_s`` but not of the budget); ``corpus`` an optional :class:`corpus.store.Store`
    replayed first; ``started_at``: when the command began (``time.monotonic()``), so ``elapsed_s``
    and ``setup_s`` include loading the tools as well as starting the workers."""

    name = "campaign"
    #: The per-tool engine (a hook for tests that watch what it executes).
    tool_campaign = ToolCampaign

    def __init__(self, registry: Any, settings: CampaignSettings, pool: Any, *, corpus: Any = None,
                 owns_pool: bool = False, started_at: Optional[float] = None):
        self.registry = registry
        result = CampaignResult(tool=",".join(settings.tools), target=settings.target, label=settings.target,
                                level=settings.level, seed=settings.seed)
        subject = ParserSubject(registry, settings, pool, result, tool_campaign=lambda: self.tool_campaign)
        super().__init__(subject, settings, corpus=corpus, owns_pool=owns_pool, started_at=started_at)

    def _new_tool_campaign(self, index: int, name: str) -> ToolCampaign:
        return self.subject.new_tool_campaign(index, name)


__all__ = ["CampaignJob", "CampaignResult", "CampaignSettings", "reject_on_hints"]
