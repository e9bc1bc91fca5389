"""The parser harness: corpus entries of kind ``parser`` replayed on a ``--target``.

Where the engine meets the corpus for parsers: entries become samples again (with their stored
truth), are run on the target, judged by the oracle and compared with what the entry recorded. The
campaign (``--corpus``), ``fuzz replay``, ``fuzz gate``, ``fuzz corpus cmin`` and the pytest plugin
all replay through :func:`replay_entries`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from dataclasses import replace
from typing import Any, Callable, Optional

from fuzzer.engine.harness import ReplayContext, Replayed
from fuzzer.engine.confirm import PASS_RUNS
from fuzzer.harnesses.parser.oracle import RAW_FORMAT, Oracle, rerun_judgment
from strategies._internal.sample import Recipe, Sample


def target_version(target: str, cwd: Optional[str] = None) -> Optional[str]:
    """A short hash of the target module's source file, so the corpus can tell which parser version
    an entry was found with. The file is located without importing anything (the engine never runs
    user code); None when it cannot be."""
    module = target.split(":", 1)[0]
    if module.startswith("git:") or not module:
        return None
    path = module_file(module, cwd or os.getcwd())
    if not path:
        return None
    with open(path, "rb") as fh:
        return "sha256:" + hashlib.sha256(fh.read()).hexdigest()[:12]


def module_file(module: str, cwd: str) -> Optional[str]:
    """The source file of ``module`` (dotted name or ``path.py``), found without importing it."""
    from importlib.machinery import PathFinder

    if module.endswith(".py") or "/" in module:
        from fuzzer.engine.references import module_path

        return module_path(module, cwd)  # the file the loader imports (``../dir/mod`` is its mod.py)
    parts = module.split(".")
    try:
        spec = PathFinder.find_spec(parts[0], [cwd] + sys.path)
        if spec is None:  # an editable install or another import hook
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if find is not None and finder is not PathFinder:
                    spec = find(parts[0], None)
                    if spec is not None:
                        break
        for i in range(1, len(parts)):
            if spec is None or not spec.submodule_search_locations:
                return None
            spec = PathFinder.find_spec(".".join(parts[:i + 1]), list(spec.submodule_search_locations))
    except (ImportError, ValueError, OSError, AttributeError):
        return None
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return None
    return spec.origin


@functools.lru_cache(maxsize=64)
def defined_names(path: str) -> dict[str, int]:
    """``{name: line}`` of the functions and classes defined in a Python file (first definition
    wins), read from its syntax tree: nothing is imported or run."""
    import ast

    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return {}
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.name, node.lineno)
    return found


@functools.lru_cache(maxsize=64)
def user_files(target: str, cwd: str) -> dict[str, str]:
    """``{basename: path}`` of the Python files next to the target's module, found without
    importing anything. Outcome frames carry only base names (signatures must survive moves),
    so a frame is the user's when its file is one of these."""
    module = target.split(":", 1)[0]
    path = module_file(module, cwd) if not module.startswith("git:") else None
    if path is None:
        return {}
    directory = os.path.dirname(os.path.abspath(path))
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return {}
    return {name: os.path.join(directory, name) for name in names if name.endswith(".py")}


def user_location(target: str, frames: Any, cwd: Optional[str] = None) -> Optional[tuple[str, str]]:
    """(path, function) of the innermost traceback frame in the user's code, or None.

    A frame is the user's when a file of its name sits next to the target's module *and* defines
    that function (``json/__init__.py:loads`` is not the user's ``__init__.py``). A comprehension
    or lambda frame is reported as the named function around it."""
    files = user_files(target, cwd or os.getcwd())
    mine = []
    for file, function in frames or ():
        path = files.get(file)
        if path is not None and (function.startswith("<") or function in defined_names(path)):
            mine.append((path, function))
    for path, function in reversed(mine):
        if not function.startswith("<"):
            return path, function
    return mine[-1] if mine else None


def sample_from_entry(entry: Any) -> Sample:
    recipe = Recipe.from_json(entry.recipe) if entry.recipe else None
    return Sample(text=entry.text, format=entry.format or RAW_FORMAT, anomaly_class=entry.anomaly_class,
                  operator=entry.operator, calls=entry.calls, tool=entry.tool or "", recipe=recipe,
                  truth_known=entry.truth_known)


