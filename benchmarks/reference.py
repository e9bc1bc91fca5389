"""The bundled reference parser stays linear: hostile inputs end fast with ValueError, large valid ones parse.

The unit tests check *what* the reference does with each input (rejects it, or returns exactly the
calls); this script checks *how long* it takes, so no unit test depends on the machine's speed. Each
input's time is printed next to ``json.loads`` of a valid document of the same size (measured in the
same run); exits 1 if any input takes more than ``--limit`` seconds.

    .venv/bin/python benchmarks/reference.py [--limit 1.0]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _nesting(depth: int) -> str:
    return '{"name": "f", "arguments": {"x": ' + "[" * depth + "]" * depth + "}}"


#: Inputs built to make a careless parser slow or crash; the reference must reject each quickly.
HOSTILE_INPUTS = {
    "open brackets": "[" * 1_000_000,
    "open braces": "{" * 1_000_000,
    "deep valid-looking json": _nesting(200_000),
    "deep pythonic": "[f(x=" + "[" * 100_000 + "]" * 100_000 + ")]",
    "dense pythonic": "[f(x=[" + "1," * 400_000 + "])]",
    "many tags": "<tool_call>" * 200_000,
    "many fences": "```\n" * 200_000,
    "many actions": "Action: f\n" * 200_000,
    "many semicolons": '<|python_tag|>{"name": "f", "parameters": {}}' + "; " * 200_000,
    "many parens": "f(" * 300_000,
    "many function tags": "<function=f>" * 200_000,
    "many channels": "<|channel|>commentary to=functions.f " * 100_000,
    "many parameters": "<tool_call>\n<function=f>\n" + "<parameter=x>\n" * 200_000,
    "many deepseek calls": "<｜tool▁calls▁begin｜>" + "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n" * 100_000,
    "many content blocks": "[" + '{"type": "text", "text": "a"},' * 100_000,
}
#: Plain prose of the same order of size: not an error, no call.
PROSE = "word " * 400_000
BIG_VALUE = "x, y = (1)\n" * 200_000


def large_valid_outputs() -> dict:
    """Valid renderings holding a 2 MB string argument, one per format that can carry it."""
    from strategies._internal.formats import FORMATS, render
    from strategies._internal.source import RandomSource

    call = {"name": "f", "arguments": {"body": BIG_VALUE}}
    return {name: render(name, [call], RandomSource(0), chatter=True).text for name in FORMATS
            if not FORMATS[name].raw_strings}  # qwen3_xml cannot write a value ending with a newline


def _time(function, text: str) -> float:
    start = time.perf_counter()
    try:
        function(text)
    except ValueError:
        pass
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=1.0, help="seconds any one input may take")
    args = parser.parse_args()
    from fuzzer.targets.reference import parse

    worst = 0.0
    failed = False
    cases = dict(HOSTILE_INPUTS, prose=PROSE, **{f"valid {k}": v for k, v in large_valid_outputs().items()})
    for label, text in cases.items():
        baseline = _time(json.loads, json.dumps({"x": "a" * max(0, len(text) - 10)}))
        took = _time(parse, text)
        ratio = took / max(baseline, 1e-6)
        worst = max(worst, took)
        bad = took > args.limit
        failed |= bad
        print(f"{label:28} {len(text):>9,} chars  {took * 1000:8.1f} ms  ({ratio:5.1f}x json.loads){'  SLOW' if bad else ''}")
    print(f"worst: {worst:.3f} s (limit {args.limit} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
