"""The corpus commands: `fuzz minimize`, `fuzz replay`, `fuzz gate`, `fuzz corpus ...`."""

from __future__ import annotations

import json
import os
import shlex
from typing import Any, Optional

import click

from fuzzer.cli import load_registry_or_fail, main, options, translate_errors
from fuzzer.cli.campaign import default_target, make_spec, run_campaigns
from fuzzer.cli.errors import ConfigError, check_corpus_dir, check_writable_file
from fuzzer.report import preview, reproduce_snippet


def _open_store(directory: str, *, must_exist: bool) -> Any:
    from corpus.store import CorpusStore

    if must_exist and not os.path.isdir(directory):
        raise ConfigError(f"--corpus: {directory} is not a directory")
    return CorpusStore(directory)


#: Format name of a captured output whose expected calls were given (its envelope is unknown).
CAPTURED_FORMAT = "captured"


def read_text_exactly(path: str) -> str:
    """A captured model output, byte for byte: no newline translation (``\r\n`` stays), and bytes
    that are not UTF-8 kept as surrogate escapes rather than lost."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as fh:
            return fh.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _read_sample_file(path: str) -> tuple[Any, Optional[Any]]:
    """A SAMPLE argument: a corpus entry (JSON with format_version) or a text file of raw model output.
    Returns (sample, entry or None)."""
    from corpus.store import CorpusFormatError, Entry
    from fuzzer.corpus_link import sample_from_entry
    from fuzzer.oracle import RAW_FORMAT
    from strategies._internal.sample import Sample

    text = read_text_exactly(path)
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and "format_version" in data:
        try:
            entry = Entry.from_json(data)
        except CorpusFormatError as exc:
            raise ConfigError(f"{path}: not a valid corpus entry: {exc}") from None
        return sample_from_entry(entry), entry
    return Sample(text=text, format=RAW_FORMAT, anomaly_class=None, operator=None, calls=None,
                  truth_known=False), None


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
@click.option("--budget", "budget_s", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds to spend shrinking at most.")
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
    from fuzzer.isolation import WorkerPool
    from fuzzer.oracle import Oracle
    from fuzzer.shrink import FindingShrinker

    sample, entry = _read_sample_file(sample_path)
    if output:
        check_writable_file(output, "--output")
    registry = load_registry_or_fail(tools_file)
    level = level or (entry.level if entry is not None else "parse")
    if tool:
        registry[tool]
    oracle = Oracle(registry, level)
    spec = make_spec(target, reject_on, timeout, memory_limit_mb)
    with WorkerPool(spec) as pool:
        outcome = pool.run([sample.text])[0]
        judgment = oracle.judge(sample, outcome)
        if not judgment.failed:
            click.echo(f"{sample_path}: does not fail on {target} (outcome: {outcome.kind})")
            click.get_current_context().exit(1)
        signature = oracle.signature(sample, judgment, outcome)
        click.echo(f"signature: {signature.id} ({signature.title})")
        shrinker = FindingShrinker(pool.run, oracle, registry)
        best, best_outcome, note = shrinker.shrink(sample, outcome, judgment.verdict, signature.id,
                                                   budget_s=budget_s, max_tests=100_000)
    click.echo(f"size: {len(sample.text):,} -> {len(best.text):,} characters" + (f" ({note})" if note else ""))
    click.echo(f"minimized: {preview(best.text, 2000)}")
    click.echo(f"reproduce: {reproduce_snippet(target, best.text)}")
    if output:
        with open(output, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
            fh.write(best.text)
        click.echo(f"written: {output}")


def _replay_lines(results: list, version: Optional[str] = None) -> list[str]:
    """One line per entry; entries found with another version of the target say so, which tells a
    behaviour change of the new parser from an old finding."""
    lines = []
    for r in results:
        mark = {"pass": "pass", "fail": "FAIL", "changed": "CHANGED", "regression": "REGRESSION"}[r.status]
        now = f" now {r.signature}" if r.status == "changed" else ""
        found = r.entry.target_version
        older = f" (found with {found}; target is {version})" if found and version and found != version else ""
        lines.append(f"{mark:<10} {r.entry.signature:<28} {r.entry.status:<6} {os.path.basename(r.path)}{now}{older}")
    return lines


@main.command()
@options.replay_options
@click.option("--update", is_flag=True, help="Mark open entries that now pass as fixed (and fixed ones that "
                                             "fail again as open).")
@translate_errors
def replay(corpus_dir: str, target: str, reject_on: tuple, tools_file: Optional[str], level: str,
           timeout: float, memory_limit_mb: int, update: bool) -> None:
    """Re-run every corpus entry on the target; print pass/fail per entry and a summary.

    Exit 1 when any entry still fails (or fails differently), 0 otherwise.
    """
    from fuzzer.corpus_link import replay as replay_corpus
    from fuzzer.isolation import WorkerPool

    store = _open_store(corpus_dir, must_exist=True)
    registry = load_registry_or_fail(tools_file)
    from fuzzer.corpus_link import target_version

    with WorkerPool(make_spec(target, reject_on, timeout, memory_limit_mb)) as pool:
        results = replay_corpus(store, run=pool.run, registry=registry, level=level)
    for line in _replay_lines(results, target_version(target)):
        click.echo(line)
    for problem in store.problems:
        click.echo(f"skipped    {problem}", err=True)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
        if update and r.status == "pass" and r.entry.status == "open":
            store.mark_fixed(r.entry.signature)
        elif update and r.status == "regression":
            store.mark_open(r.entry.signature)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no entries"
    click.echo(f"{len(results)} entries: {summary}" + (" (statuses updated)" if update else ""))
    click.get_current_context().exit(1 if any(r.status != "pass" for r in results) else 0)


def _junit(path: str, cases: list[tuple[str, str, Optional[str]]]) -> None:
    """Write JUnit XML: one testcase per (classname, name, failure message or None)."""
    from xml.sax.saxutils import escape, quoteattr

    def xml_safe(text: str) -> str:
        # XML 1.0 forbids most control characters and lone surrogates: show them escaped.
        return "".join(ch if (ch in "\t\n\r" or " " <= ch) and not "\ud800" <= ch <= "\udfff"
                       else f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}" for ch in text)

    cases = [(xml_safe(c), xml_safe(n), xml_safe(f) if f else None) for c, n, f in cases]
    failures = sum(1 for _, _, f in cases if f)
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             f'<testsuite name="toolfuzz gate" tests="{len(cases)}" failures="{failures}">']
    for classname, name, failure in cases:
        lines.append(f"  <testcase classname={quoteattr(classname)} name={quoteattr(name)}>")
        if failure:
            lines.append(f"    <failure message={quoteattr(failure.splitlines()[0][:200])}>{escape(failure)}</failure>")
        lines.append("  </testcase>")
    lines.append("</testsuite>")
    from fuzzer.report import write_text_atomic

    write_text_atomic(path, "\n".join(lines) + "\n")


@main.command()
@click.option("--corpus", "corpus_dir", required=True, metavar="DIR", help="The corpus directory (kept in git).")
@options.target
@options.reject_on
@options.tools_file
@click.option("--tool", "tool_names", multiple=True, metavar="NAME",
              help="Tools for the short campaign (repeatable). Default: every tool.")
@options.level
@options.formats
@click.option("--budget", "budget_s", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Seconds for the short campaign after the replay.")
@click.option("--max-examples", type=click.IntRange(min=1), default=None,
              help="Executions for the short campaign; with --seed the gate is deterministic.")
@options.seed
@options.workers
@options.timeout
@options.memory
@options.report
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), metavar="FILE.xml",
              help="Write JUnit XML (one test case per corpus entry and per new failure).")
@translate_errors
def gate(corpus_dir: str, target: str, reject_on: tuple, tools_file: Optional[str], tool_names: tuple,
         level: str, formats: tuple, budget_s: float, max_examples: Optional[int], seed: int, workers: int,
         timeout: float, memory_limit_mb: int, report_path: Optional[str], junit_path: Optional[str]) -> None:
    """CI gate: replay the corpus, then run a short campaign.

    Exit 1 if a fixed entry fails again or a failure appears whose signature is not in the corpus;
    known open failures do not block. Exit 0 otherwise.
    """
    from fuzzer.corpus_link import replay as replay_corpus
    from fuzzer.engine import CampaignSettings
    from fuzzer.isolation import WorkerPool
    from fuzzer.report import campaign_report, write_json_atomic

    for path, option in ((report_path, "--report"), (junit_path, "--junit")):
        if path:
            check_writable_file(path, option)
    store = _open_store(corpus_dir, must_exist=False)
    registry = load_registry_or_fail(tools_file)
    names = list(tool_names) or registry.names()
    for name in names:
        registry[name]
    target = default_target(target, level, tools_file)
    spec = make_spec(target, reject_on, timeout, memory_limit_mb)
    known = {e.signature: e for _, e in store.entries()}

    def settings_for(name: str) -> CampaignSettings:
        return CampaignSettings(tool=name, level=level, formats=list(formats) or None, seed=seed,
                                budget_s=None if max_examples else budget_s / len(names),
                                max_examples=-(-max_examples // len(names)) if max_examples else None,
                                shrink_budget_s=5.0)

    with WorkerPool(spec, workers=workers) as pool:
        replayed = replay_corpus(store, run=pool.run, registry=registry, level=level)
        result = run_campaigns(registry=registry, tool_names=names, pool=pool, settings_for=settings_for,
                               target=target, quiet=True)

    for problem in store.problems:
        click.echo(f"skipped {problem}", err=True)
    # A fixed entry that fails again, under any signature, is a regression.
    regressions = [r for r in replayed if r.entry.status == "fixed" and r.status != "pass"]
    # A corpus entry that now fails with a signature the corpus does not hold is a new bug too.
    changed_new = [r for r in replayed if r.status == "changed" and r.signature not in known
                   and r not in regressions]
    new = [f for f in result.findings if f.signature.id not in known]
    fuzz_regressions = [f for f in result.findings
                        if f.signature.id in known and known[f.signature.id].status == "fixed"
                        and f.signature.id not in {r.entry.signature for r in regressions}]
    open_known = sum(1 for r in replayed if r.status in ("fail", "changed"))
    click.echo(f"replayed {len(replayed)} corpus entries: {sum(r.status == 'pass' for r in replayed)} pass, "
               f"{open_known} known failures, {len(regressions)} regressions")
    click.echo(f"campaign: {result.executions:,} executions, {len(result.findings)} signatures, {len(new)} new")
    for r in regressions:
        click.echo(f"REGRESSION {r.entry.signature} ({r.entry.title}): {preview(r.entry.text)}")
    for f in fuzz_regressions:
        click.echo(f"REGRESSION {f.signature.id} ({f.signature.title}): {preview(f.best.text)}")
    for r in changed_new:
        click.echo(f"NEW {r.signature} (corpus entry {os.path.basename(r.path)} now fails differently): "
                   f"{preview(r.entry.text)}")
    for f in new:
        click.echo(f"NEW {f.signature.id} ({f.signature.title})")
        click.echo(f"    minimized: {preview(f.best.text)}")
        click.echo(f"    reproduce: {reproduce_snippet(target, f.best.text)}")
    blocked = bool(regressions or fuzz_regressions or new or changed_new)
    if blocked:
        cmd = ["fuzz", "gate", "--corpus", corpus_dir, "--target", target, "--level", level, "--seed", str(seed),
               "--max-examples", str(max_examples or result.executions), "--timeout", f"{timeout:g}"]
        for name in tool_names:
            cmd += ["--tool", name]
        for name in formats:
            cmd += ["--format", name]
        if tools_file:
            cmd += ["--tools", tools_file]
        for ref in reject_on:
            cmd += ["--reject-on", ref]
        click.echo("reproduce locally: " + " ".join(shlex.quote(c) for c in cmd))
        click.echo("add the new failures to the corpus with: fuzz campaign --corpus " + shlex.quote(corpus_dir)
                   + " ... (or fix them)")
    if junit_path:
        cases: list = []
        for r in replayed:
            failure = (f"regression: {r.entry.title}\n{r.entry.text}" if r.status == "regression" else
                       f"new: now fails as {r.signature}\n{r.entry.text}" if r in changed_new else None)
            cases.append(("corpus", f"{r.entry.signature} ({r.entry.status})", failure))
        for f in new + fuzz_regressions:
            kind = "new" if f in new else "regression"
            cases.append(("campaign", f.signature.id, f"{kind}: {f.signature.title}\n{f.best.text}"))
        if not cases:
            cases.append(("campaign", "no failures", None))
        _junit(junit_path, cases)
    if report_path:
        write_json_atomic(report_path, campaign_report(result, target=target, extra={
            "gate": {"blocked": blocked, "new": [f.signature.id for f in new],
                     "regressions": [r.entry.signature for r in regressions] + [f.signature.id for f in fuzz_regressions]}}))
    click.echo("gate: " + ("BLOCKED" if blocked else "passed"))
    click.get_current_context().exit(1 if blocked else 0)


@main.group()
def corpus() -> None:
    """Inspect and maintain a corpus directory."""


@corpus.command("list")
@options.corpus_dir
@translate_errors
def corpus_list(corpus_dir: str) -> None:
    """One line per entry: signature, status, verdict, size, title."""
    store = _open_store(corpus_dir, must_exist=True)
    entries = store.entries()
    for path, e in entries:
        click.echo(f"{e.signature:<28} {e.status:<6} {len(e.text):>8,} chars  {e.title}  [{os.path.basename(path)}]")
    for problem in store.problems:
        click.echo(f"skipped {problem}", err=True)
    click.echo(f"{len(entries)} entries")


@corpus.command("show")
@options.corpus_dir
@click.argument("signature")
@translate_errors
def corpus_show(corpus_dir: str, signature: str) -> None:
    """Print one entry (by signature, or a unique prefix of it, or its file name) as JSON."""
    store = _open_store(corpus_dir, must_exist=True)
    matches = [(p, e) for p, e in store.entries()
               if e.signature.startswith(signature) or os.path.basename(p).startswith(signature)]
    if len(matches) != 1:
        raise ConfigError(f"{signature!r} matches {len(matches)} entries in {corpus_dir}")
    click.echo(matches[0][1].dumps(), nl=False)


@corpus.command("add")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@options.replay_options
@click.option("--shrink/--no-shrink", default=True, show_default=True, help="Minimize each failing input first.")
@translate_errors
def corpus_add(files: tuple, corpus_dir: str, target: str, reject_on: tuple, tools_file: Optional[str],
               level: str, timeout: float, memory_limit_mb: int, shrink: bool) -> None:
    """Run captured model outputs on the target and store those that fail.

    Each FILE is a text file (one raw model output) or a .jsonl file of {"text": ...} objects, where
    "calls" (the expected calls) and "format" may be given so corruption can be judged too.
    """
    from fuzzer.corpus_link import entry_from_finding, target_version
    from fuzzer.findings import Finding
    from fuzzer.isolation import WorkerPool
    from fuzzer.oracle import Oracle, RAW_FORMAT
    from fuzzer.shrink import FindingShrinker
    from strategies._internal.sample import Sample

    samples: list[Sample] = []
    for path in files:
        content = read_text_exactly(path)
        if path.endswith((".jsonl", ".ndjson")):
            for number, line in enumerate(content.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except ValueError as exc:
                    raise ConfigError(f"{path}:{number}: not JSON ({exc})") from None
                if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                    raise ConfigError(f"{path}:{number}: expected an object with a string field 'text'")
                calls = item.get("calls")
                if "calls" in item and not (calls is None or isinstance(calls, list)):
                    raise ConfigError(f"{path}:{number}: 'calls' must be a list of calls or null")
                # With stated calls the truth is known: judge everything, whatever the format.
                fmt = item.get("format") or (CAPTURED_FORMAT if "calls" in item else RAW_FORMAT)
                samples.append(Sample(text=item["text"], format=fmt,
                                      anomaly_class=item.get("anomaly_class"), operator=item.get("operator"),
                                      calls=calls, tool=item.get("tool", ""), truth_known="calls" in item))
        else:
            samples.append(Sample(text=content, format=RAW_FORMAT, anomaly_class=None, operator=None,
                                  calls=None, truth_known=False))
    check_corpus_dir(corpus_dir)
    store = _open_store(corpus_dir, must_exist=False)
    registry = load_registry_or_fail(tools_file)
    oracle = Oracle(registry, level)
    version = target_version(target)
    counts: dict[str, int] = {}
    with WorkerPool(make_spec(target, reject_on, timeout, memory_limit_mb)) as pool:
        outcomes = pool.run([s.text for s in samples])
        shrinker = FindingShrinker(pool.run, oracle, registry)
        for sample, outcome in zip(samples, outcomes):
            judgment = oracle.judge(sample, outcome)
            if not judgment.failed:
                counts["passed"] = counts.get("passed", 0) + 1
                continue
            signature = oracle.signature(sample, judgment, outcome)
            finding = Finding(signature=signature, verdict=judgment.verdict, reason=judgment.reason,
                              sample=sample, outcome=outcome)
            if shrink:
                finding.minimized, finding.minimized_outcome, finding.shrink_note = shrinker.shrink(
                    sample, outcome, judgment.verdict, signature.id, budget_s=20.0)
            what = store.put(entry_from_finding(finding, target=target, level=level, version=version))
            counts[what] = counts.get(what, 0) + 1
            click.echo(f"{what:<9} {signature.id} ({signature.title})")
    for problem in store.problems:
        click.echo(f"skipped {problem}", err=True)
    click.echo(f"{len(samples)} inputs: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))


@corpus.command("cmin")
@options.corpus_dir
@click.option("--merge", "merge_dirs", multiple=True, metavar="DIR",
              help="Another corpus directory to merge into this one (repeatable).")
@click.option("--target", "target", metavar="M:A", default=None,
              help="Also replay every entry on this target and drop entries whose failure has become a "
                   "duplicate: of the entries that now fail with the same signature, keep the smallest.")
@options.reject_on
@options.tools_file
@options.timeout
@options.memory
@translate_errors
def corpus_cmin(corpus_dir: str, merge_dirs: tuple, target: Optional[str], reject_on: tuple,
                tools_file: Optional[str], timeout: float, memory_limit_mb: int) -> None:
    """Keep one entry per signature (the smallest), merging other corpora in first.

    Entries that pass on --target are kept: they are the regression tests of fixed bugs.
    """
    store = _open_store(corpus_dir, must_exist=not merge_dirs)
    for other_dir in merge_dirs:
        other = _open_store(other_dir, must_exist=True)
        counts = store.merge(other)
        click.echo(f"merged {other_dir}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
        for problem in other.problems:
            click.echo(f"skipped {problem}", err=True)
    before = len(store.entries())
    by_signature: dict[str, list] = {}
    for path, entry in store.entries():
        by_signature.setdefault(entry.signature, []).append((entry.key, path, entry))
    removed = 0
    for signature, items in by_signature.items():
        items.sort(key=lambda item: (item[0], item[1]))
        if len(items) > 1:
            store.put(items[0][2])  # keeps the smallest and drops the others
            removed += len(items) - 1
    if target:
        from fuzzer.corpus_link import replay as replay_corpus
        from fuzzer.isolation import WorkerPool

        registry = load_registry_or_fail(tools_file)
        with WorkerPool(make_spec(target, reject_on, timeout, memory_limit_mb)) as pool:
            results = replay_corpus(store, run=pool.run, registry=registry, level="parse")
        groups: dict[str, list] = {}
        for r in results:
            if r.signature is not None:
                groups.setdefault(r.signature, []).append(r)
        for signature, group in sorted(groups.items()):
            # Prefer the entry stored under the signature it shows now, then the smallest.
            group.sort(key=lambda r: (r.entry.signature != signature, r.entry.key, r.path))
            for r in group[1:]:
                store.remove(r.entry.signature)
                removed += 1
                click.echo(f"dropped {r.entry.signature} ({os.path.basename(r.path)}): now fails as {signature}, "
                           f"like {group[0].entry.signature}")
    for problem in store.problems:
        click.echo(f"skipped {problem}", err=True)
    click.echo(f"{before} entries, {removed} duplicates removed, {len(store.entries())} left")
