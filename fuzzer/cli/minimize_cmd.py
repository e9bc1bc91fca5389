"""`fuzz minimize` and `fuzz reproduce`: one input at a time."""

from __future__ import annotations

import os
from contextlib import closing
from typing import Any, Optional

import click

from fuzzer.cli import main, options, translate_errors
from fuzzer.cli.errors import ConfigError, check_writable_file
from fuzzer.engine.text import preview


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
    from fuzzer.cli import load_registry
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

    def lines(result: Any) -> list[str]:
        f = result.finding
        if f is None:
            return [f"{sample_path}: {result.problem}"]  # the one line (not an error: an answer)
        note = f" ({f.shrink_note})" if f.shrink_note else ""
        out = [f"signature: {f.signature.id} ({f.title})",
               f"size: {len(f.sample.text):,} -> {len(f.best.text):,} characters{note}",
               f"{'minimized' if f.is_minimized else 'smallest found'}: {preview(f.best.text, 2000)}",
               f"reproduce: {f.reproduce}"]
        if output:
            with open(output, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
                fh.write(f.best.text)
            out.append(f"written: {output}")
        return out

    pool = WorkerPool(target_spec(target, reject_on, timeout, memory_limit_mb))
    with closing(pool):
        job = MinimizeJob(sample, pool, registry, level=level, target=target, budget_s=budget_s,
                          reject_on=tuple(reject_on), reproduce_dir=reproduce_dir(None))
        run_command(job, [ReproducerWriter(), progress(quiet=True), Summary(lines, problem_line=False)])


@main.command()
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False, exists=True))
@click.option("--target", "target", metavar="M:A", type=options.TargetRef(), default=None,
              help="The target to run (default: the one the file names).")
@click.option("--timeout", "timeout", type=options.Seconds(min=0.01), default=None, metavar="SECONDS",
              help="For a hang: seconds without a result before it counts as still hanging (default: the "
                   "campaign's --timeout, which a hang's reproducer file records; 2 for a corpus entry).")
def reproduce(path: str, target: Optional[str], timeout: Optional[float]) -> None:
    """Run one finding's input on its target in this process and show what it does.

    FILE is a reproducer file (written for long, history-dependent or slow findings; it names the
    target and any earlier inputs that must run first), a corpus entry, or a raw model output
    (then --target is required). Prints the calls returned, or the full traceback.

    Exit status 1 when the input still fails: it raises, or (for a corpus entry whose calls are
    known) the target rejects a valid output or returns other calls than those written. Without
    that truth (a raw file, a reproducer), only raising counts; `fuzz replay` judges fully.
    A slow finding (its reproducer file or corpus entry) is timed at 1x, 2x, 4x and 8x its
    repetitions instead, and fails while the time still grows super-linearly. A hang's reproducer
    file runs the input in a worker stopped after the campaign's timeout, and fails while it hangs.
    """
    import json
    import traceback

    from fuzzer.inputs import InputError, read_sample_file, read_text_exactly
    from fuzzer.harnesses.parser.reproduce import Expected, expected_of
    from fuzzer.engine.calls import normalize_calls
    from fuzzer.engine.references import load_reject_types, load_target
    from strategies.errors import ToolfuzzError

    history: list = []
    reject: list = []
    expected: Optional[Expected] = None  # what the input must give once fixed, when the truth is known
    growth: Optional[dict] = None  # a slow finding's repetitions: timed, not run once
    home = ""  # the directory the finding's run found its target in
    hang_timeout = None  # a hang's: run in a worker stopped after that many seconds
    explicit_target = target is not None
    entry = None
    try:
        text = read_text_exactly(path)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            data = None
        reproducer = isinstance(data, dict) and "toolfuzz_reproducer" in data
        if reproducer:
            text, history = str(data.get("input", "")), list(data.get("history") or [])
            target = target or data.get("target")
            reject = list(data.get("reject_on") or [])
            home = str(data.get("target_home") or "") if not explicit_target else ""
            growth = data.get("growth") if isinstance(data.get("growth"), dict) else None
            hang_timeout = data.get("hang_timeout") if isinstance(data.get("hang_timeout"), (int, float)) else None
            expected = Expected.from_json(data.get("expected"))
        else:
            sample, entry = read_sample_file(path)
            text = sample.text
            if entry is not None:
                target = target or entry.target
                history = list((entry.scenario or {}).get("history") or [])
                if entry.truth_known:
                    expected = expected_of(None, sample, entry.level)  # whatever verdict it was stored with
        if not target and entry is None and not reproducer:
            # neither a reproducer file nor a corpus entry: a raw model output, which names nothing
            raise ConfigError(f"{path}: not a toolfuzz reproducer file or corpus entry; to run it as a raw "
                              "model output, give --target M:A")
        if not target:
            raise ConfigError(f"{path}: names no target; give --target M:A")
        try:
            function = load_target(target)
            home = ""
        except ToolfuzzError:
            if not home:
                raise
            function = load_target(target, cwd=home)  # run elsewhere: where the finding's run found it
        reject_types = load_reject_types(reject, cwd=home or None)
    except (ToolfuzzError, InputError) as exc:
        raise ConfigError(str(exc)) from None
    if entry is not None and entry.verdict == "slow":
        growth = (entry.scenario or {}).get("growth")
    if entry is not None and entry.verdict == "hang":
        hang_timeout = 2.0  # what replay's --timeout defaults to
    if hang_timeout and timeout:
        hang_timeout = timeout
    if growth:
        _reproduce_slow(target, function, growth)
        return
    if hang_timeout and _still_hangs(target, home, reject, history, text, float(hang_timeout)):
        click.get_current_context().exit(1)
    for earlier in history:
        try:
            function(earlier)
        except Exception:  # noqa: BLE001 - earlier inputs only set up the state
            pass
    click.echo(f"target: {target}" + (f" (after {len(history)} earlier input(s))" if history else ""))
    click.echo(f"input:  {preview(text, 400)}")
    try:
        value = function(text)
    except reject_types as exc:
        click.echo(f"rejected: {type(exc).__name__}: {exc}")
        _still_expected(expected, True)
        return
    except BaseException:  # noqa: BLE001 - showing it is the point
        click.echo("raised:")
        click.echo(traceback.format_exc().rstrip())
        click.get_current_context().exit(1)
    try:
        calls = normalize_calls(value)
    except Exception as exc:  # noqa: BLE001
        click.echo(f"returned something that is not a call: {exc} ({value!r:.300})")
        click.get_current_context().exit(1)
    click.echo(f"returned: {json.dumps(calls, ensure_ascii=False)}")
    _still_expected(expected, False, calls)


