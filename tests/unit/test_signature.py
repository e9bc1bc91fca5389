"""Signature rules that group one bug's failures, whatever input or depth showed it."""

from __future__ import annotations

from hypothesis import given, strategies as st

from corpus.signature import unsafe_signature
from fuzzer.isolation.worker import read_trace


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


def test_a_path_title_names_real_functions_and_its_key_keeps_every_frame():
    """``(via <listcomp>, parse)`` says nothing to a reader: the title leaves comprehensions and
    lambdas out (unless there is nothing else), the key and id keep them."""
    from corpus.signature import path_signature

    functions = ["p.py:parse", "p.py:<listcomp>", "p.py:_unescape", "p.py:<lambda>"]
    sig = path_signature("corruption", kind="string:altered", words="a string argument was altered",
                         functions=functions)
    assert sig.title == "corruption: a string argument was altered (via _unescape, parse)"
    assert "<listcomp>" in sig.key and "<lambda>" in sig.key
    without = path_signature("corruption", kind="string:altered", words="a string argument was altered",
                             functions=["p.py:parse", "p.py:_unescape"])
    assert without.id != sig.id  # the path is still the key
    only = path_signature("corruption", kind="k", words="w", functions=["p.py:<module>"])
    assert only.title.endswith("(via <module>)")
