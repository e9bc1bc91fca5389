"""The redaction module as it was before the recording speed work (toolfuzz 432d89f), frozen
as the oracle of tests/unit/test_records_redact_reference.py: the faster checks of
fuzzer/records/redact.py must redact exactly what this one does. Do not edit it to follow
fuzzer/records/redact.py; a deliberate change of what is redacted changes that test instead.
"""
# ruff: noqa

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from fuzzer.records.record import JSON_FIELDS, TEXT_FIELDS, RecordsError
from fuzzer.records.store import _JSON_INDEX, _TEXT_INDEX
from fuzzer.records.values import dumps_json

MARKER = "[REDACTED]"
#: What an e-mail address becomes: still an address (``.invalid`` is reserved, RFC 2606).
EMAIL_MARKER = "redacted@redacted.invalid"


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True)
class Rule:
    """One text rule: where ``trigger`` (a substring) is absent the regex is not even run.
    ``group``: the group replaced (0 = the whole match); ``accept``: a last check on the match
    (digit counts, Luhn, not a bare JSON number); ``replacement``: what replaces it (an e-mail address becomes one that
    still is an address, so a redacted ``"format": "email"`` argument stays valid)."""

    kind: str
    regex: "re.Pattern[str]"
    trigger: Optional[tuple] = None
    group: int = 0
    accept: Optional[Callable[["re.Match[str]"], bool]] = None
    #: What replaces a match (default ``[REDACTED:<kind>]``).
    replacement: Optional[str] = None

    def applies(self, text: str) -> bool:
        if self.trigger is None:
            return True
        for t in self.trigger:
            if t is _DIGITS_MARK:
                if _nine_digits(text):
                    return True
            elif t in text:
                return True
        return False


def _digits(text: str) -> int:
    return sum(map(str.isdigit, text))


def _bare_number(match: "re.Match[str]") -> bool:
    """A run of digits standing as a JSON number (``"n": 5550102030``): never redacted, in free
    text or in JSON values alike, so a raw output and its parsed calls stay in step and a number
    is never replaced by something that is not one (an id, a timestamp)."""
    token = match.group(0)
    if not token.lstrip("+").isdigit():
        return False
    text = match.string
    before = text[:match.start()].rstrip()[-1:]
    after = text[match.end():].lstrip()[:1]
    return before in ("", ":", "[", ",", "=", "(") and after in ("", ",", "}", "]", ")")


def _phone_ok(match: "re.Match[str]") -> bool:
    return 9 <= _digits(match.group(0)) <= 15 and not _bare_number(match)


def _luhn_ok(match: "re.Match[str]") -> bool:
    if _bare_number(match):
        return False
    digits = [int(ch) for ch in match.group(0) if ch.isdigit()]
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


#: Phone and card numbers are runs of 9+ digits, spaces and ()+.- (a date has 8 digits).
_DIGITS_MARK = "<digits>"
_DIGIT_TRIGGER = (_DIGITS_MARK,)
_DIGIT_RUN = re.compile(r"[\d(+][\d ()+.-]{8,}")


_SEPARATORS = str.maketrans("", "", " ()+.-")


def _nine_digits(text: str) -> bool:
    for match in _DIGIT_RUN.finditer(text):
        if len(match.group(0).translate(_SEPARATORS)) >= 9:  # a run holds digits and separators only
            return True
    return False


DEFAULT_RULES: tuple[Rule, ...] = (
    Rule("api_key", re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}"), ("sk-",)),
    Rule("api_key", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}"), ("gh",)),
    Rule("api_key", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), ("xox",)),
    Rule("api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), ("AIza",)),
    Rule("bearer_token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{8,}=*)"), ("earer", "EARER"), group=1),
    Rule("aws_access_key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b"),
         ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA")),
    Rule("aws_secret_key", re.compile(r"(?i)aws.{0,24}?secret.{0,24}?[\"'\s:=]+([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
         ("ecret", "ECRET"), group=1),
    Rule("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"), ("@",),
         replacement=EMAIL_MARKER),
    Rule("card_number", re.compile(r"(?<![\w.+-])\d(?:[ -]?\d){12,18}(?![\w.-])"), _DIGIT_TRIGGER, accept=_luhn_ok),
    Rule("phone", re.compile(r"(?<![\w+:.])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ -]?\d{1,4}(?:[ -]\d{1,4}){1,4}"
                             r"|\d{1,4}(?:[ -]\d{1,4}){2,5})(?![\w:.-])|\+\d{8,15}(?!\w)"), _DIGIT_TRIGGER,
         accept=_phone_ok),
)

