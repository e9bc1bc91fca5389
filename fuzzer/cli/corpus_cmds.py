"""`fuzz corpus list / show / add / cmin`: inspect and maintain a corpus directory."""

from __future__ import annotations

import os
from contextlib import closing
from typing import Any, Optional

import click

from fuzzer.cli import main, options, translate_errors
from fuzzer.cli.errors import ConfigError, check_corpus_dir
from fuzzer.cli.replay_cmd import open_corpus


@main.group()
def corpus() -> None:
    """Inspect and maintain a corpus directory."""


@corpus.command("list")
@options.corpus_dir
@translate_errors
def corpus_list(corpus_dir: str) -> None:
    """One line per entry: signature, status, kind, size, minimized or not, title.

    Exit 1 when a file of the corpus is not a readable entry (each is named on stderr): its
    regression test no longer runs, and replay and the gate fail on it too.
    """
    from fuzzer.engine.decisions import corpus_list_exit_code

    store = open_corpus(corpus_dir, must_exist=True)
    entries = store.entries()
    for path, e in entries:
        shrunk = "" if e.minimized else "  (not minimized)"
        click.echo(f"{e.signature:<28} {e.status:<6} {e.kind:<8} {len(e.text):>8,} chars  {e.title}{shrunk}  "
                   f"[{os.path.basename(path)}]")
    for problem in store.problems:
        click.echo(f"warning: skipped {problem}", err=True)
    unreadable = len(store.problems)
    click.echo(f"{len(entries)} entries" + (f", {unreadable} unreadable file(s)" if unreadable else ""))
    click.get_current_context().exit(corpus_list_exit_code(unreadable=unreadable))


@corpus.command("show")
@options.corpus_dir
@click.argument("signature")
@translate_errors
def corpus_show(corpus_dir: str, signature: str) -> None:
    """Print one entry (by signature, or a unique prefix of it, or its file name) as JSON."""
    click.echo(_one_entry(open_corpus(corpus_dir, must_exist=True), corpus_dir, signature).dumps(), nl=False)


def _one_entry(store: Any, corpus_dir: str, signature: str) -> Any:
    """The entry ``signature`` names: its signature, a unique prefix of it, or its file name."""
    matches = [(p, e) for p, e in store.entries()
               if e.signature.startswith(signature) or os.path.basename(p).startswith(signature)]
    if len({e.signature for _p, e in matches}) != 1:
        raise ConfigError(f"{signature!r} matches {len(matches)} entries in {corpus_dir}")
    return store.get(matches[0][1].signature)  # the smallest, when two files hold one signature


@corpus.command("set-status")
@options.corpus_dir
@click.argument("signature")
@click.argument("status", type=click.Choice(["open", "fixed"]), metavar="STATUS")
@translate_errors
def corpus_set_status(corpus_dir: str, signature: str, status: str) -> None:
    """Mark one entry (by signature, a unique prefix of it, or its file name) open or fixed.

    STATUS is open or fixed.

    A status is a decision, and `fuzz replay --update` is the usual way to take it (it marks
    fixed what passes now). This is the way to take it by hand, and back out of a wrong one: an
    entry marked fixed makes the gate block whenever its input fails (a regression); an open one
    is a known failure that does not block.
    """
    _set_status(corpus_dir, signature, status)


@corpus.command("reopen")
@options.corpus_dir
@click.argument("signature")
@translate_errors
def corpus_reopen(corpus_dir: str, signature: str) -> None:
    """Mark one entry open again: `fuzz corpus set-status SIGNATURE open`.

    For an entry marked fixed while its bug is still there (the gate then blocks on it as a
    regression): reopened, it is a known open failure until `fuzz replay --update` sees it pass.
    """
    _set_status(corpus_dir, signature, "open")


def _set_status(corpus_dir: str, signature: str, status: str) -> None:
    store = open_corpus(corpus_dir, must_exist=True)
    entry = _one_entry(store, corpus_dir, signature)
    if entry.status == status:
        click.echo(f"{entry.signature}: already {status}")
        return
    (store.mark_fixed if status == "fixed" else store.mark_open)(entry.signature)
    if store.get(entry.signature).status != status:  # a corrupt file holds its name: said, never overwritten
        raise ConfigError(f"{entry.signature}: not changed: " + "; ".join(store.problems))
    click.echo(f"{entry.signature}: {entry.status} -> {status}")


