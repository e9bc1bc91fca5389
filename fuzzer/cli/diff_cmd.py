"""`fuzz diff`: the differential runner between two parser versions."""

from __future__ import annotations

import contextlib
from typing import Any, Optional

import click

from fuzzer.cli import load_registry_or_fail, main, options, translate_errors
from fuzzer.cli.campaign import make_spec
from fuzzer.report import compact, preview


@contextlib.contextmanager
def _pool_for(ref: str, reject_on: tuple, timeout: float, memory_limit_mb: int, workers: int) -> Any:
    """A started worker pool for ``M:A`` or ``git:REF:M:A`` (checked out in a temporary worktree)."""
    from fuzzer.gitref import checkout, split_git_target
    from fuzzer.isolation import WorkerPool
    from strategies.errors import TargetError

    git = split_git_target(ref)
    with contextlib.ExitStack() as stack:
        if git is None:
            spec = make_spec(ref, reject_on, timeout, memory_limit_mb)
        else:
            git_ref, target = git
            directory = stack.enter_context(checkout(git_ref))
            spec = make_spec(target, reject_on, timeout, memory_limit_mb)
            spec = type(spec)(**{**spec.__dict__, "cwd": directory})
        try:
            pool = stack.enter_context(WorkerPool(spec, workers=workers))
        except TargetError as exc:
            if git is None:
                raise
            raise TargetError(f"{ref}: {exc} (at git ref {git[0]!r})") from None
        yield pool


@main.command()
@click.option("--old", "old_ref", required=True, metavar="M:A",
              help="The old parser: M:A, or git:REF:M:A to load it from a temporary worktree of REF.")
@click.option("--new", "new_ref", required=True, metavar="M:A", help="The new parser (same forms as --old).")
@options.reject_on
@click.option("--tool", "tool_names", multiple=True, metavar="NAME", help="Tools to generate (repeatable). "
                                                                          "Default: every tool.")
@options.tools_file
@options.level
@click.option("--anomaly", "anomalies", multiple=True, metavar="CLASS",
              help="Restrict fresh samples to these anomaly classes or operators (repeatable).")
@click.option("--corpus", "corpus_dir", metavar="DIR", type=click.Path(file_okay=False),
              help="Also run every entry of this corpus (first).")
@click.option("--budget", "budget_s", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds of fresh samples.")
@click.option("--max-examples", type=click.IntRange(min=1), default=None,
              help="Fresh samples to run instead of a time budget (deterministic with --seed).")
@options.seed
@options.workers
@options.timeout
@options.memory
@options.report
@translate_errors
def diff(old_ref: str, new_ref: str, reject_on: tuple, tool_names: tuple, tools_file: Optional[str], level: str,
         anomalies: tuple, corpus_dir: Optional[str], budget_s: float, max_examples: Optional[int], seed: int,
         workers: int, timeout: float, memory_limit_mb: int, report_path: Optional[str]) -> None:
    """Run the same samples through two parser versions and classify every difference.

    same / fixed (old failed, new passes) / regression (old passed, new fails) / changed (both pass or
    both fail, but differently). Exit 1 iff there is at least one regression.
    """
    from fuzzer.corpus_link import sample_from_entry
    from fuzzer.diff import DiffRunner
    from fuzzer.engine import resolve_operators
    from fuzzer.report import write_json_atomic

    if report_path:
        from fuzzer.cli.errors import check_writable_file

        check_writable_file(report_path, "--report")
    registry = load_registry_or_fail(tools_file)
    names = list(tool_names) or registry.names()
    for name in names:
        registry[name]
    from fuzzer.cli.errors import ConfigError
    from fuzzer.engine import applicable_somewhere

    operators = resolve_operators(list(anomalies))
    with_valid = not anomalies or "valid" in anomalies
    if not any(applicable_somewhere(registry[n], operators, with_valid) for n in names):
        raise ConfigError("--anomaly: no selected anomaly class or operator applies to the selected tools")
    corpus_samples: list = []
    if corpus_dir:
        from corpus.store import CorpusStore

        store = CorpusStore(corpus_dir)
        corpus_samples = [sample_from_entry(e) for _, e in store.entries()]
        for problem in store.problems:
            click.echo(f"skipped {problem}", err=True)
    with _pool_for(old_ref, reject_on, timeout, memory_limit_mb, workers) as old_pool, \
            _pool_for(new_ref, reject_on, timeout, memory_limit_mb, workers) as new_pool:
        runner = DiffRunner(registry, run_old=old_pool.run, run_new=new_pool.run, old_label=old_ref,
                            new_label=new_ref, level=level)
        click.echo(f"diff: {old_ref} -> {new_ref} ({len(corpus_samples)} corpus entries, then fresh samples "
                   f"for {', '.join(names)})", err=True)
        result = runner.run(corpus_samples=corpus_samples, tools=names, operators=list(anomalies) or None,
                            seed=seed, budget_s=None if max_examples else budget_s, max_samples=max_examples)

    c = result.counts
    click.echo(f"{result.samples:,} samples: {c['same']:,} same, {c['fixed']:,} fixed, "
               f"{c['regression']:,} regression, {c['changed']:,} changed")
    for title, table in (("anomaly class", result.by_class), ("format", result.by_format)):
        click.echo(f"{title:<24}{'same':>8}{'fixed':>8}{'regress':>9}{'changed':>9}")
        for name, row in sorted(table.items(), key=lambda kv: (kv[0] != "valid", kv[0])):
            click.echo(f"{name:<24}{row['same']:>8}{row['fixed']:>8}{row['regression']:>9}{row['changed']:>9}")
    for i, d in enumerate(result.differences, 1):
        best = d.minimized or d.sample
        old, new = d.min_old or d.old, d.min_new or d.new
        click.echo("")
        click.echo(f"[{i}] {d.kind.upper()} on {d.sample.anomaly_class or 'valid'}"
                   f"{'/' + d.sample.operator if d.sample.operator else ''} in {d.sample.format} (seen {d.count}x)")
        click.echo(f"    input: {preview(best.text)}")
        click.echo(f"    old:   {_side_line(old)}")
        click.echo(f"    new:   {_side_line(new)}")
    if report_path:
        write_json_atomic(report_path, result.to_report())
        click.echo(f"report: {report_path}")
    interrupted = result.stop_reason == "interrupted"
    click.get_current_context().exit(1 if c["regression"] else 130 if interrupted else 0)


def _side_line(side: Any) -> str:
    o = side.outcome
    if o.kind == "returned":
        what = f"returned {compact(o.calls, 120)}"
    elif o.kind in ("rejected", "raised"):
        what = f"{o.kind} {o.exception}"
    else:
        what = o.detail or o.kind
    return f"{side.verdict:<14} {what}"
