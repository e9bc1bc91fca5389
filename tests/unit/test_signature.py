"""Signature rules that group one bug's failures, whatever input or depth showed it."""

from __future__ import annotations

from hypothesis import given, strategies as st

from corpus.signature import unsafe_signature
from fuzzer.isolation.stacks import read_trace


@given(depth=st.integers(0, 6), exec_frame=st.booleans())
def test_an_eval_at_any_depth_of_a_recursive_resolver_is_one_unsafe_bug(depth, exec_frame):
    frames = [("p.py", "parse"), ("p.py", "_decode")] + [("p.py", "_resolve"), ("p.py", "<listcomp>")] * depth
    frames += [("p.py", "_resolve")] + ([("<string>", "<module>")] if exec_frame else [])
    sig = unsafe_signature(event="exec", frames=frames)
    assert sig.id == unsafe_signature(event="exec", frames=[("p.py", "parse"), ("p.py", "_resolve")]).id
    assert sig.title == "unsafe: exec in p.py:_resolve"
    assert sig.id != unsafe_signature(event="os.system", frames=frames).id


def test_a_hang_stack_never_names_the_coverage_tracer(tmp_path):
    dump = tmp_path / "trace"
    dump.write_text(
        "Thread 0x00007f (most recent call first):\n"
        '  File "/x/fuzzer/isolation/instrument.py", line 120 in _global_trace\n'
        '  File "/app/scanner.py", line 30 in _skip_string\n'
        '  File "/app/scanner.py", line 12 in parse\n'
        '  File "/x/fuzzer/isolation/worker.py", line 250 in _serve\n')
    assert read_trace(str(dump)) == (("scanner.py", "parse"), ("scanner.py", "_skip_string"))


def test_a_sampled_stack_is_named_by_the_target_frame_that_called_into_the_standard_library(tmp_path):
    """A stack sampled at any moment of a slow ``re.search`` lands in one of several library
    frames; what stays the same between samples is the target's frame that made the call."""
    import re as re_module
    import json as json_module

    re_file, json_file = re_module.__file__, json_module.decoder.__file__
    app = tmp_path / "app.py"
    dump = tmp_path / "trace"
    expected = (("app.py", "parse"), ("app.py", "_strip"))
    for library in ([(re_file, "search")], [(re_file, "_compile"), (re_file, "search")], [(json_file, "raw_decode")]):
        lines = [f'  File "{path}", line 1 in {func}\n' for path, func in library]
        dump.write_text("Thread 0x00007f (most recent call first):\n" + "".join(lines)
                        + f'  File "{app}", line 30 in _strip\n  File "{app}", line 12 in parse\n')
        assert read_trace(str(dump)) == expected
    # a stack that is library code only is kept whole for a hang (better than nothing), and is no
    # sample of the target at all for a slow probe (it caught the worker importing)
    dump.write_text(f'Thread 0x00007f (most recent call first):\n  File "{re_file}", line 1 in search\n'
                    '  File "<frozen importlib._bootstrap>", line 241 in _call_with_frames_removed\n')
    assert read_trace(str(dump)) == (("<frozen importlib._bootstrap>", "_call_with_frames_removed"),
                                     ("__init__.py", "search"))
    assert read_trace(str(dump), target_only=True) == ()


def test_two_rejection_bugs_behind_one_wrap_of_the_decoder_stay_two():
    """A parser that wraps json's error in its own message: handing the decoder prose (an
    extraction bug) and breaking an apostrophe (a rewrite bug) fail with other decoder words, and
    are two signatures — merging them let a gate call the unfixed one a regression of the fixed."""
    import json

    from corpus.signature import rejection_signature

    def wrapped(text):
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            return rejection_signature(format="fenced", exception="ValueError", frames=(("p.py", "parse"),),
                                       message=f"could not parse tool call: {exc}")
        raise AssertionError(text)

    extraction = wrapped('```JSON\n{"name": "get_weather"}\n```')
    rewrite = wrapped('{"name": "get_weather", "arguments": {"city": "O"Brien"}}')
    assert extraction.id != rewrite.id
    # the same bug with other positions in the message is one
    assert wrapped('Sure! {"name": "x"}').id == extraction.id


from hypothesis import given, strategies as st  # noqa: E402

from corpus.signature import same_hang  # noqa: E402

_FRAME = st.tuples(st.sampled_from(["p.py", "_common.py"]), st.sampled_from(["parse", "_scan", "skip_ws", "read"]))


@given(st.lists(_FRAME, min_size=1, max_size=5), st.lists(_FRAME, max_size=3))
def test_a_hang_stack_and_its_extension_into_a_helper_are_one_hang(stack, deeper):
    assert same_hang(stack, stack + deeper) and same_hang(stack + deeper, stack)


