"""Signatures: the stable key that says two failures are the same bug (DESIGN.md, "Signature").

Built from the verdict and, for crashes, the exception type, its message and the innermost
frames' file names and function names — never line numbers, so an unrelated edit does not make
an old bug look new, and never what the message copies of the input (a parser that quotes the
text it could not read is one bug, not one per text). A rejection of a valid output (false_reject)
is keyed the same way, without its format: the same rejection in two formats for one reason is
one bug (a cause that is one format's own is keyed with it, :func:`by_format`). A worker death is
keyed by how the process ended (signal or exit status) plus the stack it dumped, if any; a hang
by the stack the worker dumped before it was killed. A corruption or missed anomaly is keyed by
what went wrong (the kind of damage, the broken promise) and, for a corruption, where the damage
was made; the remaining verdicts by the anomaly class and operator.

The signature is ``<verdict>-<12 hex>``: short enough for a terminal, a file and a CI log, and the
same in every process and on every machine. The title says in words what the key holds. Keys of
before (:meth:`fuzzer.harnesses.parser.oracle.Oracle.legacy_signature`, ``path_signature(legacy=True)``) are still
computed, so corpus entries stored under them are recognized (replay calls them re-keyed).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

#: How many innermost frames identify a crash: enough to tell two raise sites apart, few enough
#: that a refactoring of the callers does not split one bug into many.
CRASH_FRAMES = 3


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    key: str
    #: The end of ``key`` that says where in the target the failure happened (the innermost
    #: frames, the functions on the path); "" when the key says nothing of where.
    site: str = ""

    def __str__(self) -> str:
        return self.id

    @property
    def what(self) -> str:
        """The key without where it happened. A refactor that moves code between functions
        changes a failure's site, not its ``what``: a corpus entry whose own input fails with the
        same ``what`` from another place has moved, it is not a new bug (fuzzer.engine.decisions)."""
        return self.key[:-len(self.site) - 1] if self.site and self.key.endswith("|" + self.site) else self.key


def movable(what: Optional[str]) -> bool:
    """Whether a failure with this ``what`` (:attr:`Signature.what`), raised by an entry's own input
    from another place in the target, may be called the same bug moved by a refactor. Only an
    exception of a class (and message, when it has one) that the code raises, a crash or a
    rejection; or a wrong answer filed by the functions its input ran (:func:`path_signature`),
    which replay traces again to tell. Not a hang, slow or unsafe finding, whose ``what`` says
    nothing but the verdict (a new stuck loop or eval that the entry's input now reaches first
    would pass as the old one), nor a worker death (any segfault)."""
    if not what:
        return False
    verdict, _, rest = what.partition("|")
    if verdict == "crash":
        return bool(rest) and not rest.startswith("died|")
    return (verdict == "false_reject" and bool(rest)) or rest.startswith("path|")


def _make(verdict: str, key: str, title: str, site: str = "") -> Signature:
    """``site``: the end of ``key`` (after its last ``|``) that says where; it is part of the key
    (and the id), and kept apart as well (:attr:`Signature.what`)."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return Signature(id=f"{verdict}-{digest}", title=title, key=key, site=site)


#: Values inside exception messages: quoted strings, numbers, hex addresses, long runs. Replaced
#: by placeholders so ``KeyError: 'city'`` and ``KeyError: 'date'`` from one line are one bug, while
#: ``Expecting ',' delimiter`` and ``Unterminated string`` stay apart.
_VALUES = (
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"'(?:[^'\\\n]|\\.){0,200}'|\"(?:[^\"\\\n]|\\.){0,200}\""), "<str>"),
    (re.compile(r"(?<![A-Za-z_])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"), "<n>"),
    (re.compile(r"\s+"), " "),
)
_MESSAGE_KEY_LIMIT = 120
RESOURCE_ERRORS = frozenset({"RecursionError", "MemoryError"})
#: Exceptions of decoders whose message says *where* in the input decoding failed ("Expecting ','
#: delimiter", "Unterminated string starting at"): one uncaught decoder error is one bug, whatever
#: the input got wrong, so their message is left out of a crash's key.
DECODER_ERRORS = frozenset({"JSONDecodeError", "SyntaxError", "IndentationError", "TabError", "TokenError",
                            "PatternError", "UnicodeDecodeError", "UnicodeEncodeError", "ParseError", "ExpatError",
                            "TOMLDecodeError", "ScannerError", "ParserError", "DecodeError",
                            # partial-json-parser's ("Unexpected character <the input's>"), the
                            # streaming parsers' decoder of choice
                            "MalformedJSON"})


