"""The corpus: one JSON file per signature, holding the smallest input known for it (the file's
format, an entry, is :mod:`corpus.entry`).

A corpus lives in a directory the user commits next to their parser, so every file is meant to be
read and diffed by people: indented, a fixed key order, ASCII only (``ensure_ascii`` escapes lone
surrogates and control characters, which therefore survive the round trip), named by a content hash
of the entry's signature and text. It is a cache of findings, never the only copy of anything the
user wrote, and it is treated with care:

* a file that is not a valid entry (corrupt, foreign, another ``format_version``) is reported in
  :attr:`Store.problems` and skipped; it is never deleted or overwritten;
* every write is atomic (temp file in the same directory, fsync, ``os.replace``, fsync of the
  directory), so a process killed at any moment leaves every file whole, old or new;
* replacing an entry whose text changed writes the new file (a new name) before removing the old
  one, so there is never a moment with neither.

:class:`CorpusStore` is the directory backend; :class:`InMemoryStore` has the same behaviour for
tests. Both share the merge rules of :class:`Store`.
"""


from __future__ import annotations

import os
import secrets
import time
from datetime import datetime
from pathlib import Path
from typing import Optional

from corpus.predicate import shortlex
from strategies.errors import ToolfuzzError

from corpus.entry import FORMAT_VERSION, CorpusFormatError, Entry, _formats, _parse_time, utc_now

TEMP_PREFIX = ".tmp-"
#: stray temp files younger than this may belong to a writer that is still running
TEMP_MAX_AGE_S = 60.0


class CorpusWriteError(ToolfuzzError):
    """The corpus directory cannot be written (read-only, full, gone); the message names it. A
    command shows it as one line (exit 2), after whatever results it already has."""


def _known_at(entry: "Entry") -> tuple[datetime, bool]:
    """When ``entry``'s status was last known true: its last failure, or its last status change.
    The flag orders a tie: a status change stamped with the same time as the failure was judged
    after that failure was seen (a replay only judges entries already stored), so it wins."""
    seen = _parse_time(entry.last_seen)
    if entry.status_since:
        changed = _parse_time(entry.status_since)
        return (max(seen, changed), changed >= seen)
    return (seen, False)


def _latest_status(old: "Entry", new: "Entry") -> str:
    """The status of the more recent observation (the new one on a tie). Marking an entry fixed is
    an observation too: a stale copy of the corpus whose entry is open because it had not heard
    of the fix does not re-open it."""
    return old.status if _known_at(old) > _known_at(new) else new.status


def _latest_since(a: Optional[str], b: Optional[str]) -> Optional[str]:
    """The later of two ``status_since`` stamps (None: never set): a replaced input keeps when its
    entry's status was last decided, so a stale copy merged later still does not re-open it."""
    return _later(a, b) if a and b else (a or b)


def _later(a: str, b: str) -> str:
    try:
        return a if _parse_time(a) >= _parse_time(b) else b
    except ValueError:
        return max(a, b)


def _earlier(a: str, b: str) -> str:
    try:
        return a if _parse_time(a) <= _parse_time(b) else b
    except ValueError:
        return min(a, b)


