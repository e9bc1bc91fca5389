"""Reproduce commands and one-line JSON must say exactly the input, and run as printed."""

from __future__ import annotations

import json
import shlex
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzer.engine.text import json_line
from fuzzer.harnesses.parser.reproduce import REPRODUCE_LIMIT, Expected, command_for, inline_command, needs_file, python_literal

texts = st.text() | st.builds(lambda a, frag, n, b: a + frag * n + b, st.text(max_size=20),
                              st.text(min_size=1, max_size=16), st.integers(0, 3000), st.text(max_size=20))


@given(texts)
def test_python_literal_evaluates_to_the_text(text):
    assert eval(python_literal(text)) == text  # noqa: S307 - the expression under test


def test_runs_of_a_fragment_are_written_as_repetition():
    text = '{"a": ' + "[" * 5000 + "1" + "]" * 5000 + "}"
    literal = python_literal(text)
    assert len(literal) < 60 and "* 5000" in literal


@given(st.text(max_size=300))
def test_reproduce_command_carries_the_exact_input_and_the_running_interpreter(text):
    argv = shlex.split(inline_command("fuzzer.targets.naive:parse", text))
    assert argv[:2] == [sys.executable, "-c"]  # not a bare `python`, which may not see the venv
    code = argv[2]
    literal = code[code.index("print(t(") + len("print(t("):-2]
    assert eval(literal) == text  # noqa: S307


def test_long_inputs_and_history_get_a_reproducer_file_command(tmp_path):
    import random

    rnd = random.Random(1)
    long_text = "".join(rnd.choice("abc{}[]\",:") for _ in range(REPRODUCE_LIMIT * 2))
    assert needs_file(long_text) and needs_file("x", ["earlier"]) and not needs_file("x")
    command = command_for(target="m:f", text=long_text, reproduce_dir=str(tmp_path), signature="crash-0123")
    assert shlex.split(command) == [sys.executable, "-m", "fuzzer", "reproduce", str(tmp_path / "crash-0123.json")]


INVISIBLE = "\x85\xa0\xad\u2000\u2007\u200b\u200d\u200e\u2028\u2029\u202f\u2060\u3000\ufeff"


@given(st.dictionaries(st.text(), st.text() | st.lists(st.sampled_from(INVISIBLE + "aé "), max_size=5).map("".join)))
def test_json_lines_are_one_line_round_trip_and_show_every_character(value):
    """A no-break or zero-width space in a value prints escaped (the same JSON value): an expected
    and a returned call that differ only there must not print alike."""
    line = json_line(value)
    assert line.splitlines() == [line] or line == ""
    assert json.loads(line) == value
    assert not any(c in line for c in INVISIBLE)


def test_fuzz_reproduce_exits_1_while_a_corpus_entry_still_fails_and_0_once_fixed(tmp_path):
    """A script that runs `fuzz reproduce` on an entry reads its status: 1 while the bug is there."""
    from click.testing import CliRunner

    from corpus.store import Entry
    from fuzzer.cli import main

    calls = [{"name": "get_weather", "arguments": {"city": "a, ]"}}]
    text = '```json\n{"name": "get_weather", "arguments": {"city": "a, ]"}}\n```'
    path = tmp_path / "entry.json"
    path.write_text(Entry(text=text, signature="corruption-000000000001", verdict="corruption", calls=calls,
                          tool="get_weather", format="fenced").dumps())
    broken = CliRunner().invoke(main, ["reproduce", str(path), "--target", "fuzzer.targets.naive:parse"])
    assert broken.exit_code == 1 and "still fails" in broken.output, broken.output
    fixed = CliRunner().invoke(main, ["reproduce", str(path), "--target", "fuzzer.targets.reference:parse"])
    assert fixed.exit_code == 0 and "still fails" not in fixed.output, fixed.output


