"""`fuzz agent`: a scripted adversarial model against a tool-use loop."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Optional

import click

from fuzzer.cli import job_options, load_registry_or_fail, main, options, translate_errors
from fuzzer.cli.errors import ConfigError, check_corpus_dir, check_writable_file
from fuzzer.events import Event, FindingRecorded, Interrupted, JobFinished, JobStarted, NonFatalError, Progress
from fuzzer.pipeline import EventHandler
from strategies._internal.formats import FORMATS

DEFAULT_BUDGET_S = 60.0
#: Seconds between plain progress lines when stderr is not a terminal (CI logs).
PLAIN_EVERY = 10.0
SHAPES = ("openai", "anthropic", "text")


class AgentConsole(EventHandler):
    """Progress and findings on stderr as they happen; each finding's minimal script and the
    summary on stdout at the end (counts from the result, never recounted here)."""

    def __init__(self, *, quiet: bool = False):
        self.quiet = quiet
        self.live = sys.stderr.isatty()
        self._last_plain = 0.0
        self._dirty = False
        self.label = "agent"

    def _err(self, text: str, *, transient: bool = False) -> None:
        if self.quiet:
            return
        if self.live and transient:
            click.echo("\r\033[2K" + text, nl=False, err=True)
            self._dirty = True
            return
        if self._dirty:
            click.echo("\r\033[2K", nl=False, err=True)
            self._dirty = False
        click.echo(text, err=True)

    def handle_event(self, event: Event) -> None:
        if isinstance(event, JobStarted):
            self.label = event.label
            s = event.settings
            policy = ", ".join(f"{k}={v}" for k, v in s["policy"].items())
            budget = f"{event.budget_s:g} s" if event.budget_s else "no time limit"
            self._err(f"{self.label}: {s['shape']} model, policy ({s['policy_source']}): {policy}; {budget}")
        elif isinstance(event, Progress):
            now = time.monotonic()
            if not self.live and now - self._last_plain < PLAIN_EVERY:
                return
            self._last_plain = now
            rate = event.executions / event.elapsed_s if event.elapsed_s else 0.0
            failures = ", ".join(f"{n} {v}" for v, n in sorted(event.failures.items())) or "no failures"
            self._err(f"{self.label}: {event.executions:,} episodes, {rate:,.0f}/s, {failures} "
                      f"[{event.elapsed_s:.0f}s]", transient=True)
        elif isinstance(event, FindingRecorded) and not event.improved:
            f = event.finding
            self._err(f"{self.label}: found {f.verdict_name} {f.signature.id} ({f.signature.title})")
        elif isinstance(event, NonFatalError):
            self._err(f"{self.label}: warning: {event.message}")
        elif isinstance(event, Interrupted):
            self._err(f"{self.label}: interrupted, finishing the report")
        elif isinstance(event, JobFinished):
            self.shutdown()
            for line in summary_lines(event.result):
                click.echo(line)

    def shutdown(self) -> None:
        if self._dirty:
            click.echo("\r\033[2K", nl=False, err=True)
            self._dirty = False


def summary_lines(result: Any) -> list[str]:
    lines: list[str] = []
    for finding in result.findings:
        lines += [finding.text(), ""]
    lines.append(f"{result.executions:,} episodes in {result.elapsed_s:.1f} s "
                 f"({result.episodes_per_worker_s:,.0f}/s per worker while fuzzing), "
                 f"{result.model_requests:,} model requests, {result.tool_executions:,} tool executions, "
                 f"{result.shrink_executions:,} more to confirm and shrink; stopped: {result.stop_reason}")
    counts = result.by_verdict()
    if counts:
        shown = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        lines.append(f"{len(result.findings)} distinct failure(s): {shown}")
    elif result.problem:
        lines.append(f"nothing tested: {result.problem}")
    else:
        lines.append("no failure: the loop kept every promise of its policy")
    return lines


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
              help="The loop's promises (max_turns, max_tool_calls, duplicates, convergence, "
                   "must_notice_chain_break, errors): a TOML file, its [tool.toolfuzz.agent] table or top-level "
                   "keys. Default: ./pyproject.toml's [tool.toolfuzz.agent], else the defaults (see --explain).")
@job_options.budget
@job_options.max_examples
@options.seed
@options.timeout
@options.workers
@options.memory
@options.report
@job_options.junit
@click.option("--corpus", "corpus_dir", metavar="DIR", type=click.Path(file_okay=False),
              help="Add every finding's minimal script to this corpus (kind 'agent'), for fuzz replay / gate.")
@job_options.shrink
@click.option("--explain", is_flag=True, help="Print the policy in effect and what each verdict means, then exit.")
@job_options.quiet
@translate_errors
def agent(agent: str, tools_file: Optional[str], shape: str, formats: tuple, policy_file: Optional[str],
          budget_s: Optional[float], max_examples: Optional[int], seed: int, timeout: float, workers: int,
          memory_limit_mb: int, report_path: Optional[str], junit_path: Optional[str], corpus_dir: Optional[str],
          shrink: bool, explain: bool, quiet: bool) -> None:
    """Play generated scripts of model turns against a tool-use loop and judge what it does.

    Each episode calls run(model, tools, user_input) with a scripted model that answers from a
    script: valid and parallel calls, repeats, calls unrelated to the last result, malformed and
    truncated outputs, unknown tools, finish_reason=length, empty responses, a final answer or a
    runaway that never stops. Every failure is shown as the shortest script that shows it, with a
    command that replays it. Exit status: 0 no failure, 1 failures found, 2 usage or configuration
    error (130 when interrupted before finding anything).
    """
    from fuzzer.agent.checks import CHECKS
    from fuzzer.agent.job import AgentCampaign, AgentSettings
    from fuzzer.agent.policy import load_policy
    from fuzzer.pipeline import run_job
    from fuzzer.reports import WRITERS

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
    registry = load_registry_or_fail(tools_file)
    for path, option in ((report_path, "--report"), (junit_path, "--junit")):
        if path:
            check_writable_file(path, option)
    if corpus_dir:
        check_corpus_dir(corpus_dir)
    if budget_s is None and max_examples is None:
        budget_s = DEFAULT_BUDGET_S
    settings = AgentSettings(agent=agent, tools_file=tools_file, shape=shape, formats=tuple(formats) or ("json",),
                             policy=policy, seed=seed, budget_s=budget_s, max_examples=max_examples, timeout=timeout,
                             workers=workers, memory_limit_mb=memory_limit_mb, cwd=os.getcwd(), shrink=shrink,
                             shrink_budget_s=min(10.0, max(2.0, (budget_s or 40.0) / 4)))
    job = AgentCampaign(settings, registry=registry)
    handlers: list = [AgentConsole(quiet=quiet)]
    writer = None
    if corpus_dir:
        from fuzzer.agent.corpus import CorpusWriter

        writer = CorpusWriter(corpus_dir, target=agent, cwd=os.getcwd())
        handlers.append(writer)
    if report_path:
        handlers.append(WRITERS["report"](report_path))
    if junit_path:
        handlers.append(WRITERS["junit"](junit_path))
    final = run_job(job, handlers)
    if writer is not None:
        click.echo(writer.summary())
    for path, option in ((report_path, "report"), (junit_path, "junit")):
        if path:
            click.echo(f"{option}: {path}")
    click.get_current_context().exit(final.exit_code)
