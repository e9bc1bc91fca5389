"""The stream harness on the engine's loop, in-process: the served object, orders drawn and judged
from a seed, the split and output shrinkers, the verdicts registered, corpus entries, and the
oracle and reference-parser fixes found by running it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

import strategies as tf
from fuzzer.harnesses.stream.checks import StreamCase, judge, violations_of
from fuzzer.harnesses.stream.contract import parser_maker
from fuzzer.harnesses.stream.splits import deltas, markers_of, shrink_split
from fuzzer.harnesses.stream.worker import Settings, StreamOutcome, StreamServer, StreamSpec, run_stream

REGISTRY = tf.builtin_registry()
HERMES = markers_of("hermes")
NAIVE = "fuzzer.targets.stream_naive:make_parser"
REFERENCE = "fuzzer.targets.stream_reference:make_parser"


def _server(parser: str = NAIVE, **settings: object) -> StreamServer:
    return StreamServer(StreamSpec(settings=Settings(parser=parser, **settings)))


class _Runner:
    """What an order runs with in a worker (the pool's OrderRunner), without the pool."""

    def __init__(self, served: StreamServer):
        self.served, self.entered = served, []

    def enter(self, tag: str, index: int, text: str = "") -> None:
        self.entered.append((tag, index))


# -- the served object -------------------------------------------------------------------------------


def test_the_server_judges_a_stream_it_is_sent_and_reads_the_probe():
    server = _server()
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    truth = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    kind, outcome = server.run(StreamCase(text=text, truth=truth, content="", markers=HERMES, format="hermes"))
    assert kind == "run" and isinstance(outcome, StreamOutcome)
    # the naive parser drops a call whose markers arrive in one delta
    assert [v.verdict for v in outcome.violations] == ["corruption"] and outcome.calls == []
    assert server.run(None) == ("loaded", None)


@pytest.mark.parametrize("reference,words", [
    ("tests.integration.targets.stream_bad:no_feed", "without feed()"),
    ("tests.integration.targets.stream_bad:not_callable", "not callable"),
])
def test_a_factory_that_breaks_the_contract_fails_to_load_with_one_line(reference, words):
    from strategies.errors import TargetError

    with pytest.raises(TargetError, match=words):
        _server(reference)


def test_a_consumer_returning_a_generator_fails_to_load_with_one_line():
    from strategies.errors import TargetError

    with pytest.raises(TargetError, match="returned a generator"):
        StreamServer(StreamSpec(settings=Settings(consumer="tests.integration.targets.stream_bad:generator_consumer")))


# -- orders ------------------------------------------------------------------------------------------


def _plan(**kw: object):
    from fuzzer.harnesses.stream.orders import Plan

    return Plan(**{"mode": "parser", "tools": ("get_weather", "search_flights"), "formats": ("hermes",), **kw})


@given(st.integers(0, 2**32 - 1), st.integers(1, 120))
@settings(max_examples=25, deadline=None)
def test_an_order_draws_exactly_its_count_of_streams_the_same_from_its_seed(seed, count):
    from fuzzer.harnesses.stream.orders import draw_streams, stream_at
    from strategies._internal.source import RandomSource

    groups = draw_streams(RandomSource(seed), REGISTRY, _plan(), count)
    again = draw_streams(RandomSource(seed), REGISTRY, _plan(), count)
    flat = [replace(base, cuts=tuple(c), family=f) for base, splits in groups for f, c in splits]
    assert len(flat) == count
    assert [(c.text, c.cuts) for c in flat] == [(c.text, c.cuts) for b, s in again for c in
                                                 (replace(b, cuts=tuple(x), family=f) for f, x in s)]
    assert all(splits[0][1] == () for _b, splits in groups)  # each output streamed whole first
    index = seed % count
    assert (stream_at(groups, index).text, stream_at(groups, index).cuts) == (flat[index].text, flat[index].cuts)


def test_an_order_runs_and_judges_its_streams_and_sends_back_one_failure_per_signature():
    from fuzzer.harnesses.stream.orders import StreamOrder

    runner = _Runner(_server())
    result = StreamOrder(7, 200, 0, _plan()).run(runner)
    assert result.streams == 200 == sum(n for n, _f in result.by_class.values())
    assert [i for _tag, i in runner.entered] == list(range(200))  # each stream pinned before it ran
    signatures = [v.signature.id for _i, _c, v, _o, _n in result.failures]
    assert len(signatures) == len(set(signatures)) >= 3
    for index, case, v, outcome, count in result.failures:
        assert count >= 1 and v.signature.id in outcome.signatures()
        # the case sent back shows its violation when streamed again here
        whole = run_stream(runner.served.make, [], case.text, ()) if case.cuts else None
        assert v.signature.id in {x.signature.id for x in
                                  violations_of(case, runner.served.execute(case), whole)}


def test_an_order_skips_the_streams_its_worker_was_lost_on():
    from fuzzer.harnesses.stream.orders import StreamOrder

    order = StreamOrder(7, 40, 0, _plan())
    order.skip = frozenset({0, 5})
    runner = _Runner(_server(REFERENCE))
    result = order.run(runner)
    assert result.streams == 38 and {i for _t, i in runner.entered} == set(range(40)) - {0, 5}


def test_the_reference_parser_streams_an_order_without_a_failure():
    from fuzzer.harnesses.stream.orders import StreamOrder

    result = StreamOrder(3, 300, 0, _plan(tools=tuple(REGISTRY.names()))).run(_Runner(_server(REFERENCE)))
    assert result.streams == 300 and result.failures == []


# -- probing ------------------------------------------------------------------------------------------


def _local_run(parser: str):
    server = _server(parser)
    return lambda cases: [server.run(c) for c in cases]


def test_probing_finds_the_formats_a_parser_streams_even_one_that_needs_markers_in_their_own_deltas():
    from fuzzer.harnesses.stream.job import probe_formats

    tools = ["get_weather", "search_flights"]
    naive, unsupported, contract = probe_formats(_local_run(NAIVE), REGISTRY, tools, 0)
    assert naive == ["hermes"] and contract is None and "json" in unsupported
    assert probe_formats(_local_run(REFERENCE), REGISTRY, tools, 0)[0] == ["hermes"]


# -- shrinking -----------------------------------------------------------------------------------------


def test_the_split_shrinker_finds_two_needed_cuts_among_forty_in_few_streams():
    needed = {13, 52}
    ran = []

    def test(candidates):
        ran.extend(candidates)
        return [needed <= set(c) for c in candidates]

    cuts = tuple(sorted(set(range(3, 120, 3)) | needed))
    assert len(cuts) >= 40
    assert shrink_split(cuts, test) == (13, 52)
    assert len(ran) <= 200


def test_a_cut_is_anchored_where_the_characters_around_it_are_the_same_in_a_smaller_output():
    from fuzzer.harnesses.stream.shrink import anchored

    old = 'Hello there, friend. <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    failed = StreamCase(text=old, cuts=(old.index("<tool_call>") + 4,))
    new = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    assert deltas(new, anchored(failed, new))[0] == "<too"


def _test_for(make, wanted):
    def test(cases):
        out = []
        for c in cases:
            run = run_stream(make, [], c.text, c.cuts)
            whole = run_stream(make, [], c.text, ()) if c.cuts and not c.truth_known else None
            v = violations_of(c, run, whole)
            out.append(StreamOutcome.of(run, v) if wanted in {x.signature.id for x in v} else None)
        return out
    return test


def test_shrinking_a_stream_finding_keeps_its_signature_its_tool_names_and_makes_it_small():
    import time

    from fuzzer.harnesses.stream.orders import StreamOrder
    from fuzzer.harnesses.stream.shrink import shrink_case, size

    server = _server()
    result = StreamOrder(11, 300, 0, _plan()).run(_Runner(server))
    shrunk = 0
    for _i, case, v, _o, _n in result.failures[:6]:
        if v.verdict == "hang":
            continue
        (best, outcome), _stopped = shrink_case(case, _test_for(server.make, v.signature.id), registry=REGISTRY,
                                                deadline=time.monotonic() + 20)
        assert best is not None and size(best) <= size(case)
        assert v.signature.id in outcome.signatures()
        if best.truth_known and best.truth:
            # the values shrink, the names never do: a call's name is its tool's
            assert {c["name"] for c in best.truth} <= set(REGISTRY.names())
        shrunk += len(best.text) <= 120 and len(best.cuts) <= 3
    assert shrunk >= 3


# -- verdicts, findings, corpus entries --------------------------------------------------------------


def test_every_stream_verdict_is_registered_with_its_own_words():
    from fuzzer.engine.verdicts import info
    from fuzzer.harnesses.stream.checks import CHECKS

    for name in list(CHECKS) + ["split_variance", "nondeterminism", "crash", "hang", "slow"]:
        found = info(name, "stream")
        assert found is not None and found.harness == "stream" and found.description.startswith("Streaming")
    assert info("corruption", "stream").truth and info("hang", "stream").timed and info("crash", "stream").movable


def test_a_finding_becomes_a_corpus_entry_that_gives_its_stream_back():
    from corpus.store import Entry
    from fuzzer.harnesses.stream.findings import StreamFinding, case_of_entry

    server = _server()
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    case = StreamCase(text=text, cuts=(4,), family="two_way", format="hermes", markers=HERMES, content="",
                      truth=[{"name": "get_weather", "arguments": {"city": "Paris"}}], tool="get_weather")
    _kind, outcome = server.run(case)
    v = outcome.violations[0]
    finding = StreamFinding(v.signature, v.verdict, v.reason, case=case, outcome=outcome, settings=server.settings)
    entry = finding.to_entry(target=NAIVE, version=None)
    again = Entry.from_json(entry.to_json()) if hasattr(Entry, "from_json") else entry
    assert again.kind == "stream" and again.scenario["mode"] == "parser"
    assert case_of_entry(again) == case
    report = finding.to_report()
    assert report["deltas"] == ["<too", text[4:]] and report["cuts"] == [4] and report["returned"] == outcome.calls
    assert "--case" in report["reproduce"] and NAIVE in report["reproduce"]


def test_a_worker_answer_shows_a_finding_again_by_its_signature_and_a_hang_by_hanging():
    from fuzzer.harnesses.stream.job import shows
    from fuzzer.harnesses.stream.worker import StreamFault

    server = _server()
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    answer = server.run(StreamCase(text=text, truth=[{"name": "get_weather", "arguments": {"city": "Paris"}}],
                                   content="", markers=HERMES))
    wanted = answer[1].violations[0].signature.id
    assert shows(answer, wanted, "corruption") and not shows(answer, "corruption-000000000000", "corruption")
    assert shows(StreamFault("hung", 2.0, "stuck", (("a.py", "f"),)), "hang-whatever", "hang")
    assert not shows(StreamFault("died", 0.1, "killed by SIGSEGV"), wanted, "corruption")


# -- oracle and reference fixes ---------------------------------------------------------------------


def test_a_call_inside_reasoning_tags_is_no_call_for_the_reference_parser():
    from fuzzer.targets.stream_reference import make_parser

    text = '<reasoning>\nI will call the tool like this: <tool_call>\n{"name": "get_weather", ' \
           '"arguments": {"city": "Paris"}}\n</tool_call>\n</reasoning>'
    case = StreamCase(text=text, format="hermes", markers=HERMES, truth=[], anomaly_class="degenerate_output",
                      operator="reasoning_only")
    assert judge(case, run_stream(parser_maker(make_parser, "ref"), [], text, ())) == []


MISSPELLED = ('<tool_call>\n{"name":"search_flights","arguments":{"from_city":"a"}}\n<tool_call>\n'
              '<tool_call>\n{"name":"get_weather","arguments":{"city":"b"}}\n<tool_call>')


@given(st.lists(st.integers(1, len(MISSPELLED) - 1), max_size=6))
@settings(max_examples=80, deadline=None)
def test_the_reference_parser_gives_the_same_calls_whatever_the_split_of_misspelled_closing_tags(cuts):
    from fuzzer.harnesses.stream.fold import fold
    from fuzzer.targets.stream_reference import make_parser

    make = parser_maker(make_parser, "ref")
    whole = run_stream(make, [], MISSPELLED, ())
    split = run_stream(make, [], MISSPELLED, tuple(sorted(set(cuts))))
    assert fold(split.steps, split.finish).calls == fold(whole.steps, whole.finish).calls


def test_a_marker_inside_a_cut_calls_string_is_no_leakage():
    from fuzzer.targets.stream_reference import make_parser

    text = '<tool_call>\n{"name":"book_hotel","arguments":{"city":"</tool_call>","check_in":'
    case = StreamCase(text=text, format="hermes", markers=HERMES, truth=[], anomaly_class="truncated_output",
                      operator="truncate_after_colon")
    assert judge(case, run_stream(parser_maker(make_parser, "ref"), [], text, (20,))) == []


def test_a_crash_whose_message_copies_the_input_is_one_bug_whatever_the_input():
    class Copies:
        def __init__(self):
            self.buffer = ""

        def feed(self, delta):
            self.buffer += delta
            if len(self.buffer) > 40:
                raise AssertionError(self.buffer)

        def finish(self):
            return None

    make = parser_maker(Copies, "copies")
    found = set()
    for city in ("Paris of France", "Zurich in Switzerland"):
        text = f"I will now look up the weather in {city} for you, one moment"
        case = StreamCase(text=text, cuts=(45,), truth_known=False, markers=HERMES)
        found |= {v.signature.id for v in judge(case, run_stream(make, [], text, case.cuts))}
    assert len(found) == 1


def test_partial_json_parsers_decoder_error_is_keyed_without_its_message():
    from corpus.signature import crash_signature

    name = "partial_json_parser.core.exceptions.MalformedJSON"
    frames = (("complete.py", "complete_any"),)
    assert crash_signature(exception=name, frames=frames, message="Unexpected character a") == \
        crash_signature(exception=name, frames=frames, message="Unexpected character }")


def test_an_accumulators_calls_are_not_judged_as_a_parsers_event_grammar():
    from fuzzer.harnesses.stream.chunks import plan_text
    from fuzzer.harnesses.stream.worker import run_consumer

    def nameless(chunks):
        list(chunks)
        return [{"name": "", "arguments": {"city": "Paris"}}]

    calls = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    case = StreamCase(text=plan_text(calls, "", None), format="chunks", truth=calls, tool="get_weather")
    verdicts = [v.verdict for v in judge(case, run_consumer(nameless, "m:a", case, "openai"))]
    assert verdicts == ["corruption"]


def test_every_output_is_also_streamed_with_its_first_marker_cut_after_its_first_character():
    from fuzzer.harnesses.stream.cases import splits_for
    from strategies._internal.source import RandomSource

    text = '<think>\nweather?\n</think>\n<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>'
    assert "<think>" in HERMES and "</think>" in HERMES  # reasoning tags are markers too
    assert ("marker_heads", (1,)) in splits_for(RandomSource(0), text, HERMES, [])


def test_a_consumer_shape_whose_sdk_is_missing_is_one_line(monkeypatch):
    import builtins

    from strategies.errors import TargetError

    real = builtins.__import__

    def no_anthropic(name, *args, **kwargs):
        if name == "anthropic" or name.startswith("anthropic."):
            raise ModuleNotFoundError("No module named 'anthropic'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_anthropic)
    with pytest.raises(TargetError, match="--consumer-shape anthropic: .* pip install 'anthropic'"):
        StreamServer(StreamSpec(settings=Settings(consumer="fuzzer.targets.accumulator_reference:accumulate", shape="anthropic")))


def test_a_stream_campaigns_result_is_written_by_every_report_writer():
    from fuzzer.harnesses.stream.findings import StreamFinding
    from fuzzer.harnesses.stream.job import StreamCampaignResult
    from fuzzer.reports.html import html_report
    from fuzzer.reports.markdown import markdown_report

    server = _server()
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    case = StreamCase(text=text, format="hermes", markers=HERMES, content="",
                      truth=[{"name": "get_weather", "arguments": {"city": "Paris"}}], tool="get_weather")
    _kind, outcome = server.run(case)
    v = outcome.violations[0]
    result = StreamCampaignResult(label=NAIVE, supported={"hermes": "streamed"}, unsupported={"json": "no call streamed"})
    result.findings = [StreamFinding(v.signature, v.verdict, v.reason, case=case, outcome=outcome,
                                     settings=server.settings)]
    result.tally.add("valid", 10, 1)
    report = result.to_report()
    assert report["formats"] == {"supported": {"hermes": "streamed"}, "unsupported": {"json": "no call streamed"}}
    assert v.signature.id in html_report(result) and v.signature.id in markdown_report(result)


def _shrunk_findings():
    """(first violation, finding once shrunk, the violation its shown stream has) for the first
    failures of a seeded order on the naive stream parser that shrink."""
    from fuzzer.harnesses.stream.findings import StreamFinding
    from fuzzer.harnesses.stream.job import StreamSettings, StreamSubject
    from fuzzer.harnesses.stream.orders import StreamOrder

    server = _server()

    class _Job:  # what shrinking asks of the engine's job: run streams where findings settle
        def settle_run(self, cases, deadline=None):
            return [server.run(c) for c in cases]

    subject = StreamSubject(StreamSettings(target=server.settings), registry=REGISTRY, pool=object())
    result = StreamOrder(11, 300, 0, _plan()).run(_Runner(server))
    for _i, case, v, outcome, _n in result.failures[:8]:
        if v.verdict in ("hang", "slow"):
            continue
        finding = StreamFinding(v.signature, v.verdict, v.reason, case=case, outcome=outcome, settings=server.settings)
        if subject.shrink(finding, _Job(), 20.0):
            yield v, finding, next(x for x in finding.minimized_outcome.violations if x.signature.id == v.signature.id)


def test_a_shrunk_finding_says_why_of_the_stream_it_shows_not_of_the_first():
    """The console's "why:" and the report's reason describe the minimized stream: a reason naming
    the first output's values beside a minimized output without them misleads the reader."""
    changed = 0
    for v, finding, shown in _shrunk_findings():
        assert finding.reason == shown.reason
        changed += shown.reason != v.reason
    assert changed >= 1  # (some first stream's reason named values its minimized one has lost)


def test_an_sse_finding_s_plan_shrinks_with_its_cut_placed_in_the_smaller_body():
    """The cuts of an ``sse`` chunk plan are byte offsets in the SSE body (about a thousand bytes),
    not in the plan's JSON (about 150 characters): clipped at the JSON, every smaller plan was
    tried unsplit, none failed, and a two-call plan with its cut at byte 1,057 was reported
    minimized. Its smaller plans must be tried with the cut placed in their own body."""
    import json
    import time

    from fuzzer.harnesses.stream.chunks import ChunkPlan, expected_calls, plan_text, sse_bytes
    from fuzzer.harnesses.stream.shrink import shrink_case
    from fuzzer.harnesses.stream.worker import run_consumer
    from tests.integration.targets.stream_sse import accumulate

    ref = "tests.integration.targets.stream_sse:accumulate"
    calls = [{"name": "get_weather", "arguments": {"city": "مرحبا hello"}},
             {"name": "get_weather", "arguments": {"city": "Zürich a a"}}]
    text = plan_text(calls, "", None)
    def sse_body(plan):
        return b"".join(sse_bytes(replace(plan, cuts=())))

    body = sse_body(ChunkPlan.from_case(StreamCase(text=text, format="chunks")))
    cut = body.index("مرحبا".encode()) + 1  # inside the first character's UTF-8 sequence
    case = StreamCase(text=text, cuts=(cut,), family="random", format="chunks", truth=expected_calls(calls, None),
                      truth_known=True, tool="get_weather")

    def test(cases):
        out = []
        for c in cases:
            run = run_consumer(accumulate, ref, c, "sse")
            v = violations_of(c, run, None)
            out.append(StreamOutcome.of(run, v) if v and v[0].verdict == "corruption" else None)
        return out

    assert test([case])[0] is not None and test([replace(case, cuts=())])[0] is None
    (best, outcome), stopped = shrink_case(case, test, registry=REGISTRY, deadline=time.monotonic() + 30, shape="sse")
    assert not stopped and best is not None and outcome is not None
    shown = json.loads(best.text)["calls"]
    assert len(shown) == 1 and len(shown[0]["arguments"]["city"]) == 1, best.text  # one call, one character
    assert len(best.cuts) == 1 and 0 < best.cuts[0] < len(sse_body(ChunkPlan.from_case(best)))
    assert test([best])[0] is not None  # the split shown fails


def test_a_split_shrink_that_runs_out_of_streams_is_not_called_minimized(monkeypatch):
    """A split whose shrink spent its streams may be far from the smallest: the shrink says it was
    stopped (the finding is then not "minimized"), though its deadline is far off."""
    import time

    from fuzzer.harnesses.stream import shrink

    monkeypatch.setattr(shrink, "SPLIT_TESTS", 3)
    monkeypatch.setattr(shrink, "split_budget", lambda case, shape="openai": 3, raising=False)
    case = StreamCase(text="abcdefghij", cuts=tuple(range(1, 10)), family="char", format="hermes", truth_known=False)

    def test(cases):  # fails while the last cut is there
        return [StreamOutcome() if 9 in c.cuts else None for c in cases]

    (best, _outcome), stopped = shrink.shrink_case(case, test, registry=REGISTRY, deadline=time.monotonic() + 60)
    assert best is not None and 9 in best.cuts
    assert stopped


def test_a_shrunk_finding_s_title_speaks_of_the_stream_it_shows_not_of_the_first():
    """The title ("0 call(s) returned, 2 written") is worded from the stream that first showed the
    signature; once shrunk, the console shows another stream ("1 written"): the title is re-worded
    from it, under the same signature id, as the parser harness does."""
    changed = 0
    for v, finding, shown in _shrunk_findings():
        assert finding.signature.id == v.signature.id and finding.title == shown.signature.title
        assert f"({shown.signature.title}, seen" in finding.text()
        changed += shown.signature.title != v.signature.title
    assert changed >= 1  # (some first stream's title counted calls its minimized one has not)


def test_the_gate_shows_a_stream_regression_s_cuts_and_reproduce_command():
    """A campaign finding whose signature is a fixed stream entry: its output alone passes, the
    split is what fails. The gate's REGRESSION block shows the cuts and a runnable reproduce
    command, as the campaign does (not the bare output)."""
    from fuzzer.engine.decisions import GateDecision
    from fuzzer.engine.jobs.gate import GateResult
    from fuzzer.engine.jobs.replay import ReplayResult
    from fuzzer.harnesses.stream.findings import StreamFinding

    server = _server(parser="tests.integration.targets.stream_variants:marker_loss")
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    truth = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    whole = StreamCase(text=text, format="hermes", truth=truth, content="", truth_known=True, tool="get_weather",
                       markers=HERMES)
    case = replace(whole, cuts=(1,), family="shrunk")
    kind, outcome = server.run(case)
    assert kind == "run" and outcome.violations and not server.run(whole)[1].violations  # the split is what fails
    v = outcome.violations[0]
    finding = StreamFinding(v.signature, v.verdict, v.reason, case=case, outcome=outcome, settings=server.settings)
    result = GateResult(corpus="corp", decision=GateDecision(regressions=(finding,)), replay=ReplayResult())
    lines = result.summary_lines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"REGRESSION {v.signature.id} "))
    block = "\n".join(lines[at:at + 4])
    assert "cuts:      [1] deltas: [\"<\", " in block, block
    assert f"reproduce: {finding.reproduce()}" in block and '"cuts":[1]' in finding.reproduce(), block
