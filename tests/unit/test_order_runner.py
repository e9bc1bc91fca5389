"""The order runner's pin (fuzzer/isolation/worker.py, OrderRunner): whatever a worker runs, the
shared-memory pin holds that input before it runs, so a hang or a death is blamed on it.

The truncation sweep pins a prefix by moving the pinned size of its whole text (OrderRunner.enter_prefix);
these properties check it pins exactly what running the prefix as a text would, in any order of
whole texts and prefixes, for non-ASCII texts and for texts longer than the buffer.
"""

from __future__ import annotations

import array

from hypothesis import given, settings, strategies as st

from fuzzer.isolation.spec import PIN_HEADER
from fuzzer.isolation.worker import OrderRunner, read_pin
from fuzzer.harnesses.parser.outcome import declined_quietly, outcome_of

texts = st.text(alphabet=st.sampled_from("ab{}\"é😀\n"), max_size=40) | st.text(max_size=40)
tags = st.sampled_from(["json\x1f", "json\x1ftruncate_anywhere", "fenced\x1fnull_for_required"])


class Served:
    """What a worker serves, reduced to what the runner calls: it records the texts it runs."""

    def __init__(self) -> None:
        self.ran: list = []

    def run(self, text: str, options: object) -> tuple:
        self.ran.append(text)
        return (1, 0.0, "ValueError", "no", None)

    lean = run


def runner_with(pin_bytes: int) -> tuple[OrderRunner, list]:
    served = Served()
    seq = memoryview(array.array("q", [0] * 4)).cast("B").cast("q")
    return OrderRunner(served, outcome_of, seq, 0, memoryview(bytearray(pin_bytes)), 0), served.ran


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(st.tuples(texts, tags, st.booleans(), st.integers(0, 60)), min_size=1, max_size=8),
       small=st.booleans())
def test_every_input_is_pinned_before_it_runs_whole_or_as_a_prefix(steps, small):
    pin_bytes = PIN_HEADER + (24 if small else 4096)
    runner, ran = runner_with(pin_bytes)
    for number, (text, tag, as_prefix, end) in enumerate(steps):
        end = min(end, len(text))
        expected = text[:end] if as_prefix else text
        if as_prefix:  # as the parser's orders run a cut-off
            if not runner.enter_prefix(text, end, tag, number):
                runner.enter(tag, number, text[:end])
            row = runner.served.lean(text[:end], runner.trace)
            assert declined_quietly(row) and outcome_of(row).kind == "rejected"
        else:
            assert runner(text, tag, number).kind == "rejected"
        assert ran[-1] == expected
        pinned_tag, pinned, whole, index = read_pin(runner.pin, number)
        data = f"{tag}\x00{expected}".encode("utf-8", "surrogatepass")
        assert index == number
        assert whole == (len(data) <= pin_bytes - PIN_HEADER)
        if whole:
            assert (pinned_tag, pinned) == (tag, expected)
        else:  # only the beginning fits (a character cut in two reads as U+FFFD)
            full = f"{tag}\x00{expected}"
            kept = (pinned_tag + "\x00" + pinned if pinned else pinned_tag).rstrip("\ufffd")
            assert full.startswith(kept) and len(kept.encode("utf-8", "surrogatepass")) >= pin_bytes - PIN_HEADER - 4


def test_a_row_that_reached_new_lines_or_did_something_unsafe_is_not_a_quiet_decline():
    quiet, lines, unsafe = ((), (), ()), ((("p.py", 3),), (), ()), ((), (), (("exec", "ran code", ()),))
    assert declined_quietly((1, 0.0, "ValueError", "m", None, quiet))
    assert declined_quietly((0, 0.0, [], quiet)) and declined_quietly((0, 0.0, []))
    assert not declined_quietly((0, 0.0, [{"name": "f", "arguments": {}}], quiet))
    assert not declined_quietly((1, 0.0, "ValueError", "m", None, lines))
    assert not declined_quietly((1, 0.0, "ValueError", "m", None, unsafe))
    assert not declined_quietly((2, 0.0, "KeyError", "m", (), quiet))
