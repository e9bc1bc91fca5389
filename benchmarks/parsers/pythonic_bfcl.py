"""A pythonic-call decoder after the Berkeley Function-Calling Leaderboard's AST checker.

BFCL's ``ast_parse`` reads ``[func(a=1, b="x")]`` with ``ast`` and resolves each argument node by
type: constants, negative numbers, lists and dicts are read as literals — and a ``BinOp``
(``a=1+2``, ``s="ab"*3``) is resolved with ``eval(ast.unparse(node))``.

The planted bug is that ``eval``: it is reached only when a model writes arithmetic in an
argument, which no generated call does, so only a mutated output (an operator token spliced into
an argument) shows it, and then only to the ``unsafe`` verdict. Everything else this decoder
returns is right. The fix rejects expressions (a call's arguments are values, not code).
"""

from __future__ import annotations

import ast
from typing import Any, Callable

from benchmarks.parsers._common import (ParseError, bracketed, dotted_name, is_json_value, literal, make_call,
                                        parse_python)

BUG = {
    "verdict": "unsafe",
    "level": "parse",
    "formats": ["pythonic"],
    "description": "an arithmetic argument (a BinOp) is resolved with eval(ast.unparse(node)), as BFCL does",
    "match": {"verdict": "unsafe"},
}
TRIGGER = '[calculate(expression="2" * 3)]'


def _resolve_bfcl(node: ast.AST) -> Any:
    if isinstance(node, ast.BinOp):
        value = eval(ast.unparse(node))  # noqa: S307 - the planted bug (BFCL's resolve_ast_by_type)
        if not is_json_value(value):
            raise ParseError("an expression argument must evaluate to a JSON value")
        return value
    if isinstance(node, ast.List):
        return [_resolve_bfcl(elt) for elt in node.elts]
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                          for k in node.keys):
        return {k.value: _resolve_bfcl(v) for k, v in zip(node.keys, node.values)}
    return literal(node)


def _decode(text: str, resolve: Callable[[ast.AST], Any]) -> list:
    source = bracketed(text)
    if source is None:
        return []
    tree = parse_python(source)
    elements = tree.elts if isinstance(tree, ast.List) else None
    if elements is None or not all(isinstance(e, ast.Call) and not e.args for e in elements):
        raise ParseError("expected a list of calls with keyword arguments")
    calls = []
    for node in elements:
        arguments: dict = {}
        for kw in node.keywords:
            if kw.arg is None:  # **{"from": ...}
                extra = resolve(kw.value)
                if not isinstance(extra, dict):
                    raise ParseError("** must unpack a dict")
                items = list(extra.items())
            else:
                items = [(kw.arg, resolve(kw.value))]
            for key, value in items:
                if key in arguments:
                    raise ParseError(f"argument {key!r:.60} given twice")
                arguments[key] = value
        calls.append(make_call(dotted_name(node.func), arguments))
    return calls


def parse(text: str) -> list:
    return _decode(text, _resolve_bfcl)


def parse_fixed(text: str) -> list:
    return _decode(text, literal)
