"""`fuzz campaign`: the main job. Parses options, builds a CampaignJob, attaches handlers."""

from __future__ import annotations

import os
from contextlib import closing
from typing import Any, Optional

import click

from fuzzer.cli.app import load_registry, main, naming_the_file, translate_errors
from fuzzer.cli import options
from fuzzer.cli.errors import ConfigError, check_corpus_dir
from fuzzer.config import SIGNATURE_RE

DEFAULT_BUDGET_S = 60.0


def target_spec(target: str, reject_on: tuple, timeout: float, memory_limit_mb: Optional[int],
                cwd: Optional[str] = None, *, sampling: bool = False, deterministic: bool = False,
                budget_s: Optional[float] = None) -> Any:
    """The workers of a target. They can always trace an input when asked (a corruption's
    signature names the functions it ran, with or without exploration); ``sampling`` also traces a
    share of all inputs for the coverage feedback. ``budget_s`` bounds the target's import too
    (:func:`~fuzzer.isolation.spec.load_timeout`)."""
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation.spec import load_timeout

    share = (DETERMINISTIC_TRACE_SHARE if deterministic else None) if sampling else 0.0
    return TargetSpec(target=target, reject_on=tuple(reject_on), cwd=cwd or os.getcwd(), timeout=timeout,
                      memory_limit_mb=memory_limit_mb, coverage=True, trace_share=share,
                      load_timeout=load_timeout(budget_s))


#: With --max-examples (a reproducible run), a fixed share of inputs is traced instead of one
#: adapted to measured time.
DETERMINISTIC_TRACE_SHARE = 0.05


def read_ignore(values: tuple) -> frozenset:
    """``--ignore`` values: signatures, or files of them (one per line, ``#`` comments)."""
    ignored: set[str] = set()
    for value in values:
        if os.path.isfile(value):
            try:
                with open(value, encoding="utf-8") as fh:
                    lines = fh.read().splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(naming_the_file(f"--ignore: cannot read {value} ({exc})")) from None
            ignored.update(line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip())
        elif SIGNATURE_RE.match(value.strip()):
            ignored.add(value.strip())
        else:  # (a mistyped file name is not taken for a signature that ignores nothing)
            raise ConfigError(naming_the_file(f"--ignore: {value!r} is neither a signature (verdict-hash, e.g. "
                                               f"crash-0123456789ab) nor a file"))
    return frozenset(ignored)


def select_tools(registry: Any, tool_names: tuple, anomalies: tuple) -> list[str]:
    """The tools to fuzz: unknown names fail; tools whose schema cannot be generated, or to which no
    selected anomaly applies, are skipped with a warning (an error when none is left)."""
    from fuzzer.harnesses.parser.tool import applicable_somewhere, includes_valid, resolve_operators
    from strategies._internal.schema import unsupported_tools

    names = list(tool_names) or registry.names()
    for name in names:
        registry[name]  # unknown tool: one-line error with close matches
    warnings = []
    broken = unsupported_tools(registry)
    for name in [n for n in names if n in broken]:
        warnings.append(f"{name}: skipped, cannot generate its arguments: {broken[name]}")
        names.remove(name)
    if not names:
        reasons = [broken[n] for n in list(tool_names) or registry.names() if n in broken]
        more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
        raise ConfigError("no tool left to fuzz: every selected tool's schema is unsupported"
                          + (f": {reasons[0]}{more}" if reasons else ""))
    operators = resolve_operators(list(anomalies))
    with_valid = includes_valid(list(anomalies))
    inapplicable = [n for n in names if not applicable_somewhere(registry[n], operators, with_valid)]
    if len(inapplicable) == len(names):
        raise ConfigError("--anomaly: no selected anomaly class or operator applies to the selected tools")
    for name in inapplicable:
        warnings.append(f"{name}: skipped, no selected anomaly applies to its schema")
        names.remove(name)
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    return names


def per_tool_settings(registry: Any, names: list) -> dict:
    """The config file's per-tool tables for the selected tools, as CampaignSettings.per_tool
    (command line > per-tool table > file > defaults); a table for an unknown tool is an error."""
    from fuzzer.cli.config_file import current_config, tool_overrides

    ctx = click.get_current_context()
    current_config(ctx).check_tools(registry.names())
    per_tool: dict = {}
    for name in names:
        found = tool_overrides(ctx, name)
        table: dict = {}
        for key in ("level", "seed", "budget_s", "max_examples"):
            if key in found:
                table[key] = found[key]
        if "formats" in found:
            table["formats"] = list(found["formats"]) or None
        if "ignore" in found:
            table["ignore"] = read_ignore(tuple(found["ignore"]))
        if table:
            per_tool[name] = table
    return per_tool


def _recorded_seeds(db: Optional[str], registry: Any, names: list) -> list:
    if not db:
        return []
    from fuzzer.records.inject import seed_samples

    return [s for s in seed_samples(db, registry) if s.tool in ("", *names)]


def _recorded_weights(db: Optional[str]) -> Optional[dict]:
    if not db:
        return None
    from fuzzer.records.inject import class_weights

    return class_weights(db)


def reproduce_dir(report_path: Optional[str]) -> str:
    """Where reproducer files of long or history-dependent findings go: next to the report, or
    in ``.toolfuzz/reproduce`` of the current directory."""
    if report_path:
        stem = os.path.splitext(os.path.abspath(report_path))[0]
        return stem + ".reproduce"
    return os.path.join(os.getcwd(), ".toolfuzz", "reproduce")


