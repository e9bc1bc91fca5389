"""The gate's decision and the exit statuses, as the pure functions they are (fuzzer.engine.decisions)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpus.store import Entry
from fuzzer.engine.decisions import (GateDecision, campaign_exit_code, change_kind, corpus_maintenance_exit_code,
                                     corpus_write_exit_code, decide_gate, entry_status, gate_exit_code,
                                     minimize_exit_code, record_blocks, records_replay_exit_code, replay_exit_code,
                                     reproduce_exit_code)
from fuzzer.engine.harness import Replayed


@dataclass
class Sig:
    id: str
    title: str = ""


@dataclass
class Found:
    signature: Sig


def entry(signature: str, status: str = "open") -> Entry:
    return Entry(text=signature, signature=signature, verdict=signature.split("-")[0], status=status)


def replayed(signature: str, status: str, now: str | None) -> Replayed:
    return Replayed(f"{signature}.json", entry(signature, status), "pass" if now is None else "crash", now)


def test_a_known_open_failure_does_not_block():
    known = {"crash-a": entry("crash-a")}
    d = decide_gate([replayed("crash-a", "open", "crash-a")], [Found(Sig("crash-a"))], known)
    assert not d.blocked and d.exit_code == 0 and len(d.known) == 1


def test_a_fixed_entry_failing_again_under_any_signature_is_a_regression():
    known = {"crash-a": entry("crash-a", "fixed"), "crash-b": entry("crash-b")}
    for now in ("crash-a", "crash-b", "crash-c"):
        d = decide_gate([replayed("crash-a", "fixed", now)], [], known)
        assert d.blocked and len(d.regressions) == 1 and not d.new


def test_a_campaign_finding_of_a_fixed_signature_is_a_regression_once():
    known = {"crash-a": entry("crash-a", "fixed")}
    d = decide_gate([replayed("crash-a", "fixed", "crash-a")], [Found(Sig("crash-a"))], known)
    assert len(d.regressions) == 1  # the entry, not counted twice
    d = decide_gate([replayed("crash-a", "fixed", None)], [Found(Sig("crash-a"))], known)
    assert len(d.regressions) == 1 and d.blocked


def test_new_signatures_block_and_ignored_ones_do_not():
    known = {"crash-a": entry("crash-a")}
    d = decide_gate([replayed("crash-a", "open", "crash-z")], [Found(Sig("hang-b"))], known)
    assert d.blocked and len(d.new) == 2
    d = decide_gate([replayed("crash-a", "open", "crash-z")], [Found(Sig("hang-b"))], known,
                    ignore=["hang-b", "crash-z"])
    assert not d.blocked and len(d.ignored) == 2


def test_nothing_tested_blocks_and_unjudged_entries_are_neither_pass_nor_fail():
    d = decide_gate([], [], {}, nothing_tested="no supported format")
    assert d.blocked and d.exit_code == 1
    r = Replayed("x.json", entry("crash-a"), "unjudged", None, unjudged="tool missing")
    d = decide_gate([r], [], {"crash-a": entry("crash-a")})
    assert not d.blocked and d.unjudged == (r,) and not d.passed
    assert replay_exit_code([r]) == 2  # nothing judged: nothing tested (a missing option), not an all-clear


def test_a_replay_whose_updates_could_not_be_saved_is_never_the_all_clear():
    """`replay --update` on a corpus that cannot be written: a configuration error (2), even when
    every entry passed, and ahead of failures (the command did not do what it was asked)."""
    passing, failing = replayed("crash-a", "open", None), replayed("crash-b", "open", "crash-b")
    assert replay_exit_code([passing]) == 0
    assert replay_exit_code([passing], unsaved="c: cannot write the corpus") == 2
    assert replay_exit_code([passing, failing], unsaved="c: cannot write the corpus") == 2


def test_an_unreadable_corpus_file_blocks_the_gate():
    """A merge conflict left in a corpus file would silently drop its regression test."""
    passing = replayed("crash-a", "fixed", None)
    assert not decide_gate([passing], [], {"crash-a": entry("crash-a", "fixed")}).blocked
    d = decide_gate([passing], [], {"crash-a": entry("crash-a", "fixed")}, unreadable=["b.json: not JSON"])
    assert d.blocked and d.exit_code == 1 and d.unreadable == ("b.json: not JSON",)


statuses = st.sampled_from(["open", "fixed"])
nows = st.sampled_from([None, "crash-a", "crash-b", "crash-new"])


@given(st.lists(st.tuples(st.sampled_from(["crash-a", "crash-b", "hang-c"]), statuses, nows), max_size=8),
       st.lists(st.sampled_from(["crash-a", "crash-b", "hang-c", "crash-new"]), max_size=5))
def test_every_entry_lands_in_exactly_one_bucket(rows, found):
    seen: dict = {}
    for sig, status, now in rows:
        seen.setdefault(sig, (sig, status, now))
    rows = list(seen.values())
    known = {sig: entry(sig, status) for sig, status, _ in rows}
    reps = [replayed(sig, status, now) for sig, status, now in rows]
    d = decide_gate(reps, [Found(Sig(s)) for s in found], known)
    buckets = [x for x in d.regressions + d.new + d.known + d.passed + d.unjudged + d.ignored if hasattr(x, "entry")]
    assert sorted(id(x) for x in buckets) == sorted(id(x) for x in reps)
    assert d.blocked == bool(d.regressions or d.new)


@pytest.mark.parametrize("findings, corpus, nothing, interrupted, code", [
    (0, False, None, False, 0), (2, False, None, False, 1), (0, True, None, False, 1),
    (0, False, "no supported format", False, 2), (1, False, "no supported format", False, 1),
    (0, False, None, True, 130), (1, False, None, True, 1),
])
def test_campaign_exit_codes(findings, corpus, nothing, interrupted, code):
    assert campaign_exit_code(findings=findings, corpus_failing=corpus, nothing_tested=nothing,
                              interrupted=interrupted) == code


def test_the_gate_knows_a_hang_caught_one_helper_deeper_than_the_stored_entry():
    from types import SimpleNamespace

    from corpus.signature import hang_signature
    from corpus.store import Entry
    from fuzzer.engine.decisions import decide_gate

    stored = [("p.py", "parse"), ("p.py", "_scan")]
    entry = Entry(text="<tool_call></tool_call>", signature=hang_signature(frames=stored).id, verdict="hang",
                  scenario={"frames": [list(f) for f in stored]})
    deeper = stored + [("_common.py", "skip_ws")]
    elsewhere = [("p.py", "parse"), ("p.py", "_read")]

    def finding(frames):
        return SimpleNamespace(signature=hang_signature(frames=frames), verdict_name="hang",
                               best_outcome=SimpleNamespace(frames=tuple(frames)))
    decision = decide_gate([], [finding(deeper)], {entry.signature: entry})
    assert not decision.blocked and not decision.new
    assert decide_gate([], [finding(elsewhere)], {entry.signature: entry}).new  # another hang: new


def test_a_corruption_stored_unshrunk_is_known_to_a_gate_that_filed_it_by_path_and_back():
    """Ctrl-C (or the budget) stores a corruption under the oracle's key; shrunk, the same bug is
    filed by the path its minimized input runs (``match_id`` keeps the oracle's key). Each side
    must know the other, or the next gate blocks on a bug the corpus holds."""
    from types import SimpleNamespace

    oracle_key, path_key, other_path = "corruption-aaaa", "corruption-bbbb", "corruption-cccc"
    unshrunk = Entry(text="x", signature=oracle_key, verdict="corruption")
    shrunk = SimpleNamespace(signature=Sig(path_key), verdict_name="corruption", match_id=oracle_key)
    assert not decide_gate([], [shrunk], {oracle_key: unshrunk}).new
    filed_by_path = Entry(text="x", signature=path_key, verdict="corruption", scenario={"match": oracle_key})
    left_unshrunk = SimpleNamespace(signature=Sig(oracle_key), verdict_name="corruption", match_id=None)
    assert not decide_gate([], [left_unshrunk], {path_key: filed_by_path}).new
    # a corruption on another path, of another oracle key, is still new
    elsewhere = SimpleNamespace(signature=Sig(other_path), verdict_name="corruption", match_id="corruption-dddd")
    assert decide_gate([], [elsewhere], {oracle_key: unshrunk, path_key: filed_by_path}).new


def test_ignore_takes_signatures_and_files_and_refuses_a_mistyped_file_name(tmp_path):
    from fuzzer.cli.campaign import read_ignore
    from fuzzer.cli.errors import ConfigError

    listed = tmp_path / "known.txt"
    listed.write_text("crash-0123456789ab  # a comment\n\n# only a comment\nhang-abcdefabcdef\n")
    assert read_ignore(("corruption-7cdf9b014b55", str(listed))) == \
        {"corruption-7cdf9b014b55", "crash-0123456789ab", "hang-abcdefabcdef"}
    for wrong in ("nosuch-file.txt", "crash-123", str(tmp_path / "missing.txt")):
        with pytest.raises(ConfigError, match="neither a signature"):
            read_ignore((wrong,))


def test_an_entry_failing_the_same_way_from_another_place_moved_and_so_did_its_campaign_finding():
    """A refactor moves a known crash to another function: the entry's input fails with the same
    ``what`` (exception and message) under another signature. Moved: not new, not blocking; the
    campaign finding under that signature neither. Another ``what``, or a fixed entry, still blocks."""
    from corpus.signature import crash_signature

    before = crash_signature(exception="KeyError", message="'name'", frames=[("p.py", "parse")])
    after = crash_signature(exception="KeyError", message="'name'", frames=[("p.py", "_call"), ("p.py", "parse")])
    other = crash_signature(exception="IndexError", message="list index", frames=[("p.py", "_call")])
    assert before.id != after.id and before.what == after.what != other.what
    stored = Entry(text="{}", signature=before.id, verdict="crash", what=before.what)
    known = {before.id: stored}

    def replay(now, status="open"):
        e = Entry(text="{}", signature=before.id, verdict="crash", what=before.what, status=status)
        return Replayed("e.json", e, "crash", now.id, what=now.what)

    d = decide_gate([replay(after)], [Found(after)], known)
    assert not d.blocked and len(d.moved) == 2 and not d.new
    d = decide_gate([replay(other)], [Found(other)], known)
    assert d.blocked and len(d.new) == 2 and not d.moved
    d = decide_gate([replay(after, "fixed")], [], {before.id: Entry(text="{}", signature=before.id, verdict="crash",
                                                                    what=before.what, status="fixed")})
    assert d.blocked and len(d.regressions) == 1
    old = Entry(text="{}", signature=before.id, verdict="crash")  # written before entries kept ``what``
    d = decide_gate([Replayed("e.json", old, "crash", after.id, what=after.what)], [], {before.id: old})
    assert d.blocked and len(d.new) == 1


def test_only_a_raised_exception_can_move_never_a_hang_a_death_or_a_kind_of_damage():
    """A hang's ``what`` is "hang" wherever it is stuck: a new stuck loop that an open entry's input
    now reaches first must block, not pass as the old one moved (nor may the campaign's findings of
    that loop). A corruption finding with an open entry's kind of damage, on another path, while
    that entry still fails as it did, is a new bug too: nothing moved."""
    from types import SimpleNamespace

    from corpus.signature import crash_signature, hang_signature, movable, path_signature

    old = hang_signature(frames=[("p.py", "parse"), ("p.py", "_skip_ws")])
    new = hang_signature(frames=[("p.py", "parse"), ("p.py", "_strip_fences")])
    assert old.what == new.what and not movable(old.what)
    stored = Entry(text="{}", signature=old.id, verdict="hang", what=old.what)
    d = decide_gate([Replayed("e.json", stored, "hang", new.id, what=new.what)], [Found(new)], {old.id: stored})
    assert d.blocked and len(d.new) == 2 and not d.moved
    died = crash_signature(exception=None, detail="signal 11", frames=[("p.py", "parse")])
    assert not movable(died.what) and movable(crash_signature(exception="KeyError", message="'x'").what)

    split = path_signature("corruption", kind="calls:fewer", words="a call dropped", functions=["p.py:_split"])
    think = path_signature("corruption", kind="calls:fewer", words="a call dropped", functions=["p.py:_think"])
    open_entry = Entry(text="x", signature=split.id, verdict="corruption", what=split.what,
                       scenario={"match": "corruption-0123456789ab"})
    still = Replayed("e.json", open_entry, "corruption", split.id, what=split.what)
    unrelated = SimpleNamespace(signature=think, verdict_name="corruption", match_id="corruption-0123456789ab")
    d = decide_gate([still], [unrelated], {split.id: open_entry})
    assert d.blocked and d.new == (unrelated,) and not d.moved


# -- one rule for every "what changed" ------------------------------------------------------------

judgments = st.sampled_from([True, False, None])


@given(st.booleans(), judgments, judgments)
def test_a_fix_is_never_a_regression_and_an_unjudgeable_change_never_a_fix(same, before_ok, now_ok):
    kind = change_kind(same=same, before_ok=before_ok, now_ok=now_ok)
    assert kind in ("same", "fixed", "regression", "changed")
    assert (kind == "same") == same
    if now_ok is True:
        assert kind != "regression"
    if now_ok is None:
        assert kind in ("same", "changed")
    if kind == "fixed":
        assert now_ok is True and before_ok is not True
    if kind == "regression":
        assert now_ok is False and before_ok is not False


@given(st.lists(st.sampled_from(["crash-a", "hang-b", "breaker_violation-c"]), max_size=3),
       st.lists(st.sampled_from(["crash-a", "hang-b", "breaker_violation-c"]), max_size=3))
def test_the_executor_diff_classifies_by_the_same_rule(old, new):
    from fuzzer.harnesses.executor.harness import classify

    expected = ("same" if set(old) == set(new) else "fixed" if not new else "regression" if not old
                else "changed")
    assert classify(old, new) == expected


@pytest.mark.parametrize("status, signature, now, unjudged, expected", [
    ("open", "crash-a", None, False, "pass"),
    ("open", "crash-a", "crash-a", False, "fail"),
    ("open", "crash-a", "crash-b", False, "changed"),
    ("fixed", "crash-a", "crash-b", False, "regression"),
    ("fixed", "crash-a", None, True, "unjudged"),
])
def test_a_replayed_entry_s_status(status, signature, now, unjudged, expected):
    assert entry_status(entry_status=status, entry_signature=signature, now=now, unjudged=unjudged) == expected


@pytest.mark.parametrize("code, expected", [
    (lambda: reproduce_exit_code(failing=True), 1),
    (lambda: reproduce_exit_code(failing=False), 0),
    (lambda: reproduce_exit_code(failing=False, interrupted=True), 130),
    (lambda: reproduce_exit_code(failing=True, problem="a binary file"), 2),
    (lambda: corpus_maintenance_exit_code(), 0),
    (lambda: corpus_maintenance_exit_code(unsaved="read-only"), 2),
    (lambda: corpus_write_exit_code(regressions=0, nothing_tested="no records"), 2),
    (lambda: corpus_write_exit_code(regressions=1), 1),
    (lambda: gate_exit_code(GateDecision(), interrupted=True), 130),
    (lambda: gate_exit_code(GateDecision(new=("x",)), interrupted=True), 1),
    (lambda: gate_exit_code(GateDecision()), 0),
    (lambda: minimize_exit_code(fails=False), 1),
    (lambda: minimize_exit_code(fails=True), 0),
    (lambda: records_replay_exit_code(blocking=0, judged=0), 1),
    (lambda: records_replay_exit_code(blocking=0, judged=5, interrupted=True), 130),
    (lambda: records_replay_exit_code(blocking=2, judged=5, interrupted=True), 1),
], ids=lambda v: "" if callable(v) else str(v))
def test_exit_statuses(code, expected):
    assert code() == expected


@pytest.mark.parametrize("kind, baseline, compared, blocks", [
    ("fixed", None, False, False), ("regressed", None, False, True), ("changed", None, False, True),
    ("regressed", "fixed", True, False), ("fixed", "regressed", True, True), ("changed", "changed", True, False),
])
def test_which_replayed_records_block(kind, baseline, compared, blocks):
    assert record_blocks(kind=kind, baseline=baseline, baseline_compared=compared) is blocks
