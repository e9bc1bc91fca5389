"""`fuzz executor`: fault-injection campaign against a tool executor."""

from __future__ import annotations

import json
import os
from typing import Any, Optional

import click

from fuzzer.cli.app import load_registry, main, translate_errors
from fuzzer.cli import options
from fuzzer.cli.errors import ConfigError, check_corpus_dir

DEFAULT_BUDGET_S = 60.0


def _load_scenario(value: str, registry: Any) -> Any:
    """``--replay-scenario``: inline JSON, a scenario file, or a corpus entry file."""
    from fuzzer.harnesses.executor.scenario import scenario_from_json

    text = value.strip()
    where = "--replay-scenario"
    if not text.startswith(("{", "[")):
        if not os.path.isfile(value):
            raise ConfigError(f"--replay-scenario: {value}: no such file (give a file or the scenario's JSON)")
        try:
            with open(value, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--replay-scenario: {value}: cannot read ({exc})") from None
        where = value
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{where}: not JSON ({exc})") from None
    if isinstance(data, dict) and isinstance(data.get("scenario"), dict):  # a corpus entry
        data = data["scenario"]
    return scenario_from_json(data, registry, where=where)


@main.command()
@click.option("--executor", "executor", metavar="M:A",
              help="Required. The executor under test: a factory make_executor(tools) returning execute(name, arguments), "
                   "or an object with execute_tool(name, arguments) (async too); `tools` maps each tool name to a "
                   "callable toolfuzz supplies. The current directory is on sys.path.")
@options.tools_file
@click.option("--policy", "policy_file", metavar="FILE", type=click.Path(dir_okay=False),
              help="The promise the executor makes (TOML: top level or [tool.toolfuzz.executor]). Default: "
                   "[tool.toolfuzz.executor] of ./pyproject.toml, else the defaults (see --explain).")
@click.option("--budget", "budget_s", type=options.Seconds(min=0.1), default=None,
              help="Seconds to run, shrinking included. Default: 60, or no time limit with --max-examples.")
@click.option("--max-examples", type=click.IntRange(min=1), default=None,
              help="Stop after this many scenarios (with --seed: a deterministic campaign).")
@options.seed
@click.option("--timeout", type=options.Seconds(min=0.01), default=2.0, show_default=True,
              help="Real seconds one scenario may run before it counts as a hang (time inside is virtual).")
@options.workers
@options.memory
@options.max_failures
@options.exitfirst
@options.ignore
@options.reports
@options.optional_corpus("Add each violation's minimal scenario to this corpus (entry kind 'executor').")
@click.option("--explain", is_flag=True, help="Print the policy in effect (and where it came from), then exit.")
@click.option("--http", is_flag=True,
              help="HTTP mode: run the real tool functions (--implementations) with requests/httpx transports "
                   "replaced, so every request meets the injected fault; no socket is opened.")
@click.option("--implementations", metavar="M:A",
              help="HTTP mode: a {tool name: function} mapping of the real tools. Default: TOOLS in the "
                   "executor's module.")
@click.option("--replay-scenario", "replay_scenario", metavar="FILE|JSON",
              help="Run one scenario (a file, a corpus entry, or its JSON) and print its trace and verdicts.")
@options.shrink("Shrink each violation to the shortest call sequence and smallest schedule.")
@options.backend_options
@options.quiet
@translate_errors
def executor(executor: Optional[str], tools_file: Optional[str], policy_file: Optional[str], budget_s: Optional[float],
             max_examples: Optional[int], seed: int, timeout: float, workers: int, memory_limit_mb: int,
             corpus_dir: Optional[str], explain: bool, http: bool, implementations: Optional[str],
             replay_scenario: Optional[str], shrink: bool, quiet: bool, max_failures: Optional[int], exitfirst: bool,
             ignore: tuple, backend: str, ray_address: Optional[str], **report_paths: Any) -> None:
    """Inject faults into the tools a tool executor calls and check what it promises: retries only of
    transient failures, bounded backoff honouring Retry-After, a circuit breaker, validation before
    execution, no repeated side effects, structured fallbacks, deadlines, no leaked secrets.

    Exit status: 0 no violation, 1 violations found, 2 usage or configuration error (130 when
    interrupted before finding anything).
    """
    from fuzzer.cli.campaign import read_ignore
    from fuzzer.cli.console import Summary, check_output_paths, progress, run_command
    from fuzzer.engine.corpus_writer import CorpusWriter
    from fuzzer.harnesses.executor.job import ExecutorCampaign, ExecutorSettings, ScenarioReplay, open_pool
    from fuzzer.harnesses.executor.policy import check_against_registry, explain as explain_policy, load_policy

    reports = options.report_paths(report_paths)

    registry = load_registry(tools_file, budget_s)
    policy = load_policy(policy_file)
    check_against_registry(policy, registry.names())
    if explain:
        for line in explain_policy(policy, registry.names()):
            click.echo(line)
        return
    if not executor:
        raise ConfigError("--executor is required: the M:A of a factory make_executor(tools)")
    if ":" not in executor:
        raise ConfigError(f"--executor: {executor!r} is not of the form module:attribute (e.g. mypkg.tools:make_executor)")
    if implementations and not http:
        raise ConfigError("--implementations: only used with --http")
    if replay_scenario and (corpus_dir or max_examples or budget_s):
        raise ConfigError("--replay-scenario: runs one scenario; drop --corpus, --budget and --max-examples")
    from fuzzer.backends import check_backend

    check_backend(backend, ray_address)  # a usage error (or Ray missing) before anything starts
    check_output_paths(reports)
    if corpus_dir:
        check_corpus_dir(corpus_dir)
    if budget_s is None and max_examples is None:
        budget_s = DEFAULT_BUDGET_S
    settings = ExecutorSettings(executor=executor, tools_file=tools_file, policy_file=policy_file, seed=seed,
                                budget_s=budget_s, max_examples=max_examples, timeout=timeout, workers=workers,
                                memory_limit_mb=memory_limit_mb, http=http, implementations=implementations,
                                shrink=shrink, max_failures=1 if exitfirst else max_failures,
                                ignore=read_ignore(ignore), backend=backend, ray_address=ray_address)
    scenario = _load_scenario(replay_scenario, registry) if replay_scenario else None
    pool = open_pool(settings, policy, registry)  # a bad --executor fails here, before any output
    try:
        if scenario is not None:
            job: Any = ScenarioReplay(settings, scenario, registry=registry, policy=policy, pool=pool)
            run_command(job, [Summary(problem_line=False)], reports=reports)
        handlers: list = []
        writer = None
        if corpus_dir:
            from corpus.store import CorpusStore

            writer = CorpusWriter(CorpusStore(corpus_dir), target=executor)
            handlers.append(writer)
        handlers += [progress(quiet=quiet), Summary(footer=lambda r: _corpus_footer(writer))]
        run_command(ExecutorCampaign(settings, registry=registry, policy=policy, pool=pool), handlers,
                    reports=reports)
    finally:
        pool.close()


def _corpus_footer(writer: Any) -> list[str]:
    return writer.summary_lines() if writer is not None else []