def _message_varies_with_input(exception: str) -> bool:
    return exception in RESOURCE_ERRORS or exception == "re.error" or \
        exception.rsplit(".", 1)[-1] in DECODER_ERRORS


def normalize_message(message: Optional[str], text: Optional[str] = None) -> str:
    """The stable part of an exception message: its first line with values replaced by placeholders.

    ``text``: the input that failed. What the message copies from it is the input's, not the bug's
    (a ReAct parser's ``Could not extract tool use from input text: <the text>``, an ``assert ok,
    remaining`` whose message is what was left of the input): the whole message or its tail after
    a ``": "`` when the input holds it, and any run of :data:`INPUT_RUN` characters or more the input
    holds, become ``<str>`` (a number too, and a quoted ``'city'`` copied from a single-quoted input
    keys as the same ``'city'`` of a double-quoted one); a message left with no word at all
    (``{'':'','':{'':''``, ``}``) is data and is ``<str>`` whole. Without ``text`` only the values are replaced (the rule before inputs
    were compared; :func:`legacy` keys).

    A decoder's error wrapped in the parser's own message keeps the decoder's words ("Expecting
    value", "Expecting <str> delimiter"): they are how two rejection bugs raised through one wrap
    differ (an extraction that hands the decoder prose fails at "Expecting value"; a rewrite that
    breaks an apostrophe fails later, at a delimiter). Normalizing them away merged such bugs, and
    a gate then called the unfixed one a regression of the fixed one; one bug split by decoder
    words is the lesser harm (more findings, each true). The input never holds those words (a
    run of 16 characters of "could not parse tool call: Expecting value" is no prose a model
    writes), so comparing with it leaves them alone."""
    text_ = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    if text and message and not text_ and message in text:
        return "<str>"  # blank, and the input's: what was left of it, say
    if text:
        text_ = _without_input(text_[:_SCANNED], text)
    for pattern, placeholder in _VALUES:
        text_ = pattern.sub(placeholder, text_)
    if text is not None and text_ and not _WORD.search(_PLACEHOLDER.sub(" ", text_)):
        return "<str>"  # nothing but values and punctuation: the input's data, not the bug's words
    return text_.strip()[:_MESSAGE_KEY_LIMIT]


#: Characters of a message compared with the input (the key keeps 120 of what is left).
_SCANNED = 400
#: The shortest run of a message taken for a copy of the input wherever it stands: longer than
#: any phrase the prose models write around calls shares with a parser's own words ("tool call: ").
INPUT_RUN = 16
_WORD = re.compile(r"[^\W\d_]{2,}")
_PLACEHOLDER = re.compile(r"<(?:str|n|hex)>")
#: Placeholders with at most a few characters between them (an escaped newline of a repr'd
#: input, a quote): one copied piece of the input.
_ADJACENT = re.compile(r"<str>(?:.{0,4}?<str>)+")


