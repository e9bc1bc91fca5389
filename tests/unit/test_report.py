"""The report helpers: reproduce commands and one-line JSON must say exactly the input."""

from __future__ import annotations

import json
import shlex

from hypothesis import given
from hypothesis import strategies as st

from fuzzer.report import json_line, python_literal, reproduce_snippet

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
def test_reproduce_command_carries_the_exact_input(text):
    command = reproduce_snippet("fuzzer.targets.naive:parse", text)
    argv = shlex.split(command)
    assert argv[:2] == ["python", "-c"]
    code = argv[2]
    literal = code[code.index("print(t(") + len("print(t("):-2]
    assert eval(literal) == text  # noqa: S307


@given(st.dictionaries(st.text(), st.text()))
def test_json_lines_are_one_line_and_round_trip(value):
    line = json_line(value)
    assert line.splitlines() == [line] or line == ""
    assert json.loads(line) == value
