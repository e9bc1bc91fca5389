"""`fuzz gate`: the CI gate. Replay the corpus, run a short campaign, block on anything new."""

from __future__ import annotations

import shlex
from typing import Any, Optional

import click

from fuzzer.cli.app import main, translate_errors
from fuzzer.cli import options


@main.command()
@options.corpus_references
@options.harness_options
@click.option("--tool", "tool_names", multiple=True, metavar="NAME",
              help="Tools for the short campaign (repeatable). Default: every tool.")
@options.level
@options.formats
@options.chat_template
@options.run_limits(30.0, "Seconds for the short campaign after the replay (a limit, shrinking included).")
@options.ignore
@options.backend_options
@options.quiet
@options.reports
@translate_errors
def gate(corpus_dir: str, target: Optional[str], executor: Optional[str], agent: Optional[str], reject_on: tuple,
         tools_file: Optional[str], tool_names: tuple, level: str, formats: tuple, chat_templates: tuple,
         budget_s: float,
         max_examples: Optional[int], seed: int, workers: int, timeout: float, memory_limit_mb: int, ignore: tuple,
         backend: str, ray_address: Optional[str], quiet: bool, **report_paths: Any) -> None:
    """CI gate: replay the corpus, then run a short campaign.

    Exit 1 if a fixed entry fails again, if a failure appears whose signature the corpus does not
    hold, or if the target tests nothing (rejects every valid output); known open failures do not
    block. Exit 0 otherwise. With --seed and --max-examples the gate is deterministic.
    """
    from fuzzer.cli.campaign import per_tool_settings, read_ignore, reproduce_dir, select_tools
    from fuzzer.cli.console import Summary, check_output_paths, progress, run_command
    from fuzzer.cli.replay_cmd import open_corpus, replay_context
    from fuzzer.engine.jobs.gate import GateJob

    extra = options.harness_extra(report_paths)
    reports = options.report_paths(report_paths)
    check_output_paths(reports)
    refs = options.references(target, executor, agent, extra)
    store = open_corpus(corpus_dir, must_exist=True)
    declared = options.chat_template_formats(chat_templates)
    formats = tuple(formats) + tuple(name for name in declared if name not in formats)
    options.corpus_chat_templates(store)  # the templates its entries were made with: fuzzed again
    ignored = read_ignore(ignore)
    context = replay_context(tools_file=tools_file, level=level, timeout=timeout, memory_limit_mb=memory_limit_mb,
                             reject_on=reject_on, workers=workers, seed=seed,
                             budget_s=None if max_examples else budget_s, max_examples=max_examples)
    names = select_tools(context.registry, tool_names, ())
    # the file's per-tool tables, as a campaign takes them (a table's level = "validate" judged at parse level
    # in the gate, while its first line said the table was taken, let missed anomalies through)
    extra["per_tool"] = per_tool_settings(context.registry, names)
    context.extra.update(extra)
    context.extra.update(tools=names, formats=list(formats) or None, ignore=ignored,
                         reproduce_dir=reproduce_dir(reports.get("report")), backend=backend, ray_address=ray_address)
    from fuzzer.backends import check_backend

    check_backend(backend, ray_address)  # a usage error (or Ray missing) before any replay

    def advice(final: Any) -> list[str]:
        if not final.result.decision.blocked:
            return []
        examples = str(max_examples or max(1, final.result.executions))
        cmd = ["fuzz", "gate", "--corpus", corpus_dir] + (["--level", level] if target else []) + \
              ["--seed", str(seed), "--max-examples", examples, "--timeout", f"{timeout:g}"]
        harness_flags = [("--executor-policy", executor and extra.get("executor_policy")),
                         ("--agent-policy", agent and extra.get("agent_policy")),
                         ("--model-shape", agent and extra.get("model_shape")),
                         ("--stream-parser", extra.get("stream_parser")),
                         ("--stream-consumer", extra.get("stream_consumer"))]
        for option, value in (("--target", target), ("--executor", executor), ("--agent", agent),
                              ("--tools", tools_file), *harness_flags):
            if value:
                cmd += [option, value]
        if executor and extra.get("http"):
            cmd.append("--http")
        for name in tool_names:
            cmd += ["--tool", name]
        for name in formats:
            if name not in declared:
                cmd += ["--format", name]
        for path in chat_templates:
            cmd += ["--chat-template", path]
        for ref in reject_on:
            cmd += ["--reject-on", ref]
        for value in ignore:
            cmd += ["--ignore", value]
        # The command that stores each harness's findings in the corpus (its own command: a
        # campaign does not run an executor or an agent loop), judging as this gate judges: at
        # another level, timeout or set of clean rejections it would store other signatures
        # (a clean rejection filed as a crash), and the gate would stay blocked.
        store_cmds = []
        common = ["--corpus", corpus_dir, "--seed", str(seed), "--max-examples", examples,
                  "--timeout", f"{timeout:g}"] + (["--tools", tools_file] if tools_file else [])
        if target:
            store_cmds.append(["fuzz", "campaign", "--target", target, *common, "--level", level] +
                              [a for ref in reject_on for a in ("--reject-on", ref)] +
                              [a for name in tool_names for a in ("--tool", name)] +
                              [a for name in formats if name not in declared for a in ("--format", name)] +
                              [a for path in chat_templates for a in ("--chat-template", path)])
        if executor:
            store_cmds.append(["fuzz", "executor", "--executor", executor, *common] +
                              (["--policy", extra["executor_policy"]] if extra.get("executor_policy") else []) +
                              (["--http"] if extra.get("http") else []))
        if agent:
            store_cmds.append(["fuzz", "agent", "--agent", agent, *common] +
                              (["--policy", extra["agent_policy"]] if extra.get("agent_policy") else []) +
                              (["--model-shape", extra["model_shape"]] if extra.get("model_shape") else []))
        stream = extra.get("stream_parser") or extra.get("stream_consumer")
        if stream:
            store_cmds.append(["fuzz", "stream", "--parser" if extra.get("stream_parser") else "--consumer", stream,
                               *common] + [a for name in tool_names for a in ("--tool", name)] +
                              ([a for name in formats for a in ("--format", name)] if extra.get("stream_parser") else []))
        store = " ; ".join(" ".join(shlex.quote(c) for c in command) for command in store_cmds)
        lines = ["reproduce locally: " + " ".join(shlex.quote(c) for c in cmd)]
        decision = final.result.decision
        if decision.new:
            lines.append("after fixing, or to accept the new failures as known: " + store)
        elif decision.regressions:
            lines.append("an entry marked fixed fails again: fix the target (the command above checks it)")
        return lines

    run_command(GateJob(store, refs, context, ignore=ignored), [progress(quiet=quiet), Summary()],
                reports=reports, after=advice)