def _without_input(line: str, text: str) -> str:
    """``line`` with what it copies from ``text`` replaced by ``<str>`` (see :func:`normalize_message`).
    A message the worker cut to its length limit ends in ``...``: the copy runs to the cut."""
    if line.endswith("...") and len(line) > 3:
        found = _without_input(line[:-3], text)
        return found if found.endswith("<str>") else found + "..."
    if not line:
        return line
    stripped = line.strip()
    if stripped in text:
        return "<str>"
    cut = line.find(": ")
    while cut >= 0:  # a tail after ": " that is the input's: "could not parse tool call from: <rest>"
        tail = line[cut + 2:].strip()
        if tail and tail in text:
            line = line[:cut + 2] + "<str>"
            break
        cut = line.find(": ", cut + 2)
    half = INPUT_RUN // 2
    # A run of INPUT_RUN characters holds one of the pieces of INPUT_RUN/2 that start at a multiple
    # of it: when the input holds none, there is no run to look for (most messages, most inputs).
    if not any(line[k:k + half] in text for k in range(0, len(line) - half + 1, half)):
        return line
    out, i, n = [], 0, len(line)
    while i <= n - INPUT_RUN:
        if line[i:i + INPUT_RUN] not in text:
            out.append(line[i])
            i += 1
            continue
        lo, hi = i + INPUT_RUN, n  # the longest run from i the input holds: lo is, hi+1 is not known
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line[i:mid] in text:
                lo = mid
            else:
                hi = mid - 1
        out.append("<str>")
        i = lo
    out.append(line[i:])
    return _ADJACENT.sub("<str>", "".join(out))


def crash_signature(*, exception: Optional[str], frames: Sequence[Sequence[str]] = (),
                    detail: Optional[str] = None, message: Optional[str] = None,
                    text: Optional[str] = None) -> Signature:
    """A crash: an undeclared exception (type, message with values and what it copies of the
    input ``text`` normalized away, innermost frames) or a worker death (``detail``)."""
    inner = _inner(frames)
    where = f" in {inner[-1]}" if inner else ""
    if exception is None:
        how = detail or "worker died"
        return _make("crash", f"crash|died|{how}|{';'.join(inner)}", f"crash: the target process died ({how}){where}",
                     ";".join(inner))
    # Frames carry no line numbers (a signature survives unrelated edits), so two raise sites in
    # one function are told apart by the message: len() of None and int() of None in one parse()
    # are two bugs. Values are normalized away (KeyError 'city' and 'date' are one); a decoder's
    # message says where in the input it failed and would split one bug into dozens, so it is left out.
    shape = "" if _message_varies_with_input(exception) else normalize_message(message, text)
    key = f"crash|{exception}|{shape}|{';'.join(inner)}" if shape else f"crash|{exception}|{';'.join(inner)}"
    return _make("crash", key, f"crash: {exception}{where}", ";".join(inner))


def rejection_signature(*, format: Optional[str], exception: Optional[str], message: Optional[str] = None,
                        frames: Sequence[Sequence[str]] = (), text: Optional[str] = None,
                        by_format: bool = False) -> Signature:
    """A false_reject, keyed like a crash: the rejection's exception type, its normalized message
    (what it copies of the input ``text`` left out) and the innermost frames where it was raised.
    A parser that rejects an apostrophe in one place and a ``</tool_call>`` inside a string in
    another has two bugs.

    The format is not part of the key: one rejection raised at the same place with the same
    message for the same reason in two formats (the fenced and DeepSeek outputs that both reach
    one broken quote repair) is one bug, and its finding lists the formats. Whether the reason is
    the same is the campaign's to tell (:mod:`fuzzer.harnesses.parser.across_formats`); a rejection whose cause is
    one format's own (a fence only that format has) is keyed ``by_format``, as every rejection
    was before, so it stays apart. ``exception`` None: the target returned no call — nothing says
    where, so the format stays in the key."""
    fmt = format or "raw"
    if exception is None:
        return _make("false_reject", f"false_reject|{fmt}|no-call", f"false_reject: no call returned for a valid {fmt} output")
    inner = _inner(frames)
    shape = normalize_message(message, text)  # a decoder's words too: see normalize_message
    where = f" in {inner[-1]}" if inner else ""
    said = f" ({shape})" if shape else ""
    if by_format:
        return _make("false_reject", f"false_reject|{fmt}|{exception}|{shape}|{';'.join(inner)}",
                     f"false_reject: valid {fmt} rejected with {exception}{where}{said}", ";".join(inner))
    return _make("false_reject", f"false_reject|{ANY_FORMAT}|{exception}|{shape}|{';'.join(inner)}",
                 f"false_reject: valid output rejected with {exception}{where}{said}", ";".join(inner))


