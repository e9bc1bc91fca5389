"""The worker side of records replay: the recorded executor invocations run again, every
``@recorder.tool`` answered from the record (:func:`fuzzer.records.playback.playback`)."""


from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from fuzzer.isolation.spec import Limits
from fuzzer.records.values import storable


@dataclass(frozen=True, kw_only=True)
class RecordedExecutionSpec(Limits, serve="fuzzer.records.replay_worker:RecordedExecutor", option="--executor",
                            reference="executor"):
    """The :mod:`fuzzer.isolation.spec` of the workers that run recorded invocations again: they
    serve a :class:`RecordedExecutor` (the ``--executor`` loaded once in the zygote)."""

    executor: str

    def fault(self, kind: str, elapsed: float, detail: Optional[str], frames: tuple) -> tuple:
        return (kind, detail or kind)


class RecordedExecutor:
    """The served object: :meth:`run` takes one record's ``{"invocations": [{"call", "kwargs"}],
    "tool_io": [...]}``, runs every invocation under :func:`~fuzzer.records.recorder.playback` of
    the recorded tool_io, and returns ``("ran", results)`` — each ``{"status": "ok", "result"}`` or
    ``{"status": "error", "error"}``."""

    def __init__(self, spec: RecordedExecutionSpec):
        from fuzzer.engine.references import load_target

        self.fn = load_target(spec.executor, cwd=spec.cwd, what="--executor")

    def run(self, job: dict, options: Any = None) -> tuple:
        from fuzzer.records.recorder import error_text, playback

        fn, results = self.fn, []
        with playback(job.get("tool_io") or []):
            for invocation in job.get("invocations") or []:
                try:
                    value = fn(invocation.get("call"), **(invocation.get("kwargs") or {}))
                    if hasattr(value, "__await__"):
                        import asyncio

                        value = asyncio.run(_awaited(value))
                    results.append({"status": "ok", "result": storable(value)})
                except Exception as exc:  # noqa: BLE001 - the executor's failure is its result
                    results.append({"status": "error", "error": error_text(exc)})
        return ("ran", results)


async def _awaited(value: Any) -> Any:
    return await value


__all__ = ["RecordedExecutionSpec", "RecordedExecutor"]
