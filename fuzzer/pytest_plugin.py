"""The pytest plugin (entry point ``pytest11``: ``toolfuzz``): the corpus as tests, and campaigns
inside tests.

``pytest --toolfuzz`` adds one test item per corpus entry, named by its signature
(``fuzz-corpus::crash-8edb1c27a0ab``), judged as ``fuzz gate`` judges a replay
(:func:`fuzzer.engine.decisions.decide_gate`):

* an entry marked **fixed** must pass — failing again is a test failure (a regression);
* an **open** entry that still fails as recorded is **xfail**; one that now passes is
  **XPASS**, with a message saying so and how to mark it fixed (also listed at the end of the
  run); one that now fails with a signature the corpus does not hold is a failure (a new bug);
* entries that cannot be read, or whose signature the ``ignore`` setting names, are skipped.

The target, corpus, tools, level and timeout come from ``--toolfuzz-*`` options, else from the
config file (``[tool.toolfuzz]`` / ``toolfuzz.toml``, :mod:`fuzzer.config`). Targets run
isolated in a :class:`~fuzzer.isolation.WorkerPool`, one per pytest process (so under
pytest-xdist one per worker), started on first use and closed at the end of the session.

The ``toolfuzz_campaign`` fixture runs a short deterministic campaign (fixed seed, bounded
examples, no time limit) and fails the test with the findings::

    def test_parser_survives_toolfuzz(toolfuzz_campaign):
        toolfuzz_campaign("mypkg.parsing:parse", tool="get_weather", max_examples=2000)

The engine is reached through :meth:`EngineSession._replay_every_kind` (the replay job of
``fuzz replay``) and :func:`run_campaign`, the only places to change when the engine's job API moves.
Executor and agent entries replay on ``--toolfuzz-executor`` / ``--toolfuzz-agent``; without
one, entries of that kind are skipped, saying which option runs them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Optional

import pytest

#: Phrases of the outcomes, kept in one place (tests read them).
XPASS_PREFIX = "open entry now passes"
REGRESSION_PREFIX = "REGRESSION"
NEW_PREFIX = "NEW"
DEFAULT_LEVEL, DEFAULT_TIMEOUT = "parse", 2.0
CAMPAIGN_EXAMPLES = 1000


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolfuzz", "toolfuzz: the regression corpus as tests")
    group.addoption("--toolfuzz", action="store_true", default=False,
                    help="Collect every toolfuzz corpus entry as a test: fixed entries must pass, open ones "
                         "are xfail (XPASS when they now pass).")
    group.addoption("--toolfuzz-corpus", metavar="DIR", default=None,
                    help="The corpus directory (default: 'corpus' from the toolfuzz config file).")
    group.addoption("--toolfuzz-target", metavar="M:A", default=None,
                    help="The parser to replay the corpus on (default: 'target' from the config file).")
    group.addoption("--toolfuzz-executor", metavar="M:A", default=None,
                    help="The tool executor to replay the corpus's executor entries on.")
    group.addoption("--toolfuzz-agent", metavar="M:A", default=None,
                    help="The agent loop to replay the corpus's agent entries on.")
    group.addoption("--toolfuzz-tools", metavar="FILE", default=None,
                    help="The tools file (default: 'tools' from the config file, else the built-in registry).")
    group.addoption("--toolfuzz-level", choices=["parse", "validate"], default=None,
                    help="Oracle level for entries that do not record one (default: 'level', else parse).")
    group.addoption("--toolfuzz-timeout", type=float, metavar="SECONDS", default=None,
                    help="Seconds one input may run before it counts as a hang (default: 'timeout', else 2).")
    group.addoption("--toolfuzz-config", metavar="FILE", default=None,
                    help="The toolfuzz config file (default: searched from the current directory upward).")


# -- settings ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Settings:
    """What the plugin runs with: options over the config file over defaults."""

    target: Optional[str]
    corpus: Optional[str]
    tools: Optional[str]
    level: str
    timeout: float
    reject_on: tuple
    ignore: frozenset
    formats: tuple = ()
    seed: int = 0
    cwd: str = field(default_factory=os.getcwd)
    executor: Optional[str] = None
    agent: Optional[str] = None

    def reference(self, kind: str) -> Optional[str]:
        """What an entry of this kind replays on: the parser, the executor or the agent loop."""
        return {"parser": self.target, "executor": self.executor, "agent": self.agent}.get(kind)


def settings_of(config: pytest.Config) -> Settings:
    from fuzzer.config import ConfigFileError, ignored_signatures, load_config

    cwd = str(config.invocation_params.dir)
    try:
        file = load_config(config.getoption("toolfuzz_config"), start=config.invocation_params.dir)
        ignore = frozenset(ignored_signatures(file.get("ignore", [])))
    except ConfigFileError as exc:
        raise pytest.UsageError(f"toolfuzz: {exc}") from None

    def pick(option: str, key: str, default: Any = None) -> Any:
        value = config.getoption(option)
        return value if value is not None else file.get(key, default)

    return Settings(target=pick("toolfuzz_target", "target"), corpus=pick("toolfuzz_corpus", "corpus"),
                    tools=pick("toolfuzz_tools", "tools"), level=pick("toolfuzz_level", "level", DEFAULT_LEVEL),
                    timeout=float(pick("toolfuzz_timeout", "timeout", DEFAULT_TIMEOUT)),
                    reject_on=tuple(file.get("reject_on", [])), ignore=ignore,
                    formats=tuple(file.get("formats", [])), seed=int(file.get("seed", 0)), cwd=cwd,
                    executor=config.getoption("toolfuzz_executor"), agent=config.getoption("toolfuzz_agent"))


# -- one engine session per pytest process -------------------------------------------------------

class EngineSession:
    """The worker pools and the replayed corpus of this pytest process."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._pools: dict[Any, Any] = {}
        self._replayed: Optional[dict[str, Any]] = None
        self._error: Optional[str] = None
        self.nothing_tested: Optional[str] = None  # the replay's reason when the target tests nothing

    def pool(self, *, target: str, reject_on: tuple, timeout: float) -> Any:
        from fuzzer.harnesses.parser.outcome import TargetSpec
        from fuzzer.isolation import WorkerPool

        spec = TargetSpec(target=target, reject_on=tuple(reject_on), cwd=self.settings.cwd, timeout=timeout)
        if spec not in self._pools:
            pool = WorkerPool(spec)
            pool.start()  # a target that cannot load raises TargetError here, once
            self._pools[spec] = pool
        return self._pools[spec]

    def registry(self, tools: Optional[str]) -> Any:
        from strategies._internal.tools import load_registry

        return load_registry(tools)

    def replayed(self) -> dict[str, Any]:
        """``{entry path: fuzzer.engine.harness.Replayed}``, computed on first use (one batch). A target
        or tools file that cannot be loaded fails every entry with the one-line reason, once."""
        from strategies.errors import ToolfuzzError

        if self._error is not None:
            raise CorpusEntryFailed(self._error)
        if self._replayed is None:
            s = self.settings
            try:
                replayed = self._replay_every_kind()
            except ToolfuzzError as exc:
                self._error = f"cannot replay the corpus: {exc}"
                raise CorpusEntryFailed(self._error) from None
            self._replayed = {r.path: r for r in replayed}
        return self._replayed

    def _replay_every_kind(self) -> list:
        """Every entry replayed as ``fuzz replay`` replays it (:class:`fuzzer.engine.jobs.replay.ReplayJob`: each
        kind through its harness, entries of a kind whose reference was not given unjudged)."""
        from corpus.store import CorpusStore
        from fuzzer.engine.harness import ReplayContext
        from fuzzer.engine.pipeline import run_job
        from fuzzer.engine.jobs.replay import ReplayJob

        s = self.settings
        context = ReplayContext(registry=self.registry(s.tools), tools_file=s.tools, level=s.level,
                                timeout=s.timeout, reject_on=s.reject_on, cwd=s.cwd, seed=s.seed)
        references = {kind: s.reference(kind) for kind in ("parser", "executor", "agent")}
        result = run_job(ReplayJob(CorpusStore(s.corpus), references, context)).result
        # with entries to replay, the problem is the replay's check that the target reads some valid
        # output: an entry that passes on a target rejecting everything is no fix (the gate blocks on it)
        self.nothing_tested = result.problem if result.replayed else None
        return result.replayed

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()