def _still_expected(expected: Any, rejected: bool, calls: Optional[list] = None) -> None:
    """Exit 1, saying what was expected, while the answer is not what the input denotes (the
    same rule as a finding's inline reproduce command: :class:`fuzzer.harnesses.parser.reproduce.Expected`)."""
    why = expected.still_fails(rejected, calls) if expected is not None else None
    if why is None:
        return
    click.echo(f"expected: {expected.describe()} (still fails: {why})")
    click.get_current_context().exit(1)


def _still_hangs(target: str, home: str, reject: list, history: list, text: str, timeout: float) -> bool:
    """A hang's input, run (after its history) in a worker that is stopped after ``timeout``
    seconds, as the campaign ran it: True, with where it was stuck, while it still hangs;
    otherwise the caller runs it here and shows what it does now."""
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation import WorkerPool

    spec = TargetSpec(target=target, reject_on=tuple(reject), cwd=home or os.getcwd(), timeout=timeout)
    with closing(WorkerPool(spec)) as pool:
        outcome = pool.run(list(history) + [text], fresh=True)[-1]
    if outcome is None or outcome.kind != "hung":
        click.echo(f"finished within the {timeout:g} s timeout: it does not hang any more")
        return False
    click.echo(f"target: {target}")
    click.echo(f"input:  {preview(text, 400)}")
    click.echo(f"still hangs: no result within {timeout:g} s")
    for path, function in list(outcome.frames or ())[-6:]:
        click.echo(f"  stuck in {os.path.basename(str(path))}:{function}")
    return True


def _reproduce_slow(target: str, function: Any, growth: dict) -> None:
    """A slow entry: time its fragment's repetitions in this process, as replay judges them."""
    import time
    from types import SimpleNamespace

    from fuzzer.harnesses.parser.explore import SlowProbe, remeasure

    def timed(texts: list) -> list:
        out = []
        for text in texts:
            started = time.perf_counter()
            try:
                function(text)
            except Exception:  # noqa: BLE001 - how long it takes is the question, not how it ends
                pass
            out.append(SimpleNamespace(kind="returned", elapsed=time.perf_counter() - started))
        return out

    measured, slow = remeasure(SlowProbe(seed=0, run=timed, timeout=float("inf")).measure, growth)
    click.echo(f"target: {target}")
    click.echo(f"input:  {preview(measured.text(measured.counts[0]), 400)}")
    click.echo(measured.describe())
    if slow:
        click.echo("still slow: the time grows super-linearly with the repetitions")
        click.get_current_context().exit(1)
    click.echo("not slow any more: the time grows about linearly")