def history_of(entry: Any) -> list[str]:
    scenario = entry.scenario or {}
    history = scenario.get("history") or []
    return [h for h in history if isinstance(h, str)]


def _unjudged_reason(entry: Any, registry: Any) -> Optional[str]:
    if (entry.level == "validate" and entry.tool and registry is not None and entry.tool not in registry):
        return (f"its tool {entry.tool!r} is not in the registry given (--tools): the validate-level "
                "promise cannot be checked")
    return None


def replay_entries(items: list, *, run: Callable[..., list], registry: Any, level: str,
                   timeout: float) -> list[Replayed]:
    """Re-run every ``(path, Entry)`` on the target and judge it again with the stored truth.

    ``run(texts, deadline=None, fresh=False)`` is the pool's run, whose inputs hang after
    ``timeout`` seconds. Entries that only fail after earlier inputs (``scenario.history``) run
    after them in a fresh worker. A hang entry whose input now finishes passes only when it
    finishes well inside the timeout, twice (:mod:`fuzzer.engine.hangs`)."""
    oracles: dict[str, Oracle] = {}
    results: list[Optional[Replayed]] = [None] * len(items)
    plain: list[int] = []
    for i, (path, entry) in enumerate(items):
        why = _unjudged_reason(entry, registry)
        if why is not None:
            results[i] = Replayed(path, entry, "unjudged", None, unjudged=why)
        else:
            plain.append(i)
    samples = {i: sample_from_entry(items[i][1]) for i in plain}
    alone = [i for i in plain if not history_of(items[i][1])]
    outcomes: dict[int, Any] = dict(zip(alone, run([samples[i].text for i in alone]))) if alone else {}
    for i in plain:
        history = history_of(items[i][1])
        if history:
            outcomes[i] = run(history + [samples[i].text], fresh=True)[-1]
    for i in [i for i in plain if outcomes[i] is None]:  # run under a deadline (a campaign's budget) that ended first
        results[i] = Replayed(items[i][0], items[i][1], "unjudged", None, unjudged="not replayed: the budget ended first")
    plain = [i for i in plain if results[i] is None]
    slow = [i for i in plain if items[i][1].verdict == "slow" and (items[i][1].scenario or {}).get("growth")]
    for i in slow:
        results[i] = _replay_slow(items[i], run)
    for i in plain:
        if i in slow:
            continue
        path, entry = items[i]
        oracle = oracles.setdefault(entry.level or level, Oracle(registry, entry.level or level))
        outcome = outcomes[i]
        judgment = oracle.judge(samples[i], outcome)
        now, rekeyed = _signature_now(oracle, samples[i], judgment, outcome, entry, run) if judgment.failed \
            else (None, False)
        results[i] = Replayed(path, entry, judgment.verdict.value, now.id if now else None, outcome=outcome,
                              what=now.what if now else None, rekeyed=rekeyed)
    _hangs_with_margin(items, results, outcomes, samples, run, timeout)
    oracle_of = lambda entry: oracles.setdefault(entry.level or level, Oracle(registry, entry.level or level))  # noqa: E731
    _flaky_runs(items, results, outcomes, samples, run, oracle_of)
    _in_other_formats(items, results, samples, run, registry, oracle_of)
    return [r for r in results if r is not None]


def _in_other_formats(items: list, results: list, samples: dict, run: Callable, registry: Any,
                      oracle_of: Callable) -> None:
    """An open rejection entry seen in several formats for one reason passes only when its calls,
    written in each of the other formats, pass too: fixing the fenced path of a bug the hermes path
    shares marked the entry fixed while hermes outputs were still rejected."""
    from fuzzer.harnesses.parser.across_formats import written_in

    for i, (path, entry) in enumerate(items):
        r = results[i]
        if r is None or entry.verdict != "false_reject" or len(entry.formats or []) < 2 or not _passed_once(entry, r, "open"):
            continue
        writings = [w for w in (written_in(samples[i], fmt, registry) for fmt in entry.formats if fmt != entry.format)
                    if w is not None]
        oracle = oracle_of(entry)
        for writing, outcome in zip(writings, run([w.text for w in writings]) if writings else []):
            if outcome is None:
                continue
            judgment = oracle.judge(writing, outcome)
            if judgment.failed and oracle.signature(writing, judgment, outcome).id == entry.signature:
                results[i] = Replayed(path, entry, entry.verdict, entry.signature, outcome=outcome, what=entry.what,
                                      note=f"its calls written in {writing.format} are still rejected")
                break


