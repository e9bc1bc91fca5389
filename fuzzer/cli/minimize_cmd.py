"""`fuzz minimize` and `fuzz reproduce`: one input at a time."""

from __future__ import annotations

import os
from contextlib import closing
from typing import Any, Optional

import click

from fuzzer.cli.app import main, translate_errors
from fuzzer.cli import options
from fuzzer.cli.errors import ConfigError, check_writable_file


@main.command()
@click.argument("sample_path", metavar="SAMPLE", type=click.Path(dir_okay=False))
@options.target
@options.reject_on
@options.tools_file
@click.option("--tool", default=None, help="Tool of the sample (for corpus entries it is recorded).")
@click.option("--level", type=click.Choice(["parse", "validate"]), default=None,
              help="Oracle level (default: the entry's, or parse).")
@options.timeout
@options.memory
@options.budget(60.0, "Seconds to spend in all, shrinking included (a limit).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the minimized text here.")
@translate_errors
def minimize(sample_path: str, target: str, reject_on: tuple, tools_file: Optional[str], tool: Optional[str],
             level: Optional[str], timeout: float, memory_limit_mb: int, budget_s: float,
             output: Optional[str]) -> None:
    """Shrink one failing model output to a 1-minimal one with the same signature.

    SAMPLE is a text file (raw model output: crashes and hangs are judged) or a corpus entry (its
    stored truth is used, so corruption and missed anomalies shrink too, structurally). Exit 1 when
    SAMPLE does not fail at all.
    """
    from fuzzer.cli.app import load_registry
    from fuzzer.cli.campaign import reproduce_dir, target_spec
    from fuzzer.reports.reproducers import ReproducerWriter
    from fuzzer.cli.console import Summary, progress, run_command
    from fuzzer.engine.jobs.corpus import MinimizeJob
    from fuzzer.inputs import read_sample_file
    from fuzzer.isolation import WorkerPool

    sample, entry = read_sample_file(sample_path)
    if entry is not None and entry.verdict == "slow":
        raise ConfigError(f"{sample_path}: a slow entry was minimized when it was found (the repeated fragment "
                          f"and the text around it); `fuzz reproduce {sample_path}` times it again")
    if output:
        check_writable_file(output, "--output")
    registry = load_registry(tools_file)
    if tool:
        registry[tool]
    level = level or (entry.level if entry is not None else "parse")

    def written(final: Any) -> list[str]:
        """``-o FILE``: the minimized text, once the job found one."""
        finding = final.result.finding
        if not output or finding is None:
            return []
        with open(output, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
            fh.write(finding.best.text)
        return [f"written: {output}"]

    pool = WorkerPool(target_spec(target, reject_on, timeout, memory_limit_mb))
    with closing(pool):
        job = MinimizeJob(sample, pool, registry, level=level, target=target, budget_s=budget_s,
                          reject_on=tuple(reject_on), reproduce_dir=reproduce_dir(None), path=sample_path)
        run_command(job, [ReproducerWriter(), progress(quiet=True), Summary(problem_line=False)], after=written)


@main.command()
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False, exists=True))
@click.option("--target", "target", metavar="M:A", type=options.TargetRef(), default=None,
              help="The code to run it on (default: the one the file names): the parser, executor, agent "
                   "loop or stream parser of the finding's kind.")
@click.option("--timeout", "timeout", type=options.Seconds(min=0.01), default=None, metavar="SECONDS",
              help="For a hang: seconds without a result before it counts as still hanging (default: the "
                   "campaign's --timeout, which a hang's reproducer file records; 2 for a corpus entry).")
@translate_errors
def reproduce(path: str, target: Optional[str], timeout: Optional[float]) -> None:
    """Run one finding's input again and show what it does now.

    FILE is a corpus entry of any kind (parser, executor, agent, stream), a reproducer file
    (written for long, history-dependent, slow or hang findings; it names the target and any
    earlier inputs that must run first), or a raw model output (then --target is required). A
    parser finding runs in this process: it prints the calls returned, or the full traceback; an
    agent script is played here too; other kinds are replayed as `fuzz replay` replays them.

    Exit status 1 when the input still fails: it raises, or (for a corpus entry whose calls are
    known) the target rejects a valid output or returns other calls than those written. Without
    that truth (a raw file, a reproducer), only raising counts; `fuzz replay` judges fully.
    A slow finding (its reproducer file or corpus entry) is timed at 1x, 2x, 4x and 8x its
    repetitions instead, and fails while the time still grows super-linearly. A hang's reproducer
    file runs the input in a worker stopped after the campaign's timeout, and fails while it hangs.
    Exit 2 when it cannot be run at all.
    """
    from fuzzer.cli.console import Summary, run_command
    from fuzzer.engine.harness import ReplayContext
    from fuzzer.engine.jobs.reproduce import ReproduceJob

    context = ReplayContext(cwd=os.getcwd(), timeout=timeout or 2.0, extra={"timeout": timeout})
    run_command(ReproduceJob(path, context, reference=target), [Summary()])
