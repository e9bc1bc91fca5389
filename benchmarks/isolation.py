"""What process isolation costs: ``json.loads`` in-process vs through WorkerPool(1) and (2).

DESIGN.md budgets isolation as "nearly free when batched": at least 60,000 texts/s through one
worker for ~70-byte texts. Run from the repository root::

    .venv/bin/python benchmarks/isolation.py [--texts 200000] [--rounds 3]

Also reports the restart rate for a target that kills its worker on every input (each input
costs one fork from the zygote).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fuzzer.harnesses.parser.outcome import TargetSpec
from fuzzer.isolation import WorkerPool  # noqa: E402
from fuzzer.engine.calls import normalize_calls  # noqa: E402


def make_texts(count: int) -> list[str]:
    """~70-byte tool calls, a tenth of them broken, all distinct."""
    texts = []
    for i in range(count):
        text = json.dumps({"name": "get_weather", "arguments": {"city": f"Paris{i}", "unit": "c"}})
        texts.append(text[:-3] if i % 10 == 0 else text)
    return texts


def in_process(texts: list[str]) -> float:
    """The same work a worker does per text, minus the process boundary."""
    start = time.perf_counter()
    for text in texts:
        try:
            normalize_calls(json.loads(text))
        except ValueError:
            pass
    return len(texts) / (time.perf_counter() - start)


def pooled(texts: list[str], workers: int) -> float:
    with WorkerPool(TargetSpec("json:loads"), workers=workers) as pool:
        pool.run(texts[:1000])  # warm up
        start = time.perf_counter()
        outcomes = pool.run(texts)
        rate = len(texts) / (time.perf_counter() - start)
    assert len(outcomes) == len(texts) and outcomes[1].kind == "returned", outcomes[1]
    return rate


def die(text: str) -> None:
    """A target that kills its worker on every input (loaded by the pool as ``isolation:die``)."""
    os._exit(7)


def restarts(count: int) -> float:
    here = os.path.dirname(os.path.abspath(__file__))
    with WorkerPool(TargetSpec("isolation:die", cwd=here)) as pool:
        start = time.perf_counter()
        outcomes = pool.run(["x"] * count)
        rate = count / (time.perf_counter() - start)
    assert all(o.kind == "died" and o.detail == "exit status 7" for o in outcomes), outcomes[0]
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    texts = make_texts(args.texts)
    print(f"{len(texts)} texts, mean {sum(map(len, texts)) / len(texts):.0f} bytes; best of {args.rounds}")
    base = max(in_process(texts) for _ in range(args.rounds))
    one = max(pooled(texts, 1) for _ in range(args.rounds))
    two = max(pooled(texts, 2) for _ in range(args.rounds))
    print(f"in-process           {base:>10,.0f} texts/s")
    print(f"WorkerPool(1)        {one:>10,.0f} texts/s  ({one / base:.2f}x in-process)")
    print(f"WorkerPool(2)        {two:>10,.0f} texts/s  ({two / base:.2f}x in-process, {two / one:.2f}x one worker)")
    print(f"restarts (os._exit)  {restarts(300):>10,.0f} inputs/s, one fork per input")


if __name__ == "__main__":
    main()