def _answer(outcome: Any) -> tuple:
    import json

    return (outcome.kind, json.dumps(outcome.calls, sort_keys=True, default=repr) if outcome.calls is not None else None,
            outcome.exception)


def _flaky(entry: Any) -> bool:
    """A nondeterminism entry, or one filed as not reproducible alone (its key is "history", with
    no earlier inputs that would reproduce it)."""
    return entry.verdict == "nondeterminism" or ((entry.what or "").endswith("|history") and not history_of(entry))


def _flaky_runs(items: list, results: list, outcomes: dict, samples: dict, run: Callable, oracle_of: Callable) -> None:
    """A flaky entry passes replay only when its input gives one passing answer over
    :data:`PASS_RUNS` runs (a target dropping arguments at random gave the truth on a single
    replay, and the entry was marked fixed with nothing changed); another answer, or a run that
    fails, fails it again as the bug it was filed as.

    An open entry of any other kind that passes (about to be called fixed) runs as many times
    too, and passes only if none of them fails: a target answering at random confirmed one of
    its wrong answers alone by chance, and one passing replay then marked it fixed. So does an
    entry marked fixed that passes: a fixed bug come back one time in five passed its one replay
    four times in five, and a gate whose short campaign missed it let it through."""
    for i, (path, entry) in enumerate(items):
        if results[i] is None or results[i].unjudged or i not in outcomes:
            continue
        flaky = _flaky(entry)
        if not flaky and not _passed_once(entry, results[i], "open", "fixed"):
            continue
        again = [o for o in run([samples[i].text] * (PASS_RUNS - 1)) if o is not None]
        oracle = oracle_of(entry)
        answers = {_answer(o) for o in [outcomes[i], *again]} if flaky else set()
        failing = sum(oracle.judge(samples[i], o).failed for o in [outcomes[i], *again])
        if len(answers) > 1 or failing:
            why = f"{len(answers)} different answers" if len(answers) > 1 else f"{failing} failing run(s)"
            signature, what, rekeyed = _nondeterminism_now(oracle, samples[i], entry, [outcomes[i], *again])
            results[i] = Replayed(path, entry, entry.verdict, signature, outcome=outcomes[i], what=what,
                                  rekeyed=rekeyed, note=f"{why} in {1 + len(again)} runs")
        else:
            results[i] = replace(results[i], note=f"the same passing answer in {1 + len(again)} runs" if flaky
                                 else f"passed {1 + len(again)} runs")


def _passed_once(entry: Any, result: Replayed, *statuses: str) -> bool:
    """An entry of one of ``statuses`` that passed one replay, of the kinds :func:`_flaky_runs`
    runs again before it may count as fixed, or still fixed (a hang or slow entry has its own
    rule; one with earlier inputs runs after them, where state, not chance, is the bug)."""
    return result.status == "pass" and entry.status in statuses and entry.verdict not in ("hang", "slow") \
        and not history_of(entry)


def _nondeterminism_now(oracle: Oracle, sample: Any, entry: Any, outcomes: list) -> tuple:
    """(signature, what, rekeyed) of a flaky entry failing again: its own, unless it is a
    nondeterminism filed under the key of before (by the input's class) that a run now files under
    what differed between the runs — the same failure, rekeyed (:attr:`Replayed.rekeyed`)."""
    if entry.verdict != "nondeterminism":
        return entry.signature, entry.what, False
    first = outcomes[0]
    other = next((o for o in outcomes[1:] if _answer(o) != _answer(first)), None)
    judgment = rerun_judgment(first, other) if other is not None else None
    if judgment is None:
        return entry.signature, entry.what, False
    now = oracle.signature(sample, judgment, first)
    if now.id != entry.signature and oracle.legacy_signature(sample, judgment, first).id == entry.signature:
        return now.id, now.what, True
    return entry.signature, entry.what, False


