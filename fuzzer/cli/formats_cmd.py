"""`fuzz formats` (every family, version and layout, with an example each) and `fuzz formats detect FILE`
(which of them real outputs are in, and the ``--format`` options to fuzz them with).

Detection itself lives in ``strategies`` (it knows the formats, not the targets); this module only
reads the files: text files (one output each), JSON lines (a string, or an object with the output
under ``text``, ``output``, ``content``, ``completion`` or ``raw_model_output``), or a records
database (``fuzz records``: every recorded raw model output).
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Iterator

import click

from fuzzer.cli import options
from fuzzer.cli.app import main, translate_errors
from fuzzer.cli.errors import ConfigError

#: Keys of a JSON-lines object that hold the model's output, in the order they are tried.
TEXT_KEYS = ("text", "output", "content", "completion", "raw_model_output", "response")


def read_outputs(path: str) -> list[str]:
    """The model outputs in ``path`` (see the module docstring); one line naming the file on error."""
    if not os.path.exists(path):
        raise ConfigError(f"{path}: no such file")
    with open(path, "rb") as fh:
        head = fh.read(16)
    if head.startswith(b"SQLite format 3"):
        return list(_records(path))
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it as UTF-8 text ({exc})") from None
    if path.endswith((".jsonl", ".ndjson")):
        return list(_json_lines(path, text))
    return [text]


def _json_lines(path: str, text: str) -> Iterator[str]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: not a JSON line ({exc})") from None
        if isinstance(value, str):
            yield value
            continue
        found = next((value[k] for k in TEXT_KEYS if isinstance(value, dict) and isinstance(value.get(k), str)), None)
        if found is None:
            raise ConfigError(f"{path}:{number}: a JSON line must be a string or hold the output under one of "
                              f"{', '.join(TEXT_KEYS)}")
        yield found


def _records(path: str) -> Iterator[str]:
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = connection.execute("SELECT raw_model_output FROM records WHERE raw_model_output IS NOT NULL "
                                      "ORDER BY id").fetchall()
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise ConfigError(f"{path}: not a records database ({exc})") from None
    for (text,) in rows:
        yield text


def detect_files(paths: tuple) -> tuple:
    """(every output's detection, in order; the summary; the outputs) over ``paths``."""
    from strategies._internal.formats.detect import summarize

    outputs = [text for path in paths for text in read_outputs(path)]
    found, summary = summarize(outputs)
    return found, summary, outputs


def format_options_from(paths: tuple) -> list[str]:
    """The ``--format`` values the outputs in ``paths`` call for (``campaign --format-from``); an
    error when none of them is in a known family."""
    found, summary, outputs = detect_files(paths)
    options = summary.format_options()
    if not options:
        first = next((d.marker for d in found if d.marker), None)
        raise ConfigError(f"--format-from: none of the {len(outputs)} output(s) in {', '.join(paths)} is in a known "
                          "format" + (f" (the first marker-looking token: {first!r})" if first else "")
                          + "; see `fuzz formats`")
    return options


@main.group(invoke_without_command=True)
@options.chat_template
@click.pass_context
def formats(ctx: click.Context, chat_templates: tuple) -> None:
    """Every format family, its versions and layouts, with one rendered example each (with
    --chat-template, also what that template writes).

    `fuzz formats detect FILE...` names the family and version of real outputs instead.
    """
    if ctx.invoked_subcommand is not None:
        return
    from strategies._internal.formats import FORMATS, layouts_for, render
    from strategies._internal.formats.versions import families
    from strategies._internal.source import ReplaySource

    call = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
    for family, names in families().items():
        click.echo(f"{family}")
        for name in names:
            fmt = FORMATS[name]
            aliases = f" (also {', '.join(fmt.aliases)})" if fmt.aliases else ""
            variants = [label for variant, label in (("prose", "prose"), ("several", "several calls"),
                                                       ("reasoning", "reasoning"))
                        if (fmt.variants is None or variant in fmt.variants)
                        and (variant != "reasoning" or fmt.reasoning is not None)]
            click.echo(f"  {fmt.full_name}{aliases}: {fmt.description}")
            click.echo(f"    variants: {', '.join(variants) or 'none'}; layouts: {', '.join(layouts_for(name))}")
            example = render(name, [call], ReplaySource(()), chatter=False).text
            click.echo("    example:  " + example.replace("\n", "\n              "))


@formats.command()
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("--each", is_flag=True, help="Also list every output's format, one line each.")
@translate_errors
def detect(files: tuple, each: bool) -> None:
    """Name the family and version of each model output in FILE (a text file, JSON lines, or a
    records database) and print the --format options to fuzz them with.

    Exit status: 0 every output was recognised, 1 some were in no known family (listed with
    their first marker-looking token), 2 the file cannot be read.
    """
    found, summary, outputs = detect_files(files)
    if each:
        for index, detection in enumerate(found):
            click.echo(f"{index + 1:>5}  {detection.label}")
    click.echo(f"{len(outputs)} output(s)")
    from strategies._internal.formats import FORMATS

    for name, count in sorted(summary.counts.items(), key=lambda kv: -kv[1]):
        seen = summary.variants[name]
        shown = ", ".join(f"{n} with {v.replace('several', 'several calls')}" for v, n in seen.items() if n)
        click.echo(f"  {FORMATS[name].full_name:<16} {count:>5}" + (f"  ({shown})" if shown else ""))
    for index, marker in summary.unknown:
        click.echo(f"  unknown #{index + 1}: " + (f"first marker-looking token {marker!r}" if marker
                                                  else "no marker-looking token"))
    options = summary.format_options()
    if options:
        click.echo("fuzz with: " + " ".join(f"--format {name}" for name in options))
    if summary.unknown:
        raise SystemExit(1)