class Store:
    """What both backends share: the keep-the-smallest rules on top of four primitives.

    Subclasses implement ``_scan`` (all valid entries as (path, entry), refreshing ``problems``),
    ``_write`` (store an entry under its file name, atomically) and ``_delete`` (remove by path), and
    ``_blocked`` (a name held by something that is not a valid entry and must not be overwritten).
    """

    def __init__(self) -> None:
        #: "FILE: reason" for every file skipped by the last scan (or refused by a write)
        self.problems: list[str] = []

    # -- primitives ------------------------------------------------------------------------------
    def _scan(self) -> list[tuple[str, Entry]]:
        raise NotImplementedError

    def _write(self, entry: Entry) -> str:
        raise NotImplementedError

    def _delete(self, path: str) -> None:
        raise NotImplementedError

    def _blocked(self, name: str) -> Optional[str]:
        return None

    # -- public interface ------------------------------------------------------------------------
    def entries(self) -> list[tuple[str, Entry]]:
        """Every valid entry with its path, sorted by path. Invalid files go to :attr:`problems`."""
        return self._scan()

    def _for_signature(self, signature: str) -> list[tuple[str, Entry]]:
        found = [(p, e) for p, e in self._scan() if e.signature == signature]
        # Two files can hold one signature (a merge by git, a writer killed mid-replace): the
        # smallest input is the entry, the others are leftovers.
        found.sort(key=lambda pe: (pe[1].key, pe[0]))
        return found

    def get(self, signature: str) -> Optional[Entry]:
        """The entry for ``signature`` (the smallest, if several files hold it), or None."""
        found = self._for_signature(signature)
        return found[0][1] if found else None

    def __contains__(self, signature: str) -> bool:
        return self.get(signature) is not None

    def signatures(self) -> list[str]:
        """The distinct signatures in the corpus, in sorted order."""
        return sorted({e.signature for _p, e in self._scan()})

    def put(self, entry: Entry, *, fails_again: bool = False) -> str:
        """Record ``entry``; keep the smaller input (shortlex) for its signature.

        ``fails_again``: ``entry`` shows the bug of the entry marked fixed under its signature. Its
        input replaces the stored one whatever their sizes: the stored input passed when the entry
        was marked fixed (a partial fix can leave it passing while the bug stays), so only the new
        one lets ``fuzz replay --update`` see the bug and re-open the entry.

        Returns ``'added'`` (new signature), ``'replaced'`` (the new text is smaller; the old file is
        removed after the new one is written) or ``'kept'`` (the existing text is smaller or equal;
        its ``last_seen`` and ``status`` are still updated from the new entry). ``first_seen`` is the
        earliest and ``last_seen`` the latest of both; ``status`` is the one of the most recent
        observation, so merging a stale copy of a corpus never re-opens an entry marked fixed since.
        """
        found = self._for_signature(entry.signature)
        if not found:
            return "added" if self._store(entry.copy()) else "kept"
        old_path, old = found[0]
        if entry.key < old.key or (fails_again and old.status == "fixed" and entry.key != old.key):
            new = entry.copy()
            new.first_seen = _earlier(old.first_seen, entry.first_seen)
            new.last_seen = _later(old.last_seen, entry.last_seen)
            new.status = _latest_status(old, entry)
            new.status_since = _latest_since(old.status_since, entry.status_since)
            new.formats = _formats(entry.formats, old.formats)
            if not self._store(new):
                return "kept"
            self._drop_others(new, found)
            return "replaced"
        kept = old.copy()
        kept.last_seen = _later(old.last_seen, entry.last_seen)
        kept.first_seen = _earlier(old.first_seen, entry.first_seen)
        kept.status = _latest_status(old, entry)
        kept.formats = _formats(old.formats, entry.formats)
        stale = kept != old or Path(old_path).name != kept.file_name
        if stale and not self._store(kept):
            return "kept"
        self._drop_others(kept, found)
        return "kept"

    def _store(self, entry: Entry) -> bool:
        reason = self._blocked(entry.file_name)
        if reason is not None:
            self.problems.append(f"{reason}; not overwritten with the entry for signature {entry.signature!r}")
            return False
        self._write(entry)
        return True

    def _drop_others(self, keep: Entry, found: list[tuple[str, Entry]]) -> None:
        keep_name = keep.file_name
        for path, _e in found:
            if Path(path).name != keep_name:
                self._delete(path)

    def _set_status(self, signature: str, status: str) -> None:
        found = self._for_signature(signature)
        if not found:
            raise KeyError(f"no corpus entry for signature {signature!r}")
        path, entry = found[0]
        if entry.status != status or Path(path).name != entry.file_name:
            entry.status = status
            entry.status_since = utc_now()
            if not self._store(entry):
                return
        self._drop_others(entry, found)

    def mark_fixed(self, signature: str) -> None:
        """Set the entry's status to ``fixed`` (a regression later is a gate failure). KeyError if absent."""
        self._set_status(signature, "fixed")

    def mark_open(self, signature: str) -> None:
        """Set the entry's status to ``open``. KeyError if absent."""
        self._set_status(signature, "open")

    def remove(self, signature: str) -> bool:
        """Remove every file holding ``signature``; True if there was one."""
        found = self._for_signature(signature)
        for path, _e in found:
            self._delete(path)
        return bool(found)

    def merge(self, other: "Store") -> dict[str, int]:
        """:meth:`put` every entry of ``other``; returns counts of ``added``, ``replaced``, ``kept``."""
        counts = {"added": 0, "replaced": 0, "kept": 0}
        for _path, entry in other.entries():
            counts[self.put(entry)] += 1
        return counts


