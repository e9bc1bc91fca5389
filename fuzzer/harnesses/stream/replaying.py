"""Replaying stream corpus entries: the stored case streamed into a parser or accumulator again and
judged with the same oracles (the campaign's ``--corpus``, ``fuzz replay``, ``fuzz gate``)."""

from __future__ import annotations

from typing import Any

from fuzzer.engine.harness import Replayed

#: The options of replay and gate naming a stream entry's reference, by the entry's mode.
OPTIONS = {"parser": "--stream-parser", "consumer": "--stream-consumer"}
#: ``ReplayContext.extra`` keys those options fill.
EXTRA = {"parser": "stream_parser", "consumer": "stream_consumer"}


def replay_with(run: Any, items: list, settings: Any) -> list:
    """Replay ``(path, Entry)`` items, whose cases are already read, with ``run(cases)`` (a
    started pool's run) and judge them; one Replayed each, in order."""
    from fuzzer.harnesses.stream.findings import case_of_entry
    from fuzzer.harnesses.stream.worker import StreamFault

    cases = [case_of_entry(entry) for _path, entry in items]
    out = []
    for (path, entry), answer in zip(items, run(cases)):
        if isinstance(answer, tuple) and answer[0] == "contract":
            out.append(Replayed(path, entry, verdict="unjudged", signature=None,
                                unjudged=f"{settings.option} {settings.reference!r}: {answer[1]}"))
            continue
        if answer is None:
            out.append(Replayed(path, entry, verdict="unjudged", signature=None, unjudged="not run (out of time)"))
            continue
        if isinstance(answer, StreamFault):
            from fuzzer.harnesses.stream.checks import fault_violation

            violations = [fault_violation(answer.kind, answer.frames, answer.detail)]
            if entry.verdict == "hang" and answer.kind == "hung":  # stuck again, wherever it is this time
                violations[0] = _as(violations[0], entry)
        else:
            violations = list(answer[1].violations)
        same = next((v for v in violations if v.signature.id == entry.signature), None)
        shown = same or (violations[0] if violations else None)
        out.append(Replayed(path, entry, verdict=shown.verdict if shown else "pass",
                            signature=shown.signature.id if shown else None, outcome=answer,
                            what=shown.signature.what if shown else None))
    return out


def _as(violation: Any, entry: Any) -> Any:
    """A hang that hangs again is the entry's hang (its stack may differ from one dump to the next)."""
    from dataclasses import replace

    return replace(violation, signature=replace(violation.signature, id=entry.signature))


__all__ = ["EXTRA", "OPTIONS", "replay_with"]