def by_format(signature: Signature, format: str) -> Signature:
    """A format-less rejection ``signature`` keyed by ``format`` as well: the rejection's cause is
    that format's own (see :func:`rejection_signature`)."""
    if not format_less(signature):
        return signature
    title = signature.title.replace("valid output rejected", f"valid {format} output rejected", 1)
    return _make("false_reject", f"false_reject|{format}|" + signature.key[len(_ANY_PREFIX):], title, signature.site)


#: Where a rejection's key names its format, one that holds for any format.
ANY_FORMAT = "*"
_ANY_PREFIX = f"false_reject|{ANY_FORMAT}|"


def format_specific(signature: Any) -> bool:
    """A rejection keyed with its format because its cause is that format's own (:func:`by_format`)."""
    key = str(getattr(signature, "key", signature) or "")
    parts = key.split("|")
    return len(parts) > 3 and parts[0] == "false_reject" and parts[1] != ANY_FORMAT and parts[2] not in (
        "no-call", "history")


def format_less(signature: Any) -> bool:
    """A rejection keyed without its format (a site and a message; not a no-call)."""
    return str(getattr(signature, "key", signature) or "").startswith(_ANY_PREFIX)


def hang_signature(*, frames: Sequence[Sequence[str]]) -> Signature:
    """A hang whose stack was captured (the worker dumps it before it is killed): keyed, like a
    crash, by where it was stuck — one super-linear loop is one bug whatever input exposed it."""
    inner = _inner(frames)
    return _make("hang", f"hang|{';'.join(inner)}", f"hang: stuck in {inner[-1]}", ";".join(inner))


def same_hang(a: Sequence[Sequence[str]], b: Sequence[Sequence[str]]) -> bool:
    """Two hang stacks (outermost first) of one stuck loop: one is the other plus the frames of a
    helper the loop calls (caught in ``_scan`` one time and in the ``skip_ws`` it calls the next).
    Stacks that part ways are two hangs."""
    a, b = [tuple(f) for f in a], [tuple(f) for f in b]
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return bool(shorter) and longer[:len(shorter)] == shorter


def unsafe_signature(*, event: str, frames: Sequence[Sequence[str]]) -> Signature:
    """An unsafe action: the audit event (``exec``, ``os.system``, ``open`` for writing...) and the
    function of the target that took it — the innermost frame of a real file (not the ``<string>``
    code being exec'd), without the callers above it: a recursive resolver that evals at any depth
    is one bug."""
    real = [f"{file}:{func}" for file, func in frames if not str(file).startswith("<")]
    where = f" in {real[-1]}" if real else ""
    return _make("unsafe", f"unsafe|{event}|{real[-1] if real else ''}", f"unsafe: {event}{where}",
                 real[-1] if real else "")


def slow_signature(*, frames: Sequence[Sequence[str]], fragment_kind: str) -> Signature:
    """Super-linear time: where the target spends it (the innermost frame of the stack sampled
    while the largest input runs — one frame, since a sample taken at another moment may have its
    callers or a recursion at another depth), or the kind of fragment whose repetition makes it
    grow when no stack was caught."""
    inner = _inner(frames)[-1:]
    if inner:
        return _make("slow", f"slow|{inner[0]}", f"slow: super-linear time in {inner[0]}", inner[0])
    return _make("slow", f"slow|{fragment_kind}", f"slow: super-linear time on repeated {fragment_kind}")


