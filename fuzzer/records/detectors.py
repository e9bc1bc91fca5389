"""Detectors: which anomaly classes a recorded output shows, in the operators' vocabulary (the
registry, the evidence they read, and every built-in detector; classifying records with them is
:mod:`fuzzer.records.detect`).

A generated sample knows its anomaly class because an operator made it; a recorded output has
to be read. Each :class:`Detector` looks at one kind of evidence and, when it fires, tags the
record with a class of :data:`strategies._internal.sample.ANOMALY_CLASSES` (a detector named
after an operator — ``trailing_comma``, ``single_quotes``, ``unclosed_tag`` — detects what that
operator makes). Detectors are registered in :data:`DETECTORS`, a
:class:`strategies.registry.Registry`; their names are the words of ``fuzz records``. Detectors
that only name what one shared pass found (an offset list of the scan, a class of schema error,
a misspelled envelope token) are rows of small tables; the others are decorated functions.

The evidence (:class:`Evidence`):

* **text** detectors see a scan of the raw output (:func:`fuzzer.records.scan.scan`): one pass over every JSON-like
  region that notes what lies outside string literals (trailing commas, single-quoted strings,
  Python literals, unquoted keys, comments, NaN, unbalanced brackets) and inside them (invalid
  escapes, raw control characters, lone surrogates). They run only when the strict reference
  parser (:mod:`fuzzer.targets.reference`) rejects the text: an output that is clean in some
  format shows no syntax anomaly, whatever characters its values hold.
* **calls** detectors validate the calls against the tool schemas recorded with the record
  (``tools_hash``): unknown function, wrong argument type, missing or unexpected argument,
  constraint violations (jsonschema keywords), duplicate calls, injection payloads. The calls
  are the recorded parsed calls; when the parse failed, the strict parse of the text, or of a
  repaired copy of it (:func:`fuzzer.records.scan.repair`) unless it was truncated.
* **execution** detectors read executor and tool errors (``unexpected keyword argument``,
  ``missing 1 required positional argument``, an unknown tool).

"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from fuzzer.records.record import Record
from fuzzer.records.scan import Scan, repair, scan
from strategies._internal.sample import ANOMALY_CLASSES, json_equal
from strategies.registry import Registry

#: Bump when a detector changes what it finds: stored classifications older than the version
#: (which also hashes the detector names) are recomputed.
DETECTORS_REVISION = 1
HUGE_OUTPUT = 64_000
DEEP_NESTING = 64
FRAGMENT_RUN = 1000


@dataclass(frozen=True)
class Detector:
    """``check(evidence)`` returns words saying what it saw, or None."""

    name: str
    anomaly_class: str
    stage: str  # "always" | "text" | "calls" | "execution"
    description: str
    check: Callable[["Evidence"], Optional[str]]


DETECTORS: Registry[Detector] = Registry("detector")
STAGES = ("always", "text", "calls", "execution")


def _check_kind(name: str, anomaly_class: str, stage: str) -> None:
    if anomaly_class not in ANOMALY_CLASSES:
        raise ValueError(f"detector {name!r}: {anomaly_class!r} is not an anomaly class")
    if stage not in STAGES:
        raise ValueError(f"detector {name!r}: unknown stage {stage!r}")


def register_detector(name: str, anomaly_class: str, stage: str, description: str,
                      check: Callable[["Evidence"], Optional[str]], *, module: str = __name__) -> Detector:
    """Register one detector; the declarative families below (scan offsets, schema errors,
    misspelled envelope tokens) build their ``check`` and call this."""
    _check_kind(name, anomaly_class, stage)
    description = " ".join(description.split())
    return DETECTORS.register(name, Detector(name, anomaly_class, stage, description, check), module=module)


def detector(name: str, anomaly_class: str, stage: str) -> Callable:
    """Register a detector function (its docstring is its description)."""
    _check_kind(name, anomaly_class, stage)

    def register(fn: Callable) -> Callable:
        register_detector(name, anomaly_class, stage, fn.__doc__ or "", fn, module=fn.__module__)
        return fn

    return register


def detectors_version() -> int:
    names = ",".join(f"{d.name}:{d.anomaly_class}" for d in DETECTORS.values())
    return int(hashlib.sha256(f"{DETECTORS_REVISION}|{names}".encode()).hexdigest()[:7], 16)


# --------------------------------------------------------------------------------------------
# Evidence


@dataclass
class Evidence:
    """What the detectors of one record look at (computed lazily, once)."""

    record: Record
    registry: Any = None  # strategies tools Registry of the record's tool set, or None
    _scan: Optional[Scan] = None
    _strict: Any = None  # (calls or None, error or None)
    _calls: Any = ...
    _errors: Optional[list] = None

    @property
    def text(self) -> str:
        return self.record.raw_model_output or ""

    @property
    def strict(self) -> tuple[Optional[list], Optional[str]]:
        """The reference parser's reading of the text: (calls, None) or (None, error)."""
        if self._strict is None:
            self._strict = strict_parse(self.text)
        return self._strict

    @property
    def clean(self) -> bool:
        return self.strict[1] is None

    @property
    def scan(self) -> Scan:
        if self._scan is None:
            self._scan = scan(self.text)
        return self._scan

    @property
    def truncated(self) -> bool:
        s = self.scan
        return bool(s.in_string_at_end or s.incomplete_token or (s.open_at_end and s.last in ":,{[(=" ))

    @property
    def calls(self) -> Optional[list]:
        """The calls the semantic detectors judge (see the module docstring), or None."""
        if self._calls is ...:
            self._calls = self._find_calls()
        return self._calls

    def _find_calls(self) -> Optional[list]:
        record = self.record
        if record.parse_status in ("ok", "repaired") and record.parsed_calls:
            return record.parsed_calls
        if not self.text:
            return None
        calls, error = self.strict
        if error is None:
            return calls or None
        if self.truncated:
            return None
        calls, error = strict_parse(repair(self.text))
        return calls or None if error is None else None


