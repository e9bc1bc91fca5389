"""How a replayed record changed: same, fixed, regressed or changed — and what differs.

A replay compares what the target does now with a reference: what production did (the record),
or what the target did when a baseline was saved. "Different" is not "worse": a record whose
parse failed in production and that now parses was reported as a regression ("now parses: raised
ParseError -> 2 call(s) [regressed]", exit 1). So each side is judged against what the record
vouches for (:func:`truth`), and the difference is classified from the two judgments:

* **same** — the same outcome: calls equal as JSON values, or the same exception type (relative
  to its target, :mod:`fuzzer.engine.relative`), or the same kind of failure;
* **fixed** — now exactly the calls the record vouches for, which the reference did not return;
* **regressed** — now wrong where the reference was not: other calls or a failure where the
  record vouches for calls, or — whatever the truth — a crash, a hang, a death or a non-call
  return where the reference answered;
* **changed** — anything else that differs: nobody can say which side is right (a failed record
  that vouches for no calls now parses; one failure became another).

A record vouches for calls when production's parse was right (:func:`fuzzer.records.inject.parse_was_right`:
calls returned and executed, or rejected by the executor only for the model's own mistake), or
when a failed record states the calls its output holds (a record made with ``fuzz records add
--parse-status error --calls ...`` or ``recorder.record(parse_status="error", parsed_calls=...)``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from fuzzer.records.record import Record
from fuzzer.records.values import storable
from strategies._internal.sample import json_equal

SAME, FIXED, REGRESSED, CHANGED = "same", "fixed", "regressed", "changed"
RIGHT, WRONG, UNKNOWN = "right", "wrong", "unknown"
#: Outcomes that are failures whatever the truth: no parser may hang, die or return a non-call.
BROKEN = ("invalid", "hung", "died")
#: The recorded parse's kind when production raised: a clean rejection or a crash, nobody knows.
RECORDED_ERROR = "error"
ERRORS = (RECORDED_ERROR, "rejected", "raised")


@dataclass(frozen=True)
class Seen:
    """One side of a comparison, as JSON-able data: ``kind`` (returned, rejected, raised, error
    (production raised), invalid, hung, died), the calls returned, the exception type (relative
    to its target for a replay; as production named it for a record)."""

    kind: str
    calls: Optional[list] = None
    exception: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "calls": self.calls, "exception": self.exception}

    @classmethod
    def from_json(cls, data: Any) -> Optional["Seen"]:
        if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
            return None
        calls = data.get("calls")
        return cls(data["kind"], calls if isinstance(calls, list) else None, data.get("exception"))

    def words(self) -> str:
        """A few words for the table (``2 call(s): get_weather, send_email``, ``raised KeyError``)."""
        if self.kind == "returned":
            calls = self.calls or []
            if not calls:
                return "no call"
            names = ", ".join(str(_name(c)) for c in calls[:3]) + (", ..." if len(calls) > 3 else "")
            return f"{len(calls)} call(s): {names}"
        if self.kind in ERRORS:
            return f"{'raised' if self.kind == RECORDED_ERROR else self.kind} {self.exception}"
        if self.kind == "invalid":
            return "returned something that is not a call"
        return self.kind


def recorded(record: Record) -> Optional[Seen]:
    """What production's parser did with the record's output (None: the record holds no parse)."""
    status = record.parse_status
    if status is None or record.raw_model_output is None:
        return None
    if status in ("ok", "no_call", "repaired"):
        return Seen("returned", list(record.parsed_calls or []))
    if status == "error":
        return Seen(RECORDED_ERROR, exception=error_type(record.parse_error))
    return Seen("invalid")


def replayed(outcome: Any, target: Any) -> Seen:
    """A replay's outcome (:class:`fuzzer.isolation.Outcome`), its exception relative to ``target``
    (a :class:`fuzzer.engine.relative.TargetModule`)."""
    if outcome.kind == "returned":
        return Seen("returned", storable(list(outcome.calls or [])))
    if outcome.kind in ("rejected", "raised"):
        return Seen(outcome.kind, exception=target.exception(outcome.exception))
    return Seen(outcome.kind)


def error_type(error: Optional[str]) -> Optional[str]:
    """The exception type of a recorded ``"qualified.Type: message"``."""
    if not error:
        return None
    return error.split(": ", 1)[0].strip() or None


def truth(record: Record) -> Optional[list]:
    """The calls the record vouches for (see the module docstring), or None."""
    from fuzzer.records.inject import _plain, parse_was_right

    if parse_was_right(record):
        return list(record.parsed_calls)
    if record.parse_status in ("error", "invalid") and isinstance(record.parsed_calls, list) \
            and _plain(record.parsed_calls):
        return list(record.parsed_calls)
    return None


def judge(seen: Seen, vouched: Optional[list]) -> str:
    """right / wrong / unknown: ``seen`` against the calls the record vouches for."""
    if seen.kind in BROKEN:
        return WRONG
    if vouched is not None:
        return RIGHT if seen.kind == "returned" and json_equal(seen.calls or [], vouched) else WRONG
    return WRONG if seen.kind == "raised" else UNKNOWN


def alike(before: Seen, now: Seen, target: Any) -> bool:
    """The same outcome: calls equal as JSON values, the same exception type, the same failure.
    ``target`` reads a production error's type, named as production imported it
    (:meth:`fuzzer.engine.relative.TargetModule.same_exception`)."""
    if before.kind == RECORDED_ERROR:
        return now.kind in ERRORS and target.same_exception(before.exception, now.exception)
    if before.kind != now.kind:
        return False
    if before.kind == "returned":
        return json_equal(before.calls or [], now.calls or [])
    return before.exception == now.exception


def classify(before: Seen, now: Seen, vouched: Optional[list], target: Any) -> str:
    """same / fixed / regressed / changed (see the module docstring; the rule is
    :func:`fuzzer.engine.decisions.change_kind`, the same as ``fuzz diff``'s)."""
    from fuzzer.engine.decisions import change_kind

    if before.kind == RECORDED_ERROR and now.kind == "raised" and vouched is None and not alike(before, now, target):
        return CHANGED  # production raised too: a crash then or a rejection, nobody can tell
    ok = {RIGHT: True, WRONG: False, UNKNOWN: None}
    kind = change_kind(same=alike(before, now, target), before_ok=ok[judge(before, vouched)],
                       now_ok=ok[judge(now, vouched)])
    return REGRESSED if kind == "regression" else kind


# --------------------------------------------------------------------------------------------
# What differs, in words


def difference(before: Seen, now: Seen) -> str:
    """Which call or argument differs between two sides that both returned calls ("" otherwise):
    ``call 1 get_weather: arguments.city "Paris" -> "Pari"``."""
    if before.kind != "returned" or now.kind != "returned":
        return ""
    a, b = before.calls or [], now.calls or []
    if len(a) != len(b):
        gone = _names_missing(a, b)
        added = _names_missing(b, a)
        parts = ([f"dropped {', '.join(gone)}"] if gone else []) + ([f"added {', '.join(added)}"] if added else [])
        return f"{len(a)} call(s) -> {len(b)}" + (f": {'; '.join(parts)}" if parts else "")
    for i, (x, y) in enumerate(zip(a, b), 1):
        if json_equal(x, y):
            continue
        if not isinstance(x, dict) or not isinstance(y, dict):
            return f"call {i}: {_shown(x)} -> {_shown(y)}"
        if x.get("name") != y.get("name"):
            return f"call {i}: name {_shown(x.get('name'))} -> {_shown(y.get('name'))}"
        return f"call {i} {x.get('name')}: " + _value_path("arguments", x.get("arguments"), y.get("arguments"))
    return ""


def _value_path(path: str, x: Any, y: Any, depth: int = 0) -> str:
    if isinstance(x, dict) and isinstance(y, dict) and depth < 20:
        for key in x:
            if key not in y:
                return f"{path}.{key} dropped (was {_shown(x[key])})"
        for key in y:
            if key not in x:
                return f"{path}.{key} added ({_shown(y[key])})"
        for key in x:
            if not json_equal(x[key], y[key]):
                return _value_path(f"{path}.{key}", x[key], y[key], depth + 1)
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y) and depth < 20:
        for i, (u, v) in enumerate(zip(x, y)):
            if not json_equal(u, v):
                return _value_path(f"{path}[{i}]", u, v, depth + 1)
    return f"{path} {_shown(x)} -> {_shown(y)}"


def _names_missing(a: list, b: list) -> list[str]:
    """Names of calls of ``a`` that ``b`` lacks (as a multiset, in order)."""
    left = [_name(c) for c in b]
    out = []
    for call in a:
        name = _name(call)
        if name in left:
            left.remove(name)
        else:
            out.append(str(name))
    return out


def _name(call: Any) -> Any:
    return call.get("name") if isinstance(call, dict) else call


def _shown(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


__all__ = ["CHANGED", "FIXED", "REGRESSED", "SAME", "Seen", "alike", "classify", "difference", "judge",
           "recorded", "replayed", "truth"]
