"""Worker processes under a watchdog, tortured with real hangs, crashes and noise (no mocks).

Every torture target misbehaves only on inputs containing a trigger word, so each test mixes
good and bad inputs in one batch and checks the bad one is pinned on the right index while the
others keep their own, right outcomes.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fuzzer.harnesses.parser.outcome import Outcome, TargetSpec
from fuzzer.isolation import WorkerPool
from strategies.errors import TargetError

ROOT = str(Path(__file__).resolve().parents[2])
TORTURE = "tests.integration.torture_targets:"
GOOD = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}})
GOOD_CALLS = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
BATCH = [GOOD, "BOOM " + GOOD, GOOD, "{broken"]


def spec(name: str, **kwargs) -> TargetSpec:
    kwargs.setdefault("timeout", 2.0)
    return TargetSpec(TORTURE + name, cwd=ROOT, **kwargs)


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of a process, or None when it no longer exists."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields[0], int(fields[1])


def descendants(pid: int) -> set[int]:
    """Every live or zombie process below ``pid``, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _proc_stat(int(entry))
            if stat:
                children.setdefault(stat[1], []).append(int(entry))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def cpu_ticks(pid: int) -> int:
    """User + system CPU time a process has used, in clock ticks (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    return int(fields[11]) + int(fields[12])


def wait_until(condition, within: float = 30.0) -> None:
    """Poll ``condition`` until it holds (a state the test waits for, not a guess at a duration);
    ``within`` only bounds a test whose condition never comes, so it is generous."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"the awaited state never came: {condition.__doc__ or condition}"
        time.sleep(0.01)


def wait_until_spinning(pids, ticks: int = 10) -> None:
    """Wait until each process has burnt ``ticks`` of CPU: a worker waiting for work uses none, so
    one that has is running its input (here: backtracking in a regex)."""
    wait_until(lambda: all(cpu_ticks(p) >= ticks for p in pids))


def gone(pid: int) -> bool:
    """Not running: vanished, or a zombie left to an init that does not reap."""
    stat = _proc_stat(pid)
    return stat is None or stat[0] in "ZX"


def check_batch(outcomes, bad_kind, **bad):
    """The shared shape of the torture batch: good, BAD, good, broken JSON."""
    assert [o.kind for o in outcomes] == ["returned", bad_kind, "returned", "rejected"]
    assert outcomes[0].calls == GOOD_CALLS and outcomes[2].calls == GOOD_CALLS
    assert outcomes[3].exception == "json.decoder.JSONDecodeError"
    for key, value in bad.items():
        assert getattr(outcomes[1], key) == value, (key, outcomes[1])


# -- classification


@pytest.mark.parametrize("target, exception, innermost", [
    ("recursion", "RecursionError", "_recurse"),
    ("interrupt", "KeyboardInterrupt", "interrupt"),
    ("sys_exit", "SystemExit", "sys_exit"),
    ("generator_exit", "GeneratorExit", "generator_exit"),
    ("custom_reject", "tests.integration.torture_targets.LookupFailed", "custom_reject"),
])
def test_exceptions_are_raised_outcomes(target, exception, innermost):
    with WorkerPool(spec(target)) as pool:
        outcomes = pool.run(BATCH)
        assert pool.restarts == 0
    check_batch(outcomes, "raised", exception=exception)
    assert outcomes[1].frames[-1] == ("torture_targets.py", innermost)


def test_declared_reject_types_replace_the_default():
    reject_on = ("tests.integration.torture_targets:LookupFailed",)
    with WorkerPool(spec("custom_reject", reject_on=reject_on)) as pool:
        outcomes = pool.run(BATCH)
    assert [o.kind for o in outcomes] == ["returned", "rejected", "returned", "raised"]
    assert outcomes[1].message == "no call here"
    assert outcomes[3].exception == "json.decoder.JSONDecodeError"  # ValueError is no longer declared


def test_exception_details_are_plain_and_line_free():
    with WorkerPool(spec("key_error")) as pool:
        (outcome,) = pool.run([GOOD])
        deep, extra = pool.run(["BOOM", "{} x"])  # json raises these from raw_decode and from decode
        recursion = WorkerPool(spec("recursion"))
        with recursion:
            (rec,) = recursion.run(["BOOM"])
    assert outcome.kind == "raised" and outcome.exception == "KeyError"
    assert outcome.message == "'missing'"
    assert outcome.frames == (("torture_targets.py", "key_error"),)
    assert deep.kind == "rejected" and deep.exception == "json.decoder.JSONDecodeError"
    # the standard library's innermost frames are left out: one unguarded json.loads, one key
    assert deep.frames == extra.frames == (("torture_targets.py", "key_error"),)
    assert "Extra data" in extra.message
    assert len(rec.frames) == 8 and set(rec.frames) == {("torture_targets.py", "_recurse")}
    assert outcome.elapsed >= 0 and pickle.loads(pickle.dumps(outcome)) == outcome


