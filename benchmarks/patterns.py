"""Pattern-heavy schemas: samples/s with each ``pattern`` kept vs the same tools with patterns removed.

A user's tools file with an email ``pattern`` ran several times slower than without it, because every
pattern string was walked character by character and checked against the regex on every draw.
Strings are now drawn from a compiled, cached plan (see ``strategies._internal.schema.patterns``).
For every tool of ``tests/data/tools_50.json`` that has a pattern, and a tool with an email pattern,
this script measures, once with the patterns and once without, in the same run: arguments/s (the
compiled generator alone) and samples/s (valid samples plus every applicable operator, in families,
as the scheduler builds them); it prints each rate and their ratio (1.0 = patterns cost nothing).
Exits 1 if an overall ratio is below ``--min-ratio``.

    .venv/bin/python benchmarks/patterns.py [--seconds 1.0] [--min-ratio 0.6]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from strategies._internal.build import build_family  # noqa: E402
from strategies._internal.mutations import OPERATORS  # noqa: E402
from strategies._internal.schema import compile_tool  # noqa: E402
from strategies._internal.source import RandomSource  # noqa: E402
from strategies._internal.tools import Registry, Tool, load_registry  # noqa: E402

EMAIL = r"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$"
#: Operators that build megabyte texts measure string multiplication, not generation.
SKIPPED_CLASSES = {"oversized_input"}


def without_patterns(schema):
    if isinstance(schema, dict):
        return {k: without_patterns(v) for k, v in schema.items() if k != "pattern"}
    if isinstance(schema, list):
        return [without_patterns(v) for v in schema]
    return schema


def values_rate(tool: Tool, seconds: float) -> float:
    """Arguments dicts per second for ``tool`` (the compiled generator alone)."""
    node, source = compile_tool(tool), RandomSource(0)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(200):
            node.generate(source)
            source.reset()
        count += 200
    return count / (time.perf_counter() - start)


def rate(registry: Registry, tool: Tool, seconds: float) -> float:
    """Samples per second built for ``tool`` in the json format, families of six as the campaign does."""
    operators = [None] + [name for name, op in OPERATORS.items()
                          if op.anomaly_class not in SKIPPED_CLASSES and op.applies(tool, "json")]
    source = RandomSource(1)
    compile_tool(tool)  # compiling (and any fallback pool) is paid once per campaign: not timed
    build_family(source, registry=registry, tool=tool, format="json", operators=operators[:6])
    built, i = 0, 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        family = [operators[(i + k) % len(operators)] for k in range(6)]
        i += 6
        built += sum(s is not None for s in build_family(source, registry=registry, tool=tool, format="json",
                                                         operators=family))
    return built / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per tool and variant")
    parser.add_argument("--min-ratio", type=float, default=0.6, help="fail below this overall ratio")
    args = parser.parse_args()
    registry = load_registry(os.path.join(ROOT, "tests", "data", "tools_50.json"))
    tools = [t for t in registry if '"pattern"' in json.dumps(t.schema)]
    email = {"type": "object", "properties": {"email": {"type": "string", "pattern": EMAIL},
                                              "name": {"type": "string"}},
             "required": ["email"], "additionalProperties": False}
    tools.append(Tool("send_invite", email))
    totals = {"values": [0.0, 0.0], "samples": [0.0, 0.0]}
    print(f"{'tool':24} {'arguments/s with / without patterns':>40}   {'samples/s with / without':>32}")
    for tool in tools:
        plain = Tool(tool.name, without_patterns(dict(tool.schema)))
        row = []
        for kind, measure in (("values", lambda t, r: values_rate(t, args.seconds / 2)),
                              ("samples", lambda t, r: rate(r, t, args.seconds))):
            with_rate = measure(tool, Registry({tool.name: tool}))
            without_rate = measure(plain, Registry({plain.name: plain}))
            totals[kind][0] += with_rate
            totals[kind][1] += without_rate
            row.append(f"{with_rate:9,.0f} / {without_rate:9,.0f} ({with_rate / without_rate:4.2f})")
        print(f"{tool.name:24} {row[0]:>40}   {row[1]:>32}")
    ratios = {kind: with_sum / without_sum for kind, (with_sum, without_sum) in totals.items()}
    print(f"overall, with patterns / without: arguments {ratios['values']:.2f}, samples {ratios['samples']:.2f} "
          f"over {len(tools)} tools (goal >= {args.min_ratio})")
    return 0 if min(ratios.values()) >= args.min_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
