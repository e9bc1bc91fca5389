"""Value banks: the realistic text, keys and formatted strings the generators draw from.

Index 0 of every list is the simplest entry (what shrinking converges to). The banks are data, kept
apart from the nodes that use them so they can grow without touching generation logic.
"""

from __future__ import annotations

import ipaddress
from typing import Callable, Optional

from strategies._internal.source import Source


_WORDS = ["a", "Paris", "London", "New York", "Tokyo", "Berlin", "San Francisco", "São Paulo", "Zürich",
          "Xi'an", "北京", "Москва", "Kraków", "Reykjavík", "O'Brien", "Dr. Smith", "meeting", "quarterly report",
          "hello", "weather", "tomorrow", "lunch", "project update", "Q3 budget", "café", "naïve", "résumé",
          "München", "Côte d'Ivoire", "Saint-Étienne", "Ho Chi Minh City", "Los Angeles", "Rio de Janeiro",
          "東京", "서울", "القاهرة", "Tel Aviv-Yafo", "main", "feature/login", "README.md", "user_42", "ACME Corp."]
_SENTENCES = [
    "Hi", "I'm looking for a quiet room.", "Please send the report by Friday.",
    "Can you check the weather in Xi'an?", 'She said "hello" and left.', "Meeting moved to 3pm, see you there!",
    "Don't forget: bring the slides.", "Use C:\\Users\\me\\notes.txt as the path.",
    "Line one\nLine two", "Tabs\tand\tspaces", "Price: €100 (incl. VAT)", "Let's meet at O'Hare.",
    "The JSON was {\"a\": 1}, not [1, 2].", "Results: a, b, c}", "Thanks 🙏 see you soon 😀",
    "北京欢迎你", "Ça va? Très bien, merci.", "Quote ' and double \" and backslash \\ all at once",
]
_TRICKY = [
    "'", "O'Brien", "Xi'an", "I'm", '"', 'say "hi"', "\\", "a\\b", "C:\\temp\\new", "a, }", "a, ]", "}{", "]",
    "[1, 2]", '{"a": 1}', "{}", "null", "true", "1e5", "", " ", "\n", "line1\nline2", "\t", "\r\n", "é", "北京",
    "😀", "👩‍💻", "🇫🇷", "\u2028", "\u00a0", "\x00", "\x1b[0m", "\\u0041", "\\n", "</tool_call>", "```json",
    "<|python_tag|>", "[TOOL_CALLS]", "Action: x", "&amp;", "%s", "${HOME}", "a" * 64,
]
#: Values that break naive post-processing of string arguments — whitespace "cleaning", HTML or
#: percent decoding, backslash unescaping, quote normalization, Markdown stripping, script or
#: zero-width filtering. A parser that returns them altered has changed the user's data.
_HOSTILE = [
    # runs of spaces and tabs
    "New  York", "a   b", "tab\tseparated\tvalues", "two\t\ttabs", "double  spaces  everywhere",
    # HTML entities as text
    "Tom &amp; Jerry", "&lt;b&gt;bold&lt;/b&gt;", "it&#39;s", "&quot;quoted&quot;", "caf&eacute;", "x&nbsp;y",
    # backslash sequences as text (a single backslash each)
    "C:\\new\\table", "\\u00e9 is not é", "line\\nbreak", "tab\\tchar", "\\\\server\\share",
    "regex \\d+\\.\\d+", "a\\\"b",
    # percent-encoding as text
    "caf%C3%A9", "a%20b", "100% sure", "%s placeholder", "q=a%26b", "%0A",
    # Markdown
    "**bold** text", "`code`", "# Heading", "[link](https://example.com)", "_emphasis_", "- one\n- two", "> quoted",
    # quotes of every kind
    "“curly”", "‘single curly’", "«guillemets»", "„low-high“", "‚single low‘", "′prime″", "it’s",
    "\"straight\" and 'straight'", "``double backticks``",
    # mixed scripts and normalization
    "Paris Париж 巴黎", "abcабв", "Tōkyō 東京", "مرحبا hello", "שלום world", "ΑΘΗΝΑ Athens", "e\u0301 vs é",
    "ﬁnal ligature", "Å angstrom",
    # zero-width and invisible characters
    "zero\u200bwidth", "join\u200dme", "nb\u00a0sp", "soft\u00adhyphen", "word\u2060joiner", "bom\ufeffinside",
    "rtl\u200fmark", "ltr\u200emark", "a\u200cb",
]
_SOUP = "abcXYZ019 '\"\\,:;{}[]()<>/\n\t\r\x00\x7féüß€北京😀\u2028\u00a0-_.!?"
_FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt "
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_EXTRA_KEYS = ["extra", "note", "metadata", "comment", "x_debug", "tags", "source", "id"]
_FREE_KEYS = ["key", "name", "value", "id", "type", "note", "count", "enabled", "tags", "label"]