@corpus.command("add")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@options.replay_options
@options.shrink("Minimize each failing input first.")
@translate_errors
def corpus_add(files: tuple, corpus_dir: str, target: str, reject_on: tuple, tools_file: Optional[str],
               level: str, timeout: float, memory_limit_mb: int, shrink: bool) -> None:
    """Run captured model outputs on the target and store those that fail.

    Each FILE is a text file (one raw model output) or a .jsonl file of {"text": ...} objects, where
    "calls" (the expected calls) and "format" may be given so corruption can be judged too.
    Exit 1 when an input shows the bug of an entry marked fixed: a regression (the entry stays
    fixed; only `fuzz replay --update` or `fuzz corpus set-status` change a status); else 0.
    """
    from fuzzer.cli import load_registry
    from fuzzer.cli.campaign import reproduce_dir, target_spec
    from fuzzer.cli.console import Summary, progress, run_command
    from fuzzer.reports.reproducers import ReproducerWriter
    from fuzzer.cli.render import regression_line
    from fuzzer.engine.jobs.corpus import REGRESSION, CorpusAddJob
    from fuzzer.inputs import read_captured
    from fuzzer.isolation import WorkerPool
    from fuzzer.harnesses.parser.harness import target_version

    samples = [sample for path in files for sample in read_captured(path)]
    check_corpus_dir(corpus_dir)
    store = open_corpus(corpus_dir, must_exist=False)
    registry = load_registry(tools_file)

    def lines(result: Any) -> list[str]:
        out = [(regression_line(f.signature.id, f.title) if what == REGRESSION else
                f"{what:<9} {f.signature.id} ({f.title})") + ("" if f.is_minimized else " (not minimized)")
               for what, f in result.stored]
        out.append(f"{result.inputs} inputs: " + ", ".join(f"{n} {k}" for k, n in sorted(result.outcome_counts().items())))
        return out

    pool = WorkerPool(target_spec(target, reject_on, timeout, memory_limit_mb))
    with closing(pool):
        job = CorpusAddJob(store, samples, pool, registry, level=level, target=target,
                           version=target_version(target), shrink=shrink, reject_on=tuple(reject_on),
                           reproduce_dir=reproduce_dir(None))
        run_command(job, [ReproducerWriter(), progress(quiet=True), Summary(lines)])


@corpus.command("cmin")
@options.corpus_dir
@click.option("--merge", "merge_dirs", multiple=True, metavar="DIR",
              help="Another corpus directory to merge into this one (repeatable).")
@click.option("--target", "target", metavar="M:A", type=options.TargetRef(), default=None,
              help="Also replay every parser entry on this target and drop entries whose failure has become a "
                   "duplicate: of the entries that now fail with the same signature, keep the smallest.")
@options.reject_on
@options.tools_file
@options.timeout
@options.memory
@translate_errors
def corpus_cmin(corpus_dir: str, merge_dirs: tuple, target: Optional[str], reject_on: tuple,
                tools_file: Optional[str], timeout: float, memory_limit_mb: int) -> None:
    """Keep one entry per signature (the smallest), merging other corpora in first.

    Entries that pass on --target are kept: they are the regression tests of fixed bugs. Entries
    that cannot be judged (their tool is missing from --tools) are kept and listed.
    """
    from fuzzer.engine.jobs.corpus import cmin

    for other in merge_dirs:
        if not os.path.isdir(other):
            raise ConfigError(f"--merge: {other} is not a directory")
    store = open_corpus(corpus_dir, must_exist=not merge_dirs)
    merge = [(d, open_corpus(d, must_exist=True)) for d in merge_dirs]
    replay: Any = None
    if target:
        from fuzzer.cli.campaign import target_spec
        from fuzzer.cli.replay_cmd import replay_context
        from fuzzer.isolation import WorkerPool
        from fuzzer.harnesses.parser.harness import replay_entries

        context = replay_context(tools_file=tools_file, level="parse", timeout=timeout,
                                 memory_limit_mb=memory_limit_mb, reject_on=reject_on)

        def replay_on_target(items: list) -> list:
            parser_items = [(p, e) for p, e in items if e.kind == "parser"]
            with WorkerPool(target_spec(target, reject_on, timeout, memory_limit_mb)) as pool:
                return replay_entries(parser_items, run=pool.run, registry=context.registry, level="parse",
                                      timeout=timeout)

        replay = replay_on_target

    report = cmin(store, merge, replay)
    for directory, counts, problems in report.merged:
        click.echo(f"merged {directory}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
        for problem in problems:
            click.echo(f"warning: skipped {problem}", err=True)
    for signature, path, now, kept in report.dropped:
        click.echo(f"dropped {signature} ({os.path.basename(path)}): now fails as {now}, like {kept}")
    for signature, why in report.unjudged:
        click.echo(f"kept {signature}: not judged ({why})")
    for problem in report.problems:
        click.echo(f"warning: skipped {problem}", err=True)
    click.echo(f"{report.before} entries, {report.duplicates_removed} duplicates removed, "
               f"{len(report.dropped)} dropped as duplicates on {target}, {report.after} left" if target else
               f"{report.before} entries, {report.duplicates_removed} duplicates removed, {report.after} left")
