"""`fuzz replay`: re-run a corpus (every entry kind) and say what each entry does now."""

from __future__ import annotations

import functools
import os
from typing import Any, Optional

import click

from fuzzer.cli.app import main, translate_errors
from fuzzer.cli import options
from fuzzer.cli.errors import ConfigError


def open_corpus(directory: str, *, must_exist: bool) -> Any:
    from corpus.store import CorpusStore

    if must_exist and not os.path.isdir(directory):
        raise ConfigError(f"--corpus: {directory} is not a directory")
    return CorpusStore(directory)


def replay_context(*, tools_file: Optional[str], level: str, timeout: float, memory_limit_mb: int,
                   reject_on: tuple, workers: int = 1, **more: Any) -> Any:
    from fuzzer.cli.app import load_registry
    from fuzzer.engine.harness import ReplayContext

    return ReplayContext(registry=load_registry(tools_file), tools_file=tools_file, level=level, timeout=timeout,
                         memory_limit_mb=memory_limit_mb, reject_on=tuple(reject_on), cwd=os.getcwd(),
                         workers=workers, **more)


@main.command()
@functools.partial(options.corpus_references, corpus_required=False)
@options.records_db("--records", "records_db",
                    "Replay recorded production tool calls instead of a corpus (see `fuzz records replay`: "
                    "--baseline and the filters are there).")
@options.harness_options
@options.entry_level
@options.chat_template
@options.worker_limits
@click.option("--update", is_flag=True, help="Mark open entries that now pass as fixed (and fixed ones that "
                                             "fail again as open); each change is printed. A hang entry passes "
                                             "only when it finishes within half the timeout, twice.")
@options.reports
@translate_errors
def replay(corpus_dir: Optional[str], records_db: Optional[str], target: Optional[str], executor: Optional[str], agent: Optional[str], reject_on: tuple,
           tools_file: Optional[str], level: str, chat_templates: tuple, timeout: float, memory_limit_mb: int,
           workers: int, update: bool, **report_paths: Any) -> None:
    """Re-run every corpus entry; print what each does now and a summary.

    Exit 1 when any entry still fails (or fails differently), when the corpus is empty, or when
    the target tests nothing (it rejects every valid output); 0 otherwise.
    """
    from fuzzer.cli.console import Summary, check_output_paths, progress, run_command
    from fuzzer.engine.jobs.replay import ReplayJob

    extra = options.harness_extra(report_paths)
    reports = options.report_paths(report_paths)
    check_output_paths(reports)
    if bool(corpus_dir) == bool(records_db):
        raise click.UsageError("give one of --corpus DIR or --records DB")
    if records_db:
        from fuzzer.cli.records_cmds import run_records_replay

        if not target:
            raise click.UsageError("Missing option '--target' (the parser to replay the records on)")
        click.get_current_context().exit(run_records_replay(
            db=records_db, target=target, executor=executor, reject_on=reject_on, timeout=timeout,
            memory_limit_mb=memory_limit_mb, workers=workers, reports=reports))
    refs = options.references(target, executor, agent, extra)
    store = open_corpus(corpus_dir, must_exist=True)
    options.corpus_chat_templates(store)  # a parser of a template's format reads its valid outputs
    context = replay_context(tools_file=tools_file, level=level, timeout=timeout, memory_limit_mb=memory_limit_mb,
                             reject_on=reject_on, workers=workers)
    context.extra.update(extra)
    run_command(ReplayJob(store, refs, context, update=update), [progress(), Summary()],
                reports=reports)
