"""The worker's coverage tracer, run in this process: the lines an input reaches first, the target
functions it ran, and — asked with a needle — the function that made a damage."""

from __future__ import annotations

from fuzzer.isolation.instrument import Instruments


def _unquote(text: str) -> str:
    return text.replace('"', "")  # the damage: a quote dropped from a string value


def _target(text: str) -> list:
    names = [_unquote(part) for part in text.split(",")]
    return [{"name": "get_weather", "arguments": {"city": name}} for name in names]


def _traced(instruments: Instruments, text: str, trace: object) -> tuple:
    instruments.begin(text, trace)
    try:
        _target(text)
    finally:
        result = instruments.end()
    return result


def test_a_needle_finds_the_function_whose_return_value_first_held_the_damage():
    instruments = Instruments(_target, coverage=True, audit=False, share=0.0)
    lines, functions, unsafe, maker = _traced(instruments, 'Xi"an', ("damage", ("Xian", 'Xi"an')))
    assert maker == "test_instrument.py:_unquote"
    assert {"test_instrument.py:_target", "test_instrument.py:_unquote"} <= set(functions)
    assert lines and all(name == "test_instrument.py" for name, _line in lines) and unsafe == ()


def test_lines_are_reported_once_and_a_needle_is_still_watched_after_every_line_was_reached():
    instruments = Instruments(_target, coverage=True, audit=False, share=0.0)
    first = _traced(instruments, 'Xi"an', True)
    assert first[0] and len(first) == 3  # no needle: no maker in the answer
    again = _traced(instruments, 'Xi"an', True)
    assert again[0] == () and "test_instrument.py:_unquote" in again[1]  # nothing new reached
    lines, _functions, _unsafe, maker = _traced(instruments, 'Xi"an', ("damage", ("Xian", 'Xi"an')))
    assert lines == () and maker == "test_instrument.py:_unquote"


def test_an_input_that_is_not_traced_reports_nothing():
    instruments = Instruments(_target, coverage=True, audit=False, share=0.0)
    assert _traced(instruments, 'Xi"an', False) == ((), (), ())
