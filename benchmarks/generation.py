"""Valid get_weather arguments per second: the compiled generator vs the naive hypothesis-jsonschema loop.

Rendering-free: only argument generation is timed. The compiled tree (``compile_tool``) driven by a
``RandomSource`` is measured against ``@given(hypothesis_jsonschema.from_schema(schema))`` in the same
run, each for a fixed wall time. Prints both rates and ``ratio: N.Nx``; exits 1 if the ratio is
below 20 (DESIGN.md, "Performance design": the engine must not pay Hypothesis's per-example cost).

Then valid samples per second (calls drawn and rendered, as the campaign builds them) in the
formats that existed before the families with versions, against the new ones (and against the old
with reasoning): the new formats must stay within 20% of the old ones' speed (exit 1 otherwise).

With ``--chat-template FILE`` (repeatable), also the valid samples per second a model's chat template
renders (one Jinja rendering each, in the sandbox; informational: no threshold).

    python benchmarks/generation.py [--seconds 5] [--chat-template FILE]
"""

from __future__ import annotations

import argparse
import sys
import time

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis_jsonschema import from_schema
from jsonschema import FormatChecker

from strategies._internal.schema import compile_tool, validator_for_schema
from strategies._internal.source import RandomSource
from strategies._internal.tools import builtin_registry

MIN_RATIO = 20.0


class _Stop(Exception):
    pass


def compiled_rate(tool, seconds: float) -> tuple[float, int]:
    node = compile_tool(tool)
    source = RandomSource(0)
    count, deadline = 0, time.perf_counter() + seconds
    start = time.perf_counter()
    while True:
        for _ in range(1000):
            node.generate(source)
            source.reset()
        count += 1000
        if time.perf_counter() >= deadline:
            break
    return count / (time.perf_counter() - start), count


def naive_rate(tool, seconds: float) -> tuple[float, int]:
    count = [0]
    deadline = [0.0]

    @settings(max_examples=10 ** 9, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(from_schema(tool.schema))
    def loop(arguments):
        count[0] += 1
        if time.perf_counter() >= deadline[0]:
            raise _Stop

    start = time.perf_counter()
    deadline[0] = start + seconds
    try:
        loop()
    except _Stop:
        pass
    return count[0] / (time.perf_counter() - start), count[0]


#: The formats toolfuzz rendered before issue 27 (the families with versions came after).
OLD_FORMATS = ("json", "openai", "fenced", "hermes", "pythonic", "mistral", "llama3", "react", "llama_json",
               "anthropic", "mcp", "llama_function", "qwen3_xml", "harmony", "deepseek")
#: The new formats may be at most this much slower than the old ones.
MAX_SLOWDOWN = 0.20


def sample_rate(registry, tool, formats, seconds: float, *, reasoning: bool = False) -> float:
    """Valid samples per second built in ``formats`` in turn (``build_sample``, no operator)."""
    from strategies._internal.build import Unbuildable, build_sample

    source = RandomSource(0)
    count, start = 0, time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for name in formats:
            for _ in range(20):
                source.reset()
                try:
                    build_sample(source, registry=registry, tool=tool, format=name, reasoning=reasoning or None)
                except Unbuildable:
                    continue
                count += 1
    return count / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="wall time per measurement")
    parser.add_argument("--tool", default="get_weather")
    parser.add_argument("--chat-template", action="append", default=[], metavar="FILE",
                        help="also measure this chat template's format (template:<stem>)")
    args = parser.parse_args(argv)
    tool = builtin_registry()[args.tool]

    # sanity: the fast path produces valid values
    validator = validator_for_schema(tool.schema)(tool.schema, format_checker=FormatChecker())
    node, source = compile_tool(tool), RandomSource(1)
    invalid = sum(not validator.is_valid(node.generate(source)) for _ in range(2000))
    if invalid:
        print(f"error: {invalid} of 2000 compiled values are invalid", file=sys.stderr)
        return 1

    fast, fast_n = compiled_rate(tool, args.seconds)
    slow, slow_n = naive_rate(tool, args.seconds)
    ratio = fast / slow if slow else float("inf")
    print(f"tool: {tool.name}")
    print(f"compiled + RandomSource: {fast:,.0f} values/s ({fast_n} in {args.seconds:g}s, "
          f"{1e6 / fast:.1f} us/value)")
    print(f"@given(from_schema):     {slow:,.0f} values/s ({slow_n} in {args.seconds:g}s)")
    print(f"ratio: {ratio:.1f}x")
    if ratio < MIN_RATIO:
        print(f"FAIL: ratio below {MIN_RATIO:g}x", file=sys.stderr)
        return 1

    from strategies._internal.formats import FORMATS

    registry = builtin_registry()
    new_formats = [name for name in FORMATS if name not in OLD_FORMATS]
    reasoning_formats = [name for name in OLD_FORMATS if FORMATS[name].reasoning is not None]
    old_rate = sample_rate(registry, tool, OLD_FORMATS, args.seconds)
    new_rate = sample_rate(registry, tool, new_formats, args.seconds)
    with_reasoning = sample_rate(registry, tool, reasoning_formats, args.seconds, reasoning=True)
    print(f"valid samples, the {len(OLD_FORMATS)} old formats:      {old_rate:,.0f}/s")
    print(f"valid samples, the {len(new_formats)} new formats:       {new_rate:,.0f}/s ({new_rate / old_rate:.2f}x)")
    print(f"valid samples, old formats with reasoning: {with_reasoning:,.0f}/s ({with_reasoning / old_rate:.2f}x)")
    if args.chat_template:
        from strategies._internal.formats.chat_template import register_template

        for path in args.chat_template:
            name = register_template(path)
            rate = sample_rate(registry, tool, [name], args.seconds)
            print(f"valid samples, {name}: {rate:,.0f}/s ({rate / old_rate:.2f}x the old formats)")
    if new_rate < (1 - MAX_SLOWDOWN) * old_rate:
        print(f"FAIL: the new formats are more than {MAX_SLOWDOWN:.0%} slower than the old ones", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
