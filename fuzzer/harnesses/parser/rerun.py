"""The parser harness's ``reproduce`` hook: run one finding's model output on a target, in this
process, and say what it does now (what ``fuzz reproduce FILE`` shows for a parser finding).

In this process, so a debugger or a print in the parser works as usual and a crash shows its full
traceback. What is given (:class:`fuzzer.engine.harness.Reproducible`):

* a reproducer document (written for long, history-dependent, slow and hang findings): it names
  the target, the declared rejections, any earlier inputs that must run first and, when the truth
  is known, the calls the input must give once fixed;
* a parser corpus entry: its text, its history, and its stored truth when it has one;
* a raw model output (then ``--target`` is required): only raising counts.

It still fails (exit 1) while it raises, or — when the truth is known — while the target rejects a
valid output or returns other calls than those written (:class:`fuzzer.harnesses.parser.reproduce.
Expected`). A slow finding is timed at 1x, 2x, 4x and 8x its repetitions instead, and fails while the
time still grows super-linearly; a hang runs in a worker stopped after the timeout, and fails while
it hangs.
"""

from __future__ import annotations

import json
import os
import traceback
from contextlib import closing
from typing import Any, Optional

from fuzzer.engine.harness import ReplayContext, Reproduced, Reproducible
from fuzzer.engine.text import preview

#: The timeout a hang entry runs under when none is given (what replay's --timeout defaults to).
HANG_TIMEOUT = 2.0


def reproduce(given: Reproducible, reference: Optional[str], context: ReplayContext) -> Reproduced:
    """See the module docstring. ``context.extra["timeout"]``: the ``--timeout`` given, if any."""
    from fuzzer.engine.references import load_reject_types, load_target
    from fuzzer.harnesses.parser.harness import sample_from_entry
    from fuzzer.harnesses.parser.reproduce import Expected, expected_of
    from strategies.errors import ToolfuzzError

    timeout = context.extra.get("timeout")
    target, history, reject, home = reference, [], [], ""
    expected: Optional[Expected] = None  # what the input must give once fixed, when the truth is known
    growth: Optional[dict] = None  # a slow finding's repetitions: timed, not run once
    hang_timeout: Optional[float] = None  # a hang's: run in a worker stopped after that many seconds
    data, entry = given.document, given.entry
    if data is not None:
        text, history = str(data.get("input", "")), list(data.get("history") or [])
        target = target or data.get("target")
        reject = list(data.get("reject_on") or [])
        home = str(data.get("target_home") or "") if reference is None else ""
        growth = data.get("growth") if isinstance(data.get("growth"), dict) else None
        hang_timeout = data.get("hang_timeout") if isinstance(data.get("hang_timeout"), (int, float)) else None
        expected = Expected.from_json(data.get("expected"))
    elif entry is not None:
        sample = sample_from_entry(entry)
        text = sample.text
        target = target or entry.target
        history = list((entry.scenario or {}).get("history") or [])
        if entry.truth_known:
            expected = expected_of(None, sample, entry.level)  # whatever verdict it was stored with
        if entry.verdict == "slow":
            growth = (entry.scenario or {}).get("growth")
        if entry.verdict == "hang":
            hang_timeout = HANG_TIMEOUT
    else:
        text = given.text or ""
        if not target:  # neither a reproducer file nor a corpus entry: a raw model output, which names nothing
            return Reproduced(problem=f"{given.path}: not a toolfuzz reproducer file or corpus entry; to run it as a "
                                      "raw model output, give --target M:A")
    if not target:
        return Reproduced(problem=f"{given.path}: names no target; give --target M:A")
    try:
        function = load_target(target)
        home = ""
    except ToolfuzzError:
        if not home:
            raise
        function = load_target(target, cwd=home)  # run elsewhere: where the finding's run found it
    reject_types = load_reject_types(reject, cwd=home or None)
    if hang_timeout and timeout:
        hang_timeout = timeout
    if growth:
        return _reproduce_slow(target, function, growth)
    lines: list[str] = []
    if hang_timeout and _still_hangs(lines, target, home, reject, history, text, float(hang_timeout)):
        return Reproduced(lines, failing=True)
    for earlier in history:
        try:
            function(earlier)
        except Exception:  # noqa: BLE001 - earlier inputs only set up the state
            pass
    lines.append(f"target: {target}" + (f" (after {len(history)} earlier input(s))" if history else ""))
    lines.append(f"input:  {preview(text, 400)}")
    try:
        value = function(text)
    except reject_types as exc:
        lines.append(f"rejected: {type(exc).__name__}: {exc}")
        return _judged(lines, expected, True)
    except BaseException:  # noqa: BLE001 - showing it is the point
        lines.append("raised:")
        lines.append(traceback.format_exc().rstrip())
        return Reproduced(lines, failing=True)
    from fuzzer.engine.calls import normalize_calls

    try:
        calls = normalize_calls(value)
    except Exception as exc:  # noqa: BLE001
        lines.append(f"returned something that is not a call: {exc} ({value!r:.300})")
        return Reproduced(lines, failing=True)
    lines.append(f"returned: {json.dumps(calls, ensure_ascii=False)}")
    return _judged(lines, expected, False, calls)


