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
