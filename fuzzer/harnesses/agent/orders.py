"""Scripts drawn, played and judged in the workers: the agent campaign's orders.

A :class:`ScriptOrder` is a seed and a count. The worker draws the scripts from it with the
:class:`~fuzzer.harnesses.agent.generation.ScriptSetup` its :class:`~fuzzer.harnesses.agent.worker.EpisodeServer`
built in the zygote (the same registry, shape, formats and turn limit as the engine's), plays each
against the loop (pinned first, so a hang or a death is blamed on exactly that script), judges it,
and sends back a :class:`ScriptResult`: counts, and in full the first episode of each violation's
signature (its choices let the engine draw the script again to shrink it). The engine files results
in order number, so the number of workers changes nothing a seed's run finds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fuzzer.engine.orders import Order
from strategies._internal.source import RandomSource

#: What an order pins each of its scripts with (the pool's Lost carries it back).
TAG = "script"


@dataclass
class ScriptResult:
    """What a worker sends back for one order: ``episodes`` played (an episode that could not run
    at all is no episode: ``not_run``, with ``notes`` saying why); ``by_step``: step kind ->
    [episodes, failing episodes]; ``failures``: per signature new in this order, (index in the
    order, choices, trace, (verdict, signature id, title, key, reason), count); ``seen``: signature
    id -> later episodes that showed it."""

    episodes: int = 0
    not_run: int = 0
    model_requests: int = 0
    tool_executions: int = 0
    by_step: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    seen: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    failing: int = 0  # episodes with at least one violation


class ScriptOrder(Order):
    """"Draw ``count`` scripts from ``seed``, play and judge them"; a script its worker hung or died
    on is skipped when the order runs again (its scripts are a function of its seed)."""

    __slots__ = ()

    def run(self, runner: Any) -> ScriptResult:
        served = runner.served  # the worker's EpisodeServer
        result, skip = ScriptResult(), self.skip
        source = RandomSource(self.seed)
        sent: set = set()
        for index in range(self.count):
            source.reset()
            script = served.draw(source)
            if skip and index in skip:
                continue  # it hung or killed a worker: the engine holds it
            runner.enter(TAG, index)
            played = served.play_judged(script)
            if played[0] == "error":
                result.not_run += 1
                if played[1] not in result.notes:
                    result.notes.append(played[1])
                continue
            trace, violations = played[1], played[2]
            result.episodes += 1
            result.model_requests += len(trace["requests"]) if trace else 0
            result.tool_executions += len(trace["executions"]) if trace else 0
            result.failing += bool(violations)
            for kind in {t.step for t in script.turns}:
                stats = result.by_step.setdefault(kind, [0, 0])
                stats[0] += 1
                stats[1] += bool(violations)
            for v in violations:
                sid = v[1]
                if sid in sent:
                    result.seen[sid] = result.seen.get(sid, 0) + 1
                    continue
                sent.add(sid)
                result.failures.append((index, tuple(source.choices), trace, tuple(v)))
        return result


__all__ = ["ScriptOrder", "ScriptResult", "TAG"]