def test_memory_error_under_the_memory_limit():
    with open("/proc/self/status") as f:
        size_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    limit_mb = size_kb // 1024 + 512  # the zygote is a fork of this process: room for 512 MB more
    with WorkerPool(spec("memory_hog", memory_limit_mb=limit_mb)) as pool:
        outcomes = pool.run(BATCH)
    check_batch(outcomes, "raised", exception="MemoryError")


def test_return_shapes_are_normalized_in_the_worker():
    expected = [{"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}}]
    with WorkerPool(spec("shapes")) as pool:
        outcomes = pool.run(["PYDANTIC", "DATACLASS", "NAMESPACE", "OPENAI", "nothing"])
    assert [o.calls for o in outcomes] == [expected] * 4 + [[]]
    assert {o.kind for o in outcomes} == {"returned"}


def test_non_calls_are_invalid():
    # nothing here hangs: a generous timeout, so building and freeing the 100,000-deep list on a
    # loaded machine is not taken for a hang (CI once read DEEP as "hung" at 2 s)
    with WorkerPool(spec("non_call", timeout=15.0)) as pool:
        outcomes = pool.run(["STRING", "NONAME", "BADARGS", "DEEP", "none"])
    assert [o.kind for o in outcomes] == ["invalid"] * 4 + ["returned"]
    assert "str" in outcomes[0].message and "name" in outcomes[1].message
    assert "not JSON" in outcomes[2].message and "list of length 1 is not a call" in outcomes[3].message
    assert outcomes[4].calls == []


# -- hangs and deaths


@pytest.mark.parametrize("target, detail", [
    ("segfault", "killed by SIGSEGV"),
    ("abort", "killed by SIGABRT"),
    ("exit3", "exit status 3"),
])
def test_deaths_are_pinned_on_the_input(target, detail):
    with WorkerPool(spec(target)) as pool:
        outcomes = pool.run(BATCH)
        assert pool.restarts == 1
        assert pool.run_one(GOOD).calls == GOOD_CALLS  # the restarted worker serves on
    check_batch(outcomes, "died", detail=detail)


@pytest.mark.parametrize("target", ["hang_python", "hang_regex"])
def test_hangs_are_pinned_and_killed_within_the_timeout(target):
    with WorkerPool(spec(target, timeout=0.5)) as pool:
        outcomes = pool.run(BATCH)  # returns at all: the hung worker was killed (it would spin forever)
        assert pool.restarts == 1
    check_batch(outcomes, "hung", detail="no result within 0.5 s")
    assert outcomes[1].elapsed >= 0.5  # the watchdog never fires early (how late is load, not behaviour)


def test_slow_is_not_hung():
    with WorkerPool(spec("sleepy", timeout=1.0)) as pool:
        slow = json.dumps({"name": "SLOW", "arguments": {}})
        outcomes = pool.run([slow, GOOD, slow])
        assert pool.restarts == 0
    assert [o.kind for o in outcomes] == ["returned"] * 3
    assert outcomes[0].elapsed >= 0.3  # it did take its time, and still returned


def test_a_target_that_kills_every_worker_still_finishes():
    with WorkerPool(spec("always_die")) as pool:
        outcomes = pool.run([f"x{i}" for i in range(60)])
        assert pool.restarts == 60
    assert all(o.kind == "died" and o.detail == "exit status 7" for o in outcomes)


@pytest.mark.parametrize("workers", [1, 2])
def test_many_deaths_in_large_batches_keep_order(workers):
    """Crashes spread over several batches: every input keeps its own outcome, in order."""
    texts = [json.dumps({"name": f"t{i}", "arguments": {"i": i}}) for i in range(1200)]
    bombs = {3, 255, 256, 700, 701, 1199}
    for i in bombs:
        texts[i] = "BOOM"
    with WorkerPool(spec("segfault"), workers=workers, batch_size=256) as pool:
        outcomes = pool.run(texts)
        assert pool.restarts == len(bombs)
    for i, outcome in enumerate(outcomes):
        if i in bombs:
            assert outcome.kind == "died" and outcome.detail == "killed by SIGSEGV", i
        else:
            assert outcome.calls == [{"name": f"t{i}", "arguments": {"i": i}}], i


def test_spawned_zygote_works_too():
    with WorkerPool(spec("segfault"), start_method="spawn") as pool:
        outcomes = pool.run(BATCH)
    check_batch(outcomes, "died", detail="killed by SIGSEGV")


def test_a_target_meets_the_same_recursion_limit_however_its_zygote_was_started():
    """A forked zygote inherits its parent's whole stack, Python frames and the C-level calls
    between them (pytest's, the CLI's); a spawned one (a Ray actor's) starts bare. A RecursionError
    must start at the same nesting in both, or the same seed shrinks it to different inputs."""
    texts = ["[" * n for n in range(900, 1200)]
    starts = []
    for method in ("fork", "spawn"):
        with WorkerPool(TargetSpec("fuzzer.targets.naive:parse"), start_method=method) as pool:
            outcomes = pool.run(texts)
        starts.append(next(len(t) for t, o in zip(texts, outcomes) if o.exception == "RecursionError"))
    assert starts[0] == starts[1], starts


# -- noise and processes


def test_noise_on_stdout_and_stderr_goes_nowhere(capfd):
    with WorkerPool(spec("noisy")) as pool:
        outcomes = pool.run([GOOD] * 3)
    assert [o.calls for o in outcomes] == [GOOD_CALLS] * 3
    out, err = capfd.readouterr()
    assert "garbage" not in out + err and "noise" not in out + err and "binary" not in out + err


def test_close_leaves_no_processes():
    before = descendants(os.getpid())
    pool = WorkerPool(spec("hang_regex", timeout=0.3), workers=2)
    with pool:
        pids = pool.pids
        assert len(pids) == 3 and all(not gone(p) for p in pids)
        pool.run(["BOOM", GOOD])  # a hang: one worker killed and replaced
        pids += pool.pids
    assert all(gone(p) for p in pids)
    assert descendants(os.getpid()) - before == set()
    pool.close()  # idempotent


def test_empty_run_and_lazy_start():
    pool = WorkerPool(spec("ok"))
    try:
        assert pool.run([]) == [] and not pool.started
        outcome = pool.run_one(GOOD)
        assert pool.started and isinstance(outcome, Outcome)
        assert outcome == Outcome("returned", calls=GOOD_CALLS, elapsed=outcome.elapsed)
    finally:
        pool.close()
    assert not pool.started


@pytest.mark.parametrize("ref, expected", [
    ("tests.integration.torture_targets:nope", "has no attribute 'nope'"),
    ("tests.integration.torture_target:ok", "did you mean 'tests.integration.torture_targets'"),
    ("tests.integration.torture_targets:not_callable", "dict object is not callable"),
    ("tests.integration.torture_targets", "missing ':'"),
])
def test_load_errors_come_back_as_one_line(ref, expected):
    before = descendants(os.getpid())
    pool = WorkerPool(TargetSpec(ref, cwd=ROOT))
    with pytest.raises(TargetError) as info:
        pool.start()
    assert expected in str(info.value) and "\n" not in str(info.value)
    assert descendants(os.getpid()) - before == set()


def test_import_crash_is_a_target_error(tmp_path):
    (tmp_path / "crashy_import.py").write_text("import os\nos._exit(9)\n")
    with pytest.raises(TargetError, match="died"):
        WorkerPool(TargetSpec("crashy_import:parse", cwd=str(tmp_path))).start()


ENGINE = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {root!r})
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation import WorkerPool

    pool = WorkerPool(TargetSpec("tests.integration.torture_targets:hang_regex", cwd={root!r},
                                 timeout=60), workers=2)
    with pool:
        print(json.dumps(pool.pids), flush=True)
        pool.run(["BOOM", "BOOM"])
""")


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_engine_leaves_no_workers(tmp_path, how):
    """Ctrl-C or a kill of the engine while workers spin in C code must not leave them running."""
    script = tmp_path / "engine.py"
    script.write_text(ENGINE.format(root=ROOT))
    engine = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        pids = json.loads(engine.stdout.readline())
        wait_until_spinning(pids[1:])  # both workers are now stuck in the regex, holding the GIL
        assert all(not gone(p) for p in pids)
        engine.send_signal(how)
        engine.wait(timeout=10)
        wait_until(lambda: all(gone(p) for p in pids), within=30)
    finally:
        engine.kill()
        engine.wait()


def test_unusual_texts_travel_intact():
    """Lone surrogates (encoding_error samples) and megabyte inputs (oversized_input) round-trip."""
    surrogate = json.dumps({"name": "\ud800", "arguments": {"k": "\udfff"}}, ensure_ascii=False)
    huge = json.dumps({"name": "big", "arguments": {"blob": "x" * 1_500_000}})
    with WorkerPool(spec("ok")) as pool:
        outcomes = pool.run([surrogate, "\ud800{", huge, GOOD] * 3)
    assert outcomes[0].calls == [{"name": "\ud800", "arguments": {"k": "\udfff"}}]
    assert outcomes[1].kind == "rejected"
    assert outcomes[2].calls[0]["arguments"]["blob"] == "x" * 1_500_000
    assert [o.kind for o in outcomes] == ["returned", "rejected", "returned", "returned"] * 3


def test_timeout_must_be_positive():
    with pytest.raises(ValueError, match="timeout"):
        WorkerPool(spec("ok", timeout=0))


def test_a_worker_killed_while_idle_blames_no_input():
    with WorkerPool(spec("ok"), workers=2) as pool:
        pool.run([GOOD] * 4)
        for pid in pool.pids[1:]:
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: all(gone(p) for p in pool.pids[1:]))
        outcomes = pool.run([GOOD] * 600)
        assert pool.restarts == 2
    assert all(o.calls == GOOD_CALLS for o in outcomes)


def test_workers_die_with_their_zygote():
    pool = WorkerPool(spec("hang_regex", timeout=30), workers=2)
    with pool:
        zygote, *workers = pool.pids
        os.kill(zygote, signal.SIGKILL)
        wait_until(lambda: all(gone(p) for p in workers))
        with pytest.raises(TargetError, match="supervisor process died"):
            pool.run([GOOD] * 10)
        assert not pool.started


@pytest.mark.parametrize("workers", [1, 2])
def test_outcomes_judged_as_they_arrive_are_the_outcomes_run_returns(workers):
    """``run(on_result=)``: the caller sees outcomes as messages come back (while the workers run
    the rest), each time a longer list of them, and in the end exactly what run returns — a hung
    input's pinned outcome included."""
    texts = [GOOD] * 200 + ["BOOM " + GOOD] + [GOOD, "{broken"] * 50
    seen: list[list] = []
    with WorkerPool(spec("hang_python", timeout=0.5), workers=workers) as pool:
        plain = pool.run(texts)
        arrived = pool.run(texts, on_result=lambda results: seen.append(list(results)))
    assert [o.kind for o in arrived] == [o.kind for o in plain] and arrived[200].kind == "hung"
    assert len(seen) >= 3  # several messages, not one
    for earlier, later in zip(seen, seen[1:]):
        assert all(b is not None for a, b in zip(earlier, later) if a is not None)
        assert sum(o is not None for o in later) >= sum(o is not None for o in earlier)
    assert seen[-1] == arrived or any(o is None for o in seen[-1])


def test_a_run_judged_as_it_arrives_keeps_a_second_message_queued_even_for_long_texts():
    """A worker only gets its next message at once when it has one waiting behind the running one,
    and a second one is queued only while both fit a quarter of the socket buffer. Texts of
    kilobytes (an executor's scenarios) used to go four messages per run, each too big to queue: the
    worker then waited for every one while the caller judged. Messages are cut small enough to
    queue, and the outcomes are the same."""
    text = json.dumps({"name": "get_weather", "arguments": {"city": "Paris " * 500}})  # 3 KB
    queued: list = []
    with WorkerPool(spec("ok"), workers=1) as pool:
        pool.start()
        send = pool._send

        def spying(slot, *args):
            behind = len(slot.inflight)
            sent = send(slot, *args)
            queued.append((behind, sent))
            return sent

        pool._send = spying
        outcomes = pool.run([text] * 256, on_result=lambda results: time.sleep(0.002))
    assert [o.kind for o in outcomes] == ["returned"] * 256
    assert outcomes[0].calls[0]["arguments"]["city"] == "Paris " * 500
    assert any(behind == 1 and sent for behind, sent in queued)  # sent while another ran
    assert not any(behind == 1 and not sent for behind, sent in queued)  # never refused for its size
