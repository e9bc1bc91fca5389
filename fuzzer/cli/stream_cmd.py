"""`fuzz stream`: incremental parsers and chunk accumulators under every way a stream can be split."""

from __future__ import annotations

import os
import time
from typing import Any, Optional

import click

from fuzzer.cli.app import load_registry, main, translate_errors
from fuzzer.cli import options
from fuzzer.cli.errors import check_corpus_dir

DEFAULT_BUDGET_S = 60.0


def summary_lines(result: Any) -> list:
    lines: list = []
    if result.unsupported:
        lines.append("not streamed by the parser (skipped): " + ", ".join(sorted(result.unsupported)))
    for r in result.corpus_failing:
        lines.append(f"corpus entry {r.entry.signature} fails again ({r.status}): {r.entry.title}")
    for number, finding in enumerate(result.findings, 1):
        lines += [f"[{number}] {finding.text()}", ""]
    lines.append(f"{result.executions:,} streams of {result.outputs:,} outputs in {result.elapsed_s:.1f} s "
                 f"({result.execs_per_s:,.0f}/s), {len(result.findings)} distinct failure(s) "
                 f"[stopped: {result.stop_reason}]")
    backend = result.backend or {}
    if backend.get("name", "local") != "local":
        from fuzzer.backends import backend_line

        lines.append(backend_line(backend))
    if result.unconfirmed:
        lines.append(f"{result.unconfirmed} finding(s) not confirmed or minimized: the run ended first")
    if result.problem:
        lines.append(f"nothing tested: {result.problem}")
    elif not result.findings:
        lines.append("no failure" if str(result.stop_reason) != "interrupted" else
                     f"no failure in the {result.executions:,} streams run before the interrupt")
    return lines


@main.command("stream")
@click.option("--parser", "parser", metavar="M:A", type=options.TargetRef(), default=None,
              help="The incremental parser under test: a factory called once per stream, as M:A(tools) or M:A(), "
                   "returning an object with feed(delta) and finish(), each returning None, an event or a list "
                   "(OpenAI-style deltas, SGLang-style results, or toolfuzz's typed events).")
@click.option("--parser-api", "parser_api", type=click.Choice(["events", "vllm", "sglang"]), default="events",
              show_default=True, help="vllm: the factory makes an object with extract_tool_calls_streaming(...); "
                                      "sglang: one with parse_streaming_increment(new_text, tools).")
@click.option("--consumer", "consumer", metavar="M:A", type=options.TargetRef(), default=None,
              help="The chunk accumulator under test: M:A(chunks) -> the calls it assembled.")
@click.option("--consumer-shape", "shape", type=click.Choice(["openai", "anthropic", "sse"]), default="openai",
              show_default=True, help="What the accumulator is given: openai ChatCompletionChunk objects, "
                                      "anthropic stream events, or the raw bytes of an SSE stream.")
@click.option("--diff", "diff_old", metavar="M:A", type=options.TargetRef(), default=None,
              help="Compare instead of fuzzing: stream the same outputs under the same splits (the --corpus "
                   "entries first) into this older parser (or accumulator) and the one --parser (--consumer) "
                   "names, and classify each stream: same, fixed, regression, changed. git:REF:M:A loads it from "
                   "a temporary worktree of REF. Exit 1 on a regression.")
@click.option("--tool", "tool_names", multiple=True, metavar="NAME",
              help="Tools whose calls are generated (repeatable). Default: every tool.")
@options.tools_file
@options.formats
@options.run_limits(None, "Seconds to run, shrinking included (a hard limit). Default: 60, or no time limit with "
                          "--max-examples (which counts streams).")
@options.max_failures
@options.exitfirst
@options.ignore
@options.reports
@options.optional_corpus("Replay this corpus's stream entries first, and add every finding's minimal stream to it "
                         "(kind 'stream'), for fuzz replay / gate (with --diff: stream its entries into both first).")