def fit_length(text: str, lo: int, hi: Optional[int]) -> str:
    """Pad or truncate to [lo, hi] code points (what ``minLength``/``maxLength`` count)."""
    n = len(text)
    if n < lo:
        need = lo - n
        if not text:  # the shrink target: "a", "aa", ...
            return "a" * need if hi is None or need <= hi else "a" * hi
        filler = _FILLER * (need // len(_FILLER) + 1)
        text = text + filler[:need]
    if hi is not None and len(text) > hi:
        text = text[:hi]
    return text




def _hex(source: Source, digits: int) -> str:
    return format(source.integer(0, 16 ** digits - 1), f"0{digits}x")


def _date(source: Source) -> str:
    year, month = source.integer(2000, 2035), source.integer(1, 12)
    days = (31, 29 if year % 4 == 0 else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    return f"{year:04d}-{month:02d}-{source.integer(1, days):02d}"


def _time(source: Source) -> str:
    return f"{source.integer(0, 23):02d}:{source.integer(0, 59):02d}:{source.integer(0, 59):02d}"


_ZONES = ["Z", "+00:00", "+02:00", "-05:00", ".123Z", ".5+05:30"]
_DOMAINS = ["example.com", "example.org", "mail.example.co.uk", "acme.io", "xn--mnchen-3ya.de"]
_LOCALS = ["a", "john.doe", "o'brien", "jane+travel", "info", "first_last", "x.y.z"]
_HOSTS = ["a.com", "example.com", "api.example.org", "localhost", "my-host-1.internal", "sub.domain.example.net"]
_PATHS = ["", "/", "/search", "/api/v1/items/42", "/docs/index.html", "/path/with%20space", "/a/b?q=1&lang=fr",
          "/files/report.pdf#page=2"]


def _format_generators() -> dict[str, Callable[[Source], str]]:
    def email(s: Source) -> str:
        return f"{_LOCALS[s.integer(0, len(_LOCALS) - 1)]}@{_DOMAINS[s.integer(0, len(_DOMAINS) - 1)]}"

    def uri(s: Source) -> str:
        scheme = ("https", "http", "ftp")[s.weighted((0.8, 0.15, 0.05))]
        return f"{scheme}://{_HOSTS[s.integer(0, len(_HOSTS) - 1)]}{_PATHS[s.integer(0, len(_PATHS) - 1)]}"

    def uuid(s: Source) -> str:
        h = _hex(s, 12) + _hex(s, 12) + _hex(s, 8)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"

    def ipv4(s: Source) -> str:
        return ".".join(str(s.integer(0, 255)) for _ in range(4))

    def ipv6(s: Source) -> str:
        value = ipaddress.IPv6Address(s.integer(0, 2 ** 64 - 1) << 64 | s.integer(0, 2 ** 64 - 1))
        return value.compressed if s.boolean(0.7) else value.exploded

    def date_time(s: Source) -> str:
        return f"{_date(s)}T{_time(s)}{_ZONES[s.integer(0, len(_ZONES) - 1)]}"

    def duration(s: Source) -> str:
        return ("P1D", "PT5M", "P1Y2M3DT4H5M6S", "PT0.5S", "P2W")[s.integer(0, 4)]

    return {
        "date": _date, "time": _time, "date-time": date_time, "email": email, "idn-email": email,
        "uri": uri, "url": uri, "iri": uri, "uri-reference": uri, "iri-reference": uri,
        "uuid": uuid, "ipv4": ipv4, "ipv6": ipv6, "duration": duration,
        "hostname": lambda s: _HOSTS[s.integer(0, len(_HOSTS) - 1)],
        "idn-hostname": lambda s: ("a.com", "münchen.de", "例子.测试")[s.integer(0, 2)],
        "json-pointer": lambda s: ("", "/a", "/a/0", "/foo~1bar", "/m~0n")[s.integer(0, 4)],
        "relative-json-pointer": lambda s: ("0", "1/a", "0#")[s.integer(0, 2)],
        "regex": lambda s: ("a", "^[a-z]+$", r"\d{3}-\d{4}", "(foo|bar)?")[s.integer(0, 3)],
        "uri-template": lambda s: ("https://example.com/{id}", "/users/{user}/items{?q}")[s.integer(0, 1)],
    }


FORMAT_GENERATORS = _format_generators()