def path_signature(verdict: str, *, kind: str, words: str, functions: Sequence[str],
                   maker: Optional[str] = None, legacy: bool = False) -> Signature:
    """A wrong answer keyed by the kind of damage and where it was made: one fallback path that
    mangles strings is one bug, whatever characters each input happened to lose.

    Where: ``maker``, the innermost target function that returned the damaged value first (the
    worker watches the returns of a traced run, :mod:`fuzzer.isolation.instrument`) — the function
    that made the damage, so a refactor of the functions around it does not rename the bug; or,
    when no return showed it (the damage was stored, not returned), the named target functions
    the input ran (``file:function``). Comprehensions, lambdas and module bodies are never part
    of the key: removing one list comprehension while fixing a bug renamed two unrelated bugs
    (and Python 3.12 inlines comprehensions: they have no frame at all). ``legacy``: the key as
    it was before (every function the input ran), to recognize corpus entries filed so."""
    funcs = sorted(set(functions))
    # The title names real functions: a comprehension, lambda or module body (``<listcomp>``)
    # says nothing to a reader.
    names = [f.split(":", 1)[-1] for f in funcs]
    named = [n for n in names if not n.startswith("<")] or names
    if legacy:
        keyed = funcs
    elif maker:
        keyed = [maker]
        named = [maker.split(":", 1)[-1]]
    else:
        keyed = [f for f in funcs if not f.split(":", 1)[-1].startswith("<")] or funcs
    shown = ", ".join(named[-3:]) + (" …" if len(named) > 3 else "")
    return _make(verdict, f"{verdict}|path|{kind}|{';'.join(keyed)}", f"{verdict}: {words} (via {shown})",
                 ";".join(keyed))


def path_parts(key: str) -> Optional[tuple]:
    """(verdict, kind of damage, functions) of a :func:`path_signature` key; None for another key."""
    verdict, sep, rest = key.partition("|path|")
    if not sep or "|" not in rest:
        return None
    kind, _, functions = rest.rpartition("|")
    return verdict, kind, tuple(functions.split(";")) if functions else ()


def same_maker(made: str, ran: str) -> bool:
    """Whether path key ``ran`` — keyed by every function its input ran, its trace having found no
    maker (the damaged value came back empty, or was stored rather than returned) — is the damage
    of path key ``made``, keyed by the maker another trace found: the same verdict and kind of
    damage, and that maker among the functions ``ran`` ran. One bug the two traces could only key
    two ways."""
    a, b = path_parts(made), path_parts(ran)
    return a is not None and b is not None and a[:2] == b[:2] and len(a[2]) == 1 and a[2] != b[2] and a[2][0] in b[2]


def retitled_path(signature: Signature, words: str) -> Signature:
    """The same path signature (id and key) with a title that speaks of another input's damage:
    the title of a finding describes the input it shows, which shrinking may have changed."""
    verdict, _, via = signature.title.partition(": ")
    via = via[via.rfind(" (via "):] if " (via " in via else ""
    return Signature(id=signature.id, title=f"{verdict}: {words}{via}", key=signature.key, site=signature.site)


def history_signature(verdict: str, *, alone: bool = False) -> Signature:
    """A failure that only happens after other inputs: state kept between calls (a cache, a
    global) is the bug, whatever the damage looks like. ``alone``: one that did not happen again
    at all, alone or after the inputs that ran before it — state kept from longer ago, or a target
    answering at random (the same key: one bug of the target's, told in words that claim no more)."""
    if alone:
        return _make(verdict, f"{verdict}|history", f"{verdict}: depends on earlier inputs, or on chance (it did "
                     "not happen again: state kept between calls, or nondeterminism)")
    return _make(verdict, f"{verdict}|history", f"{verdict}: depends on earlier inputs (state kept between calls)")


def _inner(frames: Sequence[Sequence[str]]) -> list[str]:
    return [f"{file}:{func}" for file, func in list(frames)[-CRASH_FRAMES:]]


def verdict_signature(verdict: str, *, anomaly_class: Optional[str], operator: Optional[str],
                      format: Optional[str], key: Optional[str] = None, what: Optional[str] = None) -> Signature:
    """Any non-crash verdict.

    With a ``key`` (what the target did wrong: the kind of damage of a corruption, the broken promise
    of a missed anomaly), the key alone identifies the bug, whichever operator exposed it. Without
    one, the anomaly class and operator do (the format for valid samples, where a false_reject on
    one envelope and on another are different bugs).
    """
    if key is not None:
        return _make(verdict, f"{verdict}|{key}", f"{verdict}: {what or key}")
    if anomaly_class is None:
        what = f"valid {format}" if format else "raw input"
        key = f"{verdict}|valid|{format or 'raw'}"
    else:
        what = f"{anomaly_class}/{operator}"
        key = f"{verdict}|{anomaly_class}|{operator}"
    return _make(verdict, key, f"{verdict} on {what}")
