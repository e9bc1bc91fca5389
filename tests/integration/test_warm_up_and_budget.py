"""Timing a target only once it is warm, confirming a hang before calling it one, and a budget
whose share for confirming and shrinking leaves the search its time (issue 26, defect 10) — with
real worker processes, through the CLI."""

from __future__ import annotations


ONCE_SLOW = """
import mmap
import time
from fuzzer.targets.agent_state_machine import run as clean

_stalled = mmap.mmap(-1, 1)  # shared by every worker forked after this module was loaded
_played = []


def run(client, tools, user_input):
    _played.append(1)
    if len(_played) >= 3 and not _stalled[0]:  # one episode of the whole run (not the warm-up), far past
        _stalled[0] = 1                        # --timeout: a moment of a loaded machine
        while True:
            time.sleep(0.01)
    return clean(client, tools, user_input)
"""


def test_a_hang_that_does_not_hang_again_is_a_note_not_a_finding(cli, tmp_path):
    (tmp_path / "once_slow.py").write_text(ONCE_SLOW, encoding="utf-8")
    result = cli("agent", "--agent", "once_slow:run", "--max-examples", "40", "--seed", "1", "--report", "r.json")
    report = result.report()
    assert result.code == 0, result
    assert report["failures"] == []
    assert any("finished in time when played again: not reported as a hang" in n for n in report["notes"]), report


COLD_EXECUTOR = """
import time
from fuzzer.targets.executor_robust import make_executor as robust

_warm = []


def make_executor(tools):
    executor = robust(tools)

    def execute(name, arguments):
        if not _warm:  # the first call in a process: a client and its schemas are built (CPU time)
            end = time.process_time() + 1.5
            while time.process_time() < end:
                pass
            _warm.append(1)
        return executor.execute_tool(name, arguments)

    return execute
"""


def test_an_executor_s_cold_first_call_is_warmed_up_not_reported_as_a_hang(cli, tmp_path):
    (tmp_path / "cold_executor.py").write_text(COLD_EXECUTOR, encoding="utf-8")
    result = cli("executor", "--executor", "cold_executor:make_executor", "--max-examples", "200", "--seed", "1",
                 "--timeout", "1", "--report", "r.json", "-q")
    assert result.code == 0, result
    assert result.report()["failures"] == []
    assert not any(note.startswith("warming") for note in result.report()["notes"])


COLD_TRUNCATING_LOOP = """
import json
import time

_built = []


def lenient(text):
    for tail in ("", "}", '"}', "]}", '"]}'):
        try:
            return json.loads(text + tail)
        except ValueError:
            continue
    return json.loads(text)


def run(client, tools, user_input):
    if not _built:  # the framework's cold start: more than --timeout, once per process
        time.sleep(2.5)
        _built.append(1)
    messages = [{"role": "user", "content": user_input}]
    while True:
        message = client.chat.completions.create(model="m", messages=messages, tools=tools.openai()).choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls]})
        for c in message.tool_calls:  # runs a call cut off at the length limit (the planted bug), and more
            result = tools[c.function.name](**lenient(c.function.arguments))
            messages.append({"role": "tool", "tool_call_id": c.id, "content": json.dumps(result)})
"""


def test_a_planted_truncated_call_bug_is_found_and_no_failure_is_dropped_or_left_uncounted(cli, tmp_path):
    """Issue 26, defect 10: a loop with a cold start and several bugs, 15 s. The planted bug (it
    runs a call cut off by finish_reason=length) is found; every failure is reported, and those the
    budget's share for confirming left unconfirmed are counted and marked as such."""
    (tmp_path / "cold_loop.py").write_text(COLD_TRUNCATING_LOOP, encoding="utf-8")
    result = cli("agent", "--agent", "cold_loop:run", "--budget", "15", "--seed", "1", "--report", "r.json")
    report = result.report()
    assert result.code == 1, result
    verdicts = {f["verdict"] for f in report["failures"]}
    assert "truncated_execution" in verdicts and "hang" not in verdicts, verdicts
    unconfirmed = [f for f in report["failures"] if f["confirmed"] is None]
    assert report["unconfirmed"] == len(unconfirmed)
    assert all(f["confirmed"] in (True, False, None) for f in report["failures"])
    assert all("not confirmed" in f["shrink_note"] and not f["minimized"] for f in unconfirmed)
    summary = f"{len(report['failures'])} distinct failure(s)"
    assert summary in result.stdout
    assert ("not confirmed" in result.stdout.split(summary, 1)[1]) == bool(unconfirmed)
