"""The slow probe's reduction, against a target whose time is a known function of its input."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings, strategies as st

from fuzzer.harnesses.parser.explore import SLOW_EXPONENT, SlowProbe

OPENER = '"'


def simulated_seconds(text: str) -> float:
    """A backtracking regex after an opening quote: quadratic in the run of spaces that follows
    the first quote, linear in the rest of the text."""
    at = text.find(OPENER)
    if at < 0:
        return 1e-6 * len(text)
    run = len(text[at + 1:]) - len(text[at + 1:].lstrip(" "))
    return 1e-6 * len(text) + 1e-7 * run * run


def simulated_run(texts: list) -> list:
    return [SimpleNamespace(kind="returned", elapsed=simulated_seconds(t)) for t in texts]


junk = st.text(alphabet="abc{}:,\n<>", max_size=60)


@settings(max_examples=30, deadline=None)
@given(before=junk, after=junk)
def test_the_reduced_finding_keeps_the_run_and_what_it_needs_and_drops_the_rest_of_the_seed(before, after):
    probe = SlowProbe(seed=0, run=simulated_run, timeout=10.0)
    found = probe.measure(before + OPENER, " ", after, 128)
    assert found.exponent >= SLOW_EXPONENT  # the model is slow as found

    reduced = probe.reduce(found)

    assert reduced.exponent >= SLOW_EXPONENT and reduced.fragment == " "
    assert reduced.prefix.endswith(OPENER)  # what the slow code needs stays
    assert reduced.suffix == ""  # nothing after the run matters to it
    assert len(reduced.prefix) <= len(found.prefix)
    if len(before) >= 16:
        assert len(reduced.prefix) <= len(found.prefix) // 2 + 1


def test_a_fragment_longer_than_needed_is_cut_to_the_piece_that_grows():
    probe = SlowProbe(seed=0, run=simulated_run, timeout=10.0)
    found = probe.measure('x"', "  ", "", 64)
    assert probe.reduce(found).fragment == " "


def test_a_stored_slow_entry_still_slow_is_judged_slow_even_where_its_sizes_now_run_fast():
    """Replay and reproduce re-time a stored entry; sizes that run too fast to time on this
    machine are grown (a quadratic stays quadratic), and a linear target passes."""
    from fuzzer.harnesses.parser.explore import remeasure

    probe = SlowProbe(seed=0, run=simulated_run, timeout=10.0)
    stored = {"prefix": OPENER, "fragment": " ", "suffix": "", "count": 8}  # 64 spaces: microseconds
    growth, slow = remeasure(probe.measure, stored)
    assert slow and growth.counts[0] > 8
    linear = SlowProbe(seed=0, run=lambda texts: [SimpleNamespace(kind="returned", elapsed=1e-6 * len(t))
                                                  for t in texts], timeout=10.0)
    assert remeasure(linear.measure, stored)[1] is False


def test_a_reduction_the_budget_cuts_short_says_so():
    """A measurement that does not run (the budget is over) leaves the finding unminimized, and
    the probe says so, so the finding is never shown as minimized when it is not."""
    probe = SlowProbe(seed=0, run=simulated_run, timeout=10.0)
    found = probe.measure("abc{}" * 8 + OPENER, " ", "", 128)
    probe.reduce(found)
    assert probe.reduced_fully
    cut = SlowProbe(seed=0, run=lambda texts: [None] * len(texts), timeout=10.0)
    assert cut.reduce(found) is found and not cut.reduced_fully


def test_a_candidate_that_hangs_is_timed_again_at_fewer_repetitions_not_dropped():
    """Less context can make the slow code slower still (a regex that is quadratic after junk is
    cubic right after the quote): the smaller candidate hangs at the run's size. It is the better
    finding, so it is timed again at a quarter of the repetitions, down to one."""
    timeout = 2.0

    def seconds(text: str) -> float:
        at = text.find(OPENER)
        if at < 0:
            return 1e-6 * len(text)
        run = len(text[at + 1:]) - len(text[at + 1:].lstrip(" "))
        return 1e-7 * run ** (3 if at == 0 else 2) + 1e-6 * len(text)

    def run(texts: list) -> list:
        return [SimpleNamespace(kind="hung", elapsed=timeout) if seconds(t) > timeout
                else SimpleNamespace(kind="returned", elapsed=seconds(t)) for t in texts]

    probe = SlowProbe(seed=0, run=run, timeout=timeout)
    found = probe.measure("abc" * 6 + OPENER, " ", "", 256)
    reduced = probe.reduce(found)
    assert reduced.prefix == OPENER and reduced.counts[0] < 256, reduced
    assert probe.reduced_fully, probe.stopped_because
    assert reduced.exponent >= 2.5  # the cubic growth, measured where it does not hang


def test_a_careful_measurement_stops_before_an_input_that_would_hang():
    """A reduction candidate that is cubic where the run it came from was quadratic would hang
    at the larger sizes; its first sizes already show it, so none of them is run (each hang costs
    a whole timeout and a new worker), and it is timed again at fewer repetitions instead."""
    timeout, ran = 2.0, []

    def run(texts: list) -> list:
        ran.extend(texts)
        return [SimpleNamespace(kind="hung", elapsed=timeout) if 1e-7 * len(t) ** 3 > timeout
                else SimpleNamespace(kind="returned", elapsed=1e-7 * len(t) ** 3) for t in texts]

    probe = SlowProbe(seed=0, run=run, timeout=timeout)
    assert probe.measure("", " ", "", 200, careful=True) is None and probe.hung
    assert not any(1e-7 * len(t) ** 3 > timeout for t in ran)
    assert len(ran) == 1  # 200 spaces take 0.8 s: 1,600 would take a minute, the rest are not run
    growth = probe._tried("", " ", "", 200)
    # 50 spaces, then 100 (a tenth of a second, 8x the 50): 400 would hang; so 12, 24, 48, 96
    assert growth is not None and growth.counts == (12, 24, 48, 96) and growth.exponent >= 2.5
    assert not any(1e-7 * len(t) ** 3 > timeout for t in ran)


def test_a_reduction_times_its_candidates_at_sizes_cheaper_than_the_run_found():
    """A run found at a second is reduced with candidates whose largest input takes about
    REDUCE_S: dozens of measurements of the found sizes would stall the campaign."""
    spent = []

    def run(texts: list) -> list:
        outcomes = simulated_run(texts)
        spent.extend(o.elapsed for o in outcomes)
        return outcomes

    probe = SlowProbe(seed=0, run=run, timeout=10.0)
    found = probe.measure("abc{}" * 8 + OPENER, " ", "", 400)
    assert found.seconds[-1] > 0.9
    spent.clear()
    reduced = probe.reduce(found)
    assert probe.reduced_fully and reduced.prefix.endswith(OPENER) and reduced.exponent >= SLOW_EXPONENT
    assert reduced.counts[0] < found.counts[0]
    assert max(spent) < found.seconds[-1] / 2
    assert sum(spent) < 20 * found.seconds[-1]  # without the rescaling: one found run per candidate size


@settings(max_examples=200, deadline=None)
@given(exponent=st.floats(1.6, 4.0), last_ms=st.floats(0.03 * 1000, 3000.0), count=st.integers(1, 4000),
       fragment=st.sampled_from([" ", "\n", "ab", "{\"a\":"]), timeout=st.floats(0.5, 30.0))
def test_the_sampled_input_runs_long_enough_to_be_caught_in_the_slow_code_and_never_hangs(
        exponent, last_ms, count, fragment, timeout):
    """The stack is sampled on a run predicted to take about SAMPLE_S (a fresh worker's start is
    then a small share of it), at least the largest measured, at most a quarter of the timeout,
    and half way through the time predicted."""
    from fuzzer.harnesses.parser.explore import MAX_PROBE_CHARS, SAMPLE_S, Growth

    counts = (count, 2 * count, 4 * count, 8 * count)
    texts = ["x" + fragment * c for c in counts]
    last = last_ms / 1000
    seconds = tuple(last * (len(t) / len(texts[-1])) ** exponent for t in texts)
    growth = Growth("x", fragment, "", counts, seconds)
    text, after_s = growth.sampled(timeout)
    assert len(text) >= len(texts[-1]) and len(text) <= max(len(texts[-1]), 4 * MAX_PROBE_CHARS)
    predicted = last * (len(text) / len(texts[-1])) ** exponent
    wanted = min(SAMPLE_S, timeout / 4)
    if last >= wanted:
        assert text == texts[-1]
    elif len(text) + len(fragment) <= 4 * MAX_PROBE_CHARS:  # not capped by size
        assert wanted * 0.4 <= predicted <= wanted * 1.01
    assert after_s <= wanted / 2 + 1e-9 and after_s <= predicted / 2 + 1e-9


def fence_seconds(text: str) -> float:
    """A fence stripper that removes one fence per pass over the whole text (quadratic)."""
    return 1e-6 * len(text) + 2e-9 * len(text) * text.count("```")


def test_a_hang_whose_input_repeats_a_fence_is_found_to_be_a_super_linear_path():
    """Every hang is probed for growth: the hang's input, far above the timeout, holds a run of
    fences; repeated far below it, the time grows quadratically — a slow finding met too late."""
    def run(texts):
        return [SimpleNamespace(kind="hung" if fence_seconds(t) > 2.0 else "returned", elapsed=min(2.0, fence_seconds(t)))
                for t in texts]

    hang = 'Sure! Here it is: <tool_call>{"name": "get_weather"}</tool_call> ' + "```json\n" * 40_000 + "done"
    assert run([hang])[0].kind == "hung"
    growth = SlowProbe(seed=0, run=run, timeout=2.0).from_hang(hang, tokens=["<tool_call>", "</tool_call>"])
    assert growth is not None and growth.exponent >= SLOW_EXPONENT
    assert "`" in growth.fragment and len(growth.text(growth.counts[-1])) < len(hang)


def test_an_endless_loop_is_no_growth():
    """A hang on any input that holds a marker, whatever its size: nothing grows, it stays a hang."""
    def run(texts):
        return [SimpleNamespace(kind="hung" if "<|stop|>" in t else "returned", elapsed=2.0 if "<|stop|>" in t
                                else 1e-6 * len(t)) for t in texts]

    assert SlowProbe(seed=0, run=run, timeout=2.0).from_hang("a <|stop|> b" + " " * 5000, tokens=["<|stop|>"]) is None
    # a parser stuck on every input costs one run to tell, not a timeout per fragment tried
    runs = []
    stuck = SlowProbe(seed=0, run=lambda texts: runs.append(texts) or [SimpleNamespace(kind="hung", elapsed=2.0)
                                                                       for _ in texts], timeout=2.0)
    assert stuck.from_hang("```json\n" * 1000, tokens=["```"]) is None and len(runs) == 1


def test_the_probe_repeats_the_dictionarys_structural_tokens_too():
    probe = SlowProbe(seed=0, run=simulated_run, timeout=2.0, fragments=["```", "<tool_call>", "x" * 40])
    assert "```" in probe.fragments and "<tool_call>" in probe.fragments
    assert "x" * 40 not in probe.fragments  # a long constant of the source is no fragment


def test_a_growth_whose_stack_was_not_caught_is_filed_as_the_corpus_s_slow_entry_of_its_tool_and_fragment_kind():
    """A gate's campaign meets a slow path the corpus holds, but no stack is caught this time (the
    run ended before the sample on a loaded machine): it is that entry, not a NEW "slow on
    repeated whitespace" blocking a merge of an unchanged target."""
    from corpus.entry import Entry
    from fuzzer.harnesses.parser.slow_findings import _known_slow, fragment_kind

    def slow(tool, fragment, signature):
        return Entry(text="x", signature=signature, verdict="slow", title=f"slow: {signature}", tool=tool,
                     what="slow|", scenario={"growth": {"prefix": "```", "fragment": fragment, "suffix": ""}})

    entries = [Entry(text="y", signature="crash-1", verdict="crash", tool="get_weather"),
               slow("search_flights", "\n", "slow-other-tool"), slow("get_weather", "{", "slow-brackets"),
               slow("get_weather", "\n", "slow-newlines")]
    assert _known_slow(entries, "get_weather", fragment_kind(" ")).id == "slow-newlines"
    assert _known_slow(entries, "get_weather", fragment_kind("{")).id == "slow-brackets"
    assert _known_slow(entries, "book_hotel", fragment_kind(" ")) is None
    assert _known_slow([], "get_weather", fragment_kind(" ")) is None
    # a stack caught now where the corpus's entry had none: only an entry filed stackless is it
    assert _known_slow(entries, "get_weather", fragment_kind(" "), stackless=True).id == "slow-newlines"
    filed_by_stack = [Entry(text="x", signature="slow-in-parse", verdict="slow", tool="get_weather", what="slow",
                            scenario={"growth": {"fragment": " "}})]
    assert _known_slow(filed_by_stack, "get_weather", fragment_kind(" "), stackless=True) is None
    assert _known_slow(filed_by_stack, "get_weather", fragment_kind(" ")).id == "slow-in-parse"