def run_campaign(session: EngineSession, *, target: str, tools: Optional[str], tool_names: list[str],
                 level: str, seed: int, max_examples: int, formats: tuple, anomalies: tuple,
                 reject_on: tuple, timeout: float) -> Any:
    """A deterministic campaign (seed, bounded examples, no time limit) over ``tool_names``;
    returns its :class:`fuzzer.harnesses.parser.campaign.CampaignResult`."""
    from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings
    from fuzzer.engine.pipeline import run_job

    registry = session.registry(tools)
    pool = session.pool(target=target, reject_on=reject_on, timeout=timeout)
    settings = CampaignSettings(tools=list(tool_names or registry.names()), target=target, level=level,
                                formats=list(formats) or None, anomalies=list(anomalies) or None, seed=seed,
                                budget_s=None, max_examples=max_examples, shrink_cap_s=5.0,
                                reject_on=tuple(reject_on), explore=False, slow=False)
    return run_job(CampaignJob(registry, settings, pool)).result


_SESSION = pytest.StashKey[EngineSession]()


def engine_session(config: pytest.Config) -> EngineSession:
    if _SESSION not in config.stash:
        config.stash[_SESSION] = EngineSession(settings_of(config))
    return config.stash[_SESSION]


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("toolfuzz"):
        config.pluginmanager.register(XpassSummary(), "toolfuzz-xpass-summary")
        settings = engine_session(config).settings  # a bad config file fails here, before collection
        code = settings.target or settings.executor or settings.agent
        missing = [what for what, value in (("--toolfuzz-target (or 'target' in the config file), --toolfuzz-executor "
                                             "or --toolfuzz-agent", code),
                                            ("--toolfuzz-corpus (or 'corpus' in the config file)", settings.corpus))
                   if not value]
        if missing:
            raise pytest.UsageError(f"--toolfuzz needs {' and '.join(missing)}")


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_SESSION, None)
    if session is not None:
        session.close()