@given(texts)
def test_a_preview_too_long_to_show_whole_is_exact_when_it_is_a_repetition(text):
    """A long input shown as its Python expression (a fence and a 512-newline run) says exactly the
    input; otherwise it is the JSON string, cut, with the input's length."""
    from fuzzer.engine.text import preview

    shown = preview(text)
    assert len(shown) <= 160 + 24
    if not shown.startswith('"'):
        literal, _, size = shown.rpartition(" (")
        assert eval(literal) == text and size == f"{len(text):,} chars)"  # noqa: S307


@given(texts, st.integers(min_value=200, max_value=4000))
def test_a_wide_preview_that_fits_shows_a_repetition_as_one_too(text, limit):
    """``fuzz minimize`` shows its input with room for 2,000 characters: a run that fits there is
    still shown as its expression once it is wider than a line, and whatever is shown is exact."""
    from fuzzer.engine.text import json_line, preview
    from fuzzer.harnesses.parser.reproduce import python_literal

    shown, whole, literal = preview(text, limit), json_line(text), python_literal(text)
    as_literal = f"{literal} ({len(text):,} chars)"
    shorter = len(literal) <= limit - 20 and (len(whole) > limit or 4 * len(literal) <= len(whole))
    if len(whole) > 160 and shorter:
        assert shown == as_literal and eval(literal) == text  # noqa: S307
    elif len(whole) <= limit:
        assert shown == whole
    else:
        assert shown.endswith(f" ({len(text)} chars)") and len(shown) <= limit + 4


def test_fuzz_minimize_shows_a_run_of_brackets_as_one():
    from fuzzer.engine.text import preview

    assert preview("[" * 1112 + "1", 2000) == "'[' * 1112 + '1' (1,113 chars)"


# -- findings judged against the ground truth: their commands exit 1 while the answer is wrong ----

CITY = [{"name": "get_weather", "arguments": {"city": "a, ]"}}]


@pytest.mark.parametrize("calls, may_reject, rejected, returned, still", [
    (CITY, False, False, CITY, None),                                   # fixed: exactly the truth
    (CITY, False, False, [{"name": "get_weather", "arguments": {"city": "a]"}}], "other calls than written"),
    (CITY, False, True, None, "a valid output rejected"),               # a false reject
    (CITY, False, False, [], "no call returned from an output that writes some"),
    (CITY, True, True, None, None),                                     # an anomaly may be rejected...
    (CITY, True, False, [], "no call returned from an output that writes some"),  # ...not read as no call
    (None, True, False, [], None),                                      # it denotes no call: none is right
    (None, True, False, CITY, "calls returned from an output that denotes none"),
    ([], False, False, [], None),
])
def test_expected_follows_the_oracles_rows(calls, may_reject, rejected, returned, still):
    assert Expected(calls, may_reject).still_fails(rejected, returned) == still


def _run_inline(command: str, capsys) -> tuple[int, str]:
    """Run a printed ``python -c`` command's code in this process (no new process: a unit test)."""
    argv = shlex.split(command)
    assert argv[:2] == [sys.executable, "-c"], command
    with pytest.raises(SystemExit) as info:
        exec(argv[2], {})  # noqa: S102 - the printed command under test
    return info.value.code, capsys.readouterr().out


def test_a_corruptions_command_exits_1_while_the_answer_differs_and_0_once_fixed(capsys):
    # it printed the wrong calls and exited 0: a script checking the command saw a pass
    text = "{'name': 'get_weather', 'arguments': {'city': 'a, ]'}}"  # single quotes: malformed_json
    command = inline_command("fuzzer.targets.naive:parse", text, Expected(CITY, may_reject=True))
    code, out = _run_inline(command, capsys)
    assert code == 1 and "still fails: other calls than written" in out, out
    code, out = _run_inline(command.replace("fuzzer.targets.naive", "fuzzer.targets.reference"), capsys)
    assert code == 0 and out.startswith("rejected: ValueError"), out  # an anomaly rejected cleanly: fixed