@main.command()
@click.option("--tool", "tool_names", multiple=True, metavar="NAME",
              help="Tool to fuzz (repeatable). Default: every tool in the registry, sharing the budget.")
@options.tools_file
@options.target
@options.reject_on
@options.level
@options.formats
@click.option("--format-from", "format_from", multiple=True, metavar="FILE",
              help="Real model outputs (a text file, JSON lines, or a records database; repeatable): fuzz the "
                   "formats they are in, as `fuzz formats detect FILE` names them (added to any --format).")
@options.formats_from
@options.chat_template
@options.anomalies
@options.run_limits(None, "Seconds to run, shrinking included (a limit). Default: 60, or no time limit with "
                          "--max-examples.")
@options.reports
@options.optional_corpus("Regression corpus: replayed first; new failures are added, minimized.")
@options.shrink("Minimize the first input of each signature before reporting it.")
@click.option("--coverage/--no-coverage", default=True, show_default=True,
              help="Trace which lines of the target's code each input reaches and explore from the inputs "
                   "that reach new ones (havoc on a seed pool); report the lines reached.")
@options.records_db("--seeds-from", "seeds_from",
                    "A records database (fuzz records): run what models really sent first, judged with the recorded "
                    "calls where the record says the parse was right, and explore from it.")
@options.records_db("--weights-from", "weights_from",
                    "A records database: draw anomaly classes as often as production showed them (every class "
                    "still gets a floor share).")
@options.max_failures
@options.exitfirst
@options.ignore
@options.backend_options
@options.quiet
@translate_errors
def campaign(tool_names: tuple, tools_file: Optional[str], target: str, reject_on: tuple, level: str,
             formats: tuple, format_from: tuple, formats_from: tuple, chat_templates: tuple, anomalies: tuple, budget_s: Optional[float], max_examples: Optional[int], seed: int,
             workers: int, timeout: float, memory_limit_mb: int, corpus_dir: Optional[str], shrink: bool, coverage: bool,
             seeds_from: Optional[str], weights_from: Optional[str], max_failures: Optional[int], exitfirst: bool,
             ignore: tuple, backend: str, ray_address: Optional[str], quiet: bool, **report_paths: Any) -> None:
    """Generate valid and anomalous model outputs, run the target on them, judge, shrink and report.

    Exit status: 0 something was tested and nothing failed, 1 failures found, 2 usage or
    configuration error (also when nothing could be tested: no format the target supports),
    130 when interrupted before finding anything.
    """
    import time

    started_at = time.monotonic()
    from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings
    from fuzzer.cli.console import Summary, check_output_paths, progress, run_command
    from fuzzer.engine.corpus_writer import CorpusWriter
    from fuzzer.harnesses.parser.harness import target_version
    from fuzzer.reports.reproducers import ReproducerWriter

    reports = options.report_paths(report_paths)
    check_output_paths(reports)
    options.load_user_formats(formats_from)
    if format_from:
        from fuzzer.cli.formats_cmd import format_options_from

        found = format_options_from(format_from)
        click.echo(f"formats found in {', '.join(format_from)}: {', '.join(found)}", err=True)
        formats = tuple(formats) + tuple(name for name in found if name not in formats)
    formats = tuple(formats) + tuple(name for name in options.chat_template_formats(chat_templates)
                                     if name not in formats)
    registry = load_registry(tools_file, budget_s)
    names = select_tools(registry, tool_names, anomalies)
    store = None
    if corpus_dir:
        from corpus.store import CorpusStore

        check_corpus_dir(corpus_dir)
        store = CorpusStore(corpus_dir)
    per_tool = per_tool_settings(registry, names)
    if budget_s is None and max_examples is None:
        budget_s = DEFAULT_BUDGET_S
    settings = CampaignSettings(tools=names, target=target, level=level, formats=list(formats) or None,
                                anomalies=list(anomalies) or None, seed=seed, budget_s=budget_s,
                                max_examples=max_examples, shrink=shrink, reject_on=tuple(reject_on),
                                reproduce_dir=reproduce_dir(reports.get("report")),
                                max_failures=1 if exitfirst else max_failures, ignore=read_ignore(ignore),
                                # --anomaly asks for those classes only: no havoc, no slow probe
                                explore=coverage and not anomalies, slow=max_examples is None and not anomalies,
                                per_tool=per_tool,
                                seeds=_recorded_seeds(seeds_from, registry, names),
                                class_weights=_recorded_weights(weights_from))
    spec = target_spec(target, reject_on, timeout, memory_limit_mb, sampling=coverage,
                       deterministic=max_examples is not None, budget_s=budget_s)
    pool = options.backend_pool(spec, workers, backend, ray_address)
    handlers: list = [ReproducerWriter()]
    writer = None
    if store is not None:
        writer = CorpusWriter(store, target=target, version=target_version(target))
        handlers.append(writer)
    handlers += [progress(quiet=quiet), Summary(footer=lambda r: _corpus_footer(r, writer, store))]
    with closing(pool):  # started by the job, so start-up counts in elapsed_s
        run_command(CampaignJob(registry, settings, pool, corpus=store, started_at=started_at), handlers,
                    reports=reports)


def _corpus_footer(result: Any, writer: Any, store: Any) -> list[str]:
    if writer is None:
        return []
    replayed = result.replayed
    return [f"corpus {store.path}: replayed {len(replayed)} entr{'y' if len(replayed) == 1 else 'ies'} "
            f"({len(result.corpus_passing)} pass, {len(result.corpus_failing)} fail); {writer.changes_text()}",
            *writer.regression_lines()]