def atomic_write(final: Path, data: bytes) -> None:
    """Write ``data`` to ``final`` so that a process killed at any moment leaves either the old file
    or the new one, whole: a temporary file in the same directory, fsync, rename, fsync the directory.
    (The report and JUnit writers use it too.)"""
    final = Path(final)
    tmp = final.parent / f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(final.parent)


def _fsync_dir(path: Path) -> None:
    """Make a rename durable; some platforms cannot open directories, which is fine to skip."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class CorpusStore(Store):
    """A corpus directory. Created on the first write; a missing directory is an empty corpus."""

    def __init__(self, path: str | os.PathLike[str]):
        super().__init__()
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise CorpusFormatError(f"{self.path}: the corpus must be a directory")

    def __repr__(self) -> str:
        return f"CorpusStore({str(self.path)!r})"

    def _files(self) -> list[Path]:
        if not self.path.is_dir():
            return []
        return sorted(p for p in self.path.iterdir()
                      if p.name.endswith(".json") and not p.name.startswith(".") and p.is_file())

    def _read(self, file: Path) -> Entry:
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise CorpusFormatError(f"unreadable ({exc.strerror or exc})") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CorpusFormatError("not UTF-8 text") from None
        return Entry.loads(text)

    def _scan(self) -> list[tuple[str, Entry]]:
        self._clean_temp_files()
        problems: list[str] = []
        found: list[tuple[str, Entry]] = []
        for file in self._files():
            try:
                found.append((str(file), self._read(file)))
            except CorpusFormatError as exc:
                problems.append(f"{file}: {exc}")
        self.problems = problems
        return found

    def _blocked(self, name: str) -> Optional[str]:
        file = self.path / name
        if not file.exists():
            return None
        try:
            self._read(file)
        except CorpusFormatError as exc:
            return f"{file}: {exc}"
        return None

    def _write(self, entry: Entry) -> str:
        final = self.path / entry.file_name
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            atomic_write(final, entry.dumps().encode("ascii"))
        except OSError as exc:
            raise self._cannot_write(exc) from None
        return str(final)

    def _delete(self, path: str) -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise self._cannot_write(exc) from None
        _fsync_dir(self.path)

    def _cannot_write(self, exc: OSError) -> CorpusWriteError:
        return CorpusWriteError(f"{self.path}: cannot write the corpus ({exc.strerror or exc})")

    def _clean_temp_files(self) -> None:
        """Remove temp files left by killed writers, once they are old enough to be surely dead."""
        if not self.path.is_dir():
            return
        now = time.time()
        for file in self.path.iterdir():
            if not file.name.startswith(TEMP_PREFIX):
                continue
            try:
                if now - file.stat().st_mtime > TEMP_MAX_AGE_S:
                    file.unlink()
            except OSError:
                pass


class InMemoryStore(Store):
    """The same store in a dict, for tests. Entries are kept as file text, so they round-trip."""

    def __init__(self) -> None:
        super().__init__()
        self._files: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"InMemoryStore(<{len(self._files)} files>)"

    def add_raw(self, name: str, text: str) -> None:
        """Store arbitrary file text under ``name`` (to test how invalid files are handled)."""
        self._files[name] = text

    def _scan(self) -> list[tuple[str, Entry]]:
        problems: list[str] = []
        found: list[tuple[str, Entry]] = []
        for name in sorted(self._files):
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                found.append((name, Entry.loads(self._files[name])))
            except CorpusFormatError as exc:
                problems.append(f"{name}: {exc}")
        self.problems = problems
        return found

    def _blocked(self, name: str) -> Optional[str]:
        if name not in self._files:
            return None
        try:
            Entry.loads(self._files[name])
        except CorpusFormatError as exc:
            return f"{name}: {exc}"
        return None

    def _write(self, entry: Entry) -> str:
        self._files[entry.file_name] = entry.dumps()
        return entry.file_name

    def _delete(self, path: str) -> None:
        self._files.pop(path, None)


__all__ = ["CorpusFormatError", "CorpusStore", "CorpusWriteError", "Entry", "FORMAT_VERSION", "InMemoryStore", "Store",
           "shortlex", "utc_now"]
