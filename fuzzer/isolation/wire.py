"""The message format between supervisor and workers: batches of texts (and prefixes of texts sent
by reference), and the rows that come back as :class:`Outcome` objects."""

from __future__ import annotations

import socket
from collections import deque
from typing import Any

from fuzzer.isolation.outcome import BATCH_CHARS, KINDS, NO_EXTRA, Outcome

def queue_limit(conn: Any) -> int:
    """How big two queued batches may be without filling the socket buffer (a quarter of it).

    A second batch is only queued behind a running one when both fit, so the supervisor never
    blocks sending while the worker blocks sending its results back (a deadlock).
    """
    try:
        with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            return max(0, sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) // 4)
    except OSError:
        return 0  # unknown: never queue


def size_of(texts: list, i: int) -> int:
    item = texts[i]
    return len(item) if item.__class__ is str else item[1]


def message(texts: list, batch: list[int]) -> list:
    """The batch's inputs as sent: texts, and prefixes of a text sent earlier in the same message
    as ``(position in the message, end)`` — a prefix whose text is not in this message (a split or
    requeued batch) is sent as the text itself."""
    where = {}
    out = []
    for position, i in enumerate(batch):
        item = texts[i]
        if item.__class__ is str:
            where[i] = position
            out.append(item)
        else:
            base, end = item
            local = where.get(base)
            out.append((local, end) if local is not None else texts[base][:end])
    return out


def batches(texts: list, size: int) -> deque:
    """Consecutive index lists of at most ``size`` texts and about BATCH_CHARS characters."""
    batches: deque = deque()
    batch: list[int] = []
    chars = 0
    for i, text in enumerate(texts):
        size_of = len(text) if text.__class__ is str else text[1]
        if batch and (len(batch) >= size or chars + size_of > BATCH_CHARS):
            batches.append(batch)
            batch, chars = [], 0
        batch.append(i)
        chars += size_of
    if batch:
        batches.append(batch)
    return batches


def collect(batch: list[int], rows: list[tuple], results: list[Any]) -> None:
    """The outcomes of a batch's rows, into ``results`` at the batch's indices."""
    for index, row in zip(batch, rows):
        results[index] = outcome_of(row)


def outcome_of(row: tuple, _new: Any = object.__new__, _kinds: tuple = KINDS, _plain: tuple = NO_EXTRA) -> Outcome:
    """The :class:`Outcome` a worker's row stands for.

    A row is (kind, elapsed, calls) or (kind, elapsed, exception, message, frames), followed by
    the instruments' (lines, functions, unsafe) when they are on — and by a formatted traceback
    for a crash at a place new to the worker (the instruments' part NO_EXTRA when they are off).
    Filling ``__dict__`` directly is ~3x cheaper than the frozen dataclass ``__init__``, and this
    runs once per execution; the fields and their order are Outcome's own."""
    outcome = _new(Outcome)
    if row[0] == 0:
        extra = row[3] if len(row) > 3 else _plain
        outcome.__dict__.update(kind="returned", calls=row[2], exception=None, message=None,
                                frames=(), elapsed=row[1], detail=None, lines=extra[0],
                                functions=extra[1], unsafe=extra[2])
        if len(extra) > 3:  # a run that looked for the maker of a damage
            outcome.__dict__["maker"] = extra[3]
    else:
        extra = row[5] if len(row) > 5 else _plain
        outcome.__dict__.update(kind=_kinds[row[0]], calls=None, exception=row[2], message=row[3],
                                frames=row[4], elapsed=row[1], detail=None, lines=extra[0],
                                functions=extra[1], unsafe=extra[2],
                                traceback=row[6] if len(row) > 6 else None)
    return outcome


def declined_quietly(row: tuple, _plain: tuple = NO_EXTRA) -> bool:
    """Whether a worker's row is a clean decline (a rejection, or no call returned) during which
    the target reached no new line and did nothing unsafe: all a cut-off input may do, so the
    order counts it without making its :class:`Outcome`."""
    kind, size = row[0], len(row)
    if kind == 1:
        return size == 5 or row[5] is _plain or row[5] == _plain
    return kind == 0 and not row[2] and (size == 3 or row[3] is _plain or row[3] == _plain)
