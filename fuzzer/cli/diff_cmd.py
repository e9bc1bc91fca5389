"""`fuzz diff`: the differential runner between two parser versions."""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator, Optional

import click

from fuzzer.cli import main, options, translate_errors
from fuzzer.engine.text import compact, preview


@contextlib.contextmanager
def pool_for(ref: str, reject_on: tuple, timeout: float, memory_limit_mb: int, workers: int,
             budget_s: Optional[float] = None) -> Iterator[Any]:
    """A worker pool (started) for ``M:A`` or ``git:REF:M:A`` (checked out in a temporary worktree);
    ``budget_s`` bounds the import too."""
    from fuzzer.cli.campaign import target_spec
    from fuzzer.gitref import checkout, split_git_target
    from fuzzer.isolation import WorkerPool
    from strategies.errors import TargetError

    git = split_git_target(ref)
    with contextlib.ExitStack() as stack:
        if git is None:
            spec = target_spec(ref, reject_on, timeout, memory_limit_mb, budget_s=budget_s)
        else:
            git_ref, target = git
            spec = target_spec(target, reject_on, timeout, memory_limit_mb, cwd=stack.enter_context(checkout(git_ref)),
                               budget_s=budget_s)
        pool = WorkerPool(spec, workers=workers)
        stack.callback(pool.close)
        try:
            pool.start()
        except TargetError as exc:
            if git is None:
                raise
            raise TargetError(f"{ref}: {exc} (at git ref {git[0]!r})") from None
        yield pool


def _side_line(side: Any) -> str:
    o = side.outcome
    if o.kind == "returned":
        what = f"returned {compact(o.calls, 120)}"
    elif o.kind in ("rejected", "raised"):
        # where: two crashes of one type that differ only in their site (a helper renamed, a
        # check moved) would otherwise print as the same line on both sides
        frames = [frame for frame in (o.frames or ()) if len(frame) >= 2]
        where = f" in {os.path.basename(str(frames[-1][0]))}:{frames[-1][1]}" if frames else ""
        what = f"{o.kind} {o.exception}{where}"
    else:
        what = o.detail or o.kind
    return f"{side.verdict:<14} {what}"


def diff_lines(result: Any) -> list[str]:
    c = result.kinds
    lines = [f"{result.samples:,} samples: {c['same']:,} same, {c['fixed']:,} fixed, {c['regression']:,} regression, "
             f"{c['changed']:,} changed [stopped: {result.stop_reason.value}]"]
    for title, table in (("anomaly class", result.by_class), ("format", result.by_format)):
        lines.append(f"{title:<24}{'same':>8}{'fixed':>8}{'regress':>9}{'changed':>9}")
        for name, row in sorted(table.items(), key=lambda kv: (kv[0] != "valid", kv[0])):
            lines.append(f"{name:<24}{row['same']:>8}{row['fixed']:>8}{row['regression']:>9}{row['changed']:>9}")
    for i, d in enumerate(result.differences, 1):
        best = d.minimized or d.sample
        old, new = d.min_old or d.old, d.min_new or d.new
        lines += ["", f"[{i}] {d.kind.upper()} on {d.sample.anomaly_class or 'valid'}"
                      f"{'/' + d.sample.operator if d.sample.operator else ''} in {d.sample.format} (seen {d.count}x)",
                  f"    input: {preview(best.text)}", f"    old:   {_side_line(old)}", f"    new:   {_side_line(new)}"]
    return lines


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
    from fuzzer.cli import load_registry
    from fuzzer.cli.campaign import select_tools
    from fuzzer.cli.console import Summary, check_output_paths, progress, run_command
    from fuzzer.engine.jobs.diff import DiffJob
    from fuzzer.harnesses.parser.harness import sample_from_entry

    reports = options.report_paths(report_paths)
    check_output_paths(reports)
    registry = load_registry(tools_file)
    names = select_tools(registry, tool_names, anomalies)
    corpus_samples: list = []
    if corpus_dir:
        from fuzzer.cli.replay_cmd import open_corpus

        store = open_corpus(corpus_dir, must_exist=True)
        corpus_samples = [sample_from_entry(e) for _, e in store.entries() if e.kind == "parser"]
        for problem in store.problems:
            click.echo(f"warning: skipped {problem}", err=True)
    limit = None if max_examples else budget_s
    with pool_for(old_ref, reject_on, timeout, memory_limit_mb, workers, limit) as old_pool, \
            pool_for(new_ref, reject_on, timeout, memory_limit_mb, workers, limit) as new_pool:
        click.echo(f"diff: {old_ref} -> {new_ref} ({len(corpus_samples)} corpus entries, then fresh samples "
                   f"for {', '.join(names)})", err=True)
        job = DiffJob(registry, old_pool=old_pool, new_pool=new_pool, old_label=old_ref, new_label=new_ref,
                      level=level, corpus_samples=corpus_samples, tools=names, anomalies=list(anomalies) or None,
                      seed=seed, budget_s=None if max_examples else budget_s, max_samples=max_examples)
        run_command(job, [progress(), Summary(diff_lines)], reports=reports)