@options.shrink("Shrink each failure: the output (keeping its truth), then the split (fewest cuts, earliest).")
@options.backend_options
@options.quiet
@translate_errors
def stream(parser: Optional[str], parser_api: str, consumer: Optional[str], shape: str, diff_old: Optional[str],
           tool_names: tuple, tools_file: Optional[str], formats: tuple, budget_s: Optional[float],
           max_examples: Optional[int], seed: int, timeout: float, workers: int, memory_limit_mb: int,
           max_failures: Optional[int], exitfirst: bool, ignore: tuple, corpus_dir: Optional[str], shrink: bool,
           backend: str, ray_address: Optional[str], quiet: bool, **report_paths: Any) -> None:
    """Stream generated model outputs into an incremental parser under every way a stream can be
    split (or chunk streams into an accumulator) and judge what comes out.

    Each output is streamed whole, one character per delta, and under drawn splits (inside and
    around every marker, at structure/value boundaries, random groupings of 1-4 characters).
    Exit status: 0 no failure, 1 failures found, 2 usage or configuration error (130 when
    interrupted before finding anything).
    """
    from fuzzer.cli.campaign import read_ignore
    from fuzzer.cli.console import Summary, check_output_paths, progress, run_command
    from fuzzer.engine.corpus_writer import CorpusWriter
    from fuzzer.harnesses.parser.harness import target_version
    from fuzzer.harnesses.stream.job import StreamCampaign, StreamSettings
    from fuzzer.harnesses.stream.worker import Settings

    started = time.monotonic()
    if bool(parser) == bool(consumer):
        raise click.UsageError("give one of --parser M:A (an incremental parser) or --consumer M:A (a chunk accumulator)")
    if consumer and formats:
        raise click.BadParameter("applies to --parser only (an accumulator is given chunks, not text)",
                                 param_hint="'--format'")
    if diff_old and backend != "local":
        raise click.BadParameter(f"{backend} is not used with --diff (the diff streams into both versions on this "
                                 "machine's workers); drop --backend", param_hint="'--backend'")
    from fuzzer.backends import check_backend

    check_backend(backend, ray_address)  # a usage error (or Ray missing) before anything starts
    reports = options.report_paths(report_paths)
    registry = load_registry(tools_file, budget_s)
    for name in tool_names:
        registry[name]  # UnknownName (a usage error) with close matches
    check_output_paths(reports)
    if corpus_dir:
        check_corpus_dir(corpus_dir)
    if budget_s is None and max_examples is None:
        budget_s = DEFAULT_BUDGET_S
    cwd = os.getcwd()
    tools_path = os.path.abspath(tools_file) if tools_file and os.path.exists(tools_file) else tools_file
    target = Settings(parser=parser, api=parser_api, consumer=consumer, shape=shape, tools=tools_path, cwd=cwd)
    settings = StreamSettings(target=target, tools=tuple(tool_names), formats=_format_names(formats), seed=seed,
                              budget_s=budget_s, max_examples=max_examples, timeout=timeout, workers=workers,
                              memory_limit_mb=memory_limit_mb, shrink=shrink,
                              max_failures=1 if exitfirst else max_failures, ignore=read_ignore(ignore),
                              backend=backend, ray_address=ray_address)
    store = None
    if corpus_dir:
        from corpus.store import CorpusStore

        store = CorpusStore(corpus_dir)
    if diff_old:
        from fuzzer.harnesses.stream.diff import StreamDiffJob, diff_lines

        job: Any = StreamDiffJob(settings, old=diff_old, registry=registry, corpus=store)
        run_command(job, [progress(quiet=quiet), Summary(diff_lines)], reports=reports)
        return
    job = StreamCampaign(settings, registry=registry, corpus=store, started_at=started)
    handlers: list = []
    writer = None
    if store is not None:
        reference = parser or consumer
        writer = CorpusWriter(store, target=reference, version=target_version(reference))
        handlers.append(writer)
    handlers += [progress(quiet=quiet), Summary(summary_lines, footer=lambda r: _corpus_footer(writer))]
    run_command(job, handlers, reports=reports)


def _format_names(selectors: tuple) -> tuple:
    """The formats ``--format`` names (a family: each of its versions)."""
    from strategies._internal.formats.versions import resolve

    names: list = []
    for selector in selectors:
        names += [n for n in resolve(selector)[0] if n not in names]
    return tuple(names)


def _corpus_footer(writer: Any) -> list:
    """What the run did to the corpus: the writer's own lines, so a finding that shows the bug of an
    entry marked fixed says REGRESSION here as after every other campaign (not just "kept")."""
    return writer.summary_lines() if writer is not None else []
