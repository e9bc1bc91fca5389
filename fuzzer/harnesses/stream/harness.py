"""The ``stream`` corpus entry kind: how ``fuzz replay``, ``fuzz gate`` and a campaign's ``--corpus``
run stream entries.

A stream entry's ``scenario`` holds the stream (``case``: the output, its split, its truth,
content and markers), whether it was found with an incremental parser or a chunk accumulator
(``mode``), the parser API or consumer shape, and the tools file. Replaying streams the stored
case — not a regeneration from choices, so an entry means the same thing whatever later versions
of the generator draw — into the parser named by ``--stream-parser`` (entries found with
``--parser``) or the accumulator named by ``--stream-consumer`` (entries found with
``--consumer``), judges it with the same oracles, and reports the failure it shows now (or a
pass). The gate's short campaign streams into the parser when ``--stream-parser`` is given, else
into the accumulator.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from fuzzer.engine.harness import Harness, ReplayContext, Replayed, register_harness
from fuzzer.harnesses.stream import checks as _verdicts  # noqa: F401 - registers the stream harness's verdicts
from fuzzer.harnesses.stream.replaying import EXTRA, OPTIONS, replay_with

def _target(mode: str, reference: str, api: str, shape: str, tools: Optional[str], cwd: Optional[str]) -> Any:
    from fuzzer.harnesses.stream.worker import Settings

    return Settings(parser=reference if mode == "parser" else None, consumer=reference if mode != "parser" else None,
                    api=api, shape=shape, tools=tools, cwd=cwd or os.getcwd(), named=OPTIONS[mode])


def references(reference: Optional[str], context: ReplayContext) -> dict:
    """mode -> the reference to replay that mode's entries on: ``--stream-parser`` /
    ``--stream-consumer`` (``ReplayContext.extra``), else ``reference`` for the parser's."""
    out = {mode: context.extra.get(key) for mode, key in EXTRA.items()}
    if reference and not any(out.values()):
        out["parser"] = reference
    return out


def replay_entries(items: list, reference: Optional[str], context: ReplayContext) -> list:
    """Run each ``(path, Entry)`` of kind stream again; one Replayed per entry, in order."""
    from fuzzer.harnesses.stream.findings import case_of_entry
    from fuzzer.harnesses.stream.job import StreamSettings, open_pool
    from strategies.errors import ToolfuzzError

    refs = references(reference, context)
    out: list = [None] * len(items)
    groups: dict = {}
    for i, (path, entry) in enumerate(items):
        scenario = entry.scenario or {}
        mode = scenario.get("mode", "parser")
        if mode not in OPTIONS:
            out[i] = Replayed(path, entry, verdict="unjudged", signature=None, unjudged=f"unknown stream mode {mode!r}")
            continue
        if not refs.get(mode):
            out[i] = Replayed(path, entry, verdict="unjudged", signature=None,
                              unjudged=f"a stream entry found with --{mode}: give {OPTIONS[mode]} M:A to replay it")
            continue
        try:
            case_of_entry(entry)
        except ToolfuzzError as exc:
            out[i] = Replayed(path, entry, verdict="unjudged", signature=None, unjudged=str(exc))
            continue
        api = context.extra.get("parser_api") or scenario.get("api", "events")
        shape = context.extra.get("consumer_shape") or scenario.get("shape", "openai")
        tools = context.tools_file or scenario.get("tools")
        groups.setdefault((mode, api, shape, tools), []).append(i)
    for (mode, api, shape, tools), members in groups.items():
        target = _target(mode, refs[mode], api, shape, tools, context.cwd)
        settings = StreamSettings(target=target, timeout=context.timeout, workers=context.workers,
                                  memory_limit_mb=context.memory_limit_mb, budget_s=context.budget_s)
        pool = open_pool(settings)
        try:
            pool.start()
            done = replay_with(pool.run, [items[i] for i in members], target)
        finally:
            pool.close()
        for i, r in zip(members, done):
            out[i] = r
    return out


def gate_campaign(reference: str, context: ReplayContext) -> Any:
    """The short stream campaign the gate runs after replaying: into the parser when one is
    given, else into the accumulator."""
    from fuzzer.harnesses.stream.job import StreamCampaign, StreamSettings

    refs = references(reference, context)
    mode = "parser" if refs.get("parser") else "consumer"
    extra = context.extra
    target = _target(mode, refs[mode], extra.get("parser_api") or "events", extra.get("consumer_shape") or "openai",
                     context.tools_file, context.cwd)
    settings = StreamSettings(target=target, tools=tuple(extra.get("tools") or ()),
                              formats=tuple(extra.get("formats") or ()) if mode == "parser" else (),
                              seed=context.seed, budget_s=context.budget_s, max_examples=context.max_examples,
                              timeout=context.timeout, workers=context.workers,
                              memory_limit_mb=context.memory_limit_mb, ignore=frozenset(extra.get("ignore") or ()),
                              # the back end the gate was given (--backend ray: on the cluster; replays stay local)
                              backend=extra.get("backend") or "local", ray_address=extra.get("ray_address"))
    return StreamCampaign(settings, registry=context.registry)


HARNESS = register_harness(Harness(
    kind="stream", option="--stream-parser (or --stream-consumer)",
    description="an incremental parser (factory -> feed/finish) or chunk accumulator, under every split",
    replay=replay_entries, campaign_job=gate_campaign))

__all__ = ["EXTRA", "HARNESS", "OPTIONS", "gate_campaign", "references", "replay_entries", "replay_with"]
