"""`fuzz corpus list / show / set-status / reopen / add / import / cmin`: inspect and maintain a corpus
directory (add, import and cmin are jobs: :mod:`fuzzer.engine.jobs.corpus`, :mod:`fuzzer.engine.jobs.corpus_import`)."""

from __future__ import annotations

import os
from contextlib import closing
from typing import Any, Optional

import click

from fuzzer.cli.app import main, translate_errors
from fuzzer.cli import options
from fuzzer.cli.errors import ConfigError, check_corpus_dir
from fuzzer.cli.record_filters import build_filter, classified, filters
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
    from fuzzer.cli.app import load_registry
    from fuzzer.cli.campaign import reproduce_dir, target_spec
    from fuzzer.cli.console import Summary, progress, run_command
    from fuzzer.engine.jobs.corpus import CorpusAddJob
    from fuzzer.harnesses.parser.harness import target_version
    from fuzzer.inputs import read_captured
    from fuzzer.isolation import WorkerPool
    from fuzzer.reports.reproducers import ReproducerWriter

    samples = [sample for path in files for sample in read_captured(path)]
    check_corpus_dir(corpus_dir)
    store = open_corpus(corpus_dir, must_exist=False)
    registry = load_registry(tools_file)
    pool = WorkerPool(target_spec(target, reject_on, timeout, memory_limit_mb))
    with closing(pool):
        job = CorpusAddJob(store, samples, pool, registry, level=level, target=target,
                           version=target_version(target), shrink=shrink, reject_on=tuple(reject_on),
                           reproduce_dir=reproduce_dir(None))
        run_command(job, [ReproducerWriter(), progress(quiet=True), Summary()])


@corpus.command("import")
@click.option("--records", "db", required=True, metavar="DB", help="The records database to import from.")
@options.corpus_dir
@options.target
@options.reject_on
@options.tools_file
@options.entry_level
@filters
@options.shrink("Shrink crashes and hangs as text (other failures keep the recorded output).")
@options.timeout
@options.memory
@translate_errors
def corpus_import(db: str, corpus_dir: str, target: str, reject_on: tuple, tools_file: Optional[str], level: str,
                  anomalies: tuple, sessions: tuple, statuses: tuple, since: Optional[str], parser_versions: tuple,
                  shrink: bool, timeout: float, memory_limit_mb: int) -> None:
    """Run recorded outputs on the target and store those that fail as corpus entries.

    One entry per signature (the smallest input), each keeping the id of the record it came from
    (in its scenario, with the other records showing the same failure). Where a record says its
    parse was right, the recorded calls are the truth (false_reject and corruption are judged);
    other records are judged for robustness only (crash, hang, non-call returns). Without
    --tools, the tools recorded with the records are used when they all share one tool set.
    Exit 1 when a record shows the bug of an entry marked fixed: a regression (the entry stays
    fixed); else 0.
    """
    from fuzzer.cli.console import Summary, progress, run_command
    from fuzzer.cli.replay_cmd import replay_context
    from fuzzer.engine.jobs.corpus_import import CorpusImportJob
    from fuzzer.harnesses.parser.harness import target_version

    context = replay_context(tools_file=tools_file, level=level, timeout=timeout, memory_limit_mb=memory_limit_mb,
                             reject_on=reject_on)
    check_corpus_dir(corpus_dir)
    with classified(db) as records:
        flt = build_filter(records, anomalies, sessions, statuses, since, parser_versions)
    job = CorpusImportJob(open_corpus(corpus_dir, must_exist=False), db, target, context, filters=flt, shrink=shrink,
                          version=target_version(target))
    run_command(job, [progress(quiet=True), Summary(problem_line=False)])


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
    from fuzzer.cli.console import Summary, progress, run_command
    from fuzzer.cli.replay_cmd import replay_context
    from fuzzer.engine.jobs.corpus import CminJob

    for other in merge_dirs:
        if not os.path.isdir(other):
            raise ConfigError(f"--merge: {other} is not a directory")
    store = open_corpus(corpus_dir, must_exist=not merge_dirs)
    merge = [(d, open_corpus(d, must_exist=True)) for d in merge_dirs]
    context = replay_context(tools_file=tools_file, level="parse", timeout=timeout, memory_limit_mb=memory_limit_mb,
                             reject_on=reject_on) if target else None
    run_command(CminJob(store, merge, reference=target, context=context), [progress(quiet=True), Summary()])
