"""What the pytest plugin tells a user about an entry it cannot judge: an option that exists."""

import pytest

from corpus.entry import Entry
from fuzzer.engine.harness import Replayed
from fuzzer.pytest_plugin import Settings, judge_entry


def _settings() -> Settings:
    return Settings(target="m:parse", corpus="fuzz-corpus", tools=None, level="parse", timeout=2.0, reject_on=(),
                    ignore=frozenset())


@pytest.mark.parametrize("kind, words", [
    ("agent", "give --toolfuzz-agent M:A to run it"),
    ("executor", "give --toolfuzz-executor M:A to run it"),
    ("stream", "run fuzz replay --corpus fuzz-corpus with --stream-parser (or --stream-consumer) M:A"),
])
def test_an_entry_without_its_reference_is_skipped_naming_an_option_that_exists(kind, words):
    entry = Entry(text="x", signature=f"crash-{'0' * 12}", verdict="crash", kind=kind)
    replayed = Replayed(path="e.json", entry=entry, verdict="pass", signature=None, unjudged="no reference")
    outcome, message = judge_entry(replayed, known={}, settings=_settings())
    assert outcome == "skip" and words in message, message
    assert "--toolfuzz-stream" not in message
