"""Bug-finding and speed of the stream harness (a script, not a timed test).

    python benchmarks/stream.py [--outputs 60] [--seed 1] [--seconds 8]

Targets: the bundled naive Hermes parser and five planted variants of the reference parser (one bug
each). Each is streamed the same generated Hermes outputs two ways:

* **engines**: the split-invariance method of vLLM's tests: one character per delta, the whole
  output, every two-way split, and 100 seeded random groupings of 1-4 characters;
* **toolfuzz**: the whole output, one character per delta, the first marker cut after its first
  character, and six drawn splits (marker-atomic, inside a marker, structure/value boundaries,
  random groupings; :mod:`fuzzer.harnesses.stream.splits`), as ``fuzz stream`` streams each output.

Both are judged by the same oracles. The table gives, per target and method, the distinct
signatures found and the parser runs (streams) it took. Last, streams judged per second by one
worker process on get_weather Hermes outputs (the reference parser): the campaign's orders,
drawn, streamed and judged in the worker, through the pool.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import strategies as tf  # noqa: E402
from fuzzer.harnesses.stream import cases as gen  # noqa: E402
from fuzzer.harnesses.stream.checks import judge, variance  # noqa: E402
from fuzzer.harnesses.stream.contract import ArgumentsDelta, CallEnd, parser_maker  # noqa: E402
from fuzzer.harnesses.stream.splits import every_two_way, groupings  # noqa: E402
from fuzzer.harnesses.stream.worker import run_stream  # noqa: E402
from fuzzer.targets import stream_reference as ref  # noqa: E402
from strategies._internal.source import RandomSource  # noqa: E402


class NoFlush(ref.ReferenceHermesParser):
    """Events go out one feed late and finish() releases nothing: what the last delta brought is
    lost (the missing end-of-stream flush of SGLang #31915)."""

    def __init__(self):
        super().__init__()
        self.late = []

    def feed(self, delta):
        out, self.late = self.late, super().feed(delta)
        return out

    def finish(self):
        return []


class IndexZero(ref.ReferenceHermesParser):
    """Every call streamed at index 0 (Ollama #16212)."""

    def feed(self, delta):
        return [replace(e, index=0) if hasattr(e, "index") else e for e in super().feed(delta)]


class NoHoldBack(ref.ReferenceHermesParser):
    """A tail that may become <tool_call> is sent as content (vLLM #44522)."""

    def _text_mode(self, out):
        if not self.thinking and ref.OPEN not in self.pending and "<think" not in self.pending:
            self._plain(self.pending, out)
            self.pending = ""
            return
        super()._text_mode(out)


class FirstClose(ref.ReferenceHermesParser):
    """The first </tool_call> ends the call, even inside a string (Ollama #18659)."""

    def _call_mode(self, out):
        at = (self.body + self.pending).find(ref.CLOSE)
        if at >= 0 and self.in_string:
            self.in_string = False
        return super()._call_mode(out)


class CumulativeLast(ref.ReferenceHermesParser):
    """The last arguments delta repeats the whole arguments (GLM-4.7)."""

    def _close(self, out):
        super()._close(out)
        if self.args_start >= 0 and self.args_end > self.args_start:
            out.insert(len(out) - 1, ArgumentsDelta(self.index - 1, self.body[self.args_start:self.args_end]))


TARGETS = {"naive": "fuzzer.targets.stream_naive:make_parser", "no_flush": NoFlush, "index_zero": IndexZero,
           "no_hold_back": NoHoldBack, "first_close": FirstClose, "cumulative_last": CumulativeLast}


def engines_splits(text: str, rnd: random.Random) -> list:
    out = [tuple(range(1, len(text))), ()] + every_two_way(text)
    for _ in range(100):
        out.append(tuple(groupings(RandomSource(rnd.randrange(2**32)), len(text))))
    return out


def run(make, groups, method: str, seed: int) -> tuple:
    found, streams, rnd = set(), 0, random.Random(seed)
    for base, drawn in groups:
        splits = engines_splits(base.text, rnd) if method == "engines" else [c for _f, c in drawn]
        whole = None
        for cuts in splits:
            case = replace(base, cuts=cuts)
            result = run_stream(make, [], base.text, cuts)
            streams += 1
            violations = judge(case, result)
            if not cuts:
                whole = result
            elif whole is not None and not case.truth_known:
                extra = variance(case, result, whole)
                violations += [extra] if extra else []
            found |= {v.signature.id for v in violations}
    return found, streams


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--outputs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=8.0, help="of the speed measurement")
    args = parser.parse_args()
    registry = tf.builtin_registry()
    source = RandomSource(args.seed)
    groups = []
    while len(groups) < args.outputs:
        sample = gen.draw_output(source, registry, [t.name for t in registry], ["hermes"])
        if sample is not None and len(sample.text) <= 400:
            base = gen.case_of(sample, registry)
            groups.append((base, gen.splits_for(source, base.text, base.markers, [])))
    print(f"{'target':<16}{'engines bugs':>13}{'runs':>9}{'toolfuzz bugs':>15}{'runs':>9}  missed by toolfuzz")
    for name, factory in TARGETS.items():
        if isinstance(factory, str):
            from fuzzer.engine.references import load_target

            factory = load_target(factory)
        make = parser_maker(factory, name)
        theirs, their_runs = run(make, groups, "engines", args.seed)
        ours, our_runs = run(make, groups, "toolfuzz", args.seed)
        print(f"{name:<16}{len(theirs):>13}{their_runs:>9}{len(ours):>15}{our_runs:>9}  {len(theirs - ours)}")
    print(f"\n(engines: one character per delta, whole, every two-way split, 100 random groupings of 1-4 "
          f"characters; toolfuzz: whole, one character per delta, the first marker cut after its first "
          f"character, {gen.DRAWN_SPLITS} drawn splits; {args.outputs} Hermes outputs of every tool, the same "
          f"for both)")
    workers_judging(args.seconds)


def workers_judging(seconds: float) -> None:
    """Streams of get_weather Hermes outputs drawn, run and judged by one worker process (the
    campaign's orders through the pool: what ``fuzz stream`` runs), per second of wall time."""
    import os

    from fuzzer.harnesses.stream.job import StreamSettings, open_pool
    from fuzzer.harnesses.stream.orders import Plan, StreamOrder
    from fuzzer.harnesses.stream.worker import Settings

    settings = StreamSettings(target=Settings(parser="fuzzer.targets.stream_reference:make_parser", cwd=os.getcwd()),
                              workers=1)
    plan = Plan(mode="parser", tools=("get_weather",), formats=("hermes",))
    pool = open_pool(settings)
    pool.start()
    try:
        pool.run_orders([StreamOrder(0, 64, 0, plan)])  # warm
        streams, number, started = 0, 1, time.perf_counter()
        while time.perf_counter() - started < seconds:
            orders = [StreamOrder(number + k, 64, number + k, plan) for k in range(8)]
            number += len(orders)
            for result in pool.run_orders(orders):
                streams += result.streams
        elapsed = time.perf_counter() - started
    finally:
        pool.close()
    print(f"{streams / elapsed:,.0f} streams judged per second, one worker process judging "
          f"(get_weather Hermes outputs, reference parser, {streams:,} streams in {elapsed:.1f} s)")


if __name__ == "__main__":
    main()
