"""Replay one stream in this process, print what happened, and judge it (the command a finding prints).

``python -m fuzzer.harnesses.stream.reproduce --parser M:A --case JSON`` feeds the case's deltas
to a new parser, prints each step's events (normalized) and the folded calls, content and
reasoning, then what the oracles say; ``--consumer M:A --consumer-shape S --case JSON`` builds
the case's chunk stream and prints what the accumulator returned. Exit 1 while the stream fails
(a violation, or ``feed``/``finish`` raised: with the traceback), 0 once it passes, 2 for a bad
command line. ``--deltas '["<tool", "_call>..."]'`` streams deltas given by hand (printed, not judged).
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
    parser.add_argument("--consumer")
    parser.add_argument("--consumer-shape", default="openai")
    parser.add_argument("--tools")
    parser.add_argument("--case")
    parser.add_argument("--deltas")
    args = parser.parse_args(argv)
    if bool(args.parser) == bool(args.consumer) or (args.case is None and args.deltas is None):
        parser.error("give --parser or --consumer, and --case (or --deltas)")
    sys.path.insert(0, os.getcwd())
    from fuzzer.harnesses.stream.checks import violations_of
    from fuzzer.harnesses.stream.fold import fold
    from fuzzer.harnesses.stream.splits import cuts_of
    from fuzzer.harnesses.stream.worker import case_from_json
    from strategies._internal.tools import load_registry

    registry = load_registry(args.tools)
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}}
             for t in registry]
    if args.case is not None:
        case = case_from_json(json.loads(args.case))
    else:
        from fuzzer.harnesses.stream.checks import StreamCase

        parts = json.loads(args.deltas)
        case = StreamCase(text="".join(parts), cuts=cuts_of(parts), truth_known=False)
    if args.parser:
        from fuzzer.harnesses.stream.contract import load_parser_factory
        from fuzzer.harnesses.stream.worker import run_stream

        make = load_parser_factory(args.parser, api=args.parser_api)
        run = run_stream(make, tools, case.text, case.cuts)
        for part, events in zip(_deltas(case), run.steps):
            print(f"feed({part!r}) -> {events}")
        if run.error is None and run.contract is None:
            print(f"finish() -> {run.finish}")
        whole = run_stream(make, tools, case.text, ()) if case.cuts and not case.truth_known else None
        if whole is not None and whole.error is None:
            print(f"whole:     {json.dumps(fold(whole.steps, whole.finish).calls, ensure_ascii=False)}")
    else:
        from fuzzer.engine.references import load_target
        from fuzzer.harnesses.stream.worker import run_consumer

        consumer = load_target(args.consumer, what="--consumer")
        run = run_consumer(consumer, args.consumer, case, args.consumer_shape)
        whole = None
    if run.contract is not None:
        print(f"contract:  {run.contract}", file=sys.stderr)
        return 2
    if run.error is not None:
        _raise_again(make if args.parser else consumer, case, args, tools)
        return 1
    folded = fold(run.steps, run.finish)
    print(f"calls:     {json.dumps(folded.calls, ensure_ascii=False)}")
    print(f"content:   {folded.content!r}")
    if folded.reasoning:
        print(f"reasoning: {folded.reasoning!r}")
    if case.truth_known:
        print(f"expected:  {json.dumps(case.truth, ensure_ascii=False)}"
              + (f" content {case.content!r}" if case.content is not None else ""))
    if args.case is None:
        return 0
    violations = violations_of(case, run, whole)
    for v in violations:
        print(f"{v.verdict}: {v.reason}")
    if not violations:
        print("pass")
    return 1 if violations else 0


def _deltas(case: object) -> list:
    from fuzzer.harnesses.stream.splits import deltas

    return deltas(case.text, case.cuts)  # type: ignore[attr-defined]


def _raise_again(target: object, case: object, args: argparse.Namespace, tools: list) -> None:
    """Run the stream again without catching what it raises, so the traceback is the user's."""
    try:
        if args.parser:
            parser = target(tools)  # type: ignore[operator]
            for part in _deltas(case):
                parser.feed(part)
            parser.finish()
        else:
            from fuzzer.harnesses.stream.chunks import ChunkPlan, build_chunks

            target(iter(build_chunks(ChunkPlan.from_case(case), args.consumer_shape)))  # type: ignore[operator]
    except Exception:  # noqa: BLE001 - shown as the user's traceback
        traceback.print_exc()


if __name__ == "__main__":
    sys.exit(main())
