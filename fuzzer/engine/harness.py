"""Harnesses: what toolfuzz tests, one per corpus entry kind.

* ``parser`` — the parser / validator (``--target M:A``), the original harness;
* ``executor`` — a tool executor under injected faults (``--executor M:A``);
* ``agent`` — a multi-turn tool-use loop against a scripted model (``--agent M:A``).

A corpus may hold entries of every kind (``Entry.kind``). ``fuzz replay`` and ``fuzz gate`` replay
each kind with its harness, against the reference given by the harness's option, and decide on the
union (:mod:`fuzzer.engine.decisions`). A harness registers one :class:`Harness` in :data:`HARNESSES`:

``replay(items, reference, context)`` re-runs ``(path, Entry)`` pairs of its kind and returns one
:class:`Replayed` per entry, in order; ``campaign_job(reference, context)`` builds the short
campaign the gate runs (a :class:`fuzzer.engine.pipeline.Job` whose result has ``findings`` and
``problem``), or None when the harness has none; ``check_alive`` says when the reference tests
nothing at all (every entry would "pass" against a parser that rejects everything);
``reproduce(given, reference, context)`` runs one finding's input again for ``fuzz reproduce``
and says what it does now (:class:`Reproduced`) — a harness without one is reproduced by replaying
the entry (:mod:`fuzzer.engine.jobs.reproduce`), so every entry kind reproduces.

A new harness is one package: its verdicts (:func:`fuzzer.engine.verdicts.verdict`), a
:class:`~fuzzer.engine.subject.Subject` for the engine's campaign loop, findings that subclass
:class:`~fuzzer.engine.results.ShrunkFinding`, and one :func:`register_harness` call. Its entries
are read, replayed, gated and reproduced with no edit to the engine (tests/integration/
test_toy_harness.py registers one from inside a test file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from strategies.registry import Registry


@dataclass
class Replayed:
    """One corpus entry run again: what it did now."""

    path: str
    entry: Any  # corpus.store.Entry
    verdict: str  # "pass" or the failure verdict now
    signature: Optional[str]  # signature of the failure now; None = it passes
    outcome: Any = None  # harness-specific detail (the parser Outcome, the executor trace, ...)
    #: Set when the entry could not be judged at all (its tool is missing from the registry
    #: given, its harness's reference was not given): such an entry is reported, never counted
    #: as a pass or a failure, and never deleted.
    unjudged: Optional[str] = None
    #: The failure's signature now without where it happened (corpus.signature.Signature.what):
    #: the same as the entry's while it fails the same way, from wherever in the target.
    what: Optional[str] = None
    #: What the replay saw beyond the verdict, for the reader (a hang entry that finished, but not
    #: well inside the timeout, still counts as hanging: fuzzer.engine.hangs).
    note: Optional[str] = None
    #: The entry fails exactly as it was filed, and only the rule that keys failures changed
    #: since (signatures left out what a message copies of the input, a rejection's format, a
    #: path's comprehensions): ``signature`` is the key that failure has now.
    rekeyed: bool = False
    #: Why ``replay --update`` leaves this passing entry open: it was judged by other rules than
    #: the ones it was found under (a policy given on the command line that makes fewer promises
    #: passes a bug that is still there).
    held: Optional[str] = None

    @property
    def moved(self) -> bool:
        """An open entry that fails the same way from another place in the target (a refactor
        moved the code), or exactly as it was filed under a key of before (:attr:`rekeyed`):
        the same bug, under another signature (:func:`fuzzer.engine.decisions.entry_moved`)."""
        from corpus.signature import movable
        from fuzzer.engine.decisions import entry_moved

        return entry_moved(status=self.status, entry_status=self.entry.status, verdict=self.verdict,
                           entry_verdict=self.entry.verdict, rekeyed=self.rekeyed, movable=movable(self.entry.what),
                           same_what=self.what == self.entry.what)

    @property
    def status(self) -> str:
        """pass | fail (same signature) | changed (fails differently) | regression (a fixed entry
        fails again) | unjudged (:func:`fuzzer.engine.decisions.entry_status`)."""
        from fuzzer.engine.decisions import entry_status

        return entry_status(entry_status=self.entry.status, entry_signature=self.entry.signature, now=self.signature,
                            unjudged=self.unjudged is not None)


@dataclass
class ReplayContext:
    """What replaying needs besides the reference: shared options of replay / gate / campaign."""

    registry: Any = None  # strategies Registry of tools
    tools_file: Optional[str] = None
    level: str = "parse"
    timeout: float = 2.0
    memory_limit_mb: Optional[int] = 4096
    reject_on: tuple = ()
    cwd: Optional[str] = None
    seed: int = 0
    budget_s: Optional[float] = None
    max_examples: Optional[int] = None
    workers: int = 1
    extra: dict = field(default_factory=dict)  # harness-specific options (policy file, ...)


@dataclass(frozen=True)
class Reproducible:
    """What ``fuzz reproduce FILE`` was given: a corpus ``entry`` of any kind, a reproducer
    ``document`` (the file a harness writes for a finding too long for one command line; its
    ``kind`` key names the harness, the parser's when absent), or a raw input ``text`` (which only
    the parser harness takes: a model output)."""

    path: str
    kind: str
    entry: Any = None
    document: Optional[dict] = None
    text: Optional[str] = None

    def entry_on(self, reference: Optional[str], what: str = "code") -> tuple:
        """(the corpus entry to reproduce, the ``what`` to run it on: ``reference``, else the one
        the entry was found on). A :class:`~strategies.errors.ToolfuzzError` naming the file when
        it holds no entry of a structured input (a reproducer document, a raw text) or names no
        ``what`` (``fuzz reproduce`` shows it as one line, exit 2)."""
        from strategies.errors import ToolfuzzError

        if self.entry is None or (self.kind != "parser" and self.entry.scenario is None):
            raise ToolfuzzError(f"{self.path}: a {self.kind} finding is reproduced from its corpus entry")
        reference = reference or self.entry.target
        if not reference:
            raise ToolfuzzError(f"{self.path}: names no {what} to run it on; give --target M:A")
        return self.entry, reference


@dataclass
class Reproduced:
    """What running a finding's input again showed: the lines to show (what ran, what it did)
    and whether it still fails. ``problem``: why it could not be run at all (exit 2)."""

    lines: list = field(default_factory=list)
    failing: bool = False
    problem: Optional[str] = None


@dataclass(frozen=True)
class Harness:
    kind: str  # Entry.kind
    option: str  # the CLI option naming its reference, e.g. "--executor"
    description: str
    replay: Callable[[list, str, ReplayContext], list]  # (items, reference, context) -> [Replayed]
    campaign_job: Optional[Callable[[str, ReplayContext], Any]] = None  # -> Job, for the gate
    #: (items, reference, context) -> None, or why the reference tests nothing at all (a parser
    #: that rejects every valid output): replay must not call that a pass.
    check_alive: Optional[Callable[[list, str, ReplayContext], Optional[str]]] = None
    #: (given, reference, context) -> Reproduced: run one finding again, in this process where the
    #: harness can (a debugger, a print in the user's code work as usual). None: the entry is
    #: replayed (:attr:`replay`) and its verdict now is the answer.
    reproduce: Optional[Callable[[Reproducible, Optional[str], ReplayContext], Reproduced]] = None
    #: Whether :attr:`replay` itself runs a passing entry :data:`fuzzer.engine.jobs.replay.PASS_RUNS`
    #: times before it answers pass (the parser's does, and tells a nondeterminism apart there).
    #: Otherwise the replay job runs every passing entry again that many times.
    runs_passes_again: bool = False


def other_policy(entry: Any, policy: Any, given: Optional[str], option: str) -> Optional[str]:
    """Why a pass of ``entry`` judged under ``policy`` is no fix: ``policy`` came from ``option``
    and promises other things than the one the entry was found under (one that promises less
    passes a bug that is still there). None when they are the same, or the entry kept none."""
    stored = (entry.scenario or {}).get("policy")
    if not given or stored is None:
        return None
    try:
        if policy.to_json() == type(policy).from_json(stored).to_json():
            return None
    except Exception:  # noqa: BLE001 - a stored policy this toolfuzz cannot read is not the same one
        pass
    return (f"judged under {option} {given!r}, not the policy it was found under: "
            "--update leaves it as it is")


HARNESSES: Registry[Harness] = Registry("harness")


def register_harness(harness: Harness) -> Harness:
    """Add ``harness`` to :data:`HARNESSES` under its kind (a kind registered twice raises): its
    entries are then replayed, gated and reproduced by the generic commands."""
    return HARNESSES.register(harness.kind, harness, module=getattr(harness.replay, "__module__", None))


def load_harnesses() -> Registry[Harness]:
    """Import every built-in harness (each registers itself) and return the registry."""
    import importlib

    for module in ("fuzzer.harnesses.parser.registration", "fuzzer.harnesses.executor.harness", "fuzzer.harnesses.agent.harness",
                   "fuzzer.harnesses.stream.harness"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:  # a harness not built yet (or its extra missing)
            if exc.name is None or not module.startswith(exc.name):
                raise
    return HARNESSES


__all__ = ["HARNESSES", "Harness", "ReplayContext", "Replayed", "Reproduced", "Reproducible", "load_harnesses",
           "register_harness"]
