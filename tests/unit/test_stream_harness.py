"""The stream harness in-process: splits and their shrinker, the contract's shapes and adapters, the
chunk streams as SDK types, and the oracles on the bundled examples."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

import strategies as tf
from fuzzer.harnesses.stream import cases as gen
from fuzzer.harnesses.stream.checks import judge
from fuzzer.harnesses.stream.contract import ContractError, normalize_events, parser_maker
from fuzzer.harnesses.stream.splits import cuts_of, deltas, draw_split, markers_of, shrink_split
from fuzzer.harnesses.stream.worker import run_stream
from strategies._internal.source import RandomSource

REGISTRY = tf.builtin_registry()


# -- splits ------------------------------------------------------------------------------------------


@given(st.text(min_size=1, max_size=40), st.lists(st.integers(0, 45), max_size=10))
def test_deltas_join_back_to_the_text_and_give_their_cuts(text, cuts):
    parts = deltas(text, sorted(set(cuts)))
    assert "".join(parts) == text
    assert deltas(text, cuts_of(parts)) == parts


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=50)
def test_drawn_splits_are_sorted_cuts_inside_the_text_and_replay_from_the_seed(seed):
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    family, cuts = draw_split(RandomSource(seed), text, markers_of("hermes"))
    assert list(cuts) == sorted(set(cuts)) and all(0 < c < len(text) for c in cuts)
    assert draw_split(RandomSource(seed), text, markers_of("hermes")) == (family, cuts)


def test_shrink_split_keeps_the_fewest_cuts_then_moves_them_earliest():
    # fails when some cut falls in 10..20 and another in 30..40
    def test(candidates):
        return [any(10 <= c <= 20 for c in cand) and any(30 <= c <= 40 for c in cand) for cand in candidates]

    assert shrink_split((3, 12, 18, 25, 33, 39, 44), test) == (10, 30)


def test_shrink_split_never_returns_a_split_that_does_not_fail():
    assert shrink_split((5, 9), lambda cands: [False] * len(cands)) == (5, 9)


# -- the contract ------------------------------------------------------------------------------------


class DeltaFunction:  # the shape of vLLM's DeltaFunctionCall, without vLLM
    def __init__(self, name=None, arguments=None):
        self.name, self.arguments = name, arguments


class DeltaToolCall:
    def __init__(self, index, id=None, type=None, function=None):
        self.index, self.id, self.type, self.function = index, id, type, function


class DeltaMessage:
    def __init__(self, content=None, tool_calls=None, reasoning_content=None):
        self.content, self.tool_calls, self.reasoning_content = content, tool_calls or [], reasoning_content


class VllmStyleParser:
    """A parser written against vLLM's streaming interface (it re-reads current_text)."""

    def __init__(self, tokenizer=None):
        self.sent_name, self.sent_args = False, 0

    def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, previous_token_ids,
                                     current_token_ids, delta_token_ids, request):
        assert request.tools is not None and previous_text + delta_text == current_text
        start = current_text.find("<tool_call>")
        if start < 0:
            return DeltaMessage(content=delta_text) if "<" not in current_text else None
        body = current_text[start + len("<tool_call>"):]
        calls = []
        if not self.sent_name and '"arguments": ' in body:
            calls.append(DeltaToolCall(0, id="call_0", type="function", function=DeltaFunction(name="get_weather")))
            self.sent_name = True
        if self.sent_name:
            args = body.split('"arguments": ', 1)[1].split("}}", 1)[0]
            if "}}" in body:
                args += "}"
            if len(args) > self.sent_args:
                calls.append(DeltaToolCall(0, function=DeltaFunction(arguments=args[self.sent_args:])))
                self.sent_args = len(args)
        return DeltaMessage(tool_calls=calls) if calls else None


class ToolCallItem:  # SGLang's shape, without SGLang
    def __init__(self, tool_index, name=None, parameters=""):
        self.tool_index, self.name, self.parameters = tool_index, name, parameters


class StreamingParseResult:
    def __init__(self, normal_text="", calls=None):
        self.normal_text, self.calls = normal_text, calls or []


