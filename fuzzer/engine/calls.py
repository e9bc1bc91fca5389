"""Calls as toolfuzz compares them: whatever user code returns, as plain ``{"name", "arguments"}`` values.

DESIGN.md "Target contract": a target returns a list/tuple of calls, one call, or None/[] for no
call; a call is a mapping with ``name`` and ``arguments`` (a mapping, or a JSON string decoding to
one), an OpenAI-style ``{"type": "function", "function": {...}}``, or an object with ``.name`` and
``.arguments``. :func:`normalize_calls` turns every one of those shapes into JSON values. It runs
inside worker processes, so the engine only ever receives plain data (it never unpickles, hence
never imports, user classes) and oracles compare calls as JSON values. The parser harness, the
records (what a production parser returned) and the agent harness (the calls a loop executes)
read calls through it alike.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["ARGUMENT_KEYS", "InvalidReturn", "MAX_DEPTH", "normalize_calls"]

#: Deeper nesting than this in a returned value is refused (also catches cyclic containers),
#: so a pathological return cannot turn normalization into a RecursionError.
MAX_DEPTH = 100
_REPR_LIMIT = 200


class InvalidReturn(ValueError):
    """The target returned something that is not a call, a list of calls, or None."""


def normalize_calls(value: Any) -> list[dict[str, Any]]:
    """Every return shape of the target contract as a list of plain ``{"name", "arguments"}``.

    ``None`` and ``[]`` mean no call; a list or tuple holds calls; anything else must be one call:
    a mapping with ``name`` and ``arguments``, an OpenAI-style ``{"type": "function", "function":
    {...}}`` (or ``{"id": ..., "function": {...}}``), or an object with ``.name`` and
    ``.arguments`` (also one with ``.function``, like the OpenAI SDK's tool-call objects). The
    arguments may also sit under ``args`` (LangChain), ``input`` (Anthropic) or ``parameters``
    (Llama), and a whole message with ``tool_calls`` stands for its calls.
    ``arguments`` is a mapping or a JSON string decoding to an object. Values become JSON types
    (tuples -> lists); anything else becomes ``{"$repr": repr(x)}`` so it can never compare equal
    to a real JSON value. Raises :class:`InvalidReturn` describing the first problem.
    """
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        value = _message_calls(value)
        if value is None:
            return []
    try:
        if isinstance(value, (list, tuple)):
            return [_call(item, f"call #{i}") for i, item in enumerate(value)]
        return [_call(value, "call")]
    except RecursionError:
        raise InvalidReturn("return value is nested too deeply") from None


#: Where real libraries keep a call's arguments, in order: OpenAI ``arguments``, LangChain
#: ``args``, Anthropic ``input``, Llama ``parameters``. A parser returning its framework's own
#: shape must not be judged as returning garbage.
ARGUMENT_KEYS = ("arguments", "args", "input", "parameters")
_MISSING = object()


def _message_calls(value: Any) -> Any:
    """A whole assistant message (a mapping or object with ``tool_calls``, as OpenAI's SDK and
    LangChain return) stands for its calls; anything else is returned unchanged."""
    if isinstance(value, Mapping):
        if "name" not in value and "tool_calls" in value:
            return value["tool_calls"]
        return value
    if not hasattr(value, "name"):
        calls = getattr(value, "tool_calls", _MISSING)
        if calls is not _MISSING:
            return calls
    return value


def _call(obj: Any, where: str, unwrapped: bool = False) -> dict[str, Any]:
    if type(obj) is dict or isinstance(obj, Mapping):
        if "name" not in obj:
            inner = obj.get("function")
            if inner is not None and not unwrapped:
                return _call(inner, where + ".function", True)
            keys = ", ".join(repr(k) for k in list(obj)[:6])
            raise InvalidReturn(f"{where}: mapping has no 'name' (keys: {keys or 'none'})")
        key = next((k for k in ARGUMENT_KEYS if k in obj), None)
        if key is None:
            raise InvalidReturn(f"{where}: mapping has no 'arguments'")
        name, arguments = obj["name"], obj[key]
    elif obj is None or isinstance(obj, (str, bytes, bytearray, int, float, list, tuple)):
        shown = f" of length {len(obj)}" if isinstance(obj, (list, tuple)) else f" {_short_repr(obj)}"
        raise InvalidReturn(f"{where}: {type(obj).__name__}{shown} is not a call")
    elif hasattr(obj, "name") and any(hasattr(obj, k) for k in ARGUMENT_KEYS):
        name = obj.name
        arguments = next(getattr(obj, k) for k in ARGUMENT_KEYS if hasattr(obj, k))
    elif getattr(obj, "function", None) is not None and not unwrapped:
        return _call(obj.function, where + ".function", True)
    else:
        raise InvalidReturn(f"{where}: {type(obj).__name__} object has no 'name' and 'arguments'")
    if not isinstance(name, str):
        raise InvalidReturn(f"{where}: name is {type(name).__name__}, not a string")
    return {"name": str.__str__(name), "arguments": _arguments(arguments, where)}


def _arguments(arguments: Any, where: str) -> dict[str, Any]:
    if type(arguments) is dict:
        return _json(arguments, 1)
    if isinstance(arguments, (str, bytes, bytearray)):
        try:
            decoded = json.loads(arguments)
        except RecursionError:
            raise InvalidReturn(f"{where}: arguments JSON is nested too deeply") from None
        except ValueError as exc:
            raise InvalidReturn(f"{where}: arguments string is not JSON ({exc})") from None
        if not isinstance(decoded, dict):
            raise InvalidReturn(f"{where}: arguments JSON is {type(decoded).__name__}, not an object")
        arguments = decoded
    elif not isinstance(arguments, Mapping):
        if callable(getattr(arguments, "model_dump", None)):  # pydantic models
            arguments = arguments.model_dump()
        elif dataclasses.is_dataclass(arguments) and not isinstance(arguments, type):
            arguments = dataclasses.asdict(arguments)
        else:
            raise InvalidReturn(f"{where}: arguments is {type(arguments).__name__}, "
                                f"not a mapping or a JSON object string")
    return _json(arguments, 1)


def _json(x: Any, depth: int) -> Any:
    """A JSON-typed copy of ``x`` (depth-bounded, so cycles and deep nesting are refused)."""
    t = type(x)
    if t is str or t is int or t is float or t is bool or x is None:
        return x
    if depth > MAX_DEPTH:
        raise InvalidReturn(f"return value is nested deeper than {MAX_DEPTH} levels")
    if t is dict or isinstance(x, Mapping):
        return {(k if type(k) is str else _key(k)): _json(v, depth + 1) for k, v in x.items()}
    if t is list or t is tuple or isinstance(x, (list, tuple)):
        return [_json(v, depth + 1) for v in x]
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, int):  # IntEnum and friends; bool was handled above (it cannot be subclassed)
        return int(x)
    if isinstance(x, float):
        return float(x)
    return {"$repr": _short_repr(x)}


def _key(k: Any) -> str:
    # A non-string key is not JSON; mark it so it never equals the string a JSON key would be.
    return str.__str__(k) if isinstance(k, str) else f"$repr:{_short_repr(k)}"


def _short_repr(x: Any) -> str:
    try:
        if isinstance(x, (str, bytes, bytearray)) and len(x) > _REPR_LIMIT:
            x = x[:_REPR_LIMIT]  # never repr a huge blob just to cut it
        text = repr(x)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real problem
        text = f"<{type(x).__name__} with a failing __repr__>"
    return text if len(text) <= _REPR_LIMIT else text[:_REPR_LIMIT - 3] + "..."
