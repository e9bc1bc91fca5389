"""Reproduce commands: every finding gets one that runs as printed.

A short input becomes a one-line ``<python> -c '...'`` calling the target on a Python literal of the
input (runs of a repeated fragment written as ``'x' * n``). An input too long for one line, or a
finding that only happens after other inputs (history-dependent), gets a *reproducer file*: a small
JSON document with the target, the earlier inputs and the input, run by
``<python> -m fuzzer reproduce FILE``. The interpreter is the one running toolfuzz
(``sys.executable``), so the command works outside an activated virtualenv, where a bare
``python`` would not find the bundled targets.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

#: Longest Python expression of an input that a one-line reproduce command may carry.
REPRODUCE_LIMIT = 600
REPRODUCER_VERSION = 1
#: A run of one fragment (up to 16 characters) repeated 8 times or more: written as `'x' * n`.
_RUN = re.compile(r"(.{1,16}?)\1{7,}", re.S)


def python_literal(text: str) -> str:
    """A short Python expression for ``text``: long runs of a repeated fragment (deep nesting, huge
    strings, fence storms — what oversized inputs are made of) become ``'fragment' * n``."""
    if len(text) > 2_000_000:
        return repr(text)
    parts: list[str] = []
    position = 0
    for match in _RUN.finditer(text):
        fragment = match.group(1)
        count = len(match.group(0)) // len(fragment)
        if count * len(fragment) < 24:
            continue
        if match.start() > position:
            parts.append(repr(text[position:match.start()]))
        parts.append(f"{fragment!r} * {count}")
        position = match.start() + count * len(fragment)
    if position < len(text):
        parts.append(repr(text[position:]))
    return " + ".join(parts) if parts else "''"


def python() -> str:
    """The interpreter running toolfuzz, quoted for a shell."""
    return shlex.quote(sys.executable or "python3")


def needs_file(text: str, history: Sequence[str] = ()) -> bool:
    return bool(history) or len(python_literal(text)) > REPRODUCE_LIMIT


def inline_command(target: str, text: str, expected: Optional["Expected"] = None,
                   reject_on: Sequence[str] = ()) -> str:
    """``<python> -c '...'`` printing what ``target`` returns for ``text`` (or its traceback).

    With ``expected`` (a finding whose verdict depends on the ground truth: a corruption, a false
    reject) the command runs :func:`expect` instead, which exits 1 while the target's answer is
    not what the input denotes and 0 once it is: a corruption's ``print(t(...))`` exited 0 with
    the wrong calls printed. A target found through the run's directory (a module of the user's
    next to the tools file, not an installed one) is looked up there, by absolute path: pasted
    into a terminal elsewhere, the command must find the same code."""
    literal = python_literal(text)
    module, _, attr = target.partition(":")
    home = target_home(target)
    if "/" in module or module.endswith(".py") or "." in attr:
        # file paths and Class.method targets load exactly as the engine loads them
        where = f", cwd={home!r}" if home else ""
        load, call = "from fuzzer.engine.references import load_target; ", f"load_target({target!r}{where})"
    else:
        load, call = (f"import sys; sys.path.insert(0, {home!r}); " if home else "") + \
            f"from {module} import {attr} as t; ", "t"
    if expected is None:
        code = f"{load}print({call}({literal}))"
    else:
        options = "".join([", may_reject=True" if expected.may_reject else "",
                           f", reject_on={list(reject_on)!r}" if reject_on else "",
                           ", forbidden=True" if expected.forbidden else ""])
        truth = repr(json.dumps(expected.calls, ensure_ascii=False))  # JSON text: readable in a shell
        code = f"from fuzzer.harnesses.parser.reproduce import expect; {load}expect({call}, {literal}, {truth}{options})"
    return f"{_env(target)}{python()} -c {shlex.quote(code)}"


class Expected:
    """What a finding's input must make the target do once the bug is fixed, for the verdicts that
    depend on the ground truth (corruption, false_reject): return exactly ``calls`` (None: no
    call), or — ``may_reject``, the input being an anomaly — reject it cleanly. The oracle's rule
    for those rows (DESIGN.md, "Oracles"), written once for the inline command, the reproducer
    file and ``fuzz reproduce`` of a corpus entry."""

    __slots__ = ("calls", "may_reject", "forbidden")

    def __init__(self, calls: Optional[list], may_reject: bool, forbidden: bool = False):
        self.calls, self.may_reject, self.forbidden = calls, bool(may_reject), bool(forbidden)

    def describe(self) -> str:
        shown = "no call" if self.calls is None else json.dumps(self.calls, ensure_ascii=False)
        if self.forbidden:
            return f"anything but {shown} (those calls break the tool's promise)"
        return f"{shown}{' (or a clean rejection)' if self.may_reject else ''}"

    def still_fails(self, rejected: bool, calls: Optional[list] = None) -> Optional[str]:
        """Why the target's answer (a clean rejection, or ``calls`` returned) is still a failure;
        None when it is what the input denotes."""
        from strategies.json_values import json_equal

        if self.forbidden:
            if not rejected and calls and self.calls and json_equal(calls, self.calls):
                return "the calls as written returned, though they break the promise"
            return None
        if rejected:
            return None if self.may_reject else "a valid output rejected"
        if self.calls is None:
            return "calls returned from an output that denotes none" if calls else None
        if json_equal(calls, self.calls):
            return None
        return "no call returned from an output that writes some" if not calls else "other calls than written"

    def to_json(self) -> dict:
        return {"calls": self.calls, "may_reject": self.may_reject, **({"forbidden": True} if self.forbidden else {})}

    @classmethod
    def from_json(cls, data: Any) -> Optional["Expected"]:
        if not isinstance(data, dict) or "calls" not in data:
            return None
        calls = data["calls"]
        return cls(calls if isinstance(calls, list) else None, bool(data.get("may_reject")),
                   bool(data.get("forbidden")))


#: Verdicts whose reproduce command checks the answer against the ground truth. (A missed anomaly
#: checks that the calls as written, which break the validate promise, are not returned.)
TRUTH_CHECKED = ("corruption", "false_reject", "missed_anomaly")


def expected_of(verdict: Optional[str], sample: Any, level: str = "parse") -> Optional[Expected]:
    """The :class:`Expected` of a finding (``verdict``; None: whatever it is, as for a corpus
    entry run by ``fuzz reproduce``) shown by ``sample``; None when its command cannot check the
    answer (no known truth, another verdict, or a corruption of a semantic anomaly at ``--level
    validate``, where which calls may be returned depends on the tool's promise). A missed anomaly
    (the calls as written returned, though they break the promise) checks they are not returned."""
    from strategies._internal.sample import ANOMALY_CLASSES

    if (verdict is not None and verdict not in TRUTH_CHECKED) or not getattr(sample, "truth_known", False):
        return None
    anomaly = getattr(sample, "anomaly_class", None)
    cls = ANOMALY_CLASSES.get(anomaly) if anomaly else None
    semantic_at_validate = level == "validate" and cls is not None and cls.semantic
    if verdict == "missed_anomaly" or (verdict is None and semantic_at_validate):
        # the calls as written break the promise: any answer but returning them (a rejection, no
        # call, the calls that keep it) is no longer this bug
        return Expected(sample.calls, may_reject=True, forbidden=True)
    if semantic_at_validate:
        return None  # (a corruption there: which calls may be returned needs the tool's promise)
    return Expected(sample.calls, may_reject=anomaly is not None)


def expect(target: Any, text: str, calls: Any, *, may_reject: bool = False, reject_on: Sequence[str] = (),
           forbidden: bool = False) -> None:
    """Run ``target(text)`` as the campaign judged it and exit: 0 when it returns ``calls`` (a
    list, or its JSON text; None/``"null"``: no call) or, ``may_reject``, rejects cleanly (a
    ``reject_on`` type, default ValueError); 1 while it does anything else. ``forbidden``: the
    other way round, 1 while it returns ``calls`` (a missed anomaly). Prints what it returned or
    rejected with; a crash shows its traceback (and exits 1, as Python does)."""
    import json as _json

    from fuzzer.engine.calls import InvalidReturn, normalize_calls
    from fuzzer.engine.references import load_reject_types

    if isinstance(calls, str):
        calls = _json.loads(calls)
    expected = Expected(calls, may_reject, forbidden)
    reject = load_reject_types(list(reject_on))
    try:
        value = target(text)
    except reject as exc:
        print(f"rejected: {type(exc).__name__}: {exc}")
        why = expected.still_fails(True)
    else:
        try:
            returned = normalize_calls(value)
        except InvalidReturn as exc:
            print(f"returned something that is not a call: {exc} ({value!r:.300}) (still fails: not a call)")
            raise SystemExit(1) from None
        print(f"returned: {_json.dumps(returned, ensure_ascii=False)}")
        why = expected.still_fails(False, returned)
    if why is not None:
        print(f"expected: {expected.describe()} (still fails: {why})")
        raise SystemExit(1)
    raise SystemExit(0)


_HOMES: dict = {}


def target_home(target: str, cwd: Optional[str] = None) -> Optional[str]:
    """The absolute directory ``target`` is found through when it is not importable from
    anywhere else (a file path, or a module in the run's directory ``cwd``); None for an
    installed module (the bundled targets, a package of the user's installed in the venv)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    module = target.partition(":")[0]
    if "/" in module or module.endswith(".py"):
        return cwd
    key = (module, cwd)
    if key not in _HOMES:
        import importlib.machinery

        top = module.split(".")[0]
        elsewhere = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) != cwd]
        found = False
        for finder in sys.meta_path:
            try:
                if finder is importlib.machinery.PathFinder:
                    spec = finder.find_spec(top, elsewhere)
                elif hasattr(finder, "find_spec"):
                    spec = finder.find_spec(top, None)
                else:
                    spec = None
            except Exception:  # noqa: BLE001 - a finder that cannot answer does not find it
                spec = None
            if spec is not None:
                found = True
                break
        _HOMES[key] = None if found else cwd
    return _HOMES[key]


def file_command(path: str) -> str:
    return f"{python()} -m fuzzer reproduce {shlex.quote(path)}"


def _env(target: str) -> str:
    tools = os.environ.get("TOOLFUZZ_TOOLS")
    if tools and target.startswith("fuzzer.targets.reference:"):
        return f"TOOLFUZZ_TOOLS={shlex.quote(tools)} "
    return ""


def reproducer_path(directory: str, signature: str) -> str:
    return os.path.join(directory, f"{signature}.json")


def reproducer_document(*, target: str, text: str, history: Sequence[str] = (), reject_on: Sequence[str] = (),
                        signature: str = "", title: str = "", growth: Optional[dict] = None,
                        hang_timeout: Optional[float] = None, expected: Optional[Expected] = None) -> dict[str, Any]:
    """``growth`` (a slow finding's prefix, fragment, suffix and count) makes `fuzz reproduce`
    time the fragment's repetitions instead of running the input once; ``hang_timeout`` (a
    hang's) makes it run the input in a worker that is stopped after that many seconds;
    ``expected`` (a corruption's, a false reject's) makes it check the answer against the truth."""
    document = {"toolfuzz_reproducer": REPRODUCER_VERSION, "signature": signature, "title": title, "target": target,
                "reject_on": list(reject_on), "history": list(history), "input": text}
    if expected is not None:
        document["expected"] = expected.to_json()
    home = target_home(target)
    if home:  # where the target was found: `fuzz reproduce FILE` run elsewhere looks there
        document["target_home"] = home
    if growth:
        document["growth"] = dict(growth)
    if hang_timeout:
        document["hang_timeout"] = float(hang_timeout)
    return document


def write_reproducer(path: str, document: dict[str, Any]) -> None:
    from corpus.store import atomic_write

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(Path(path), (json.dumps(document, indent=2, ensure_ascii=True) + "\n").encode("ascii"))


def command_for(*, target: str, text: str, history: Sequence[str] = (),
                reproduce_dir: Optional[str] = None, signature: str = "", expected: Optional[Expected] = None,
                reject_on: Sequence[str] = ()) -> str:
    """The command of a finding: inline when it fits, else the reproducer file in ``reproduce_dir``."""
    if not needs_file(text, history):
        return inline_command(target, text, expected, reject_on)
    if reproduce_dir is None:
        return (f"the input is {len(text):,} characters: see minimized_input in the report, save it to FILE "
                f"and run `{python()} -m fuzzer reproduce FILE --target {target}`")
    return file_command(reproducer_path(reproduce_dir, signature))


__all__ = ["REPRODUCE_LIMIT", "TRUTH_CHECKED", "Expected", "command_for", "expect", "expected_of", "file_command",
           "inline_command", "needs_file", "python", "python_literal", "reproducer_document", "reproducer_path",
           "target_home", "write_reproducer"]