class SglangStyleDetector:
    """Buffers everything and emits the call at the end-of-stream call (as SGLang's flush fix does)."""

    def __init__(self):
        self.buffer = ""

    def parse_streaming_increment(self, new_text, tools):
        self.buffer += new_text
        return StreamingParseResult()

    def finish(self):
        import json

        body = self.buffer.split("<tool_call>", 1)[1].split("</tool_call>", 1)[0]
        obj = json.loads(body)
        return StreamingParseResult(calls=[ToolCallItem(0, name=obj["name"]),
                                           ToolCallItem(0, parameters=json.dumps(obj["arguments"]))])


TEXT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
TRUTH = [{"name": "get_weather", "arguments": {"city": "Paris"}}]


@pytest.mark.parametrize("api,factory", [("vllm", VllmStyleParser), ("sglang", SglangStyleDetector)])
@pytest.mark.parametrize("cuts", [(), (5,), tuple(range(1, len(TEXT)))], ids=["whole", "two_way", "char"])
def test_parsers_of_the_engines_interfaces_run_unchanged_through_the_adapters(api, factory, cuts):
    make = parser_maker(factory, "tests:factory", api)
    case = gen.StreamCase(text=TEXT, cuts=cuts, format="hermes", truth=TRUTH, content="", markers=markers_of("hermes"))
    run = run_stream(make, [], TEXT, cuts)
    assert run.error is None and run.contract is None
    assert judge(case, run) == []


@pytest.mark.parametrize("value", [3.14, object(), ["text"], {"unrelated": 1}])
def test_an_event_of_no_known_shape_is_a_contract_error(value):
    with pytest.raises(ContractError, match="unknown shape"):
        normalize_events(value)


def test_the_three_event_shapes_normalize_alike():
    from fuzzer.harnesses.stream.contract import ArgumentsDelta, CallStart

    openai = {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]}
    sglang = {"normal_text": "", "calls": [{"tool_index": 0, "name": "f", "parameters": "{}"}]}
    typed = [CallStart(0, "f", "c"), ArgumentsDelta(0, "{}")]
    assert normalize_events(openai) == normalize_events(typed) == [("start", 0, "c", "f"), ("args", 0, "{}")]
    assert normalize_events(sglang) == [("start", 0, None, "f"), ("args", 0, "{}")]


def test_a_factory_that_is_not_callable_or_makes_no_feed_is_a_contract_error():
    with pytest.raises(ContractError, match="not a callable factory"):
        parser_maker(42, "m:a")
    with pytest.raises(ContractError, match="without feed"):
        parser_maker(lambda: object(), "m:a")([])


# -- chunk streams -----------------------------------------------------------------------------------


def _consumer_cases(count=60):
    source = RandomSource(7)
    out = []
    for _ in range(count):
        base = gen.consumer_output(source, REGISTRY, ["get_weather", "search_flights"])
        for shape in ("openai", "anthropic", "sse"):
            for family, cuts in gen.consumer_splits(source, base, shape, count=1):
                out.append((shape, replace(base, cuts=cuts, family=family)))
    return out


def test_chunk_streams_are_the_sdk_types_and_the_reference_accumulator_assembles_every_one():
    from openai.types.chat import ChatCompletionChunk

    from fuzzer.harnesses.stream.chunks import ChunkPlan, build_chunks
    from fuzzer.harnesses.stream.worker import run_consumer
    from fuzzer.targets.accumulator_reference import accumulate

    for shape, case in _consumer_cases():
        chunks = build_chunks(ChunkPlan.from_case(case), shape)
        if shape == "openai":
            assert all(isinstance(c, ChatCompletionChunk) for c in chunks)
        elif shape == "anthropic":
            assert all(type(c).__module__.startswith("anthropic.types") for c in chunks)
        else:
            assert all(isinstance(c, bytes) for c in chunks)
        run = run_consumer(accumulate, "ref", case, shape)
        assert judge(case, run) == [], (shape, case.operator, case.cuts[:5])


def test_the_naive_accumulator_shows_at_least_three_distinct_bugs():
    from fuzzer.harnesses.stream.worker import run_consumer
    from fuzzer.targets.accumulator_naive import accumulate

    found = set()
    for shape, case in _consumer_cases():
        found |= {v.signature.id for v in judge(case, run_consumer(accumulate, "naive", case, shape))}
    assert len(found) >= 3, found


# -- parsers -----------------------------------------------------------------------------------------