class _Suspicion:
    """Where any rule could match (its triggers), found in two scans — the literal triggers, then
    digit runs — so the common case, a string with nothing to redact, costs microseconds. Rules
    without a trigger (user patterns) always run."""

    def __init__(self, rules: Iterable[Rule]):
        literals: list[str] = []
        self.always = self.digits = False
        for rule in rules:
            if rule.trigger is None:
                self.always = True
                continue
            for t in rule.trigger:
                if t is _DIGITS_MARK:
                    self.digits = True
                else:
                    literals.append(re.escape(t))
        self.literals = re.compile("|".join(dict.fromkeys(literals))) if literals else None

    def __call__(self, text: str) -> bool:
        if self.always:
            return True
        if self.literals is not None and self.literals.search(text) is not None:
            return True
        return self.digits and _nine_digits(text)


_ROW_INDEX = _JSON_INDEX + _TEXT_INDEX

#: A JSON string literal holding at least one escape (where an escaped secret could hide).
_ESCAPED_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*\\(?:[^"\\\n]|\\.)*"')


# --------------------------------------------------------------------------------------------
# Paths


@dataclass(frozen=True)
class _Step:
    kind: str  # "key", "index", "any", "descend"
    value: Any = None


_PATH_TOKEN = re.compile(r"\.\.([A-Za-z_$][\w$-]*|\*)|\.([A-Za-z_$][\w$-]*|\*)|\[(\d+|\*)\]|\[(['\"])(.*?)\4\]")


def parse_path(path: str) -> tuple[_Step, ...]:
    """``$.a.b[*].c``, ``$..c``, ``a['b c'][0]`` -> steps. The root is the record: its first step
    names a JSON field (``parsed_calls`` ...) or descends into all of them."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
    elif text and not text.startswith((".", "[")):
        text = "." + text
    steps: list[_Step] = []
    pos = 0
    while pos < len(text):
        match = _PATH_TOKEN.match(text, pos)
        if match is None:
            raise RecordsError(f"redaction path {path!r}: cannot read {text[pos:]!r} "
                               f"(use $.field.key, [n], [*], ..key)")
        descend, key, index, _quote, quoted = match.groups()
        if descend is not None:
            steps.append(_Step("descend", None if descend == "*" else descend))
        elif key is not None:
            steps.append(_Step("any") if key == "*" else _Step("key", key))
        elif index is not None:
            steps.append(_Step("any") if index == "*" else _Step("index", int(index)))
        else:
            steps.append(_Step("key", quoted))
        pos = match.end()
    if not steps:
        raise RecordsError(f"redaction path {path!r}: empty")
    return tuple(steps)


# --------------------------------------------------------------------------------------------
# The redactor


class Redactor:
    """Removes secrets from records (see the module docstring). Immutable after construction;
    one instance is shared by the recorder's writer thread and the importers."""

    def __init__(self, *, defaults: bool = True, patterns: Union[Mapping[str, str], Iterable[str]] = (),
                 keys: Iterable[str] = (), paths: Iterable[str] = ()):
        rules = list(DEFAULT_RULES) if defaults else []
        items = patterns.items() if isinstance(patterns, Mapping) else ((f"pattern{i}", p) for i, p in enumerate(patterns))
        for name, pattern in items:
            try:
                rules.append(Rule(str(name), re.compile(pattern)))
            except re.error as exc:
                raise RecordsError(f"redaction pattern {name!r}: not a regular expression ({exc})") from None
        self.rules = tuple(rules)
        self._suspect = _Suspicion(self.rules)
        self.keys = frozenset(k.lower() for k in keys)
        self.paths = tuple(parse_path(p) for p in paths)
        self._path_texts = tuple(paths)
        self._key_values = _key_value_pattern(self.keys) if self.keys else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Redactor":
        """``TOOLFUZZ_REDACT_KEYS`` and ``TOOLFUZZ_REDACT_PATHS`` (comma-separated),
        ``TOOLFUZZ_REDACT_PATTERNS`` (a JSON object of name -> regex)."""
        split = lambda name: [p.strip() for p in environ.get(name, "").split(",") if p.strip()]  # noqa: E731
        patterns: Any = {}
        if environ.get("TOOLFUZZ_REDACT_PATTERNS"):
            try:
                patterns = json.loads(environ["TOOLFUZZ_REDACT_PATTERNS"])
            except ValueError:
                raise RecordsError("TOOLFUZZ_REDACT_PATTERNS: not a JSON object of name -> regex") from None
            if not isinstance(patterns, dict):
                raise RecordsError("TOOLFUZZ_REDACT_PATTERNS: not a JSON object of name -> regex")
        return cls(patterns=patterns, keys=split("TOOLFUZZ_REDACT_KEYS"), paths=split("TOOLFUZZ_REDACT_PATHS"))

    def __repr__(self) -> str:
        return (f"Redactor(rules={len(self.rules)}, keys={sorted(self.keys)}, "
                f"paths={list(self._path_texts)})")

    # -- strings --------------------------------------------------------------------------------
    def redact_string(self, text: str) -> str:
        """``text`` with every rule's matches replaced by their markers."""
        if not self._suspect(text):
            return text
        for rule in self.rules:
            if rule.applies(text):
                text = self._apply(rule, text)
        return text

    @staticmethod
    def _apply(rule: Rule, text: str) -> str:
        mark = rule.replacement or marker(rule.kind)

        def replace(match: "re.Match[str]") -> str:
            if rule.accept is not None and not rule.accept(match):
                return match.group(0)
            if rule.group:
                whole, start, end = match.group(0), match.start(rule.group) - match.start(), match.end(rule.group) - match.start()
                return whole[:start] + mark + whole[end:]
            return mark

        return rule.regex.sub(replace, text)

    def redact_text(self, text: Optional[str], literals: Iterable[Any] = ()) -> Optional[str]:
        """Free text: the rules, the escaped JSON string literals inside it, and ``literals``
        (values removed by key or path elsewhere in the record)."""
        if text is None or text.__class__ is not str:
            return text
        text = self.redact_string(text)
        if "\\u" in text or "\\/" in text:  # only these escapes can hide a secret's characters
            text = _ESCAPED_LITERAL.sub(self._redact_literal, text)
        for value in literals:
            text = _scrub_literal(text, value)
        return text

    def _redact_literal(self, match: "re.Match[str]") -> str:
        token = match.group(0)
        try:
            decoded = json.loads(token)
        except ValueError:
            return token
        cleaned = self.redact_string(decoded)
        if cleaned == decoded:
            return token
        return json.dumps(cleaned, ensure_ascii=False)

    # -- JSON values ----------------------------------------------------------------------------
    def redact_json(self, value: Any, found: Optional[list] = None) -> Any:
        """A redacted copy of a JSON value: strings scrubbed, members named in ``keys`` blanked
        (their removed values appended to ``found``)."""
        if not self.keys:
            encoded = dumps_json(value)
            if encoded is not None and not self._suspect(encoded):
                return value  # nothing in it can match: no walk
        return self._walk(value, found)

    def _walk(self, value: Any, found: Optional[list]) -> Any:
        cls = value.__class__
        if cls is str:
            return self.redact_string(value)
        if cls is dict:
            out = {}
            for key, item in value.items():
                new_key = self.redact_string(key) if key.__class__ is str else key
                while new_key in out:  # two keys redacted to the same marker: keep both members
                    new_key += "#"
                if self.keys and key.__class__ is str and key.lower() in self.keys:
                    out[new_key] = blank(item, found)
                else:
                    out[new_key] = self._walk(item, found)
            return out
        if cls is list:
            return [self._walk(item, found) for item in value]
        return value

    def redact_record(self, values: dict) -> None:
        """Redact a record's field dict in place (FIELDS names; JSON fields as JSON values).

        Order matters: values removed by key or path — in the JSON documents, and in ``key: value``
        pairs of the free text (a raw output the parser failed on still names its password) — are
        collected first, then scrubbed from every text field and from every string of every
        document, so a secret echoed by a tool or quoted by an error message goes too."""
        found: list = []
        for name in JSON_FIELDS:
            if values.get(name) is not None:
                values[name] = self.redact_json(values[name], found)
        for steps in self.paths:
            _apply_path(values, steps, found)
        if self._key_values is not None:
            for name in TEXT_FIELDS:
                if isinstance(values.get(name), str):
                    values[name] = self._key_values.sub(lambda m: _blank_pair(m, found), values[name])
        literals = _literal_forms(found) if found else ()
        for name in TEXT_FIELDS:
            if values.get(name) is not None:
                values[name] = self.redact_text(values[name], literals)
        if literals:
            for name in JSON_FIELDS:
                if values.get(name) is not None:
                    values[name] = _scrub_strings(values[name], literals)

    def redact_row(self, values: list) -> None:
        """Redact a storage row in place (FIELDS order; JSON fields already encoded as JSON text).
        The writer thread's fast path: a document is decoded and walked only when a rule could
        match in it, or when keys or paths are configured."""
        if self.keys or self.paths:
            record = {name: (json.loads(values[i]) if values[i] is not None else None)
                      for name, i in zip(JSON_FIELDS, _JSON_INDEX)}
            record.update((name, values[i]) for name, i in zip(TEXT_FIELDS, _TEXT_INDEX))
            self.redact_record(record)
            for name, i in zip(JSON_FIELDS, _JSON_INDEX):
                values[i] = dumps_json(record[name])
            for name, i in zip(TEXT_FIELDS, _TEXT_INDEX):
                values[i] = record[name]
            return
        suspect = self._suspect
        present = [values[i] for i in _ROW_INDEX if values[i].__class__ is str]
        if not present:
            return
        whole = present[0] if len(present) == 1 else "\x00".join(present)  # no trigger spans a NUL
        if not suspect(whole) and "\\u" not in whole and "\\/" not in whole:
            return  # the common case: one scan of the record says nothing in it can match
        for i in _JSON_INDEX:
            encoded = values[i]
            if encoded is not None and suspect(encoded):
                values[i] = dumps_json(self._walk(json.loads(encoded), None))
        for i in _TEXT_INDEX:
            text = values[i]
            if text is not None:
                values[i] = self.redact_text(text)


def blank(value: Any, found: Optional[list]) -> Any:
    """The redacted form of a value removed by key or path: strings -> ``[REDACTED]``, numbers ->
    0, containers -> the same shape with every leaf blanked; the removed leaves go to ``found``."""
    cls = value.__class__
    if cls is str:
        if found is not None and value != MARKER:
            found.append(value)
        return MARKER
    if cls is int or cls is float:
        if found is not None:
            found.append(value)
        return 0
    if cls is dict:
        return {k: blank(v, found) for k, v in value.items()}
    if cls is list:
        return [blank(v, found) for v in value]
    return value


def _apply_path(node: Any, steps: tuple, found: list, at_root: bool = True) -> Any:
    """Blank every value the path selects inside ``node`` (in place; returns the node)."""
    if not steps:
        return blank(node, found)
    step, rest = steps[0], steps[1:]
    if at_root:  # the record: only its JSON fields are addressable
        names = [n for n in JSON_FIELDS if node.get(n) is not None]
        if step.kind == "key":
            if step.value in names:
                node[step.value] = _apply_path(node[step.value], rest, found, False)
            return node
        if step.kind == "descend":
            for name in names:
                node[name] = _apply_path(node[name], steps, found, False)
            return node
        if step.kind == "any":
            for name in names:
                node[name] = _apply_path(node[name], rest, found, False)
        return node
    if step.kind == "descend":
        if isinstance(node, dict):
            for key in list(node):
                if step.value is None or key == step.value:
                    node[key] = _apply_path(node[key], rest, found, False)
                else:
                    node[key] = _apply_path(node[key], steps, found, False)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                node[i] = _apply_path(item, steps, found, False)
        return node
    if isinstance(node, dict):
        keys = list(node) if step.kind == "any" else ([step.value] if step.kind == "key" and step.value in node else [])
        for key in keys:
            node[key] = _apply_path(node[key], rest, found, False)
    elif isinstance(node, list):
        indexes = range(len(node)) if step.kind == "any" else (
            [step.value] if step.kind == "index" and step.value < len(node) else [])
        for i in indexes:
            node[i] = _apply_path(node[i], rest, found, False)
    return node


def _key_value_pattern(keys: frozenset) -> "re.Pattern[str]":
    """``"password": "..."``, ``'password': '...'``, ``password=...`` in free text, for ``keys``."""
    names = "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))
    return re.compile(r"""(?i)(["']?)\b(%s)\1(\s*[:=]\s*)("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[^\s,;}\])'"]+)"""
                      % names)


def _blank_pair(match: "re.Match[str]", found: list) -> str:
    quote, name, separator, value = match.group(1), match.group(2), match.group(3), match.group(4)
    if value.startswith('"'):
        try:
            found.append(json.loads(value))
        except ValueError:
            found.append(value[1:-1])
        blanked = f'"{MARKER}"'
    elif value.startswith("'"):
        found.append(value[1:-1])
        blanked = f"'{MARKER}'"
    else:
        try:
            number = json.loads(value)
        except ValueError:
            number = None
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            found.append(number)
            blanked = "0"
        else:
            found.append(value)
            blanked = MARKER
    return f"{quote}{name}{quote}{separator}{blanked}"


def _scrub_strings(value: Any, literals: list) -> Any:
    cls = value.__class__
    if cls is str:
        for literal in literals:
            if literal.__class__ is str and literal in value:
                value = value.replace(literal, MARKER)
        return value
    if cls is dict:
        return {k: _scrub_strings(v, literals) for k, v in value.items()}
    if cls is list:
        return [_scrub_strings(v, literals) for v in value]
    return value


def _literal_forms(found: list) -> list:
    """The removed values worth scrubbing from text: strings of 3+ characters, longest first (so
    a value containing another is replaced whole), and numbers of 4+ digits."""
    out: list = []
    seen: set = set()
    for value in found:
        key = (value.__class__, value)
        if key in seen:
            continue
        seen.add(key)
        if value.__class__ is str and len(value) >= 3:
            out.append(value)
        elif value.__class__ in (int, float) and _digits(repr(value)) >= 4:
            out.append(value)
    out.sort(key=lambda v: -len(v) if v.__class__ is str else 0)
    return out


def _scrub_literal(text: str, value: Any) -> str:
    if value.__class__ is str:
        text = text.replace(value, MARKER)
        escaped = json.dumps(value, ensure_ascii=True)[1:-1]
        if escaped != value:
            text = text.replace(escaped, MARKER)
        unicode_escaped = json.dumps(value, ensure_ascii=False)[1:-1]
        if unicode_escaped not in (value, escaped):
            text = text.replace(unicode_escaped, MARKER)
        return text
    number = repr(value) if value.__class__ is float else str(value)
    return re.sub(r"(?<![\w.])" + re.escape(number) + r"(?![\w.])", "0", text)


__all__ = ["DEFAULT_RULES", "MARKER", "Redactor", "Rule", "blank", "marker", "parse_path"]
