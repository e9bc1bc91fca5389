"""The one route findings take into the corpus (fuzzer.engine.corpus_writer.store_finding).

Only ``fuzz replay --update`` (or ``fuzz corpus set-status``) changes an entry's status: a finding
that shows the bug of an entry marked fixed is a regression, and the entry stays fixed, whatever
wrote it (a campaign, ``corpus add``, ``corpus import``).
"""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from corpus.store import Entry, InMemoryStore
from fuzzer.engine.corpus_writer import CorpusWriter, store_finding
from fuzzer.engine.events import FindingRecorded


def finding(signature: str, text: str = "{}", verdict: str = "crash") -> SimpleNamespace:
    """The parts of a finding the route reads: its signature and how it becomes an entry."""
    def to_entry(*, target: str, version: str | None = None) -> Entry:
        return Entry(text=text, signature=signature, verdict=verdict, target=target, target_version=version)

    return SimpleNamespace(signature=SimpleNamespace(id=signature), verdict_name=verdict, match_id=None,
                           best_outcome=None, to_entry=to_entry)


def test_a_finding_of_a_fixed_entry_is_a_regression_and_the_entry_stays_fixed():
    store = InMemoryStore()
    store.put(Entry(text="{}", signature="crash-a", verdict="crash"))
    store.mark_fixed("crash-a")
    stored = store_finding(store, finding("crash-a"), target="m:parse")
    assert stored.regression == "crash-a" and stored.what == "kept"
    assert store.get("crash-a").status == "fixed"


def test_a_smaller_input_of_a_fixed_entry_replaces_it_and_stays_fixed():
    store = InMemoryStore()
    store.put(Entry(text="{ }", signature="crash-a", verdict="crash"))
    store.mark_fixed("crash-a")
    stored = store_finding(store, finding("crash-a", text="{}"), target="m:parse")
    assert stored == type(stored)("replaced", "crash-a")
    assert store.get("crash-a").text == "{}" and store.get("crash-a").status == "fixed"


def test_open_and_new_signatures_are_no_regression():
    store = InMemoryStore()
    store.put(Entry(text="{}", signature="crash-a", verdict="crash"))
    assert store_finding(store, finding("crash-a"), target="m:parse").regression is None
    new = store_finding(store, finding("crash-b", text="[]"), target="m:parse")
    assert new.what == "added" and new.regression is None
    assert {e.signature: e.status for _, e in store.entries()} == {"crash-a": "open", "crash-b": "open"}


def test_a_hang_caught_one_helper_deeper_than_a_fixed_entry_is_its_regression():
    """Matched as the gate matches it: the new entry is stored fixed too, so neither is an open failure."""
    from corpus.signature import hang_signature

    stored_frames = [("p.py", "parse"), ("p.py", "_scan")]
    deeper = [("p.py", "parse"), ("p.py", "_scan"), ("p.py", "_step")]
    store = InMemoryStore()
    old = hang_signature(frames=stored_frames).id
    store.put(Entry(text="<a>", signature=old, verdict="hang", scenario={"frames": [list(f) for f in stored_frames]}))
    store.mark_fixed(old)
    new_id = hang_signature(frames=deeper).id
    assert new_id != old
    hang = finding(new_id, text="<b>", verdict="hang")
    hang.best_outcome = SimpleNamespace(frames=tuple(deeper))
    stored = store_finding(store, hang, target="m:parse")
    assert stored.regression == old
    assert {e.signature: e.status for _, e in store.entries()} == {old: "fixed", new_id: "fixed"}


def test_the_campaign_writer_lists_each_regression_once():
    store = InMemoryStore()
    store.put(Entry(text="{}", signature="crash-a", verdict="crash"))
    store.mark_fixed("crash-a")
    writer = CorpusWriter(store, target="m:parse")
    writer.handle_event(FindingRecorded(finding("crash-a")))
    writer.handle_event(FindingRecorded(finding("crash-a")))
    assert writer.regressions == ["crash-a"] and store.get("crash-a").status == "fixed"


@given(st.lists(st.tuples(st.sampled_from(["crash-a", "crash-b", "crash-c"]), st.sampled_from(["{}", "[]", "{ }"])),
                max_size=12),
       st.sets(st.sampled_from(["crash-a", "crash-b", "crash-c"])))
def test_no_sequence_of_writes_changes_a_status(writes, fixed):
    """Whatever findings arrive, in whatever order and size, a fixed entry stays fixed, an open one
    stays open, and every write to a fixed entry says regression."""
    store = InMemoryStore()
    for signature in ("crash-a", "crash-b", "crash-c"):
        store.put(Entry(text="{  }", signature=signature, verdict="crash"))
    for signature in fixed:
        store.mark_fixed(signature)
    for signature, text in writes:
        stored = store_finding(store, finding(signature, text=text), target="m:parse")
        assert (stored.regression == signature) == (signature in fixed)
    assert {e.signature: e.status for _, e in store.entries()} == {
        s: "fixed" if s in fixed else "open" for s in ("crash-a", "crash-b", "crash-c")}


def test_an_entry_written_twice_in_one_run_is_counted_once():
    """A campaign over a corpus files a known signature when it finds it (kept: the corpus's input
    is smaller), then again when it has shrunk it (replaced): one entry replaced, not one kept and
    one replaced (a run over 11 entries said "7 kept, 13 replaced")."""
    store = InMemoryStore()
    store.put(Entry(text="{ 1 }", signature="crash-a", verdict="crash"))
    writer = CorpusWriter(store, target="m:parse")
    writer.handle_event(FindingRecorded(finding("crash-a", text="{ 1 2 }")))
    writer.handle_event(FindingRecorded(finding("crash-a", text="{}"), improved=True))
    assert writer.changes == {"replaced": 1}
    assert writer.changes_text() == "1 replaced"


@given(st.lists(st.tuples(st.sampled_from(["crash-a", "crash-b", "crash-c", "crash-d"]),
                          st.sampled_from(["{}", "[]", "{ }", "{  }", "[ 1 ]"]), st.booleans()), max_size=12))
def test_the_writer_counts_each_signature_once_by_what_became_of_it(writes):
    """Whatever findings arrive, in whatever order, size and announcement: each signature written
    is counted once — added when the run brought it, else replaced when its input ever got
    smaller, else kept — so the counts add up to the signatures the run wrote."""
    store = InMemoryStore()
    for signature in ("crash-a", "crash-b"):
        store.put(Entry(text="{  }", signature=signature, verdict="crash"))
    before = {s: store.get(s).text for s in ("crash-a", "crash-b")}
    writer = CorpusWriter(store, target="m:parse")
    counted = set()
    for signature, text, improved in writes:
        writer.handle_event(FindingRecorded(finding(signature, text=text), improved=improved))
        if not improved or signature not in before or store.get(signature).text != before[signature]:
            counted.add(signature)
    expected = {}
    for signature in counted:
        what = ("added" if signature not in before else
                "replaced" if store.get(signature).text != before[signature] else "kept")
        expected[what] = expected.get(what, 0) + 1
    assert writer.changes == expected
