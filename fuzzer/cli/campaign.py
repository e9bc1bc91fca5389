"""`fuzz campaign`: the main job."""

from __future__ import annotations

import os
from typing import Any, Optional

import click

from fuzzer.cli import load_registry_or_fail, main, options, translate_errors
from fuzzer.cli.console import ConsoleHandler
from fuzzer.cli.errors import ConfigError, check_corpus_dir, check_writable_file


DEFAULT_TARGET = "fuzzer.targets.reference:parse"
DEFAULT_BUDGET_S = 60.0
VALIDATING_REFERENCE = "fuzzer.targets.reference:parse_validated"


def default_target(target: str, level: str, tools_file: Optional[str]) -> str:
    """The bundled reference at the level asked for; it validates against ``--tools`` (via the
    environment its worker inherits)."""
    if tools_file:
        os.environ["TOOLFUZZ_TOOLS"] = os.path.abspath(tools_file) if os.path.exists(tools_file) else tools_file
    if target == DEFAULT_TARGET and level == "validate":
        return VALIDATING_REFERENCE
    return target


def make_spec(target: str, reject_on: tuple, timeout: float, memory_limit_mb: Optional[int]) -> Any:
    from fuzzer.isolation import TargetSpec

    if ":" not in target:
        raise ConfigError(f"--target: {target!r} is not of the form module:callable (e.g. mypkg.parse:parse)")
    return TargetSpec(target=target, reject_on=tuple(reject_on), cwd=os.getcwd(), timeout=timeout,
                      memory_limit_mb=memory_limit_mb)


def run_campaigns(*, registry: Any, tool_names: list[str], pool: Any, settings_for: Any, target: str,
                  quiet: bool = False, on_event: Any = None) -> Any:
    """Run one engine per tool through ``pool``; returns the merged result. Ctrl-C keeps what was found."""
    from fuzzer.engine import Campaign, merge_results
    from fuzzer.events import CampaignFinished

    results = []
    for name in tool_names:
        campaign = Campaign(registry, settings_for(name), pool.run, target_label=target)
        console = ConsoleHandler(label=name, quiet=quiet)
        try:
            for event in campaign.events():
                console.handle(event)
                if on_event is not None:
                    on_event(event)
                if isinstance(event, CampaignFinished):
                    results.append(event.result)
        except KeyboardInterrupt:
            from fuzzer.events import Interrupted

            console.handle(Interrupted())
            if on_event is not None:  # findings not yet handed to the corpus: hand them over now
                for event in campaign.announce_the_rest():
                    on_event(event)
            results.append(campaign.snapshot("interrupted"))
        if results and results[-1].stop_reason == "interrupted":
            break
    return merge_results(results)


@main.command()
@click.option("--tool", "tool_names", multiple=True, metavar="NAME",
              help="Tool to fuzz (repeatable). Default: every tool in the registry, sharing the budget.")
@options.tools_file
@options.target
@options.reject_on
@options.level
@options.formats
@click.option("--anomaly", "anomalies", multiple=True, metavar="CLASS",
              help="Restrict to these anomaly classes or operators (repeatable; 'valid' keeps valid samples).")
@click.option("--budget", "budget_s", type=click.FloatRange(min=0.1), default=None,
              help="Seconds to run, shrinking included. Default: 60, or no time limit with --max-examples.")
@click.option("--max-examples", type=click.IntRange(min=1), default=None,
              help="Stop after this many executions (with --seed: a deterministic campaign).")
@options.seed
@options.workers
@options.timeout
@options.memory
@options.report
@click.option("--corpus", "corpus_dir", metavar="DIR", type=click.Path(file_okay=False),
              help="Regression corpus: replayed first; new failures are added, minimized.")
@click.option("--shrink/--no-shrink", default=True, show_default=True,
              help="Minimize the first input of each signature before reporting it.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines; only the summary.")
@translate_errors
def campaign(tool_names: tuple, tools_file: Optional[str], target: str, reject_on: tuple, level: str,
             formats: tuple, anomalies: tuple, budget_s: float, max_examples: Optional[int], seed: int,
             workers: int, timeout: float, memory_limit_mb: int, report_path: Optional[str],
             corpus_dir: Optional[str], shrink: bool, quiet: bool) -> None:
    """Generate valid and anomalous model outputs, run the target on them, judge, shrink and report.

    Exit status: 0 no failure, 1 failures found, 2 usage or configuration error (130 when
    interrupted before finding anything).
    """
    from fuzzer.engine import CampaignSettings, applicable_somewhere, resolve_operators
    from fuzzer.isolation import WorkerPool
    from fuzzer.report import campaign_report, summary_lines, write_json_atomic
    from strategies._internal.schema import unsupported_tools

    registry = load_registry_or_fail(tools_file)
    names = list(tool_names) or registry.names()
    for name in names:
        registry[name]  # unknown tool: one-line error with close matches
    broken = unsupported_tools(registry)
    for name in list(names):
        if name in broken:
            click.echo(f"{name}: skipped, cannot generate its arguments: {broken[name]}", err=True)
            names.remove(name)
    if not names:
        raise ConfigError("no tool left to fuzz: every selected tool's schema is unsupported")
    operators = resolve_operators(list(anomalies))  # unknown names fail before any process starts
    with_valid = not anomalies or "valid" in anomalies
    inapplicable = [name for name in names if not applicable_somewhere(registry[name], operators, with_valid)]
    if len(inapplicable) == len(names):
        raise ConfigError("--anomaly: no selected anomaly class or operator applies to the selected tools")
    for name in inapplicable:
        click.echo(f"{name}: skipped, no selected anomaly applies to its schema", err=True)
        names.remove(name)
    if report_path:
        check_writable_file(report_path, "--report")
    if corpus_dir:
        check_corpus_dir(corpus_dir)

    target = default_target(target, level, tools_file)
    spec = make_spec(target, reject_on, timeout, memory_limit_mb)
    if budget_s is None and max_examples is None:
        budget_s = DEFAULT_BUDGET_S
    per_tool_budget = budget_s / len(names) if budget_s is not None else None
    per_tool_examples = -(-max_examples // len(names)) if max_examples else None

    def settings_for(name: str) -> CampaignSettings:
        return CampaignSettings(tool=name, level=level, formats=list(formats) or None,
                                anomalies=list(anomalies) or None, seed=seed, budget_s=per_tool_budget,
                                max_examples=per_tool_examples, shrink=shrink,
                                shrink_budget_s=min(10.0, max(2.0, (per_tool_budget or 40.0) / 4)))

    store_handler = None
    with WorkerPool(spec, workers=workers) as pool:
        if corpus_dir:
            from fuzzer.corpus_link import CorpusHandler

            store_handler = CorpusHandler(corpus_dir, registry=registry, target=target, level=level,
                                          run=pool.run, quiet=quiet)
            store_handler.replay()
        result = run_campaigns(registry=registry, tool_names=names, pool=pool, settings_for=settings_for,
                               target=target, quiet=quiet,
                               on_event=store_handler.handle if store_handler else None)

    for line in summary_lines(result, target=target):
        click.echo(line)
    if store_handler is not None:
        for line in store_handler.summary():
            click.echo(line)
    if report_path:
        write_json_atomic(report_path, campaign_report(result, target=target))
        click.echo(f"report: {report_path}")
    failed = bool(result.findings) or (store_handler is not None and store_handler.failing)
    # An interrupted campaign that found nothing proves nothing: not the "all clear" status 0.
    click.get_current_context().exit(1 if failed else 130 if result.stop_reason == "interrupted" else 0)
