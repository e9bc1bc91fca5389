"""A pythonic tool-call parser that lets Python read the list: ``eval`` with tool-recording names.

A pattern found in agent demos and evaluation harnesses: the model writes
``[get_weather(city="Paris")]``, so evaluate it in a namespace where every unknown name is a
recorder that returns ``(name, kwargs)`` when called. Builtins are removed "for safety", and the
result is checked to be JSON before it is returned, so on every well-formed output the answer is
right.

The planted bug: it is ``eval``. Every output runs as code in the parsing process — builtins
removed or not, attribute chains reach everything (``().__class__.__base__.__subclasses__()``).
The ``unsafe`` verdict (audit hooks in the worker) is what reports it; nothing else does, because
the answers are correct. The fix parses with ``ast`` and a literal walker.
"""

from __future__ import annotations

from benchmarks.parsers import pythonic_ast
from benchmarks.parsers._common import PY_MAX_SOURCE, ParseError, bracketed, is_json_value, make_call

BUG = {
    "verdict": "unsafe",
    "level": "parse",
    "formats": ["pythonic"],
    "description": "the pythonic list is eval()'d (builtins removed) to read the calls",
    "match": {"verdict": "unsafe"},
}
TRIGGER = '[get_weather(city="Paris")]'


class _Recorded:
    def __init__(self, name: str, arguments: dict):
        self.name, self.arguments = name, arguments


class _Tool:
    """Any name the model writes: calling it records the call; attributes make dotted names."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> "_Tool":
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Tool(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs) -> _Recorded:
        if args:
            raise ParseError("pythonic calls take keyword arguments only")
        return _Recorded(self._name, kwargs)


class _Namespace(dict):
    def __missing__(self, name: str) -> _Tool:
        return _Tool(name)


def parse(text: str) -> list:
    source = bracketed(text)
    if source is None:
        return []
    if len(source) > PY_MAX_SOURCE:
        raise ParseError(f"pythonic payload too large ({len(source)} characters)")
    try:
        result = eval(source, {"__builtins__": {}}, _Namespace())  # noqa: S307 - the planted bug
    except Exception as exc:  # SyntaxError, NameError, TypeError, RecursionError, MemoryError ...
        raise ParseError(f"not a list of calls: {type(exc).__name__}: {exc}") from None
    if not isinstance(result, list) or not all(isinstance(item, _Recorded) for item in result):
        raise ParseError("pythonic output must be a list of calls")
    calls = []
    for item in result:
        if not is_json_value(item.arguments):
            raise ParseError("arguments must be JSON values")
        calls.append(make_call(item.name, item.arguments))
    return calls


#: The fix: the ast-based reader (nothing is evaluated).
parse_fixed = pythonic_ast.parse_fixed