def test_hang_stacks_that_part_ways_are_two_hangs():
    assert not same_hang([("p.py", "parse"), ("p.py", "_scan")], [("p.py", "parse"), ("p.py", "_read")])
    assert not same_hang([], [("p.py", "parse")])  # no stack: nothing to tell


def test_a_path_title_names_real_functions_and_its_key_leaves_comprehensions_out():
    """``(via <listcomp>, parse)`` says nothing to a reader, and a key that held the comprehension
    renamed two unrelated bugs when a fix removed one list comprehension: neither the title nor
    the key names comprehensions and lambdas (unless there is nothing else); the legacy key of
    before keeps them, so stored entries are recognized."""
    from corpus.signature import path_signature

    functions = ["p.py:parse", "p.py:<listcomp>", "p.py:_unescape", "p.py:<lambda>"]
    sig = path_signature("corruption", kind="string:altered", words="a string argument was altered",
                         functions=functions)
    assert sig.title == "corruption: a string argument was altered (via _unescape, parse)"
    assert "<listcomp>" not in sig.key and "<lambda>" not in sig.key
    refactored = path_signature("corruption", kind="string:altered", words="a string argument was altered",
                                functions=["p.py:parse", "p.py:_unescape"])
    assert refactored.id == sig.id  # the comprehension removed: the same bug
    other_path = path_signature("corruption", kind="string:altered", words="w", functions=["p.py:parse", "p.py:_repair"])
    assert other_path.id != sig.id  # another function on the path: another bug
    legacy = path_signature("corruption", kind="string:altered", words="w", functions=functions, legacy=True)
    assert "<listcomp>" in legacy.key and legacy.id != sig.id
    only = path_signature("corruption", kind="k", words="w", functions=["p.py:<module>"])
    assert only.title.endswith("(via <module>)")


def test_a_path_keyed_by_the_function_that_made_the_damage_ignores_the_rest_of_the_path():
    from corpus.signature import path_signature

    a = path_signature("corruption", kind="string:altered", words="w", maker="p.py:_repair",
                       functions=["p.py:parse", "p.py:_loads", "p.py:_repair", "p.py:_to_call"])
    b = path_signature("corruption", kind="string:altered", words="w", maker="p.py:_repair",
                       functions=["p.py:parse", "p.py:_repair", "p.py:_build_call"])
    assert a.id == b.id and a.title.endswith("(via _repair)")
    assert a.id != path_signature("corruption", kind="string:altered", words="w", maker="p.py:_to_call",
                                  functions=["p.py:parse", "p.py:_repair", "p.py:_to_call"]).id


# -- what a message copies of the input is not the bug ------------------------------------------

_PROSE = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=300).filter(str.strip)


@given(_PROSE, _PROSE)
def test_a_rejection_that_quotes_the_input_is_one_signature_whatever_the_input(a, b):
    """llama-index's ReAct parser raises ``Could not extract tool use from input text: <the text>``:
    19 findings for one bug, one per prose sentence the samples held."""
    from corpus.signature import rejection_signature

    def sig(text):
        return rejection_signature(format="react", exception="ValueError", frames=(("react.py", "parse"),),
                                   message=f"Could not extract tool use from input text: {text}", text=text)

    assert sig(a).id == sig(b).id
    assert sig(a).title.endswith("(Could not extract tool use from input text: <str>)")
    # a message the worker cut to its length limit (``...``) quotes the input up to the cut
    long = "Thought: " + a * 10
    cut = f"Could not extract tool use from input text: {long}"[:297] + "..."
    assert rejection_signature(format="react", exception="ValueError", frames=(("react.py", "parse"),),
                               message=cut, text=long).id == sig(a).id


@given(st.text(min_size=1, max_size=200).filter(str.strip), st.data())
def test_an_assert_whose_message_is_what_is_left_of_the_input_is_one_crash(text, data):
    """partial-json-parser asserts with the remaining input as the message: ~30 crash signatures
    in one function, one per remainder."""
    from corpus.signature import crash_signature

    start = data.draw(st.integers(0, len(text) - 1))
    remaining = text[start:]
    frames = (("myelin.py", "fix_fast"),)
    sig = crash_signature(exception="AssertionError", frames=frames, message=remaining, text=text)
    assert sig.id == crash_signature(exception="AssertionError", frames=frames, message="}", text='{"a": 1}}').id
    # the same assert in another function is another bug
    assert sig.id != crash_signature(exception="AssertionError", frames=(("myelin.py", "other"),), message="}",
                                     text='{"a": 1}}').id


