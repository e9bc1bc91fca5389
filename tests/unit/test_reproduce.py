"""Reproduce commands and one-line JSON must say exactly the input, and run as printed."""

from __future__ import annotations

import json
import shlex
import sys

from hypothesis import given
from hypothesis import strategies as st

from fuzzer.engine.text import json_line
from fuzzer.harnesses.parser.reproduce import REPRODUCE_LIMIT, command_for, inline_command, needs_file, python_literal

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