# -- the corpus as test items --------------------------------------------------------------------

class CorpusEntryFailed(Exception):
    """A fixed entry that fails again, or an entry failing with a new signature."""


class CorpusDirectory(pytest.Collector):
    """The corpus directory: one item per entry (sorted by signature, so every xdist worker
    collects the same list), one skipped item per unreadable file."""

    def collect(self) -> list:
        from corpus.store import CorpusStore

        store = CorpusStore(self.config.stash[_SESSION].settings.corpus)
        entries = sorted(store.entries(), key=lambda pair: (pair[1].signature, pair[0]))
        items: list = [CorpusEntryItem.from_parent(self, name=entry.signature, path_=path, entry=entry)
                       for path, entry in entries]
        items += [UnreadableEntryItem.from_parent(self, name=f"unreadable[{i}]", problem=problem)
                  for i, problem in enumerate(sorted(store.problems))]
        return items


@pytest.hookimpl(tryfirst=True)  # before -k / -m deselection sees the items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    if not config.getoption("toolfuzz"):
        return
    corpus = engine_session(config).settings.corpus
    if not os.path.isdir(corpus):
        raise pytest.UsageError(f"--toolfuzz: corpus directory {corpus} does not exist")
    name = os.path.relpath(os.path.abspath(corpus), str(config.rootpath))
    name = name if not name.startswith("..") else os.path.abspath(corpus)
    directory = CorpusDirectory.from_parent(session, name=name, nodeid=name)
    items.extend(directory.collect())