def _hangs_with_margin(items: list, results: list, outcomes: dict, samples: dict, run: Callable[..., list],
                       timeout: float) -> None:
    """A hang entry that passed counts as fixed only when it finished well inside the timeout,
    and again in a fresh worker (:func:`fuzzer.engine.hangs.still_hangs`); otherwise it still hangs,
    under its own signature, saying why."""
    from fuzzer.engine.hangs import still_hangs

    passed = [i for i, r in enumerate(results) if r is not None and r.status == "pass" and r.entry.verdict == "hang"]
    for i in passed:
        why = still_hangs(outcomes[i], timeout)
        if why is not None:
            results[i] = _still_hanging(results[i], why)
    again = [i for i in passed if results[i].status == "pass"]
    if not again:
        return
    history = {i: history_of(items[i][1]) for i in again}
    for i in again:
        (second,) = run(history[i] + [samples[i].text], fresh=True)[-1:]
        if second is None:
            results[i] = Replayed(items[i][0], items[i][1], "unjudged", None,
                                  unjudged="not replayed: the budget ended before its second run")
        elif second.kind == "hung":
            results[i] = _still_hanging(results[i], f"still hanging: it finished once, then hung again "
                                                    f"({second.detail or 'no result within the timeout'})")
        else:
            why = still_hangs(second, timeout)
            if why is not None:
                results[i] = _still_hanging(results[i], why.replace("it finished in", "on its second run it took"))


def _still_hanging(r: Replayed, why: str) -> Replayed:
    return Replayed(r.path, r.entry, "hang", r.entry.signature, outcome=r.outcome, what=r.entry.what, note=why)


def _signature_now(oracle: Oracle, sample: Any, judgment: Any, outcome: Any, entry: Any,
                   run: Callable) -> tuple[Any, bool]:
    """The signature an entry's failure has now, keyed as the campaign keys it: a history-
    dependent one by "history", a re-keyed corruption by where its damage was made; and whether
    the entry was filed under the key this very failure had before signatures left out what a
    message copies of the input, a rejection's format and a path's comprehensions (re-keyed: the
    same failure, not a changed one — see :attr:`fuzzer.engine.harness.Replayed.rekeyed`)."""
    from corpus.signature import Signature, history_signature
    from fuzzer.harnesses.parser.oracle import Verdict

    signature = oracle.signature(sample, judgment, outcome)
    scenario = entry.scenario or {}
    as_filed = Signature(id=entry.signature, title=entry.title, key=entry.what or "")
    if history_of(entry) and judgment.verdict.value == entry.verdict and judgment.verdict in (
            Verdict.CORRUPTION, Verdict.FALSE_REJECT, Verdict.MISSED_ANOMALY):
        return history_signature(judgment.verdict.value), False
    if judgment.verdict is Verdict.HANG and entry.holds_hang(getattr(outcome, "frames", ())):
        return as_filed, False  # the same stuck loop, caught in another of its helpers
    if scenario.get("match", entry.signature) == signature.id:
        # the same failure the entry was filed for (an entry the campaign had no time to key by
        # path is filed under the oracle's signature: tracing it now would call it another bug;
        # a rejection filed as one format's own keeps that key)
        if "|path|" not in (entry.what or ""):
            return as_filed, False
        # filed by the functions its input ran: the same damage on another path is the entry
        # moved by a refactor (fuzzer.engine.decisions), and the campaign's finding on that path with it
        keyed, legacy = _keyed_now(oracle, sample, judgment, outcome, run)
        if "|path|" not in keyed.key:
            return as_filed, False
        return keyed, keyed.id != entry.signature and entry.signature in legacy
    if "match" not in scenario and entry.signature != signature.id and \
            oracle.legacy_signature(sample, judgment, outcome).id == entry.signature:
        return signature, True  # exactly the failure filed, under the key it had then
    keyed, legacy = _keyed_now(oracle, sample, judgment, outcome, run)
    return keyed, keyed.id != entry.signature and entry.signature in legacy