def strict_parse(text: str) -> tuple[Optional[list], Optional[str]]:
    from fuzzer.engine.calls import normalize_calls
    from fuzzer.targets.reference import parse

    try:
        return normalize_calls(parse(text)), None
    except RecursionError:
        return None, "RecursionError"
    except Exception as exc:  # noqa: BLE001 - the reference parser rejects with ValueError
        return None, f"{type(exc).__name__}: {exc}"


def _at(positions: list, what: str) -> Optional[str]:
    if not positions:
        return None
    more = f" (and {len(positions) - 1} more)" if len(positions) > 1 else ""
    return f"{what} at offset {positions[0]}{more}"


def _scan_offsets_detectors(anomaly_class: str, rows: Iterable[tuple[str, str, str, str, str]]) -> None:
    """Register detectors that fire on one offset list of the :class:`Scan` each.

    ``rows`` are ``(name, stage, offset kind, what, description)``: the detector reports "<what> at
    offset N (and K more)". The scan does the finding once; these detectors only name what it
    noted, so they are rows of a table rather than functions."""
    for name, stage, kind, what, description in rows:
        def check(ev: Evidence, kind: str = kind, what: str = what) -> Optional[str]:
            return _at(ev.scan.offsets[kind], what)

        register_detector(name, anomaly_class, stage, description, check)


def _token_variant_detector(name: str, pattern: re.Pattern, canonical: tuple[str, ...], description: str,
                           *, label: str = "") -> None:
    """Register an envelope detector: ``pattern`` matches a token and its near misses; the first
    match (stripped) that is not one of the ``canonical`` spellings is reported with its offset."""

    def check(ev: Evidence) -> Optional[str]:
        for match in pattern.finditer(ev.text):
            word = match.group(0).strip()
            if word not in canonical:
                return f"{label}{word!r} at offset {match.start()}"
        return None

    register_detector(name, "envelope_error", "text", description, check)


# --------------------------------------------------------------------------------------------
# Detectors: always run (what a parseable output can show too)


@detector("huge_output", "oversized_input", "always")
def _huge_output(ev: Evidence) -> Optional[str]:
    """An output of more than 64,000 characters."""
    return f"{len(ev.text):,} characters" if len(ev.text) > HUGE_OUTPUT else None


@detector("deep_nesting", "oversized_input", "always")
def _deep_nesting(ev: Evidence) -> Optional[str]:
    """Brackets nested more than 64 levels deep."""
    depth = ev.scan.max_depth
    return f"nested {depth} levels deep" if depth > DEEP_NESTING else None


_scan_offsets_detectors("oversized_input", [
    ("number_out_of_range", "always", "huge_numbers", "a number beyond double range",
     "A number beyond double range (an exponent past 308, or 300+ digits)."),
])

