"""`fuzz gate`: the CI gate. Replay the corpus, run a short campaign, block on anything new."""

from __future__ import annotations

import shlex
from typing import Any, Optional

import click

from fuzzer.cli import main, options, translate_errors


@main.command()
@options.corpus_references
@options.harness_options
@click.option("--tool", "tool_names", multiple=True, metavar="NAME",
              help="Tools for the short campaign (repeatable). Default: every tool.")
@options.level
@options.formats
@options.run_limits(30.0, "Seconds for the short campaign after the replay (a limit, shrinking included).")
@options.ignore
@options.quiet
@options.reports
@translate_errors
def gate(corpus_dir: str, target: Optional[str], executor: Optional[str], agent: Optional[str], reject_on: tuple,
         tools_file: Optional[str], tool_names: tuple, level: str, formats: tuple, budget_s: float,
         max_examples: Optional[int], seed: int, workers: int, timeout: float, memory_limit_mb: int, ignore: tuple,
         quiet: bool, **report_paths: Any) -> None:
    """CI gate: replay the corpus, then run a short campaign.

    Exit 1 if a fixed entry fails again, if a failure appears whose signature the corpus does not
    hold, or if the target tests nothing (rejects every valid output); known open failures do not
    block. Exit 0 otherwise. With --seed and --max-examples the gate is deterministic.
    """
    from fuzzer.cli.campaign import read_ignore, reproduce_dir, select_tools
    from fuzzer.cli.console import Summary, check_output_paths, progress, run_command
    from fuzzer.cli.render import gate_lines
    from fuzzer.cli.replay_cmd import open_corpus, replay_context
    from fuzzer.gate import GateJob

    extra = options.harness_extra(report_paths)
    reports = options.report_paths(report_paths)
    check_output_paths(reports)
    refs = options.references(target, executor, agent)
    store = open_corpus(corpus_dir, must_exist=True)
    ignored = read_ignore(ignore)
    context = replay_context(tools_file=tools_file, level=level, timeout=timeout, memory_limit_mb=memory_limit_mb,
                             reject_on=reject_on, workers=workers, seed=seed,
                             budget_s=None if max_examples else budget_s, max_examples=max_examples)
    names = select_tools(context.registry, tool_names, ())
    context.extra.update(extra)
    context.extra.update(tools=names, formats=list(formats) or None, ignore=ignored,
                         reproduce_dir=reproduce_dir(reports.get("report")))

    def advice(final: Any) -> list[str]:
        if not final.result.decision.blocked:
            return []
        cmd = ["fuzz", "gate", "--corpus", corpus_dir, "--level", level, "--seed", str(seed),
               "--max-examples", str(max_examples or max(1, final.result.executions)), "--timeout", f"{timeout:g}"]
        for option, value in (("--target", target), ("--executor", executor), ("--agent", agent),
                              ("--tools", tools_file)):
            if value:
                cmd += [option, value]
        for name in tool_names:
            cmd += ["--tool", name]
        for name in formats:
            cmd += ["--format", name]
        for ref in reject_on:
            cmd += ["--reject-on", ref]
        for value in ignore:
            cmd += ["--ignore", value]
        store_cmd = ["fuzz", "campaign", "--corpus", corpus_dir, "--seed", str(seed), "--max-examples",
                     cmd[cmd.index("--max-examples") + 1]]
        if target:
            store_cmd += ["--target", target]
        if tools_file:
            store_cmd += ["--tools", tools_file]
        for name in tool_names:
            store_cmd += ["--tool", name]
        lines = ["reproduce locally: " + " ".join(shlex.quote(c) for c in cmd)]
        decision = final.result.decision
        if decision.new:
            lines.append("after fixing, or to accept the new failures as known: "
                         + " ".join(shlex.quote(c) for c in store_cmd))
        elif decision.regressions:
            lines.append("an entry marked fixed fails again: fix the target (the command above checks it)")
        return lines

    run_command(GateJob(store, refs, context, ignore=ignored), [progress(quiet=quiet), Summary(gate_lines)],
                reports=reports, after=advice)
