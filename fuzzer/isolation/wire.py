"""The message format between supervisor and workers: batches of payloads (and prefixes of texts
sent by reference), and the results that come back, decoded by the spec."""

from __future__ import annotations

import socket
from collections import deque
from typing import Any

from fuzzer.isolation.spec import BATCH_CHARS

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


def payload_size(item: Any) -> int:
    """About how many bytes a payload takes on the wire: a text's length, a prefix's end, or what
    an object says of itself (``wire_size``; 256 when it says nothing)."""
    if item.__class__ is str:
        return len(item)
    if item.__class__ is tuple:
        return item[1]
    if isinstance(item, (bytes, bytearray)):
        return len(item)
    return getattr(item, "wire_size", 256)


def size_of(texts: list, i: int) -> int:
    return payload_size(texts[i])


def message(texts: list, batch: list[int]) -> list:
    """The batch's payloads as sent. A payload may be any picklable object but a tuple: a tuple
    ``(index, end)`` in the caller's list is the prefix ``texts[index][:end]`` of a text, sent as
    ``(position in the message, end)`` when that text travels in the same message, else as the
    prefix itself (a split or requeued batch)."""
    where = {}
    out = []
    for position, i in enumerate(batch):
        item = texts[i]
        if item.__class__ is not tuple:
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
        size_of = len(text) if text.__class__ is str else payload_size(text)
        if batch and (len(batch) >= size or chars + size_of > BATCH_CHARS):
            batches.append(batch)
            batch, chars = [], 0
        batch.append(i)
        chars += size_of
    if batch:
        batches.append(batch)
    return batches


def collect(batch: list[int], rows: list, results: list[Any], decode: Any) -> None:
    """The decoded results of a batch's rows, into ``results`` at the batch's indices."""
    for index, row in zip(batch, rows):
        results[index] = decode(row)