class CorpusEntryItem(pytest.Item):
    """One corpus entry, replayed on the target."""

    def __init__(self, *, path_: str, entry: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.entry_path, self.entry = path_, entry
        self.xpass_message: Optional[str] = None
        for word in ("toolfuzz", entry.status, entry.verdict):
            self.extra_keyword_matches.add(word)

    def runtest(self) -> None:
        session = self.config.stash[_SESSION]
        replayed = session.replayed()[self.entry_path]
        verdict, message = judge_entry(replayed, known={e.signature: e for e in _known(session)},
                                       settings=session.settings)
        if verdict == "xfail":
            pytest.xfail(message)
        if verdict == "skip":
            pytest.skip(message)
        if verdict == "fail":
            raise CorpusEntryFailed(message)
        if verdict in ("pass", "xpass") and session.nothing_tested and self.entry.kind == "parser":
            raise CorpusEntryFailed(f"NOTHING TESTED: {self.entry.signature} passes only because the target tests "
                                    f"nothing: {session.nothing_tested}")
        self.xpass_message = message if verdict == "xpass" else None

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        if isinstance(excinfo.value, CorpusEntryFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple:
        return self.entry_path, None, f"toolfuzz corpus entry {self.entry.signature} ({self.entry.status})"


class UnreadableEntryItem(pytest.Item):
    def __init__(self, *, problem: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.problem = problem

    def runtest(self) -> None:
        # as `fuzz gate` and `fuzz replay` do: a regression test that cannot be read is lost, not skipped
        pytest.fail(f"unreadable corpus file: {self.problem} (its regression test does not run; fix or remove it)",
                    pytrace=False)

    def reportinfo(self) -> tuple:
        return self.problem.split(":", 1)[0], None, "toolfuzz corpus file"


def _known(session: EngineSession) -> list:
    return [r.entry for r in session.replayed().values()]


def judge_entry(replayed: Any, *, known: dict, settings: Settings) -> tuple[str, str]:
    """(pass | xpass | xfail | fail | skip, message) of one replayed entry, decided as the gate
    decides (:func:`fuzzer.engine.decisions.decide_gate`)."""
    from fuzzer.engine.decisions import decide_gate
    from fuzzer.harnesses.parser.reproduce import inline_command

    from fuzzer.engine.harness import load_harnesses

    entry = replayed.entry
    reference = settings.reference(entry.kind)
    harness = load_harnesses().get(entry.kind)
    option = harness.option if harness is not None else "--target"
    decision = decide_gate([replayed], [], known, ignore=settings.ignore)
    if decision.unjudged:
        if reference is None:
            if entry.kind in ("parser", "executor", "agent"):
                flag = "--toolfuzz-target" if entry.kind == "parser" else f"--toolfuzz-{entry.kind}"
                return "skip", f"not judged: a {entry.kind} entry; give {flag} M:A to run it"
            # (a kind this plugin has no option for: the replay command runs it)
            return "skip", (f"not judged: a {entry.kind} entry (this plugin has no option for it); run "
                            f"fuzz replay --corpus {settings.corpus} with {option} M:A")
        return "skip", f"not judged: {replayed.unjudged}"
    if decision.ignored:
        return "skip", f"{entry.signature} is on the ignore list"
    if decision.passed:
        if entry.status == "fixed":
            return "pass", ""
        return "xpass", (f"{XPASS_PREFIX}: {entry.signature} ({entry.title}) no longer fails on {reference}; "
                         f"if the bug is fixed, mark it: fuzz replay --corpus {settings.corpus} {option} "
                         f"{reference} --update")
    now = f"{replayed.verdict} ({replayed.signature})"
    if decision.known:
        return "xfail", f"open: {entry.title}; still fails: {now}"
    if entry.kind == "parser":
        from fuzzer.harnesses.parser.harness import sample_from_entry
        from fuzzer.harnesses.parser.reproduce import expected_of

        # judged against the truth when the verdict it fails with now depends on it (exit 1 until fixed)
        expected = expected_of(replayed.verdict, sample_from_entry(entry), entry.level)
        reproduce = inline_command(reference, entry.text, expected, settings.reject_on)
    else:
        reproduce = f"fuzz replay --corpus {settings.corpus} {option} {reference}"
    detail = (f"\n  input:     {json.dumps(entry.text, ensure_ascii=False)[:500]}"
              f"\n  reproduce: {reproduce}")
    if decision.regressions:
        return "fail", f"{REGRESSION_PREFIX}: {entry.signature} ({entry.title}) is marked fixed and fails again: {now}{detail}"
    return "fail", f"{NEW_PREFIX}: {entry.signature} ({entry.title}) now fails with a signature the corpus does not hold: {now}{detail}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    report = yield
    if isinstance(item, CorpusEntryItem) and call.when == "call" and report.passed and item.xpass_message:
        report.wasxfail = item.xpass_message  # reported as XPASS, with the message
        report.user_properties.append((XPASS_PROPERTY, item.xpass_message))
    return report


XPASS_PROPERTY = "toolfuzz_xpass"


class XpassSummary:
    """Lists, at the end of the run, the open entries that now pass (where the terminal is: under
    xdist the controller, which receives the reports with their ``user_properties``)."""

    def __init__(self) -> None:
        self.xpassed: list[tuple[str, str]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.xpassed += [(report.nodeid, value) for key, value in report.user_properties if key == XPASS_PROPERTY]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.xpassed:
            terminalreporter.section("toolfuzz: open corpus entries that now pass")
            for nodeid, message in self.xpassed:
                terminalreporter.line(f"XPASS {nodeid}: {message}")


# -- campaigns inside tests ----------------------------------------------------------------------

@pytest.fixture
def toolfuzz_campaign(request: pytest.FixtureRequest) -> Any:
    """``toolfuzz_campaign(target=None, *, tool=None, max_examples=1000, seed=None, level=None,
    formats=None, anomalies=None, tools=None, check=True)`` runs a deterministic campaign and,
    with ``check``, fails the test listing every finding (minimized input, reproduce command).
    Returns the result (``.findings``, ``.executions``, ``.to_report()``). Unset arguments come
    from the config file."""
    session = engine_session(request.config)
    s = session.settings

    def run(target: Optional[str] = None, *, tool: Any = None, max_examples: int = CAMPAIGN_EXAMPLES,
            seed: Optional[int] = None, level: Optional[str] = None, formats: Any = None, anomalies: Any = (),
            tools: Optional[str] = None, check: bool = True) -> Any:
        target = target or s.target
        if not target:
            pytest.fail("toolfuzz_campaign: no target (pass one, or set 'target' in the config file)", pytrace=False)
        from strategies.errors import ToolfuzzError

        names = [tool] if isinstance(tool, str) else list(tool or [])
        try:
            result = run_campaign(session, target=target, tools=tools or s.tools, tool_names=names,
                                  level=level or s.level, seed=s.seed if seed is None else seed,
                                  max_examples=max_examples, formats=tuple(formats or s.formats),
                                  anomalies=tuple(anomalies), reject_on=s.reject_on, timeout=s.timeout)
        except ToolfuzzError as exc:  # a bad target, tool, format or tools file: the reason, not a traceback
            pytest.fail(f"toolfuzz_campaign: {exc}", pytrace=False)
        failing = [f for f in result.findings if f.signature.id not in s.ignore]
        if check and result.problem and not result.findings:  # as `fuzz campaign` exits 2: never a pass
            pytest.fail(f"toolfuzz_campaign: nothing was tested: {result.problem}", pytrace=False)
        if check and failing:
            pytest.fail(findings_message(result, failing), pytrace=False)
        return result

    return run


def findings_message(result: Any, findings: list) -> str:
    from fuzzer.reports.common import facts_of

    lines = [f"toolfuzz found {len(findings)} distinct failure(s) in {result.executions:,} executions "
             f"on {result.label}:"]
    for number, finding in enumerate(findings, 1):
        f = facts_of(finding)
        lines.append(f"[{number}] {f.headline}  {f.signature}  (seen {f.count}x)")
        if f.reason:
            lines.append(f"    why:       {f.reason}")
        lines.append(f"    minimized: {json.dumps(f.shown_input, ensure_ascii=False)[:300]}")
        if f.reproduce:
            lines.append(f"    reproduce: {f.reproduce}")
    return "\n".join(lines)
