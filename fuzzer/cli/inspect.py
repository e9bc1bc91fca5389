"""Inspecting what toolfuzz generates: `fuzz tools`, `fuzz anomalies`, `fuzz samples`."""

from __future__ import annotations

import json

import click

from fuzzer.cli.app import load_registry, main, translate_errors
from fuzzer.cli import options
from fuzzer.cli.errors import ConfigError
from fuzzer.engine.text import json_line


def _describe_property(schema: dict) -> str:
    if schema is False:
        return "never allowed (false)"
    if not isinstance(schema, dict):
        return "any"
    parts = []
    kind = schema.get("type")
    if isinstance(kind, list):
        parts.append("|".join(map(str, kind)))
    elif kind:
        parts.append(str(kind))
    elif "$ref" in schema:
        parts.append(schema["$ref"].rsplit("/", 1)[-1])
    elif any(k in schema for k in ("anyOf", "oneOf", "allOf")):
        parts.append("union")
    if "enum" in schema:
        parts.append("enum " + "|".join(json.dumps(v) for v in schema["enum"][:6]))
    for key in ("format", "pattern", "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"):
        if key in schema:
            parts.append(f"{key} {schema[key]}")
    return ", ".join(parts) or "any"


@main.command()
@options.tools_file
@click.option("--json", "as_json", is_flag=True, help="Print the registry as JSON ({name: schema}).")
@translate_errors
def tools(tools_file: str | None, as_json: bool) -> None:
    """List the tools in the registry with their parameters."""
    from strategies._internal.schema import unsupported_tools

    registry = load_registry(tools_file)
    if as_json:
        click.echo(json.dumps({t.name: t.schema for t in registry}, indent=2))
        return
    broken = unsupported_tools(registry)
    for tool in registry:
        schema = tool.schema if isinstance(tool.schema, dict) else {}  # a boolean schema: no properties
        required = set(schema.get("required", []) or [])
        click.echo(click.style(tool.name, bold=True) + (f"  {tool.description}" if tool.description else ""))
        if tool.schema is True:
            click.echo("    any arguments (schema true)")
        for name, prop in (schema.get("properties") or {}).items():
            mark = "*" if name in required else " "
            click.echo(f"  {mark} {name}: {_describe_property(prop)}")
        if tool.name in broken:
            click.echo(f"  ! cannot generate arguments: {broken[tool.name]}")
    click.echo(f"\n{len(registry)} tool(s) from {registry.source}; * = required")


@main.command()
@click.option("--tool", default=None, help="Tool for the examples (default: the first in the registry).")
@options.tools_file
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the examples.")
@translate_errors
def anomalies(tool: str | None, tools_file: str | None, seed: int) -> None:
    """List the anomaly classes, their mutation operators, and one example each."""
    from strategies._internal.build import Unbuildable, build_sample
    from strategies._internal.formats import FORMATS
    from strategies._internal.mutations import OPERATORS
    from strategies._internal.sample import ANOMALY_CLASSES
    from strategies._internal.source import RandomSource, ReplaySource

    registry = load_registry(tools_file)
    chosen = registry[tool] if tool else next(iter(registry))
    for cls in ANOMALY_CLASSES.values():
        ops = [op for op in OPERATORS.values() if op.anomaly_class == cls.name]
        click.echo(click.style(f"{cls.name}", bold=True) + f"  ({len(ops)} operators) {cls.description}")
        for op in ops:
            click.echo(f"  {op.name}: {op.description}")
            example = None
            for fmt in FORMATS:
                if not op.applies(chosen, fmt):
                    continue
                # The simplest sample first (all-zero choices: the shortest calls, the commonest
                # rendering), then seeded ones for operators that need richer calls.
                sources = [ReplaySource(())] + [RandomSource(seed + attempt) for attempt in range(5)]
                for source in sources:
                    try:
                        example = build_sample(source, registry=registry, tool=chosen,
                                               format=fmt, operator=op.name, chatter=False, multi=False)
                        break
                    except Unbuildable:
                        continue
                if example is not None:
                    break
            if example is None:
                click.echo(f"      (not applicable to {chosen.name})")
            else:
                shown = json.dumps(example.text, ensure_ascii=False)
                if len(shown) > 150:
                    shown = shown[:130] + f"…\" ({len(example.text):,} chars)"
                click.echo(f"      e.g. {example.format}: {shown}")
    click.echo(f"\n{len(ANOMALY_CLASSES)} classes, {len(OPERATORS)} operators")


@main.command()
@click.option("--tool", required=True, help="The tool whose calls to generate.")
@options.tools_file
@options.anomalies
@options.formats
@options.chat_template
@click.option("-n", "count", type=click.IntRange(min=0), default=10, show_default=True, help="How many samples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed: same seed, same lines.")
@translate_errors
def samples(tool: str, tools_file: str | None, anomalies: tuple, formats: tuple, chat_templates: tuple, count: int,
            seed: int) -> None:
    """Print generated samples as JSON lines: text, format, anomaly_class, operator, calls.

    `anomaly_class` is null for valid samples; `calls` is null when the text denotes no faithful call.
    """
    from fuzzer.harnesses.parser.tool import resolve_operators
    from strategies._internal.build import Unbuildable, build_sample
    from strategies._internal.formats import FORMATS
    from strategies._internal.mutations import OPERATORS
    from strategies._internal.source import RandomSource

    registry = load_registry(tools_file)
    chosen = registry[tool]
    from strategies._internal.formats.versions import select

    fmts = select(tuple(formats) + tuple(n for n in options.chat_template_formats(chat_templates)
                                         if n not in formats)).formats
    arms: list = []
    if not anomalies or "valid" in anomalies:
        arms.append(None)
    if anomalies:
        arms.extend(resolve_operators([a for a in anomalies if a != "valid"]) if any(a != "valid" for a in anomalies) else [])
    source = RandomSource(seed)
    produced = 0
    misses = 0
    import random

    pick = random.Random(seed)
    while produced < count:
        fmt = pick.choice(fmts)
        usable = [a for a in arms if a is None or OPERATORS[a].applies(chosen, fmt)]
        if not usable:
            misses += 1
            if misses > 1000:
                raise ConfigError(f"no selected anomaly applies to tool {tool!r} in formats {', '.join(fmts)}")
            continue
        op = pick.choice(usable)
        try:
            sample = build_sample(source, registry=registry, tool=chosen, format=fmt, operator=op)
        except Unbuildable:
            misses += 1
            if misses > 1000:
                raise ConfigError(f"the selected anomalies found nothing to mutate in {tool!r} calls")
            continue
        click.echo(json_line(sample.to_json()))
        produced += 1