def test_a_parsers_own_words_stay_in_the_key_even_when_the_input_is_compared():
    """The decoder's words behind a wrap tell two bugs apart; prose that shares a phrase with the
    parser's message (``Here is the tool call:``) must not change them."""
    from corpus.signature import normalize_message

    prose = "Here is the tool call: ```JSON\n{\"name\": \"get_weather\"}\n```"
    value = "could not parse tool call: Expecting value: line 1 column 1 (char 0)"
    delimiter = "could not parse tool call: Expecting ',' delimiter: line 1 column 49 (char 48)"
    assert normalize_message(value, prose) == normalize_message(value) != normalize_message(delimiter, prose)
    assert normalize_message(delimiter, prose) == normalize_message(delimiter)
    # a value the message quotes is one placeholder, whichever quotes the input wrote it with
    assert normalize_message("'city'", "{'city': 'Paris'}") == normalize_message("'city'", '{"city": "Paris"}')
    assert normalize_message("could not parse tool call from: ok", "[TOOL_CALLS][] ok") == \
        "could not parse tool call from: <str>"


def test_a_rejection_is_keyed_without_its_format_unless_the_cause_is_the_formats_own():
    from corpus.signature import by_format, format_less, format_specific, rejection_signature

    def sig(fmt):
        return rejection_signature(format=fmt, exception="ValueError", frames=(("naive.py", "parse"),),
                                   message="could not parse tool call: Expecting value: line 1 column 1 (char 0)",
                                   text="```JSON\n{}\n```")

    assert sig("fenced").id == sig("deepseek").id and format_less(sig("fenced"))
    own = by_format(sig("fenced"), "deepseek")
    assert own.id != sig("fenced").id and format_specific(own) and not format_less(own)
    assert own.title.startswith("false_reject: valid deepseek output rejected")
    # no call at all says nothing of where: the format stays in that key
    none = rejection_signature(format="fenced", exception=None)
    assert none.id != rejection_signature(format="deepseek", exception=None).id
    assert not format_less(none) and not format_specific(none)


def test_the_legacy_key_of_a_failure_is_the_one_stored_before():
    """Corpus entries filed before keys left out the format and the input's text: the naive
    parser's fenced apostrophe rejection was ``false_reject-1f57590daa2b`` (README of before)."""
    from fuzzer.harnesses.parser.outcome import Outcome
    from fuzzer.harnesses.parser.oracle import Oracle
    from strategies import Sample, builtin_registry

    oracle = Oracle(builtin_registry())
    call = {"name": "get_weather", "arguments": {"city": "'"}}
    sample = Sample(text='```json\n{"name": "get_weather", "arguments": {"city": "\'"}}\n```', format="fenced",
                    anomaly_class=None, operator=None, calls=[call], tool="get_weather")
    outcome = Outcome(kind="rejected", exception="ValueError", frames=(("naive.py", "parse"),),
                      message="could not parse tool call: Expecting ',' delimiter: line 1 column 49 (char 48)")
    judgment = oracle.judge(sample, outcome)
    assert oracle.legacy_signature(sample, judgment, outcome).id == "false_reject-1f57590daa2b"
    assert oracle.signature(sample, judgment, outcome).id != "false_reject-1f57590daa2b"


def test_a_path_key_without_a_maker_is_the_same_bug_as_the_maker_it_ran():
    """A trace that found no maker (the damaged value was empty, or stored) keys a corruption by
    every function its input ran; when one of those is the maker another input's trace found for
    the same verdict and damage, the two keys name one bug. Which key is the maker's is the
    caller's knowledge: a one-function key of functions run is no maker."""
    from corpus.signature import path_parts, path_signature, same_maker

    made = path_signature("corruption", kind="string:altered", words="w", functions=["a.py:f", "a.py:decode"],
                          maker="a.py:decode").key
    ran = path_signature("corruption", kind="string:altered", words="w",
                         functions=["a.py:parse", "a.py:decode", "a.py:skip_ws"]).key
    assert path_parts(made) == ("corruption", "string:altered", ("a.py:decode",))
    assert same_maker(made, ran) and not same_maker(ran, made)
    elsewhere = path_signature("corruption", kind="string:altered", words="w", functions=["a.py:parse", "a.py:other"]).key
    other_kind = path_signature("corruption", kind="calls:fewer", words="w", functions=["a.py:parse", "a.py:decode"]).key
    assert not same_maker(made, elsewhere) and not same_maker(made, other_kind) and not same_maker(made, made)
    assert path_parts("corruption|calls:fewer") is None and not same_maker(made, "crash|x")