def _judged(lines: list, expected: Any, rejected: bool, calls: Optional[list] = None) -> Reproduced:
    """Failing, saying what was expected, while the answer is not what the input denotes (the
    same rule as a finding's inline reproduce command: :class:`fuzzer.harnesses.parser.reproduce.Expected`)."""
    why = expected.still_fails(rejected, calls) if expected is not None else None
    if why is None:
        return Reproduced(lines, failing=False)
    lines.append(f"expected: {expected.describe()} (still fails: {why})")
    return Reproduced(lines, failing=True)


def _still_hangs(lines: list, target: str, home: str, reject: list, history: list, text: str, timeout: float) -> bool:
    """A hang's input, run (after its history) in a worker that is stopped after ``timeout``
    seconds, as the campaign ran it: True, with where it was stuck, while it still hangs;
    otherwise the caller runs it here and shows what it does now."""
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation import WorkerPool

    spec = TargetSpec(target=target, reject_on=tuple(reject), cwd=home or os.getcwd(), timeout=timeout)
    with closing(WorkerPool(spec)) as pool:
        outcome = pool.run(list(history) + [text], fresh=True)[-1]
    if outcome is None or outcome.kind != "hung":
        lines.append(f"finished within the {timeout:g} s timeout: it does not hang any more")
        return False
    lines += [f"target: {target}", f"input:  {preview(text, 400)}", f"still hangs: no result within {timeout:g} s"]
    for path, function in list(outcome.frames or ())[-6:]:
        lines.append(f"  stuck in {os.path.basename(str(path))}:{function}")
    return True


def _reproduce_slow(target: str, function: Any, growth: dict) -> Reproduced:
    """A slow entry: time its fragment's repetitions in this process, as replay judges them."""
    import time
    from types import SimpleNamespace

    from fuzzer.harnesses.parser.explore import SlowProbe, remeasure

    def timed(texts: list) -> list:
        out = []
        for text in texts:
            started = time.perf_counter()
            try:
                function(text)
            except Exception:  # noqa: BLE001 - how long it takes is the question, not how it ends
                pass
            out.append(SimpleNamespace(kind="returned", elapsed=time.perf_counter() - started))
        return out

    measured, slow = remeasure(SlowProbe(seed=0, run=timed, timeout=float("inf")).measure, growth)
    lines = [f"target: {target}", f"input:  {preview(measured.text(measured.counts[0]), 400)}", measured.describe()]
    if slow:
        return Reproduced(lines + ["still slow: the time grows super-linearly with the repetitions"], failing=True)
    return Reproduced(lines + ["not slow any more: the time grows about linearly"], failing=False)


__all__ = ["reproduce"]
