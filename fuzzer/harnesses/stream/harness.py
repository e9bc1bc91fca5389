"""The stream harness, registered for the generic corpus commands (entry kind ``stream``).

``replay_entries`` re-runs stored streams (``Entry.scenario["case"]``: the output, its split, its
truth) against a parser (or an accumulator, for entries found with ``--consumer``) and judges them
with the same checks; ``gate_campaign`` is the short campaign the gate runs. The parser API and
consumer shape an entry was found with are kept in it (``--parser-api`` / ``--consumer-shape`` in
``ReplayContext.extra`` override them).
"""

from __future__ import annotations

import os
from typing import Any

from fuzzer.engine.harness import Harness, ReplayContext, Replayed, register_harness


def _settings(reference: str, context: ReplayContext, mode: str = "parser", api: str = "events",
              shape: str = "openai") -> Any:
    from fuzzer.harnesses.stream.job import StreamSettings
    from fuzzer.harnesses.stream.worker import Settings

    api = context.extra.get("parser_api") or api
    shape = context.extra.get("consumer_shape") or shape
    target = Settings(parser=reference if mode == "parser" else None, consumer=reference if mode != "parser" else None,
                      api=api, shape=shape, tools=context.tools_file, cwd=context.cwd or os.getcwd())
    return StreamSettings(target=target, seed=context.seed, budget_s=context.budget_s, max_examples=context.max_examples,
                          timeout=context.timeout, workers=context.workers, memory_limit_mb=context.memory_limit_mb)


def replay_entries(items: list, reference: str, context: ReplayContext) -> list:
    """Run each ``(path, Entry)`` of kind stream again; one Replayed per entry, in order."""
    from dataclasses import replace

    from fuzzer.harnesses.stream.findings import case_of_entry
    from fuzzer.harnesses.stream.job import StreamPool, signatures_of
    from strategies.errors import ToolfuzzError

    out: list = [None] * len(items)
    groups: dict = {}
    for i, (path, entry) in enumerate(items):
        try:
            case = case_of_entry(entry)
        except ToolfuzzError as exc:
            out[i] = Replayed(path=path, entry=entry, verdict="pass", signature=None, unjudged=str(exc))
            continue
        scenario = entry.scenario or {}
        key = (scenario.get("mode", "parser"), scenario.get("api", "events"), scenario.get("shape", "openai"))
        groups.setdefault(key, []).append((i, case))
    for (mode, api, shape), cases in groups.items():
        with StreamPool(_settings(reference, context, mode, api, shape)) as pool:
            runs = pool.runs([c for _i, c in cases])
            wholes = pool.runs([replace(c, cuts=()) for _i, c in cases])
        for (i, case), run, whole in zip(cases, runs, wholes):
            path, entry = items[i]
            found = signatures_of(case, run, whole)
            shown = found.get(entry.signature) or next(iter(found.values()), None)
            out[i] = Replayed(path=path, entry=entry, verdict=shown.verdict if shown else "pass",
                              signature=shown.signature.id if shown else None, outcome=run,
                              what=shown.signature.what if shown else None)
    return out


def gate_campaign(reference: str, context: ReplayContext) -> Any:
    """The short stream campaign the gate runs after replaying."""
    from fuzzer.harnesses.stream.job import StreamCampaign

    return StreamCampaign(_settings(reference, context), registry=context.registry)


HARNESS = register_harness(Harness(
    kind="stream", option="--stream-parser",
    description="an incremental parser (factory -> feed/finish) or chunk accumulator, under every split",
    replay=replay_entries, campaign_job=gate_campaign))

__all__ = ["HARNESS", "gate_campaign", "replay_entries"]
