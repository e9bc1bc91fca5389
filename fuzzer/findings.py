"""Findings: one per signature, with the input that first showed it and its minimized form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from corpus.signature import Signature
from fuzzer.oracle import Verdict


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-safe copy of a target's return: non-finite floats become strings, depth is bounded."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    if depth > 200:
        return "…"
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v, depth + 1) for v in value]
    return value


@dataclass
class Finding:
    signature: Signature
    verdict: Verdict
    reason: str
    sample: Any  # the first failing Sample
    outcome: Any  # its Outcome
    minimized: Any = None  # the minimized Sample (same signature), or None before shrinking
    minimized_outcome: Any = None
    count: int = 1
    shrink_note: str = ""  # e.g. "shrinking stopped by its budget"
    candidate: Any = None  # (sample, outcome): a smaller input with the same signature, to shrink

    @property
    def best(self) -> Any:
        return self.minimized if self.minimized is not None else self.sample

    @property
    def best_outcome(self) -> Any:
        return self.minimized_outcome if self.minimized_outcome is not None else self.outcome

    @property
    def exception(self) -> Optional[str]:
        o = self.best_outcome
        if o is None:
            return None
        if o.kind in ("raised", "rejected") and o.exception:
            msg = (o.message or "").strip().splitlines()
            return f"{o.exception}: {msg[0]}" if msg else o.exception
        if o.kind in ("died", "hung"):
            return o.detail
        return None

    def to_report(self) -> dict[str, Any]:
        sample, best = self.sample, self.best
        outcome = self.best_outcome
        return {
            "signature": self.signature.id,
            "title": self.signature.title,
            "verdict": self.verdict.value,
            "anomaly_class": sample.anomaly_class,
            "operator": sample.operator,
            "format": sample.format,
            "tool": sample.tool,
            "input": sample.text,
            "minimized_input": best.text,
            "exception": self.exception,
            "reason": self.reason,
            "truth": best.calls,
            "returned": jsonable(outcome.calls) if outcome is not None and outcome.kind == "returned" else None,
            "count": self.count,
            "recipe": best.recipe.to_json() if getattr(best, "recipe", None) is not None else None,
        }
