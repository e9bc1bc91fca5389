"""Replay one stream in this process and print what happened (the command a finding prints).

``python -m fuzzer.harnesses.stream.reproduce --parser M:A --deltas '["<tool", "_call>..."]'``
feeds the deltas to a new parser, prints each step's events (normalized) and the folded calls,
content and reasoning, and exits 1 when ``feed``/``finish`` raised (with the traceback).
``--consumer M:A --consumer-shape S --case JSON`` builds the case's chunk stream and prints what
the accumulator returned.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzzer.harnesses.stream.reproduce")
    parser.add_argument("--parser")
    parser.add_argument("--parser-api", default="events")
    parser.add_argument("--deltas")
    parser.add_argument("--consumer")
    parser.add_argument("--consumer-shape", default="openai")
    parser.add_argument("--case")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.getcwd())
    from fuzzer.harnesses.stream.contract import load_parser_factory, normalize_events
    from fuzzer.harnesses.stream.fold import fold

    if args.parser:
        make = load_parser_factory(args.parser, api=args.parser_api)
        steps = []
        try:
            target = make([])
            for delta in json.loads(args.deltas):
                events = normalize_events(target.feed(delta))
                print(f"feed({delta!r}) -> {events}")
                steps.append(events)
            finish = normalize_events(target.finish())
            print(f"finish() -> {finish}")
        except Exception:  # noqa: BLE001 - shown as the user's traceback
            traceback.print_exc()
            return 1
        folded = fold(steps, finish)
        print(f"calls:     {json.dumps(folded.calls, ensure_ascii=False)}")
        print(f"content:   {folded.content!r}")
        if folded.reasoning:
            print(f"reasoning: {folded.reasoning!r}")
        for kind, step, words in folded.grammar:
            print(f"grammar:   {words} (step {step})")
        return 0
    from fuzzer.harnesses.parser.target import load_target
    from fuzzer.harnesses.stream.chunks import ChunkPlan, build_chunks
    from fuzzer.harnesses.stream.contract import consumer_calls
    from fuzzer.harnesses.stream.worker import case_from_json

    case = case_from_json(json.loads(args.case))
    chunks = build_chunks(ChunkPlan.from_case(case), args.consumer_shape)
    consumer = load_target(args.consumer)
    try:
        calls = consumer_calls(consumer(iter(chunks)), args.consumer)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        return 1
    print(f"calls:    {json.dumps(calls, ensure_ascii=False)}")
    print(f"expected: {json.dumps(case.truth, ensure_ascii=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
