"""A Markdown-fence JSON extractor: the call is the JSON inside a ```json code block.

What ``parse_json_markdown``-style helpers do: find the opening ```` ``` ````, read the language tag
after it (``json``, or none), decode the JSON that follows — whitespace and newlines around it
allowed — and expect the closing fence. Prose before and after is ignored.

The planted bug: the language tag is compared case-sensitively, so ```` ```JSON ```` or
```` ```Json ```` — which models write, and Markdown treats as the same language — is refused as
"not a JSON fence". The fix compares case-insensitively.
"""

from __future__ import annotations

from benchmarks.parsers._common import ParseError, call_list, decode_at, skip_ws

BUG = {
    "verdict": "false_reject",
    "level": "parse",
    "formats": ["fenced"],
    "description": "the fence language is compared case-sensitively: ```JSON is refused",
    "match": {"verdict": "false_reject", "input": r"```(?!json)(?i:json)"},
}
TRIGGER = '```JSON\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'
EXPECTED = [{"name": "get_weather", "arguments": {"city": "Paris"}}]

FENCE = "```"
JSON_LANGUAGES = ("json", "")


def fenced_value(text: str, language_ok) -> tuple:
    """(found, value): the JSON in the first fence, if the text has a fence."""
    start = text.find(FENCE)
    if start < 0:
        return False, None
    i = start + len(FENCE)
    while i < len(text) and (text[i].isalnum() or text[i] in "_+-"):
        i += 1
    language = text[start + len(FENCE):i]
    if not language_ok(language):
        raise ParseError(f"not a JSON fence: {language!r:.40}")
    value, end = decode_at(text, skip_ws(text, i))
    if not text.startswith(FENCE, skip_ws(text, end)):
        raise ParseError("the fence is not closed after the JSON")
    return True, value


def json_language(language: str) -> bool:
    """Is this fence language JSON? (Markdown languages are case-insensitive; none means JSON.)"""
    return language.lower() in JSON_LANGUAGES


def _read(text: str, language_ok) -> list:
    found, value = fenced_value(text, language_ok)
    return call_list(value) if found else []


def parse(text: str) -> list:
    return _read(text, lambda language: language in JSON_LANGUAGES)


def parse_fixed(text: str) -> list:
    return _read(text, json_language)