def test_a_false_rejects_command_exits_1_while_rejected_and_carries_the_declared_types(capsys):
    text = '```json\n{"name": "get_weather", "arguments": {"city": "a, ]"}}\n```'
    command = inline_command("fuzzer.targets.naive:parse", text, Expected(CITY, may_reject=False),
                             reject_on=["builtins:ValueError"])
    assert "reject_on=['builtins:ValueError']" in shlex.split(command)[2]
    code, out = _run_inline(command, capsys)
    assert code == 1 and "still fails" in out, out
    code, out = _run_inline(command.replace("fuzzer.targets.naive", "fuzzer.targets.reference"), capsys)
    assert code == 0 and out.startswith("returned: "), out


def test_fuzz_reproduce_checks_a_reproducer_files_expected_calls(tmp_path):
    from click.testing import CliRunner

    from fuzzer.cli import main
    from fuzzer.harnesses.parser.reproduce import reproducer_document, write_reproducer

    text = "{'name': 'get_weather', 'arguments': {'city': 'a, ]'}}" + " " * 3 * REPRODUCE_LIMIT  # too long inline
    path = tmp_path / "r.json"
    write_reproducer(str(path), reproducer_document(target="fuzzer.targets.naive:parse", text=text,
                                                    expected=Expected(CITY, may_reject=True)))
    broken = CliRunner().invoke(main, ["reproduce", str(path)])
    assert broken.exit_code == 1 and "still fails: other calls than written" in broken.output, broken.output
    fixed = CliRunner().invoke(main, ["reproduce", str(path), "--target", "fuzzer.targets.reference:parse"])
    assert fixed.exit_code == 0, fixed.output


def test_fuzz_reproduce_of_an_anomaly_entry_accepts_a_clean_rejection(tmp_path):
    # an anomaly's truth may be rejected (the oracle's row); "still fails: a valid output
    # rejected" kept a fixed entry failing
    from click.testing import CliRunner

    from corpus.store import Entry
    from fuzzer.cli import main

    path = tmp_path / "entry.json"
    path.write_text(Entry(text="{'name': 'get_weather', 'arguments': {'city': 'a, ]'}}", calls=CITY,
                          signature="corruption-000000000002", verdict="corruption", tool="get_weather",
                          format="json", anomaly_class="malformed_json", operator="single_quotes").dumps())
    fixed = CliRunner().invoke(main, ["reproduce", str(path), "--target", "fuzzer.targets.reference:parse"])
    assert fixed.exit_code == 0 and "rejected: ValueError" in fixed.output, fixed.output
    broken = CliRunner().invoke(main, ["reproduce", str(path), "--target", "fuzzer.targets.naive:parse"])
    assert broken.exit_code == 1, broken.output


def _finding(verdict: str):
    from corpus.signature import Signature
    from fuzzer.harnesses.parser.findings import Finding
    from fuzzer.harnesses.parser.outcome import Outcome
    from fuzzer.harnesses.parser.oracle import Verdict
    from strategies import Sample

    sample = Sample(text="```\n" + "\n" * 64, format="deepseek", anomaly_class="exploration", operator="repetition",
                    calls=None, truth_known=False)
    outcome = Outcome(kind="rejected", exception="ValueError", message="could not parse tool call")
    return Finding(signature=Signature(f"{verdict}-0123456789ab", f"{verdict}: in naive.py:parse", "k"),
                   verdict=Verdict(verdict), reason="time grows as n^2.9", sample=sample, outcome=outcome,
                   target="fuzzer.targets.naive:parse")


def test_a_slow_finding_shows_no_unrelated_exception():
    # the ValueError its short input was rejected with said nothing about what is slow
    from fuzzer.harnesses.parser.render import finding_lines

    slow = _finding("slow")
    assert slow.exception is None and slow.to_report()["exception"] is None
    assert not any(line.strip().startswith("exception:") for line in finding_lines(1, slow))
    crash = _finding("crash")  # the same outcome on another verdict still shows it
    assert any(line.strip() == "exception: ValueError: could not parse tool call" for line in finding_lines(1, crash))