def _parser_streams(outputs=150, seed=3):
    source = RandomSource(seed)
    out = []
    while len(out) < outputs:
        sample = gen.draw_output(source, REGISTRY, [t.name for t in REGISTRY], ["hermes"])
        if sample is None:
            continue
        base = gen.case_of(sample, REGISTRY)
        out.append((base, gen.splits_for(source, base.text, base.markers, [])))
    return out


def _findings(make, groups):
    from fuzzer.harnesses.stream.checks import variance

    found = {}
    for base, splits in groups:
        whole = None
        for family, cuts in splits:
            case = replace(base, cuts=cuts, family=family)
            run = run_stream(make, [], case.text, cuts)
            violations = judge(case, run)
            if whole is None:
                whole = run
            elif not case.truth_known:
                extra = variance(case, run, whole)
                violations += [extra] if extra is not None else []
            for v in violations:
                known = found.get(v.signature.id)
                if known is None or (len(case.text), len(case.cuts)) < (len(known.text), len(known.cuts)):
                    found[v.signature.id] = case
    return found


def test_the_reference_parser_streams_every_output_under_every_split_exactly():
    from fuzzer.targets.stream_reference import make_parser

    assert _findings(parser_maker(make_parser, "ref"), _parser_streams()) == {}


def test_the_naive_parser_shows_six_distinct_bugs_each_on_a_small_output_with_few_cuts():
    from fuzzer.targets.stream_naive import make_parser

    make = parser_maker(make_parser, "naive")
    found = _findings(make, _parser_streams())
    small = {}
    for sig, case in found.items():
        def fails(candidates, case=case, sig=sig):
            return [sig in {v.signature.id for v in judge(replace(case, cuts=c), run_stream(make, [], case.text, c))}
                    for c in candidates]
        cuts = shrink_split(case.cuts, fails)
        if len(case.text) <= 120 and len(cuts) <= 3:
            small[sig] = (case.text, cuts)
    assert len(small) >= 6, sorted(found)


CONTENT_VERDICTS = {"corruption", "content_whitespace", "held_back"}


@settings(max_examples=300, deadline=None)
@given(expected=st.text(alphabet=" \nab<", max_size=12), streamed=st.text(alphabet=" \nab<", max_size=12),
       pieces=st.integers(1, 3))
def test_a_content_difference_is_exactly_one_finding_and_the_same_content_none(expected, streamed, pieces):
    """The content oracles (corruption, content_whitespace, held_back) share one reading of how
    the streamed content differs from the truth's: a difference is one of them, never two or
    none, and the same content is none of them (a stream without calls or markers)."""
    from fuzzer.harnesses.stream.checks import Run, StreamCase

    size = -(-len(streamed) // pieces) or 1
    steps = [[("text", streamed[i:i + size])] for i in range(0, len(streamed), size)] or [[]]
    case = StreamCase(text=expected, cuts=(), truth=[], content=expected)
    verdicts = {v.verdict for v in judge(case, Run(steps=steps))} & CONTENT_VERDICTS
    if streamed == expected:
        assert verdicts == set()
    elif "".join(streamed.split()) == "".join(expected.split()):
        assert verdicts == {"content_whitespace"}
    elif expected.startswith(streamed):
        assert verdicts == {"held_back"}
    else:
        assert verdicts == {"corruption"}


@pytest.mark.parametrize("anomaly, operator", [("truncated_output", "truncate_in_marker"),
                                               ("unknown_function", "hallucinated_name"), (None, None)])
def test_an_anomalous_output_s_calls_may_be_declined_a_valid_one_s_may_not(anomaly, operator):
    """The parser's oracle: an anomaly whose truth is calls may be refused or answered with no call
    (a buffering parser never saw the cut output's closing marker); a valid output may not, and
    calls that differ from the truth are corruption either way."""
    from fuzzer.harnesses.stream.checks import Run, StreamCase

    truth = [{"name": "calculate", "arguments": {"expression": ""}}]
    text = '<tool_call>{"name": "calculate", "arguments": {"expression": ""}}<'
    case = StreamCase(text=text, cuts=(), truth=truth, anomaly_class=anomaly, operator=operator, format="hermes")
    declined = {v.verdict for v in judge(case, Run(steps=[[]]))}
    assert ("corruption" in declined) is (anomaly is None)
    wrong = Run(steps=[[("start", 0, "c1", "calculate"), ("args", 0, '{"expression": "x"}'), ("end", 0)]])
    assert "corruption" in {v.verdict for v in judge(case, wrong)}
