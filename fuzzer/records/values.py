"""What a record's JSON columns can hold, and its times: any value an application hands the
recorder made storable, encoded and decoded, raw text kept byte-exact, ISO times and ``--since``.
Standard library only (and orjson when installed, for speed): the recorder uses it."""

from __future__ import annotations

import json
import math
import re
import time
from datetime import datetime, timezone
from typing import Any, Optional

try:  # optional: ~15x faster than json for the small documents records hold
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a toolfuzz dependency
    _orjson = None

from fuzzer.records.record import RecordsError



def storable(value: Any, depth: int = 0) -> Any:
    """A JSON-typed copy of any value an application hands the recorder (a parse result, a tool
    result, an exception's arguments), built so the stored document is valid JSON and says what
    the value was: mappings and sequences are copied, pydantic models and dataclasses become their
    fields, a non-finite float becomes ``{"$float": "nan"}``, bytes ``{"$bytes": "<latin-1>"}``,
    anything else ``{"$repr": repr(x)}`` (cut at 200 characters). Nesting deeper than 100 levels
    (or a cycle) is cut with a ``$repr`` marker."""
    cls = value.__class__
    if cls is str or cls is bool or cls is int or value is None:
        return value
    if cls is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if depth > 100:
        return {"$repr": "<nested too deeply>"}
    if cls is dict:
        return {(k if k.__class__ is str else _key(k)): storable(v, depth + 1) for k, v in value.items()}
    if cls is list or cls is tuple:
        return [storable(v, depth + 1) for v in value]
    return _storable_other(value, depth)


def _storable_other(value: Any, depth: int) -> Any:
    from collections.abc import Mapping
    import dataclasses

    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return storable(float(value), depth)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, Mapping):
        return {(k if isinstance(k, str) else _key(k)): storable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [storable(v, depth + 1) for v in value]
        try:
            return sorted(items, key=lambda x: json.dumps(x, sort_keys=True))
        except (TypeError, ValueError):
            return items
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": bytes(value[:4096]).decode("latin-1")}
    try:
        dump = getattr(value, "model_dump", None)
        if callable(dump):
            return storable(dump(), depth + 1)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return storable(dataclasses.asdict(value), depth + 1)
    except Exception:  # noqa: BLE001 - a broken model: fall back to its repr
        pass
    return {"$repr": short_repr(value)}


def _key(key: Any) -> str:
    return str.__str__(key) if isinstance(key, str) else f"$repr:{short_repr(key)}"


def short_repr(value: Any, limit: int = 200) -> str:
    """``repr(value)``, cut at ``limit`` characters; never raises."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        text = f"<{type(value).__name__} with a failing __repr__>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def dumps_json(value: Any) -> Optional[str]:
    """JSON text for a storable value (None stays None): compact, valid, NaN-free. orjson's fast
    path is used when its result is exact (it writes NaN as null, so a ``null`` in its output is
    re-checked with json)."""
    if value is None:
        return None
    if _orjson is not None:
        try:
            out = _orjson.dumps(value)
        except (TypeError, _orjson.JSONEncodeError):  # lone surrogates, huge ints
            pass
        else:
            if b"null" not in out:
                return out.decode("utf-8")
    try:
        return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (ValueError, TypeError):
        return json.dumps(storable(value), ensure_ascii=True, allow_nan=False, separators=(",", ":"))


class EncodedJSON(str):
    """JSON text a snapshot already holds (the recorder serialized it instead of copying it):
    stored as it is."""

    __slots__ = ()


def loads_json(text: Any) -> Any:
    return None if text is None else json.loads(text)


def _text_in(text: Optional[str]) -> Any:
    """A text column value: the string, or (when it holds lone surrogates) a BLOB of its
    surrogatepass encoding, so the exact text comes back."""
    if text is None or text.__class__ is not str:
        return text if text is None else str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def _text_out(value: Any) -> Optional[str]:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return value


_SECOND: list = [None, ""]


def iso_time(epoch: float) -> str:
    """``2026-12-01T10:00:00.123456Z``: sortable as text, readable in the sqlite3 shell."""
    whole = int(epoch)
    micro = int(round((epoch - whole) * 1_000_000))
    if micro >= 1_000_000:
        whole, micro = whole + 1, micro - 1_000_000
    cached = _SECOND  # records come many per second: format the second once
    if cached[0] != whole:
        cached[1] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        cached[0] = whole
        return f"{cached[1]}.{micro:06d}Z"
    return f"{cached[1]}.{micro:06d}Z"


def utc_now_iso() -> str:
    return iso_time(time.time())


_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_since(value: str, *, now: Optional[float] = None) -> str:
    """``--since``: a duration back from now (``30m``, ``2h``, ``7d``, ``1w``) or an ISO date /
    time (``2026-12-01``, ``2026-12-01T10:00``, UTC unless an offset is given); returns the ISO
    timestamp records are compared with. Raises :class:`RecordsError` naming the value."""
    match = _RELATIVE.match(value)
    if match:
        seconds = float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[match.group(2)]
        return iso_time((time.time() if now is None else now) - seconds)
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise RecordsError(f"--since {value!r}: not a duration (30m, 2h, 7d) or an ISO date/time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return iso_time(moment.timestamp())


__all__ = ["EncodedJSON", "dumps_json", "iso_time", "loads_json", "parse_since", "short_repr", "storable", "utc_now_iso"]
