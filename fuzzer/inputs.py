"""Reading the inputs users hand to toolfuzz: captured model outputs and corpus entries.

A captured output is kept byte for byte (no newline translation; bytes that are not UTF-8 kept as
surrogate escapes). Every problem is one :class:`InputError` line naming the file (and line), which
the CLI shows with exit status 2: a binary file, JSON nested too deeply to read, a JSON-lines
record without ``text``.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from strategies.errors import ToolfuzzError

#: Format name of a captured output whose expected calls were given (its envelope is unknown).
CAPTURED_FORMAT = "captured"


class InputError(ToolfuzzError):
    """A file given on the command line cannot be used; the message names it."""


def read_text_exactly(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if b"\x00" in raw:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{path}: a binary file (NUL bytes, not UTF-8 text), not a model output") from None
    return raw.decode("utf-8", errors="surrogateescape")


def loads(text: str, where: str) -> Any:
    """``json.loads`` with every failure (including nesting too deep to read) as one line."""
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply to read") from None
    except ValueError as exc:
        raise InputError(f"{where}: not JSON ({exc})") from None


def raw_sample(text: str) -> Any:
    from fuzzer.harnesses.parser.oracle import RAW_FORMAT
    from strategies._internal.sample import Sample

    return Sample(text=text, format=RAW_FORMAT, anomaly_class=None, operator=None, calls=None, truth_known=False)


def read_entry_text(path: str, text: str) -> Optional[Any]:
    """The corpus entry (of any kind) a file's ``text`` holds, or None when it is no entry.

    A ``.json`` file that reads like a corpus entry (it names ``format_version``) but is not valid
    JSON — cut short, a merge conflict left in it — is refused: shrinking or running the damaged
    file's text as if a model had written it answers a question nobody asked. A model output that
    merely mentions the word is passed as a text file (any other name than ``*.json``)."""
    from corpus.store import CorpusFormatError, Entry

    if '"format_version"' not in text:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        if path.lower().endswith(".json"):
            reason = "nested too deeply to read" if isinstance(exc, RecursionError) else f"not JSON ({exc})"
            raise InputError(f"{path}: looks like a corpus entry but cannot be read as one: {reason}; "
                             "to use its text as a raw model output, pass it as a .txt file") from None
        return None
    if not (isinstance(data, dict) and "format_version" in data):
        return None
    try:
        return Entry.from_json(data)
    except CorpusFormatError as exc:
        raise InputError(f"{path}: not a valid corpus entry: {exc}") from None


def read_sample_file(path: str) -> tuple[Any, Optional[Any]]:
    """A SAMPLE argument: a corpus entry of the parser (JSON with ``format_version``), or a text
    file of raw model output. Returns (sample, entry or None)."""
    from fuzzer.harnesses.parser.harness import sample_from_entry

    text = read_text_exactly(path)
    entry = read_entry_text(path, text)
    if entry is None:
        return raw_sample(text), None
    if entry.kind != "parser":
        raise InputError(f"{path}: a {entry.kind} entry; only parser entries are model outputs")
    return sample_from_entry(entry), entry


def read_captured(path: str) -> list:
    """Samples of a captured-output file: one raw output, or a ``.jsonl`` of ``{"text": ...}``
    records (with optional ``calls``, ``format``, ``tool``, ``anomaly_class``, ``operator``)."""
    from fuzzer.harnesses.parser.oracle import RAW_FORMAT
    from strategies._internal.sample import Sample

    content = read_text_exactly(path)
    if not path.endswith((".jsonl", ".ndjson")):
        return [raw_sample(content)]
    samples = []
    for number, line in enumerate(content.splitlines(), 1):
        if not line.strip():
            continue
        item = loads(line, f"{path}:{number}")
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise InputError(f"{path}:{number}: expected an object with a string field 'text'")
        calls = item.get("calls")
        if "calls" in item and not (calls is None or (isinstance(calls, list) and all(
                isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("arguments"), dict)
                for c in calls))):
            raise InputError(f"{path}:{number}: 'calls' must be null or a list of {{name, arguments}} objects")
        for key in ("format", "tool", "anomaly_class", "operator"):
            if item.get(key) is not None and not isinstance(item[key], str):
                raise InputError(f"{path}:{number}: {key!r} must be a string")
        # With stated calls the truth is known: judge everything, whatever the format.
        fmt = item.get("format") or (CAPTURED_FORMAT if "calls" in item else RAW_FORMAT)
        samples.append(Sample(text=item["text"], format=fmt, anomaly_class=item.get("anomaly_class"),
                              operator=item.get("operator"), calls=calls, tool=item.get("tool") or "",
                              truth_known="calls" in item))
    return samples


__all__ = ["CAPTURED_FORMAT", "InputError", "loads", "raw_sample", "read_captured", "read_entry_text",
           "read_sample_file", "read_text_exactly"]
