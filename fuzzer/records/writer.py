"""The background writer: how the recorder stores records without slowing the application.

The application thread only appends a snapshot to a bounded queue; daemon threads redact and encode
them, and write them in batches, one transaction per batch (:class:`fuzzer.records.store.RecordStore`).
A full queue drops the record (and counts it) rather than slowing the application; a failing disk
is reported through a callback, never raised. Standard library only: it runs inside applications.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import deque
from typing import Any, Callable, Optional

from fuzzer.records.store import RecordStore, storage_row


class _ToolSet:
    __slots__ = ("tools_hash", "tools")

    def __init__(self, tools_hash: str, tools: Any):
        self.tools_hash, self.tools = tools_hash, tools


class BackgroundWriter:
    """A bounded queue and two daemon threads that write what is queued, in batches.

    The application thread calls :meth:`submit` (an append and a length check); everything that
    costs happens in the background, as a pipeline: the *encoder* thread redacts and encodes a
    batch (Python, holding the GIL) while the *sink* thread writes the previous one to SQLite
    (which releases the GIL while it works), one transaction per batch of up to ``batch_size``. A
    full queue (``max_queue``) drops the snapshot and counts it in :attr:`dropped`. A write that
    fails (disk full, read-only directory, a lock held longer than ``busy_timeout_s``) drops its
    batch, is counted, and is reported to ``on_failure(exc)``; the next batch tries again with a
    fresh connection. ``on_commit(record_ids)`` is called after each committed batch
    (monitoring, and the crash tests). After ``os.fork()`` the child starts with an empty queue
    and its own threads and connection.
    """

    #: Encoded batches waiting for the sink (back-pressure on the encoder beyond that).
    PIPELINE_DEPTH = 4

    def __init__(self, path: str, *, redactor: Any = None, max_queue: int = 100_000, batch_size: int = 512,
                 flush_interval: float = 0.05, busy_timeout_s: float = 10.0,
                 on_failure: Optional[Callable[[BaseException], None]] = None,
                 on_commit: Optional[Callable[[list], None]] = None, on_recovery: Optional[Callable[[], None]] = None):
        self.path = os.fspath(path)
        self.redactor = redactor
        self.max_queue, self.batch_size = int(max_queue), max(1, int(batch_size))
        self.flush_interval, self.busy_timeout_s = flush_interval, busy_timeout_s
        self.on_failure, self.on_commit, self.on_recovery = on_failure, on_commit, on_recovery
        self.written = 0
        self.dropped = 0
        self.failed_batches = 0
        self._lock = threading.Lock()
        self._reset()
        if hasattr(os, "register_at_fork"):
            import weakref

            ref = weakref.ref(self)
            os.register_at_fork(after_in_child=lambda: (ref() is not None and ref()._reset()))

    def _reset(self) -> None:
        import queue

        self._queue: deque = deque()
        self._encoded: "queue.Queue" = queue.Queue(maxsize=self.PIPELINE_DEPTH)
        self._wake = threading.Event()
        self._stop = False
        self._thread: Optional[threading.Thread] = None
        self._sink_thread: Optional[threading.Thread] = None
        self._store: Optional[RecordStore] = None
        self._failing = False

    # -- application side -----------------------------------------------------------------------
    def submit(self, snapshot: tuple) -> bool:
        """Queue one record snapshot (FIELDS order). False (and counted) when the queue is full."""
        queue = self._queue
        if len(queue) >= self.max_queue:
            self.dropped += 1
            return False
        queue.append(snapshot)
        if self._thread is None:
            self._start()
        elif len(queue) == self.batch_size:
            self._wake.set()
        return True

    def submit_tool_set(self, tools_hash: str, tools: Any) -> None:
        self._queue.append(_ToolSet(tools_hash, tools))
        if self._thread is None:
            self._start()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued before this call is written (or dropped)."""
        if self._thread is None and not self._queue:
            return True
        marker = threading.Event()
        self._queue.append(marker)
        if self._thread is None:
            self._start()
        self._wake.set()
        return marker.wait(timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, stop the threads, close the connection."""
        thread, sink = self._thread, self._sink_thread
        if thread is None:
            return
        self.flush(timeout)
        self._stop = True
        self._wake.set()
        thread.join(timeout)
        if sink is not None:
            sink.join(timeout)

    @property
    def pending(self) -> int:
        return len(self._queue)

    # -- the encoder thread ---------------------------------------------------------------------
    def _start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            sink = threading.Thread(target=self._sink, name="toolfuzz-recorder-sqlite", daemon=True)
            thread = threading.Thread(target=self._loop, name="toolfuzz-recorder", daemon=True)
            self._sink_thread, self._thread = sink, thread
            sink.start()
            thread.start()

    def _loop(self) -> None:
        queue, wake = self._queue, self._wake
        while True:
            if not queue:
                if self._stop:
                    break
                wake.wait(self.flush_interval)
                wake.clear()
                continue
            if len(queue) < self.batch_size and not self._stop:
                wake.wait(self.flush_interval)  # let a batch build up
                wake.clear()
            self._encode_some(queue)
        self._encoded.put(None)  # the sink stops after what is already encoded

    def _encode_some(self, queue: deque) -> None:
        batch: list = []
        markers: list = []
        tool_sets: list = []
        popleft = queue.popleft
        while queue and len(batch) < self.batch_size:
            item = popleft()
            cls = item.__class__
            if cls is tuple:
                batch.append(item)
            elif cls is _ToolSet:
                tool_sets.append(item)
            else:  # a flush marker: everything before it is in this batch
                markers.append(item)
                break
        rows: list = []
        for snapshot in batch:
            try:
                rows.append(storage_row(snapshot, self.redactor))
            except Exception as exc:  # noqa: BLE001 - one unencodable record must not lose the batch
                self.dropped += 1
                self._report(exc)
        self._encoded.put((rows, tool_sets, markers))

    # -- the sink thread ------------------------------------------------------------------------
    def _sink(self) -> None:
        while True:
            item = self._encoded.get()
            if item is None:
                break
            rows, tool_sets, markers = item
            try:
                if rows or tool_sets:
                    self._write(rows, tool_sets)
            finally:
                for marker in markers:  # set once everything before it is committed (or dropped)
                    marker.set()
        self._drop_store()

    def _drop_store(self) -> None:
        if self._store is not None:
            try:
                self._store.close()
            except sqlite3.Error:
                pass
            self._store = None

    def _write(self, rows: list, tool_sets: list) -> None:
        try:
            store = self._store
            if store is None:
                store = self._store = RecordStore(self.path, busy_timeout_s=self.busy_timeout_s)
            for item in tool_sets:
                store.put_tool_set(item.tools_hash, item.tools, redactor=self.redactor)
            if rows:
                store.write_rows(rows)
        except Exception as exc:  # noqa: BLE001 - sqlite3.Error, OSError, RecordsError: never raised
            self.dropped += len(rows)
            self.failed_batches += 1
            self._drop_store()
            self._report(exc)
            return
        self.written += len(rows)
        if self._failing:
            self._failing = False
            if self.on_recovery is not None:
                self.on_recovery()
        if self.on_commit is not None and rows:
            try:
                self.on_commit([row[0] for row in rows])
            except Exception as exc:  # noqa: BLE001
                self._report(exc)

    def _report(self, exc: BaseException) -> None:
        self._failing = True
        if self.on_failure is not None:
            try:
                self.on_failure(exc)
            except Exception:  # noqa: BLE001 - a failing logger must not kill the writer
                pass


__all__ = ["BackgroundWriter"]
