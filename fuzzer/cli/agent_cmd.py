"""`fuzz agent`: a scripted adversarial model against a tool-use loop."""

from __future__ import annotations

import os
from typing import Any, Optional

import click

from fuzzer.cli.app import load_registry, main, translate_errors
from fuzzer.cli import options
from fuzzer.cli.errors import ConfigError, check_corpus_dir
from strategies._internal.formats import FORMATS

DEFAULT_BUDGET_S = 60.0
SHAPES = ("openai", "anthropic", "text")


@main.command("agent")
@click.option("--agent", "agent", required=True, metavar="M:A",
              help="The loop under test: run(model, tools, user_input) -> reply, or a factory taking no "
                   "arguments that returns one (called once per episode); async def run works with the openai "
                   "and anthropic shapes. toolfuzz supplies the model "
                   "(see --model-shape) and the tools (a mapping of name -> callable). The current "
                   "directory is on sys.path.")
@options.tools_file
@click.option("--model-shape", "shape", type=click.Choice(SHAPES), default="openai", show_default=True,
              help="The model client the loop is given: openai (client.chat.completions.create), "
                   "anthropic (client.messages.create) or text (model.generate(messages, tools) -> str).")
@click.option("--format", "formats", multiple=True, type=click.Choice(list(FORMATS)),
              help="With --model-shape text: the formats the loop parses, which the model writes its "
                   "calls in (repeatable). Default: json.")
@click.option("--policy", "policy_file", metavar="FILE", type=click.Path(dir_okay=True),
              help="The loop's promises (max_turns, max_tool_calls, duplicates, convergence, validates_calls, "
                   "must_notice_chain_break, errors): a TOML file, its [tool.toolfuzz.agent] table or top-level "
                   "keys. Default: ./pyproject.toml's [tool.toolfuzz.agent], else the defaults (see --explain).")
@options.run_limits(None, "Seconds to run, shrinking included (a hard limit). Default: 60, or no time limit with "
                          "--max-examples.")
@options.max_failures
@options.exitfirst
@options.ignore
@options.reports
@options.optional_corpus("Add every finding's minimal script to this corpus (kind 'agent'), for fuzz replay / gate.")
@options.shrink("Shrink each failure to the shortest script that shows it.")
@click.option("--explain", is_flag=True, help="Print the policy in effect and what each verdict means, then exit.")
@options.backend_options
@options.quiet
@translate_errors
def agent(agent: str, tools_file: Optional[str], shape: str, formats: tuple, policy_file: Optional[str],
          budget_s: Optional[float], max_examples: Optional[int], seed: int, timeout: float, workers: int,
          memory_limit_mb: int, corpus_dir: Optional[str], shrink: bool, explain: bool, quiet: bool,
          max_failures: Optional[int], exitfirst: bool, ignore: tuple, backend: str, ray_address: Optional[str],
          **report_paths: Any) -> None:
    """Play generated scripts of model turns against a tool-use loop and judge what it does.

    Each episode calls run(model, tools, user_input) with a scripted model that answers from a
    script: valid and parallel calls, repeats, calls unrelated to the last result, malformed and
    truncated outputs, unknown tools, finish_reason=length, empty responses, a final answer or a
    runaway that never stops. Every failure is shown as the shortest script that shows it, with a
    command that replays it. Exit status: 0 no failure, 1 failures found, 2 usage or configuration
    error (130 when interrupted before finding anything).
    """
    from fuzzer.harnesses.agent.checks import CHECKS
    from fuzzer.harnesses.agent.job import AgentCampaign, AgentSettings
    from fuzzer.harnesses.agent.policy import load_policy
    from fuzzer.cli.campaign import read_ignore
    from fuzzer.cli.console import Summary, check_output_paths, progress, run_command
    from fuzzer.engine.corpus_writer import CorpusWriter
    from fuzzer.harnesses.parser.harness import target_version

    reports = options.report_paths(report_paths)

    if ":" not in agent:
        raise ConfigError(f"--agent: {agent!r} is not of the form module:callable (e.g. mypkg.agent:run)")
    if formats and shape != "text":
        raise click.BadParameter("applies to --model-shape text only (structured shapes carry calls, not text)",
                                 param_hint="'--format'")
    policy = load_policy(policy_file)
    if explain:
        click.echo(f"policy ({policy.source}):")
        for key, value in policy.to_json().items():
            click.echo(f"  {key} = {value!r}")
        click.echo("verdicts:")
        for name, item in CHECKS.items():
            state = "" if item.enabled(policy) else "   (off under this policy)"
            click.echo(f"  {name:<24}{item.description}{state}")
        return
    from fuzzer.backends import check_backend

    check_backend(backend, ray_address)  # a usage error (or Ray missing) before anything starts
    registry = load_registry(tools_file, budget_s)
    check_output_paths(reports)
    if corpus_dir:
        check_corpus_dir(corpus_dir)
    if budget_s is None and max_examples is None:
        budget_s = DEFAULT_BUDGET_S
    settings = AgentSettings(agent=agent, tools_file=tools_file, shape=shape, formats=tuple(formats) or ("json",),
                             policy=policy, seed=seed, budget_s=budget_s, max_examples=max_examples, timeout=timeout,
                             workers=workers, memory_limit_mb=memory_limit_mb, cwd=os.getcwd(), shrink=shrink,
                             max_failures=1 if exitfirst else max_failures, ignore=read_ignore(ignore),
                             backend=backend, ray_address=ray_address)
    job = AgentCampaign(settings, registry=registry)
    handlers: list = []
    writer = None
    if corpus_dir:
        from corpus.store import CorpusStore

        writer = CorpusWriter(CorpusStore(corpus_dir), target=agent, version=target_version(agent))
        handlers.append(writer)
    handlers += [progress(quiet=quiet), Summary(footer=lambda r: _corpus_footer(writer))]
    run_command(job, handlers, reports=reports)


def _corpus_footer(writer: Any) -> list[str]:
    return writer.summary_lines() if writer is not None else []
