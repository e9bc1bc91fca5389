"""The reference parser's pythonic format, ``[get_weather(city="Paris")]``: read with ``ast`` (the
tokenizer caps nesting at 200 levels) after a size guard, and a literal walker of our own that
admits only JSON values."""

from __future__ import annotations

import ast
import math
import warnings
from typing import Any

from fuzzer.targets.reference_families.reading import call


#: Pythonic payloads beyond this size are parsed only when they are not dense in syntax (ast costs
#: about 1.5 s per MB of small literals); beyond _PY_HARD_LIMIT never.
_PY_SOFT_LIMIT = 256 * 1024
_PY_HARD_LIMIT = 8 * 1024 * 1024
_PY_MAX_DENSE = 20000


def parse_pythonic(text: str, start: int) -> tuple:
    end = text.rfind("]") + 1
    source = text[start:end]
    if len(source) > _PY_SOFT_LIMIT:
        if len(source) > _PY_HARD_LIMIT or _syntax_count(source) > _PY_MAX_DENSE:
            raise ValueError(f"pythonic payload too large to parse safely ({len(source)} characters)")
    try:
        with warnings.catch_warnings():  # e.g. "invalid escape sequence": Python accepts it, so do we
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise ValueError(f"not a Python list of calls: {exc}") from None
    if not isinstance(tree.body, ast.List):
        raise ValueError("pythonic calls must be a Python list")
    calls = []
    for node in tree.body.elts:
        if not isinstance(node, ast.Call) or node.args:
            raise ValueError("each element must be a call with keyword arguments only")
        arguments: dict = {}
        for kw in node.keywords:
            if kw.arg is None:
                extra = _literal(kw.value)
                if not isinstance(extra, dict):
                    raise ValueError("** must unpack a dict literal")
                items = list(extra.items())
            else:
                items = [(kw.arg, _literal(kw.value))]
            for key, value in items:
                if key in arguments:
                    raise ValueError(f"argument {key!r:.60} given twice")
                arguments[key] = value
        calls.append(call(_dotted_name(node.func), arguments, "pythonic call"))
    return calls, end


def _syntax_count(source: str) -> int:
    """How many of ``,([{:=`` occur outside string literals and comments: a bound on ast's work.

    One pass; string bodies and comments are skipped with ``str.find``. Where this scan and Python's
    tokenizer could disagree (an unterminated or multi-line single-quoted string), Python fails fast
    with a SyntaxError, so the bound only has to be right for text Python accepts.
    """
    count, i, n = 0, 0, len(source)
    while i < n:
        c = source[i]
        if c == '"' or c == "'":
            quote = c * 3 if source.startswith(c * 3, i) else c
            j = i + len(quote)
            while True:
                k = source.find(quote, j)
                if k < 0:
                    return count
                backslashes = 0
                while source[k - 1 - backslashes] == "\\":
                    backslashes += 1
                if backslashes % 2 == 0:
                    break
                j = k + 1
            i = k + len(quote)
        elif c == "#":
            k = source.find("\n", i)
            i = n if k < 0 else k + 1
        else:
            if c in ",([{:=":
                count += 1
            i += 1
    return count


def _dotted_name(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise ValueError("a pythonic call must name a function")
    parts.append(node.id)
    return ".".join(reversed(parts))


def _literal(node: ast.AST) -> Any:
    """A JSON value written as a Python literal; anything else (tuples, sets, bytes, names) is rejected."""
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, (str, bool, int)):
            return value
        if isinstance(value, float) and math.isfinite(value):
            return value
        raise ValueError(f"{type(value).__name__} literal is not a JSON value")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        value = node.operand.value
        return _literal(ast.Constant(-value if isinstance(node.op, ast.USub) else value))
    if isinstance(node, ast.List):
        return [_literal(elt) for elt in node.elts]
    if isinstance(node, ast.Dict):
        result: dict = {}
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise ValueError("dict keys must be string literals")
            if key.value in result:
                raise ValueError(f"duplicate key {key.value!r:.60} in dict literal")
            result[key.value] = _literal(value)
        return result
    raise ValueError(f"{type(node).__name__} is not a JSON literal")


__all__ = ["parse_pythonic"]
