"""`fuzz diff`: the differential runner between two parser versions (the job, its pools and git
worktrees are :mod:`fuzzer.engine.jobs.diff`'s)."""

from __future__ import annotations

from typing import Any, Optional

import click

from fuzzer.cli.app import main, translate_errors
from fuzzer.cli import options


@main.command()
@click.option("--old", "old_ref", required=True, metavar="M:A", type=options.TargetRef(),
              help="The old parser: M:A, or git:REF:M:A to load it from a temporary worktree of REF.")
@click.option("--new", "new_ref", required=True, metavar="M:A", type=options.TargetRef(),
              help="The new parser (same forms as --old).")
@options.reject_on
@click.option("--tool", "tool_names", multiple=True, metavar="NAME", help="Tools to generate (repeatable). "
                                                                          "Default: every tool.")
@options.tools_file
@options.level
@options.anomalies
@options.optional_corpus("Also run every parser entry of this corpus (first).")
@options.budget(30.0, "Seconds of fresh samples, shrinking included (a limit).")
@click.option("--max-examples", type=click.IntRange(min=1), default=None,
              help="Fresh samples to run instead of a time budget (deterministic with --seed).")
@options.seed
@options.worker_limits
@options.reports
@translate_errors
def diff(old_ref: str, new_ref: str, reject_on: tuple, tool_names: tuple, tools_file: Optional[str], level: str,
         anomalies: tuple, corpus_dir: Optional[str], budget_s: float, max_examples: Optional[int], seed: int,
         workers: int, timeout: float, memory_limit_mb: int, **report_paths: Any) -> None:
    """Run the same samples through two parser versions and classify every difference.

    same / fixed (old failed, new passes) / regression (old passed, new fails) / changed (both pass or
    both fail, but differently). Exit 1 iff there is at least one regression.
    """
    from fuzzer.cli.campaign import select_tools
    from fuzzer.cli.console import Summary, check_output_paths, progress, run_command
    from fuzzer.cli.replay_cmd import open_corpus, replay_context
    from fuzzer.engine.jobs.diff import DiffJob
    from fuzzer.harnesses.parser.harness import sample_from_entry

    reports = options.report_paths(report_paths)
    check_output_paths(reports)
    context = replay_context(tools_file=tools_file, level=level, timeout=timeout, memory_limit_mb=memory_limit_mb,
                             reject_on=reject_on, workers=workers)
    registry = context.registry
    names = select_tools(registry, tool_names, anomalies)
    corpus_samples: list = []
    if corpus_dir:
        store = open_corpus(corpus_dir, must_exist=True)
        corpus_samples = [sample_from_entry(e) for _, e in store.entries() if e.kind == "parser"]
        for problem in store.problems:
            click.echo(f"warning: skipped {problem}", err=True)
    job = DiffJob(registry, old=old_ref, new=new_ref, context=context, level=level, corpus_samples=corpus_samples,
                  tools=names, anomalies=list(anomalies) or None, seed=seed,
                  budget_s=None if max_examples else budget_s, max_samples=max_examples)
    run_command(job, [progress(), Summary()], reports=reports)
