"""What kind of wrong answer a corruption is: the stable part of its signature, in words.

Two corrupted outputs are the same bug when the target did the same thing to them — dropped a
call, renamed a function, stripped the same characters from a string — whatever operator made the
input (:func:`corruption_key`). :func:`damaged_string` is the altered string the worker looks for to
find the function that made the damage; :func:`coarse_damage` is the kind without the characters
involved, for keys by path. Used by the parser's oracle (:mod:`fuzzer.harnesses.parser.oracle`) and
the stream harness alike.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from strategies._internal.sample import json_equal
from strategies.json_values import json_kind


def _chars(text: str) -> str:
    """The distinct visible characters of an edit (whitespace ignored unless it is all there is),
    bounded: a regex that eats ", }" and one that eats ",}" are the same bug."""
    seen = sorted({ch for ch in text if not ch.isspace()}) or sorted({" " for ch in text})
    shown = "".join(seen)
    return shown if len(shown) <= 8 else shown[:8] + "…"


def _string_edit(expected: str, got: str) -> tuple[str, str]:
    import difflib

    if got and expected.startswith(got):
        return "string:truncated", "a string argument was truncated"
    from collections import Counter

    before, after = Counter(expected), Counter(got)
    counted_removed, counted_added = "".join((before - after).elements()), "".join((after - before).elements())
    if len(expected) + len(got) > 20_000 or bool(counted_removed) != bool(counted_added):
        # too long to diff, or an edit that only removes or only adds characters: the characters
        # removed and added, counted (one bug that collapses whitespace is one key whatever the
        # length of the strings it spoils; a diff may align a pure removal as a replacement —
        # "01235455" -> "555" — and name a character that was only moved)
        removed, added = counted_removed, counted_added
        if not removed and not added:
            return "string", "a long string argument was altered"
    else:
        cut, put = [], []
        matcher = difflib.SequenceMatcher(None, expected, got, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag in ("delete", "replace"):
                cut.append(expected[i1:i2])
            if tag in ("insert", "replace"):
                put.append(got[j1:j2])
        removed, added = "".join(cut), "".join(put)
    gone, new = _chars(removed), _chars(added)
    parts = ([f"removed {_named(removed, gone)!r}"] if gone else []) + ([f"inserted {_named(added, new)!r}"] if new else [])
    return f"string:-{gone}+{new}", "a string argument was altered (" + ", ".join(parts) + ")"


def _named(text: str, chars: str) -> str:
    """What the words say was removed or inserted: the key's characters, except that an edit of
    whitespace only names which (the key keeps one space for all of them: a tab and a vertical
    tab eaten by one bug are one finding, but "removed ' '" for a \x0b misleads)."""
    return "".join(sorted(set(text))) if chars == " " else chars


def _value_difference(expected: Any, got: Any, depth: int = 0) -> tuple[str, str]:
    """(key, words) for the first difference between two JSON values."""
    te, tg = json_kind(expected), json_kind(got)
    if te != tg:
        return f"type:{te}>{tg}", f"a {te} argument came back as a {tg}"
    if depth > 50:
        return "nested", "a deeply nested argument differs"
    if te == "string":
        return _string_edit(expected, got)
    if te == "object":
        missing = [k for k in expected if k not in got]
        extra = [k for k in got if k not in expected]
        if missing and not extra:
            return "keys:dropped", f"argument(s) dropped: {', '.join(map(str, missing[:3]))}"
        if extra and not missing:
            return "keys:added", f"argument(s) added: {', '.join(map(str, extra[:3]))}"
        if missing and extra:
            return "keys:renamed", f"argument(s) renamed: {missing[0]} -> {extra[0]}"
        for k in expected:
            if not json_equal(expected[k], got[k]):
                return _value_difference(expected[k], got[k], depth + 1)
    if te == "array":
        if len(expected) != len(got):
            return "array:length", f"an array argument has {len(got)} items instead of {len(expected)}"
        for x, y in zip(expected, got):
            if not json_equal(x, y):
                return _value_difference(x, y, depth + 1)
    return f"value:{te}", f"a {te} argument has a different value"


def corruption_key(truth: Sequence[dict], returned: Sequence[dict]) -> tuple[str, str]:
    """What kind of wrong answer this is: the stable part of a corruption's signature.

    Two corrupted outputs are the same bug when the target did the same thing to them — dropped a
    call, renamed a function, stripped the same characters from a string — whatever operator made
    the input. Keying by the kind of damage rather than by operator keeps one repair bug (say a
    regex that eats ", }" inside strings) from showing up as a dozen "different" findings.
    """
    if len(truth) != len(returned):
        kind = "calls:fewer" if len(returned) < len(truth) else "calls:more"
        return kind, f"{len(returned)} call(s) returned, {len(truth)} written"
    for t, r in zip(truth, returned):
        if json_equal(t, r):
            continue
        if not isinstance(r, dict) or not isinstance(t, dict):
            return "call:shape", "a call came back in another shape"
        if t.get("name") != r.get("name"):
            return "name", f"function name {t.get('name')!r} came back as {r.get('name')!r}"
        return _value_difference(t.get("arguments"), r.get("arguments"))
    return "order", "the calls came back in another order"


def damaged_string(truth: Any, returned: Any, depth: int = 0) -> Optional[tuple[str, str]]:
    """(damaged, expected) of the first string argument a wrong answer altered, when that is its
    first difference from the truth (:func:`corruption_key` finds the same one); None otherwise, or
    when the damaged string is too short to look for (a character or two is in any text). What
    the worker looks for to find the function that made the damage
    (:mod:`fuzzer.isolation.instrument`)."""
    if depth == 0:
        if not isinstance(truth, list) or not isinstance(returned, list) or len(truth) != len(returned):
            return None
        for t, r in zip(truth, returned):
            if json_equal(t, r):
                continue
            if not isinstance(t, dict) or not isinstance(r, dict) or t.get("name") != r.get("name"):
                return None
            return damaged_string(t.get("arguments"), r.get("arguments"), 1)
        return None
    if json_kind(truth) != json_kind(returned) or depth > 50:
        return None
    if isinstance(truth, str):
        return (returned, truth) if len(returned) >= 3 else None
    if isinstance(truth, dict):
        if set(truth) != set(returned):
            return None
        for k in truth:
            if not json_equal(truth[k], returned[k]):
                return damaged_string(truth[k], returned[k], depth + 1)
    if isinstance(truth, list) and len(truth) == len(returned):
        for x, y in zip(truth, returned):
            if not json_equal(x, y):
                return damaged_string(x, y, depth + 1)
    return None


def coarse_damage(key: Optional[str], words: str) -> tuple[str, str]:
    """The kind of damage without the characters involved: ``string:-,+``, ``string:-'+"`` and a
    string cut short are all "a string argument was altered" (what a path signature keys by: the
    path is the bug — one unescaping pass shortens ``&amp;`` and rewrites ``&lt``, one finding)."""
    if key and (key == "string" or key.startswith("string:")):
        return "string:altered", "a string argument was altered"
    if key is None or key.startswith("accepted:"):
        return "accepted", "the output denotes no faithful call, yet the target returned calls"
    return key, words


__all__ = ["coarse_damage", "corruption_key", "damaged_string"]