def _keyed_now(oracle: Oracle, sample: Any, judgment: Any, outcome: Any, run: Callable) -> tuple[Any, set]:
    """:func:`keyed_signature` of a failure, and the ids it had under the keys of before
    (:meth:`Oracle.legacy_signature`; a path signature with every function the input ran)."""
    keyed, legacy_path, _maker = _keyed(oracle, sample, judgment, outcome, run)
    legacy = {oracle.legacy_signature(sample, judgment, outcome).id}
    if legacy_path is not None:
        legacy.add(legacy_path.id)
    return keyed, legacy


def keyed_signature(oracle: Oracle, sample: Any, judgment: Any, outcome: Any, run: Callable,
                    deadline: Optional[float] = None) -> Any:
    """The signature a finding is filed under. The oracle's, except for a corruption: that is
    keyed by the kind of damage and where in the target it was made (traced once, alone, in a
    fresh worker: :func:`corpus.signature.path_signature`), so one fallback path that mangles
    strings is one finding. The one rule for the campaign, replay and corpus add."""
    return _keyed(oracle, sample, judgment, outcome, run, deadline)[0]


def keyed_by_maker(oracle: Oracle, sample: Any, judgment: Any, outcome: Any, run: Callable,
                   deadline: Optional[float] = None) -> tuple[Any, bool]:
    """(:func:`keyed_signature`, whether it is a path signature keyed by the function that made
    the damage rather than by every function the input ran)."""
    keyed, _legacy, maker = _keyed(oracle, sample, judgment, outcome, run, deadline)
    return keyed, maker is not None


def _keyed(oracle: Oracle, sample: Any, judgment: Any, outcome: Any, run: Callable,
           deadline: Optional[float] = None) -> tuple[Any, Any, Optional[str]]:
    """(:func:`keyed_signature`, the path signature the same trace had under the key of before
    — every function the input ran — or None when it is no path signature, the maker its trace
    found or None)."""
    from corpus.signature import path_signature
    from fuzzer.harnesses.parser.damage import coarse_damage, damaged_string
    from fuzzer.harnesses.parser.oracle import Verdict

    signature = oracle.signature(sample, judgment, outcome)
    if judgment.verdict is not Verdict.CORRUPTION:
        return signature, None, None
    needle = damaged_string(sample.calls, outcome.calls) if outcome.kind == "returned" and sample.truth_known else None
    traced = run([sample.text], fresh=True, options=("damage", needle) if needle else True, deadline=deadline)[0]
    functions = getattr(traced, "functions", ()) if traced is not None else ()
    if not functions:
        return signature, None, None  # a pool that cannot trace: the oracle's signature
    kind, words = coarse_damage(judgment.key, judgment.reason)
    maker = getattr(traced, "maker", None) or None
    return (path_signature(judgment.verdict.value, kind=kind, words=words, functions=functions, maker=maker),
            path_signature(judgment.verdict.value, kind=kind, words=words, functions=functions, legacy=True), maker)


def shown_path_signature(oracle: Oracle, finding: Any, run: Callable, deadline: Optional[float] = None) -> Any:
    """The path signature of the input a corruption finding shows (its minimized one): how the
    campaign, `corpus add` and `minimize` file it once shrunk, so each names the signature its
    corpus entry has. None when it is no corruption keyed by path (or it was not traced in time)."""
    sample, outcome = finding.best, finding.best_outcome
    keyed = keyed_signature(oracle, sample, oracle.judge(sample, outcome), outcome, run, deadline=deadline)
    return keyed if "|path|" in keyed.key else None


def target_spec(reference: str, context: ReplayContext, *, sampling: bool = False) -> Any:
    """Workers that trace an input when asked (path signatures); ``sampling`` also traces a
    share of all inputs (exploration's feedback)."""
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation.spec import load_timeout

    share = (0.05 if context.max_examples is not None else None) if sampling else 0.0
    return TargetSpec(target=reference, reject_on=tuple(context.reject_on), cwd=context.cwd or os.getcwd(),
                      timeout=context.timeout, memory_limit_mb=context.memory_limit_mb, coverage=True,
                      trace_share=share, load_timeout=load_timeout(context.budget_s))


