"""A corpus entry: the file format of one finding — its fields, their checks, its file name (a
content hash) and its exact text (indented, a fixed key order, ASCII only, so people read and diff
it). What a store does with entries (keep the smallest per signature, write atomically) is
:mod:`corpus.store`."""


from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Optional

from corpus.predicate import shortlex
from strategies.errors import ToolfuzzError


FORMAT_VERSION = 1
STATUSES = ("open", "fixed")
LEVELS = ("parse", "validate")
#: An entry's kind names the harness that runs it (fuzzer.engine.harness): the built-in ones are
#: parser, executor, agent and stream, and a harness registered by a plugin has a name of its own.
#: The corpus knows no harness (data flows one way), so a kind is checked for its shape only; an
#: entry whose harness this toolfuzz lacks is read, listed and kept, and replay calls it unjudged.
KIND_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")


class CorpusFormatError(ToolfuzzError, ValueError):
    """A corpus file or entry does not have the documented shape; the message names the field."""




def utc_now() -> str:
    """The current time as the ISO-8601 UTC string entries use (``Z`` suffix). Millisecond resolution:
    a replay can mark an entry fixed within the second its failure was last seen, and merging a stale
    copy compares the two times (seconds made them tie, and the tie re-opened the entry)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _formats(first: Optional[list], second: Optional[list]) -> Optional[list]:
    """The formats of one rejection seen by two entries of its signature, in the order first seen."""
    merged = list(dict.fromkeys([*(first or []), *(second or [])]))
    return merged or None


def _parse_time(value: str) -> datetime:
    """Parse an ISO-8601 timestamp; ``Z`` is accepted on Python 3.10 too. Naive means UTC."""
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _canonical(value: Any) -> Any:
    """Nested dicts with sorted keys, so files are stable however the caller built the values."""
    if isinstance(value, dict):
        return {str(k): _canonical(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


# (field name, accepted types, may be None, required in a file)
_FIELDS: tuple[tuple[str, tuple[type, ...], bool, bool], ...] = (
    ("signature", (str,), False, True),
    ("title", (str,), False, False),
    ("verdict", (str,), False, True),
    ("status", (str,), False, True),
    ("level", (str,), False, True),
    ("kind", (str,), False, False),
    ("tool", (str,), True, False),
    ("format", (str,), True, False),
    ("anomaly_class", (str,), True, False),
    ("operator", (str,), True, False),
    ("exception", (str,), True, False),
    ("what", (str,), True, False),
    ("target", (str,), True, False),
    ("target_version", (str,), True, False),
    ("first_seen", (str,), False, True),
    ("last_seen", (str,), False, True),
    ("truth_known", (bool,), False, False),
    ("minimized", (bool,), False, False),
    ("one_minimal", (bool,), True, False),
    ("formats", (list,), True, False),
    ("status_since", (str,), True, False),
    ("calls", (list,), True, False),
    ("recipe", (dict,), True, False),
    ("scenario", (dict,), True, False),
    ("text", (str,), False, True),
)


@dataclass(kw_only=True)
class Entry:
    """One corpus entry: the smallest input known for one signature, and what is known about it.

    ``calls`` is the ground truth of the sample (None when the text denotes no faithful call);
    ``truth_known`` is False when the input was reduced as text or captured raw, so ``calls`` says
    nothing and only robustness can be judged on replay; ``recipe`` regenerates the structured
    sample (``Recipe.to_json()``).

    ``kind`` names the harness the entry belongs to (``parser``, ``executor``, ``agent``). For the
    executor and agent harnesses, ``scenario`` holds the structured input (calls and fault
    schedule, or the model script) and ``text`` a readable rendering of it; the signature, verdict,
    status and merge rules are the same for every kind.
    """

    text: str
    signature: str
    verdict: str
    title: str = ""
    tool: Optional[str] = None
    format: Optional[str] = None
    anomaly_class: Optional[str] = None
    operator: Optional[str] = None
    exception: Optional[str] = None
    #: The signature's key without where in the target it failed (corpus.signature.Signature.what):
    #: this entry's input failing the same way from another place has moved (a refactor), not
    #: found a new bug. None in entries written before it was kept.
    what: Optional[str] = None
    calls: Optional[list] = None
    truth_known: bool = True
    recipe: Optional[dict] = None
    kind: str = "parser"
    scenario: Optional[dict] = None
    #: False when shrinking was stopped by the budget: the input is the one found, not a minimum.
    minimized: bool = True
    #: True when no character of a string value and no element of the shown input can be removed
    #: with the signature holding (checked while shrinking); None: not known (older entries).
    one_minimal: Optional[bool] = None
    #: The formats a rejection was seen in for one reason (None: one format, or an older entry).
    formats: Optional[list] = None
    #: When ``status`` was last set by a person or by replay (``--update``): a merge keeps the
    #: status of whichever side knows more recently (a fix marked after the last failure wins).
    status_since: Optional[str] = None
    target: Optional[str] = None
    target_version: Optional[str] = None
    status: str = "open"
    level: str = "parse"
    first_seen: str = field(default_factory=utc_now)
    last_seen: str = field(default="")

    def __post_init__(self) -> None:
        if not self.last_seen:
            self.last_seen = self.first_seen

    @property
    def key(self) -> tuple[int, str]:
        """Size of the entry's input (shortlex); the corpus keeps the smallest per signature."""
        return shortlex(self.text)

    def holds_hang(self, frames: Any) -> bool:
        """This is a hang entry stuck in the loop ``frames`` shows (caught in the same function,
        or in a helper of it: :func:`corpus.signature.same_hang`)."""
        from corpus.signature import same_hang

        stored = (self.scenario or {}).get("frames")
        return self.verdict == "hang" and bool(stored) and bool(frames) and same_hang(stored, frames)

    @property
    def file_name(self) -> str:
        """``<first 16 hex of sha256 over the canonical signature and text>.json``."""
        blob = json.dumps([self.signature, self.text], ensure_ascii=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("ascii")).hexdigest()[:16] + ".json"

    def to_json(self) -> dict[str, Any]:
        """The file's object: ``format_version`` first, then a fixed field order, ``text`` last."""
        data: dict[str, Any] = {"format_version": FORMAT_VERSION}
        for name, _types, _nullable, _required in _FIELDS:
            value = getattr(self, name)
            data[name] = _canonical(value) if name in ("calls", "recipe", "scenario") else value
        return data

    def dumps(self) -> str:
        """The exact file text: indent 2, ASCII only, trailing newline.

        NaN and infinities in ``calls`` are written as Python's json writes them (``NaN``), since a
        sample's truth may hold them and ``json.loads`` reads them back.
        """
        return json.dumps(self.to_json(), indent=2, ensure_ascii=True) + "\n"

    @classmethod
    def from_json(cls, data: Any) -> "Entry":
        """Validate a decoded file and build the entry; unknown extra keys are ignored.

        Raises :class:`CorpusFormatError` naming the first missing or bad field.
        """
        if not isinstance(data, dict):
            raise CorpusFormatError(f"an entry must be a JSON object, not {type(data).__name__}")
        version = data.get("format_version", None)
        if "format_version" not in data:
            raise CorpusFormatError("missing field 'format_version'")
        if version != FORMAT_VERSION or isinstance(version, bool):
            raise CorpusFormatError(f"field 'format_version': unsupported version {version!r} "
                                    f"(this toolfuzz reads {FORMAT_VERSION})")
        values: dict[str, Any] = {}
        for name, types, nullable, required in _FIELDS:
            if name not in data:
                if required:
                    raise CorpusFormatError(f"missing field {name!r}")
                continue
            value = data[name]
            if value is None and nullable:
                values[name] = None
                continue
            if not isinstance(value, types):
                expected = " or ".join(t.__name__ for t in types) + (" or null" if nullable else "")
                raise CorpusFormatError(f"field {name!r}: expected {expected}, got {type(value).__name__}")
            values[name] = value
        if not values["signature"]:
            raise CorpusFormatError("field 'signature': must not be empty")
        if values["status"] not in STATUSES:
            raise CorpusFormatError(f"field 'status': {values['status']!r} is not one of {list(STATUSES)}")
        if not KIND_PATTERN.fullmatch(values.get("kind", "parser")):
            raise CorpusFormatError(f"field 'kind': {values['kind']!r} is not a harness name (lower-case letters, "
                                    "digits and _, starting with a letter)")
        if values["level"] not in LEVELS:
            raise CorpusFormatError(f"field 'level': {values['level']!r} is not one of {list(LEVELS)}")
        for name in ("first_seen", "last_seen", "status_since"):
            if values.get(name) is None:
                continue
            try:
                _parse_time(values[name])
            except ValueError:
                raise CorpusFormatError(f"field {name!r}: {values[name]!r} is not an ISO-8601 time") from None
        if values.get("recipe") is not None:
            _check_recipe(values["recipe"])
        return cls(**values)

    @classmethod
    def loads(cls, text: str) -> "Entry":
        """Parse a file's text; any JSON error becomes :class:`CorpusFormatError`."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise CorpusFormatError(f"not JSON ({exc})") from None
        return cls.from_json(data)

    def copy(self) -> "Entry":
        return copy.deepcopy(self)


def _check_recipe(recipe: dict) -> None:
    """A recipe regenerates a sample: it must name a tool and a format and hold integer choices."""
    for key in ("tool", "format"):
        if not isinstance(recipe.get(key), str):
            raise CorpusFormatError(f"field 'recipe': {key!r} must be a string")
    choices = recipe.get("choices", [])
    if not isinstance(choices, list) or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0
                                                for c in choices):
        raise CorpusFormatError("field 'recipe': 'choices' must be a list of non-negative integers")
    if recipe.get("operator") is not None and not isinstance(recipe["operator"], str):
        raise CorpusFormatError("field 'recipe': 'operator' must be a string or null")


__all__ = ["FORMAT_VERSION", "KIND_PATTERN", "LEVELS", "STATUSES", "CorpusFormatError", "Entry", "utc_now"]