_RUN = re.compile(r"([{}\[\]`<>])\1{%d,}|(<tool_call>|\[TOOL_CALLS\]|Action:|```)(?:\s*\2){%d,}"
                  % (FRAGMENT_RUN - 1, FRAGMENT_RUN // 10))


@detector("fragment_run", "oversized_input", "always")
def _fragment_run(ev: Evidence) -> Optional[str]:
    """A structural character repeated 1,000+ times, or an envelope token 100+ times."""
    if len(ev.text) < FRAGMENT_RUN // 10 * 5:
        return None
    match = _RUN.search(ev.text)
    return f"a run of {match.group(0)[:12]!r}... at offset {match.start()}" if match else None


# --------------------------------------------------------------------------------------------
# Detectors: text (run when the strict parser rejects the text)


@detector("utf8_bom", "encoding_error", "text")
def _utf8_bom(ev: Evidence) -> Optional[str]:
    """A UTF-8 byte order mark (U+FEFF)."""
    i = ev.text.find("\ufeff")
    return f"byte order mark at offset {i}" if i >= 0 else None


_scan_offsets_detectors("encoding_error", [
    ("smart_quotes", "text", "smart_quotes", "a typographic quote as a string delimiter",
     "Typographic quotes where the JSON's double quotes belong."),
    ("raw_control_char", "text", "raw_controls", "a raw control character in a string",
     "A raw control character (a newline, a tab...) inside a string literal."),
    ("lone_surrogate", "always", "lone_surrogates", "a lone surrogate",
     "Half of a UTF-16 surrogate pair (``\\ud83d`` alone)."),
    ("invalid_escape", "text", "invalid_escapes", "an invalid escape",
     "An escape JSON does not have (``\\x41``, ``\\q``)."),
])

_TAG_OPEN, _TAG_CLOSE = "<tool_call>", "</tool_call>"


@detector("unclosed_tag", "envelope_error", "text")
def _unclosed_tag(ev: Evidence) -> Optional[str]:
    """A ``<tool_call>`` without its ``</tool_call>``."""
    opened, closed = ev.text.count(_TAG_OPEN), ev.text.count(_TAG_CLOSE)
    return f"{opened} <tool_call> tags, {closed} closed" if opened > closed else None


_token_variant_detector(
    "misspelled_tag",
    re.compile(r"</?\s*(?:tool[\s_-]*calls?|toolcall|function[\s_-]*calls?|tool)\s*>", re.I),
    (_TAG_OPEN, _TAG_CLOSE), label="tag ",
    description="A tag that is not quite ``<tool_call>`` (``<toolcall>``, ``<tool-call>``, ``<function_call>``).")


@detector("unclosed_fence", "envelope_error", "text")
def _unclosed_fence(ev: Evidence) -> Optional[str]:
    """A code fence opened and never closed."""
    count = ev.text.count("```")
    return "a ``` fence is never closed" if count % 2 else None


_token_variant_detector(
    "mistral_tag_error",
    re.compile(r"\[TOOL_CALLS\]\s*\[TOOL_CALLS\]|\[\s*TOOL[_ ]?CALLS?\s*\]", re.I),
    ("[TOOL_CALLS]",), description="``[TOOL_CALLS]`` misspelled or doubled.")
_token_variant_detector(
    "llama3_tag_error",
    re.compile(r"<\|python_tag\|>\s*<\|python_tag\|>|<\|?\s*python[_ ]?tag\s*\|?>", re.I),
    ("<|python_tag|>",), description="``<|python_tag|>`` misspelled or doubled.")
_token_variant_detector(
    "react_keyword_variant",
    re.compile(r"^\s*(?:\*\*\s*)?(action(?:\s*input)?)\s*(?:\*\*)?\s*:", re.I | re.M),
    ("Action:", "Action Input:"),
    description="``Action:`` / ``Action Input:`` in another case, spacing or Markdown bold.")

_DOUBLE_ENCODED = re.compile(r'"(?:arguments|parameters|args)"\s*:\s*"\s*\{')


@detector("double_encoded_arguments", "envelope_error", "text")
def _double_encoded(ev: Evidence) -> Optional[str]:
    """Arguments written as a JSON string holding the object, outside an OpenAI ``function`` block."""
    if '"function"' in ev.text:
        return None
    match = _DOUBLE_ENCODED.search(ev.text)
    return f"arguments as a JSON string at offset {match.start()}" if match else None


@detector("truncated", "truncated_output", "text")
def _truncated(ev: Evidence) -> Optional[str]:
    """The output stops mid-call: inside a string, a number or a literal, or after ``:``, ``,`` or
    an opening bracket."""
    s = ev.scan
    if s.in_string_at_end:
        return "ends inside a string"
    if s.incomplete_token:
        return "ends inside a number or a literal"
    if s.open_at_end and s.last in ":,{[(=":
        return f"ends after {s.last!r} with {len(s.open_at_end)} bracket(s) open"
    if s.open_at_end and (ev.record.metadata or {}).get("finish_reason") == "length":
        return "stopped by the length limit with brackets open"
    return None


@detector("missing_closing_brace", "malformed_json", "text")
def _missing_close(ev: Evidence) -> Optional[str]:
    """Complete arguments, but the final closing bracket(s) missing."""
    s = ev.scan
    if s.open_at_end and not ev.truncated and (ev.record.metadata or {}).get("finish_reason") != "length":
        return f"{len(s.open_at_end)} bracket(s) never closed"
    return None


_scan_offsets_detectors("malformed_json", [
    ("trailing_comma", "text", "trailing_commas", "a trailing comma", "A comma right before a closing bracket."),
])


@detector("single_quotes", "malformed_json", "text")
def _single_quotes(ev: Evidence) -> Optional[str]:
    """Single-quoted strings (a Python dict printed as JSON)."""
    if ev.scan.pythonic:  # a Pythonic call list quotes its strings with ' legitimately
        return None
    return _at(ev.scan.offsets["single_quotes"], "a single-quoted string")


_scan_offsets_detectors("malformed_json", [
    ("python_literals", "text", "python_literals", "a Python literal",
     "``True`` / ``False`` / ``None`` where JSON has ``true`` / ``false`` / ``null``."),
    ("unquoted_keys", "text", "unquoted_keys", "an unquoted key", "Object keys without quotes."),
    ("json_comments", "text", "comments", "a comment", "``//``, ``/* */`` or ``#`` comments inside the JSON."),
    ("nan_value", "text", "nan_values", "NaN or Infinity", "``NaN`` or ``Infinity`` as a value."),
    ("trailing_garbage", "text", "extra_closers", "an extra closing bracket",
     "Closing brackets after the complete JSON value."),
])


@detector("duplicate_key", "malformed_json", "text")
def _duplicate_key(ev: Evidence) -> Optional[str]:
    """A member repeated in one object (the strict parser names it)."""
    error = ev.strict[1] or ""
    return "a key repeated in one object" if "duplicate key" in error else None


# --------------------------------------------------------------------------------------------
# Detectors: calls (need the calls; schema checks need the recorded tools)


def _schema_errors(ev: Evidence) -> list[tuple[str, str]]:
    """(anomaly class, words) of every schema problem of every call."""
    if ev._errors is not None:
        return ev._errors
    found: list[tuple[str, str]] = []
    registry = ev.registry
    calls = ev.calls or []
    if registry is not None:
        from strategies._internal.schema import tool_validator

        for call in calls:
            name = call.get("name") if isinstance(call, dict) else None
            if not isinstance(name, str) or name not in registry:
                found.append(("unknown_function", f"unknown function {name!r}"))
                continue
            try:
                errors = list(tool_validator(registry[name]).iter_errors(call.get("arguments")))
            except RecursionError:
                continue
            for error in errors:
                found.append((_class_of(error), f"{name}: {_where(error)}{error.message[:120]}"))
    ev._errors = found
    return found


_KEYWORD_CLASS = {"type": "invalid_argument_type", "required": "missing_argument",
                  "dependentRequired": "missing_argument", "dependencies": "missing_argument",
                  "additionalProperties": "unexpected_argument", "unevaluatedProperties": "unexpected_argument",
                  "propertyNames": "unexpected_argument"}


def _class_of(error: Any) -> str:
    keyword = error.validator
    if keyword in ("anyOf", "oneOf", "allOf") and error.context:
        from jsonschema.exceptions import best_match

        inner = best_match(error.context)
        if inner is not None:
            return _class_of(inner)
    return _KEYWORD_CLASS.get(keyword, "constraint_violation")


def _where(error: Any) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    return f"argument {path!r}: " if path else ""


def _schema_error_detectors(rows: Iterable[tuple[str, str, str]]) -> None:
    """Register detectors that report the first schema problem of one class each.

    ``rows`` are ``(name, anomaly class, description)``. :func:`_schema_errors` validates every
    call once and classifies each problem (:data:`_KEYWORD_CLASS`); these detectors only pick
    their class out of that list."""
    for name, anomaly_class, description in rows:
        def check(ev: Evidence, anomaly_class: str = anomaly_class) -> Optional[str]:
            return next((words for cls, words in _schema_errors(ev) if cls == anomaly_class), None)

        register_detector(name, anomaly_class, "calls", description, check)


_schema_error_detectors([
    ("unknown_function", "unknown_function", "A call to a function the recorded tools do not have."),
    ("wrong_argument_type", "invalid_argument_type", 'An argument of the wrong JSON type (``"2"`` for 2).'),
    ("missing_argument", "missing_argument", "A required argument absent."),
    ("unexpected_argument", "unexpected_argument", "An argument the schema does not allow."),
    ("constraint_violation", "constraint_violation", "Right type, wrong value: enum, pattern, format, range, length."),
])


@detector("duplicate_call", "duplicate_call", "calls")
def _duplicate_call(ev: Evidence) -> Optional[str]:
    """The same call twice in one output."""
    calls = ev.calls or []
    for i, call in enumerate(calls):
        for other in calls[i + 1:]:
            if json_equal(call, other):
                return f"{call.get('name') if isinstance(call, dict) else call!r} called twice"
    return None


_INJECTION = re.compile(
    r"(?i)(?:'\s*;\s*(?:drop|delete|insert|update)\s|\bunion\s+select\b|\bor\s+1\s*=\s*1\b|;\s*--)"
    # backticks only around a command: `code` in a commit message or a title is ordinary markdown
    r"|(?:\$\([^)]*\)|`\s*(?:rm|cat|curl|wget|nc|id|whoami|uname|sh|bash|python\d?)\b[^`]*`"
    r"|;\s*(?:rm|cat|curl|wget|nc)\s|\|\s*(?:sh|bash)\b)"
    r"|(?:\.\./\.\./|\.\.\\\.\.\\|/etc/passwd)"
    r"|(?:ignore\s+(?:all\s+)?(?:previous|prior|above)\s+instructions|disregard\s+(?:the\s+)?(?:system|previous))"
    r"|(?:</tool_call>\s*<tool_call>|<tool_call>\s*[{\[]|\[TOOL_CALLS\]\s*\[\s*\{|<\|python_tag\|>\s*\{)")


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@detector("injection_payload", "injection_payload", "calls")
def _injection(ev: Evidence) -> Optional[str]:
    """SQL, shell, path-traversal or prompt-injection text, or a fake tool call, in a string argument."""
    for call in ev.calls or []:
        arguments = call.get("arguments") if isinstance(call, dict) else None
        for text in _strings(arguments):
            match = _INJECTION.search(text)
            if match:
                return f"{match.group(0)[:40]!r} in an argument of {call.get('name')!r}"
    return None


# --------------------------------------------------------------------------------------------
# Detectors: execution


def _errors(record: Record) -> list[str]:
    out = [record.execution_error] if record.execution_error else []
    out += [e.get("error") for e in record.execution_result or [] if isinstance(e, dict) and e.get("error")]
    out += [e.get("error") for e in record.tool_io or [] if isinstance(e, dict) and e.get("error")]
    return [str(e) for e in out]


def _first_error_match(record: Record, pattern: re.Pattern) -> Optional[re.Match]:
    """The first match of ``pattern`` in the record's executor and tool errors, in their order."""
    return next((m for m in map(pattern.search, _errors(record)) if m), None)


_UNEXPECTED_KW = re.compile(r"TypeError: .*(?:got an unexpected keyword argument|unexpected keyword) '?(\w+)")
_MISSING_ARG = re.compile(r"TypeError: .*missing \d+ required (?:positional |keyword-only )?arguments?: (.+)")
_UNKNOWN_TOOL = re.compile(r"(?i)(?:unknown|no such|unsupported|invalid) (?:tool|function)|KeyError: '?([\w.-]+)'?$")


@detector("unexpected_keyword_error", "unexpected_argument", "execution")
def _unexpected_kw(ev: Evidence) -> Optional[str]:
    """The tool raised TypeError for an unexpected keyword argument."""
    match = _first_error_match(ev.record, _UNEXPECTED_KW)
    return f"the tool rejected argument {match.group(1)!r}" if match else None


@detector("missing_argument_error", "missing_argument", "execution")
def _missing_arg_error(ev: Evidence) -> Optional[str]:
    """The tool raised TypeError for a missing required argument."""
    match = _first_error_match(ev.record, _MISSING_ARG)
    return f"the tool is missing {match.group(1)[:60]}" if match else None


@detector("unknown_tool_error", "unknown_function", "execution")
def _unknown_tool_error(ev: Evidence) -> Optional[str]:
    """The executor failed to find the tool the call names."""
    names = {c.get("name") for c in ev.record.parsed_calls or [] if isinstance(c, dict)}
    for error in _errors(ev.record):
        match = _UNKNOWN_TOOL.search(error)
        if match and (match.group(1) is None or match.group(1) in names):
            return f"the executor did not find the tool ({error[:80]})"
    return None


__all__ = ["DETECTORS", "DETECTORS_REVISION", "Detector", "Evidence", "detector", "detectors_version",
           "register_detector", "strict_parse"]