def _replay_slow(item: tuple, run: Callable[..., list]) -> Replayed:
    """A slow entry passes when its fragment's repetition no longer grows super-linearly."""
    from corpus.signature import slow_signature
    from fuzzer.harnesses.parser.explore import SlowProbe, remeasure

    path, entry = item
    probe = SlowProbe(seed=0, run=lambda texts: run(texts), timeout=float("inf"))
    growth, slow = remeasure(probe.measure, entry.scenario["growth"])
    if not slow:
        return Replayed(path, entry, "pass", None)
    pool = getattr(run, "__self__", None)
    signature, what = entry.signature, entry.what
    # An entry filed with no stack caught (keyed by the kind of fragment that grows) is that growth
    # whatever stack a replay catches: only one filed where its time went can have moved.
    filed_by_stack = entry.what in (None, "", "slow")
    if filed_by_stack and pool is not None and hasattr(pool, "sample_stack"):
        # One sample may land where the slow code is not (a loaded machine, a call before it): it
        # takes three samples elsewhere to say the time is now spent somewhere else.
        seen = []
        text, after_s = growth.sampled(pool.spec.timeout)
        for share in (1, 2, 4):
            _outcome, frames = pool.sample_stack(text, after_s=after_s / share, options=False)
            if frames:
                seen.append(slow_signature(frames=frames, fragment_kind=""))
                if seen[-1].id == entry.signature:
                    break
        if seen and entry.signature not in [s.id for s in seen]:
            signature, what = seen[0].id, seen[0].what
    return Replayed(path, entry, "slow", signature, what=what)


def replay(items: list, reference: str, context: ReplayContext) -> list[Replayed]:
    from fuzzer.isolation import WorkerPool

    with WorkerPool(target_spec(reference, context), workers=context.workers) as pool:
        return replay_entries(items, run=pool.run, registry=context.registry, level=context.level,
                              timeout=context.timeout)


def dead_reason(run: Callable[..., list], registry: Any, tools: list[str], level: str,
                formats: Optional[list] = None) -> Optional[str]:
    """None when the target accepts some valid output of one of ``tools``; otherwise why it tests
    nothing (every valid probe rejected, or it does not return calls at all).

    It runs before a replay, outside any budget, so it probes one format at a time and stops at the
    first the target reads (probing all of them at once made a slow parser's gate run for minutes),
    and only ``formats`` when the run declared them, as its campaign does. A declared format counts
    only if one of its probes got calls back: a campaign fuzzes a declared format even when every
    probe is rejected, but a target that rejects everything tests nothing, and ``replay --update``
    must not mark entries fixed against it."""
    from fuzzer.harnesses.parser.tool import Tally, ToolCampaign
    from fuzzer.harnesses.parser.oracle import Oracle
    from strategies._internal.formats import FORMATS

    groups = [list(formats)] if formats else [[name] for name in FORMATS]
    reasons = []
    for name in tools:
        contract, first_rejection = None, None
        for group in groups:
            probe = ToolCampaign(registry=registry, tool_name=name, level=level, formats=group, operators=[],
                                 include_valid=True, seed=0, oracle=Oracle(registry, level), run=run, tally=Tally(),
                                 on_failure=lambda failure: None).probe(None)
            if probe.contract_problem:
                contract = probe.contract_problem
                break
            if any(probe.supported.values()):
                return None
            first_rejection = first_rejection or probe.first_rejection
        reasons.append(contract or "it rejects (or returns no call for) every valid output in every "
                       "format" + (f"; first rejection: {first_rejection}" if first_rejection else ""))
    return reasons[0] if reasons else None


def check_alive(items: list, reference: str, context: ReplayContext) -> Optional[str]:
    from fuzzer.isolation import WorkerPool

    registry = context.registry
    tools = sorted({e.tool for _, e in items if e.tool and e.tool in registry})[:3] or registry.names()[:1]
    with WorkerPool(target_spec(reference, context)) as pool:
        return dead_reason(pool.run, registry, tools, context.level, formats=context.extra.get("formats"))


__all__ = ["check_alive", "history_of", "keyed_signature", "module_file", "replay", "replay_entries", "sample_from_entry",
           "shown_path_signature", "target_spec", "target_version"]
