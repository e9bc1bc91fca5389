"""Signatures: the stable key that says two failures are the same bug (DESIGN.md, "Signature").

Built from the verdict and, for crashes, the exception type and the innermost frames' file names and
function names — never line numbers, so an unrelated edit does not make an old bug look new. A
worker death is keyed by how the process ended (signal or exit status) plus the stack it dumped, if
any; a hang by the stack the worker dumped before it was killed. A corruption or missed anomaly is
keyed by what went wrong (the kind of damage, the broken promise); the remaining verdicts by the
anomaly class and operator (plus the format for valid samples, where a false_reject on one envelope
and on another are different bugs).

The signature is ``<verdict>-<12 hex>``: short enough for a terminal, a file and a CI log, and the
same in every process and on every machine. The title says in words what the key holds.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Optional, Sequence

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
                            "TOMLDecodeError", "ScannerError", "ParserError", "DecodeError"})


def _message_varies_with_input(exception: str) -> bool:
    return exception in RESOURCE_ERRORS or exception == "re.error" or \
        exception.rsplit(".", 1)[-1] in DECODER_ERRORS


def normalize_message(message: Optional[str]) -> str:
    """The stable part of an exception message: its first line with values replaced by placeholders.

    A decoder's error wrapped in the parser's own message keeps the decoder's words ("Expecting
    value", "Expecting <str> delimiter"): they are how two rejection bugs raised through one wrap
    differ (an extraction that hands the decoder prose fails at "Expecting value"; a rewrite that
    breaks an apostrophe fails later, at a delimiter). Normalizing them away merged such bugs, and
    a gate then called the unfixed one a regression of the fixed one; one bug split by decoder
    words is the lesser harm (more findings, each true)."""
    text = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    for pattern, placeholder in _VALUES:
        text = pattern.sub(placeholder, text)
    return text.strip()[:_MESSAGE_KEY_LIMIT]


def crash_signature(*, exception: Optional[str], frames: Sequence[Sequence[str]] = (),
                    detail: Optional[str] = None, message: Optional[str] = None) -> Signature:
    """A crash: an undeclared exception (type, message with values normalized away, innermost
    frames) or a worker death (``detail``)."""
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
    shape = "" if _message_varies_with_input(exception) else normalize_message(message)
    key = f"crash|{exception}|{shape}|{';'.join(inner)}" if shape else f"crash|{exception}|{';'.join(inner)}"
    return _make("crash", key, f"crash: {exception}{where}", ";".join(inner))


def rejection_signature(*, format: Optional[str], exception: Optional[str], message: Optional[str] = None,
                        frames: Sequence[Sequence[str]] = ()) -> Signature:
    """A false_reject, keyed like a crash: the rejection's exception type, its normalized message
    and the innermost frames where it was raised, plus the format. A parser that rejects an
    apostrophe in one place and a ``</tool_call>`` inside a string in another has two bugs; one
    format's open "false_reject" entry must not hide a new rejection bug in the same format.
    ``exception`` None: the target returned no call."""
    fmt = format or "raw"
    if exception is None:
        return _make("false_reject", f"false_reject|{fmt}|no-call", f"false_reject: no call returned for a valid {fmt} output")
    inner = _inner(frames)
    shape = normalize_message(message)  # a decoder's words too: see normalize_message
    where = f" in {inner[-1]}" if inner else ""
    return _make("false_reject", f"false_reject|{fmt}|{exception}|{shape}|{';'.join(inner)}",
                 f"false_reject: valid {fmt} rejected with {exception}{where}" + (f" ({shape})" if shape else ""),
                 ";".join(inner))


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


def path_signature(verdict: str, *, kind: str, words: str, functions: Sequence[str]) -> Signature:
    """A wrong answer keyed by the kind of damage and the target functions the input ran
    (``file:function``): one fallback path that mangles strings is one bug, whatever characters
    each input happened to lose."""
    funcs = sorted(set(functions))
    # The title names real functions: a comprehension, lambda or module body (``<listcomp>``)
    # says nothing to a reader; the key keeps them all.
    names = [f.split(":", 1)[-1] for f in funcs]
    named = [n for n in names if not n.startswith("<")] or names
    shown = ", ".join(named[-3:]) + (" …" if len(named) > 3 else "")
    return _make(verdict, f"{verdict}|path|{kind}|{';'.join(funcs)}", f"{verdict}: {words} (via {shown})",
                 ";".join(funcs))


def retitled_path(signature: Signature, words: str) -> Signature:
    """The same path signature (id and key) with a title that speaks of another input's damage:
    the title of a finding describes the input it shows, which shrinking may have changed."""
    verdict, _, via = signature.title.partition(": ")
    via = via[via.rfind(" (via "):] if " (via " in via else ""
    return Signature(id=signature.id, title=f"{verdict}: {words}{via}", key=signature.key, site=signature.site)


def history_signature(verdict: str) -> Signature:
    """A failure that only happens after other inputs: state kept between calls (a cache, a
    global) is the bug, whatever the damage looks like."""
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
