"""The frame rule of every stack-keyed signature: the standard library's innermost frames go."""

import json
import json.decoder
import os
import re

import click
from hypothesis import given, strategies as st

from fuzzer.engine.frames import in_stdlib, named, without_library_tail

JSON = (json.__file__, "loads")
DECODER = (json.decoder.__file__, "raw_decode")
RE = (re.__file__, "search")
USER = ("/home/me/app/loop.py", "run")
THIRD_PARTY = (click.__file__, "main")  # site-packages: the user's choice of code, not the stdlib


def test_the_standard_library_and_importlib_are_library_code_site_packages_is_not():
    assert in_stdlib(json.__file__) and in_stdlib(re.__file__) and in_stdlib("<frozen importlib._bootstrap>")
    assert not in_stdlib(USER[0]) and not in_stdlib(click.__file__)


def test_the_innermost_library_frames_go_and_the_callers_stay():
    assert list(without_library_tail([USER, JSON, DECODER])) == [USER]
    assert list(without_library_tail([JSON, USER, RE])) == [JSON, USER]  # only the innermost run
    assert list(without_library_tail([USER, THIRD_PARTY])) == [USER, THIRD_PARTY]
    assert list(without_library_tail([JSON, DECODER])) == [JSON, DECODER]  # nothing else: kept whole


@given(st.lists(st.sampled_from([JSON, DECODER, RE, USER, THIRD_PARTY]), max_size=8))
def test_the_kept_frames_are_a_prefix_ending_in_user_code_unless_all_are_library(frames):
    kept = list(without_library_tail(frames))
    assert kept == frames[:len(kept)]
    if any(not in_stdlib(path) for path, _ in frames):
        assert not in_stdlib(kept[-1][0]) and all(in_stdlib(p) for p, _ in frames[len(kept):])
    else:
        assert kept == frames


def test_named_frames_are_base_names_innermost_last():
    assert named([JSON, USER], 1) == [("loop.py", "run")]
    assert named([JSON, USER], 5) == [(os.path.basename(json.__file__), "loads"), ("loop.py", "run")]
