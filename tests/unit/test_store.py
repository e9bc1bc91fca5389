"""The corpus store: entry format, keep-the-smallest rules, invalid files, atomic writes.

Behaviour tests run over both backends (directory and in-memory) through one fixture; the
kill-it-repeatedly test SIGKILLs a real writer process and reads what it left on disk.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus.store import (FORMAT_VERSION, CorpusFormatError, CorpusStore, CorpusWriteError, Entry, InMemoryStore, Store,
                          utc_now)


def make_entry(text: str = "{bad", signature: str = "crash:ValueError:p.py:parse", **kw) -> Entry:
    base = dict(text=text, signature=signature, verdict="crash", title="crash: ValueError in parse",
                tool="get_weather", format="json", anomaly_class="malformed_json", operator="drop_brace",
                exception="ValueError: bad", calls=None, recipe={"tool": "get_weather", "format": "json", "choices": [1, 2]},
                target="mod:parse", target_version="abc123", first_seen="2026-01-01T00:00:00Z",
                last_seen="2026-01-01T00:00:00Z")
    base.update(kw)
    return Entry(**base)


@pytest.fixture(params=["directory", "memory"])
def store(request, tmp_path) -> Store:
    if request.param == "directory":
        return CorpusStore(tmp_path / "corpus")
    return InMemoryStore()


def add_raw(store: Store, name: str, text: str) -> None:
    """Put a hand-written file into either backend."""
    if isinstance(store, CorpusStore):
        store.path.mkdir(parents=True, exist_ok=True)
        (store.path / name).write_text(text, encoding="utf-8")
    else:
        store.add_raw(name, text)


def raw_files(store: Store) -> dict[str, str]:
    if isinstance(store, CorpusStore):
        if not store.path.exists():
            return {}
        return {p.name: p.read_text(encoding="utf-8") for p in sorted(store.path.iterdir())}
    return dict(store._files)


# --- the entry format ----------------------------------------------------------------------------

awkward_text = st.text(alphabet=st.characters(exclude_categories=()), max_size=60)


@settings(max_examples=150, deadline=None)
@given(text=awkward_text, signature=st.text(min_size=1, max_size=20), truth_known=st.booleans())
def test_entry_round_trips_through_its_file_text(text, signature, truth_known):
    entry = make_entry(text=text, signature=signature, truth_known=truth_known,
                       calls=[{"name": "f", "arguments": {"z": 1, "a": text}}])
    dumped = entry.dumps()
    dumped.encode("ascii")  # ensure_ascii: lone surrogates and control characters are escaped
    assert Entry.loads(dumped) == entry
    assert json.loads(dumped)["format_version"] == FORMAT_VERSION


def test_file_is_indented_with_a_stable_key_order():
    a = make_entry(recipe={"tool": "t", "format": "json", "choices": [1]})
    b = make_entry(recipe={"choices": [1], "format": "json", "tool": "t"})
    assert a.dumps() == b.dumps()
    assert a.dumps().startswith('{\n  "format_version": 1,\n  "signature": ')
    assert list(json.loads(a.dumps())["recipe"]) == ["choices", "format", "tool"]


def test_file_name_is_the_content_hash_of_signature_and_text():
    a = make_entry(text="x")
    assert a.file_name == make_entry(text="x", verdict="hang", status="fixed").file_name
    assert a.file_name != make_entry(text="y").file_name
    assert a.file_name != make_entry(text="x", signature="other").file_name
    assert len(a.file_name) == len("0123456789abcdef.json") and a.file_name.endswith(".json")


def _without(field: str) -> dict:
    data = make_entry().to_json()
    del data[field]
    return data


def _with(**changes) -> dict:
    data = make_entry().to_json()
    data.update(changes)
    return data


@pytest.mark.parametrize("data, field", [
    ([1, 2], "object"),
    (_without("format_version"), "format_version"),
    (_with(format_version=2), "format_version"),
    (_with(format_version=True), "format_version"),
    (_without("text"), "text"),
    (_without("signature"), "signature"),
    (_with(signature=""), "signature"),
    (_without("verdict"), "verdict"),
    (_with(text=3), "text"),
    (_with(calls={"name": "f"}), "calls"),
    (_with(recipe=[1]), "recipe"),
    (_with(status="wontfix"), "status"),
    (_with(level="execute"), "level"),
    (_with(first_seen="yesterday"), "first_seen"),
    (_with(last_seen=None), "last_seen"),
    (_with(exception=5), "exception"),
    (_with(truth_known=1), "truth_known"),
    (_with(truth_known=None), "truth_known"),
    (_with(kind="Number Parser"), "kind"),
    (_with(kind=""), "kind"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_from_json_names_the_missing_or_bad_field(data, field):
    with pytest.raises(CorpusFormatError, match=field):
        Entry.from_json(data)


def test_optional_fields_may_be_absent_or_null():
    data = {"format_version": 1, "text": "t", "signature": "s", "verdict": "crash", "status": "open",
            "level": "validate", "first_seen": "2026-01-01T00:00:00+00:00", "last_seen": "2026-01-02T00:00:00Z",
            "calls": None, "future_field": 1}
    entry = Entry.from_json(data)
    assert entry.tool is None and entry.recipe is None and entry.level == "validate"
    assert entry.truth_known is True


def test_an_entry_of_a_harness_registered_by_a_plugin_is_read_and_kept(tmp_path):
    """The corpus knows no harness: an entry's kind names one (a plugin's too), and an entry whose
    harness this toolfuzz lacks is still read and listed (replay calls it unjudged), never skipped."""
    store = CorpusStore(tmp_path)
    entry = make_entry(kind="number", scenario={"truth": -5})
    assert store.put(entry) == "added"
    (path, read), = store.entries()
    assert not store.problems and read.kind == "number" and read.scenario == {"truth": -5}


# --- keep the smallest --------------------------------------------------------------------------

def test_put_adds_replaces_with_smaller_and_keeps_otherwise(store):
    assert store.put(make_entry(text="abcdef")) == "added"
    assert store.put(make_entry(text="abcdefg")) == "kept"
    assert store.put(make_entry(text="abcdef")) == "kept"
    assert store.put(make_entry(text="zzzzz")) == "replaced"
    assert store.put(make_entry(text="aaaaa")) == "replaced"  # same length: code-point order decides
    assert store.get(make_entry().signature).text == "aaaaa"
    assert [e.text for _p, e in store.entries()] == ["aaaaa"]
    assert list(raw_files(store)) == [make_entry(text="aaaaa").file_name]


def test_kept_entry_still_updates_last_seen_and_status(store):
    store.put(make_entry(text="ab", status="fixed", first_seen="2026-01-05T00:00:00Z",
                         last_seen="2026-01-05T00:00:00Z"))
    assert store.put(make_entry(text="abc", status="open", first_seen="2026-01-01T00:00:00Z",
                                last_seen="2026-02-01T00:00:00Z", exception="other")) == "kept"
    entry = store.get(make_entry().signature)
    assert (entry.text, entry.status, entry.exception) == ("ab", "open", "ValueError: bad")
    assert (entry.first_seen, entry.last_seen) == ("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z")
    # an older sighting does not move last_seen back
    store.put(make_entry(text="abc", last_seen="2025-01-01T00:00:00Z"))
    assert store.get(make_entry().signature).last_seen == "2026-02-01T00:00:00Z"


def test_replaced_entry_keeps_the_earliest_first_seen(store):
    store.put(make_entry(text="abcd", first_seen="2026-01-01T00:00:00Z"))
    store.put(make_entry(text="ab", first_seen="2026-03-01T00:00:00Z", last_seen="2026-03-01T00:00:00Z"))
    entry = store.get(make_entry().signature)
    assert (entry.text, entry.first_seen, entry.last_seen) == ("ab", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z")


def test_an_input_failing_again_replaces_a_fixed_entry_s_input_whatever_its_size(store):
    """The stored input of an entry marked fixed passed when it was marked; a new input showing the
    bug again is the one that fails now: it is kept, larger or not, and the entry stays fixed with
    the time it was marked. An open entry keeps the smaller input as always."""
    store.put(make_entry(text="ab"))
    store.mark_fixed(make_entry().signature)
    marked = store.get(make_entry().signature).status_since
    assert marked
    assert store.put(make_entry(text="abcd", status="fixed"), fails_again=True) == "replaced"
    entry = store.get(make_entry().signature)
    assert (entry.text, entry.status, entry.status_since) == ("abcd", "fixed", marked)
    assert [e.text for _p, e in store.entries()] == ["abcd"]
    store.mark_open(make_entry().signature)
    assert store.put(make_entry(text="abcdef"), fails_again=True) == "kept"  # open: the smaller stays
    assert store.get(make_entry().signature).text == "abcd"


def test_a_replaced_input_keeps_when_its_entry_s_status_was_decided(store):
    store.put(make_entry(text="abcd"))
    store.mark_fixed(make_entry().signature)
    marked = store.get(make_entry().signature).status_since
    assert store.put(make_entry(text="ab", status="fixed")) == "replaced"
    assert store.get(make_entry().signature).status_since == marked


def test_unchanged_put_does_not_rewrite_the_file(tmp_path):
    store = CorpusStore(tmp_path / "c")
    store.put(make_entry())
    file = store.path / make_entry().file_name
    os.utime(file, (1_000_000, 1_000_000))
    assert store.put(make_entry(text=make_entry().text + "more")) == "kept"
    assert file.stat().st_mtime == 1_000_000


def test_status_remove_and_get(store):
    sig = make_entry().signature
    assert store.get(sig) is None
    store.put(make_entry())
    store.mark_fixed(sig)
    assert store.get(sig).status == "fixed"
    store.mark_open(sig)
    assert store.get(sig).status == "open"
    with pytest.raises(KeyError):
        store.mark_fixed("nope")
    assert store.remove(sig) is True
    assert store.remove(sig) is False
    assert store.get(sig) is None and store.entries() == []


def test_a_fix_made_within_the_instant_of_the_failure_survives_merging_a_copy_taken_before_it(store):
    """A campaign stores an entry, the corpus is copied, a replay marks it fixed, the copy is merged
    back: all inside one clock tick (the CI run that found this did it within one second). The copy
    has not heard of the fix, so it must not re-open the entry."""
    import time_machine

    with time_machine.travel("2026-12-02T17:00:00Z", tick=False):
        now = utc_now()
        store.put(make_entry(first_seen=now, last_seen=now))
        copy = InMemoryStore()
        copy.merge(store)
        store.mark_fixed(make_entry().signature)
        store.merge(copy)
    assert store.get(make_entry().signature).status == "fixed"


def test_entry_times_have_millisecond_resolution():
    import time_machine

    with time_machine.travel("2026-12-02T17:00:00.250Z", tick=False):
        assert utc_now() == "2026-12-02T17:00:00.250Z"


def test_returned_entries_are_copies(store):
    entry = make_entry()
    store.put(entry)
    entry.text = "changed"
    got = store.get(make_entry().signature)
    got.status = "fixed"
    assert store.get(make_entry().signature).text == "{bad"
    assert store.get(make_entry().signature).status == "open"


def test_merge_counts_and_keeps_the_smallest(store):
    other = InMemoryStore()
    store.put(make_entry(text="aaaa", signature="s1"))
    store.put(make_entry(text="bb", signature="s2"))
    other.put(make_entry(text="a", signature="s1"))
    other.put(make_entry(text="bbb", signature="s2"))
    other.put(make_entry(text="c", signature="s3"))
    assert store.merge(other) == {"added": 1, "replaced": 1, "kept": 1}
    assert {e.signature: e.text for _p, e in store.entries()} == {"s1": "a", "s2": "bb", "s3": "c"}


def test_two_files_for_one_signature_resolve_to_the_smaller(store):
    big, small = make_entry(text="bigger"), make_entry(text="small")
    add_raw(store, big.file_name, big.dumps())
    add_raw(store, small.file_name, small.dumps())
    assert store.get(big.signature).text == "small"
    assert store.put(make_entry(text="larger input")) == "kept"
    assert list(raw_files(store)) == [small.file_name]  # the leftover is cleaned up


# --- invalid files are reported, skipped, never touched ------------------------------------------

INVALID_FILES = {
    "notjson.json": "{this is not json",
    "array.json": "[1, 2, 3]",
    "future.json": json.dumps({**make_entry(signature="future").to_json(), "format_version": 99}),
    "missing.json": json.dumps({k: v for k, v in make_entry(signature="m").to_json().items() if k != "verdict"}),
    "empty.json": "",
}


def test_invalid_files_are_reported_skipped_and_never_touched(store):
    for name, text in INVALID_FILES.items():
        add_raw(store, name, text)
    add_raw(store, "README.md", "not a corpus file, not a problem")
    store.put(make_entry())
    entries = store.entries()
    assert [e.signature for _p, e in entries] == [make_entry().signature]
    assert sorted(p.split(": ", 1)[0].rsplit("/", 1)[-1] for p in store.problems) == sorted(INVALID_FILES)
    assert any("format_version" in p for p in store.problems)
    assert any("'verdict'" in p for p in store.problems)
    store.put(make_entry(text="x"))
    store.remove(make_entry().signature)
    files = raw_files(store)
    for name, text in INVALID_FILES.items():
        assert files[name] == text


def test_a_corrupt_file_with_the_entry_s_own_name_is_not_overwritten(store):
    entry = make_entry()
    add_raw(store, entry.file_name, "{corrupt")
    assert store.put(entry) == "kept"
    assert raw_files(store)[entry.file_name] == "{corrupt"
    assert any("not overwritten" in p for p in store.problems)


def test_missing_directory_is_an_empty_corpus_and_a_file_is_an_error(tmp_path):
    assert CorpusStore(tmp_path / "nothing").entries() == []
    (tmp_path / "f").write_text("x")
    with pytest.raises(CorpusFormatError, match="directory"):
        CorpusStore(tmp_path / "f")


def test_a_corpus_that_cannot_be_written_is_one_error_naming_the_directory(tmp_path, monkeypatch):
    """A read-only corpus (a CI checkout, a mounted volume): every write is a CorpusWriteError
    naming the directory, never a bare OSError traceback; the files are left as they were."""
    import corpus.store as store_module

    store = CorpusStore(tmp_path / "corpus")
    store.put(make_entry())
    before = raw_files(store)

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(store_module, "atomic_write", refused)
    monkeypatch.setattr(store_module.os, "unlink", refused)
    for write in (lambda: store.put(make_entry(text="{")), lambda: store.mark_fixed(make_entry().signature),
                  lambda: store.remove(make_entry().signature)):
        with pytest.raises(CorpusWriteError) as caught:
            write()
        assert str(caught.value) == f"{tmp_path / 'corpus'}: cannot write the corpus (Permission denied)"
    monkeypatch.undo()
    assert raw_files(store) == before


def test_stray_temp_files_are_ignored_and_only_old_ones_cleaned(tmp_path):
    store = CorpusStore(tmp_path)
    store.put(make_entry())
    young, old = tmp_path / ".tmp-1-young", tmp_path / ".tmp-2-old"
    young.write_text("{half")
    old.write_text("{half")
    os.utime(old, (time.time() - 120, time.time() - 120))
    assert len(store.entries()) == 1 and store.problems == []
    assert young.exists() and not old.exists()


# --- both backends agree ------------------------------------------------------------------------

operations = st.lists(st.tuples(st.sampled_from(["put", "fixed", "open", "remove"]),
                                st.sampled_from(["s1", "s2", "s3"]),
                                st.text(alphabet="ab{", max_size=4),
                                st.sampled_from(["open", "fixed"])), max_size=25)


def _apply_to_both(disk, memory, ops) -> None:
    for op, sig, text, status in ops:
        results = []
        for s in (disk, memory):
            try:
                if op == "put":
                    results.append(s.put(make_entry(text=text, signature=sig, status=status)))
                elif op == "fixed":
                    results.append(s.mark_fixed(sig))
                elif op == "open":
                    results.append(s.mark_open(sig))
                else:
                    results.append(s.remove(sig))
            except KeyError:
                results.append("KeyError")
        assert results[0] == results[1]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_backends_agree_on_any_sequence_of_operations(tmp_path_factory, ops):
    import time_machine

    disk, memory = CorpusStore(tmp_path_factory.mktemp("c")), InMemoryStore()
    # one instant for both backends: a status change stamps the second it happens in, and the two
    # stores' calls could straddle a second boundary
    with time_machine.travel("2026-06-01T12:00:00Z", tick=False):
        _apply_to_both(disk, memory, ops)
    assert [(Path(p).name, e) for p, e in disk.entries()] == memory.entries()
    assert {Path(k).name: v for k, v in raw_files(disk).items()} == raw_files(memory)
    for _p, e in memory.entries():  # one file per signature: the smallest text put since its removal
        puts: list[str] = []
        for op, sig, t, _s in ops:
            if sig == e.signature and op in ("put", "remove"):
                puts = puts + [t] if op == "put" else []
        assert e.text == min(puts, key=lambda t: (len(t), t))
