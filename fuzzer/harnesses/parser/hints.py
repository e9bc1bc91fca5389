"""Hints a campaign prints beside its findings: what the user may have meant to declare."""

from __future__ import annotations

from fuzzer.harnesses.parser.oracle import Verdict


def reject_on_hints(findings: list, target: str, reject_on: tuple) -> list[str]:
    """When most crashes raise one exception class defined in the target's own package, it is
    probably the parser's rejection type: say how to declare it. When --reject-on was given and
    crashes raise ValueError, say that the declared types replace ValueError (a parser that
    raises both reads as crashing on every ValueError)."""
    crashes: dict[str, int] = {}
    for f in findings:
        exc = f.outcome.exception if f.verdict is Verdict.CRASH and f.outcome is not None else None
        if exc:
            crashes[exc] = crashes.get(exc, 0) + f.count
    if not crashes:
        return []
    if reject_on:
        if "ValueError" in crashes and not any(ref.rpartition(":")[2] == "ValueError" for ref in reject_on):
            kinds = sum(1 for f in findings if f.verdict is Verdict.CRASH and f.outcome is not None
                        and f.outcome.exception == "ValueError")
            return [f"{kinds} crash finding(s) raise ValueError, which is not a clean rejection once --reject-on "
                    f"declares other types; if the parser rejects with it too, add --reject-on builtins:ValueError"]
        return []
    top, hits = max(crashes.items(), key=lambda kv: kv[1])
    package = target.split(":", 1)[0].split(".")[0]
    if "." not in top or top.split(".")[0] != package or hits * 2 < sum(crashes.values()):
        return []
    module, _, name = top.rpartition(".")
    return [f"most crashes raise {top}, defined in the target's own package; if it is how the parser rejects "
            f"an output, declare it: --reject-on {module}:{name}"]


__all__ = ["reject_on_hints"]
