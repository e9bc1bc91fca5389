"""The parser harness, registered for the generic commands (entry kind ``parser``, option ``--target``).

``fuzz replay``, ``fuzz gate`` and ``fuzz reproduce`` find it in :data:`fuzzer.engine.harness.HARNESSES`:
replaying and the liveness check are :mod:`fuzzer.harnesses.parser.harness`'s, reproducing
:mod:`fuzzer.harnesses.parser.rerun`'s, and the gate's short campaign is built here. (Registration
sits apart from those modules because it names them all: the campaign imports the harness module,
so the harness module cannot import the campaign back.)
"""

from __future__ import annotations

from typing import Any

from fuzzer.engine.harness import Harness, ReplayContext, register_harness
from fuzzer.harnesses.parser.harness import check_alive, replay, target_spec
from fuzzer.harnesses.parser.rerun import reproduce


def campaign_job(reference: str, context: ReplayContext) -> Any:
    """The gate's short campaign against ``reference`` (settings from ``context`` and its extra)."""
    from fuzzer.backends import make_pool
    from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings

    extra = context.extra
    settings = CampaignSettings(tools=list(extra.get("tools") or context.registry.names()), target=reference,
                                level=context.level, formats=extra.get("formats"), anomalies=extra.get("anomalies"),
                                seed=context.seed, budget_s=context.budget_s, max_examples=context.max_examples,
                                reject_on=tuple(context.reject_on), reproduce_dir=extra.get("reproduce_dir"),
                                ignore=frozenset(extra.get("ignore") or ()), explore=extra.get("coverage", True),
                                slow=context.max_examples is None, known=tuple(extra.get("known") or ()),
                                per_tool=dict(extra.get("per_tool") or {}))
    spec = target_spec(reference, context, sampling=extra.get("coverage", True))
    # the back end the gate was given (--backend ray: its campaign on the cluster; the replay stays local)
    auto = getattr(context.workers, "auto", False)
    pool = make_pool(extra.get("backend", "local"), spec, None if auto else context.workers,
                     address=extra.get("ray_address"))
    return CampaignJob(context.registry, settings, pool, owns_pool=True)


HARNESS = register_harness(Harness(kind="parser", option="--target",
                                   description="the parser / validator: entries are model outputs",
                                   replay=replay, campaign_job=campaign_job, check_alive=check_alive, reproduce=reproduce,
                                   runs_passes_again=True))


__all__ = ["HARNESS", "campaign_job"]
