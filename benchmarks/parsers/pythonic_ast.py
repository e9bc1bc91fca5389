"""A pythonic tool-call parser (``[get_weather(city="Paris"), ...]``) that reads the list with ``ast``.

The shape Llama 3.2 / Llama 4 and many fine-tunes emit, parsed the safe way: ``ast.parse`` the
bracketed list, require each element to be a call with keyword arguments, and turn each argument
into a JSON value with a literal walker. Nothing is evaluated.

The planted bug: the function name is read as ``call.func.id``, which only ``ast.Name`` nodes
have. A model that qualifies the name — ``functions.get_weather(...)``, ``default_api.search(...)``,
as OpenAI- and Gemini-trained models do — produces an ``ast.Attribute`` and the parser dies with
``AttributeError`` instead of rejecting or reading the dotted name. The fix reads dotted names.
"""

from __future__ import annotations

import ast

from benchmarks.parsers._common import ParseError, bracketed, dotted_name, keyword_arguments, make_call, parse_python

BUG = {
    "verdict": "crash",
    "level": "parse",
    "formats": ["pythonic"],
    "description": "call.func.id raises AttributeError on a dotted name (functions.get_weather(...))",
    "match": {"verdict": "crash", "text": r"AttributeError"},
}
TRIGGER = '[functions.get_weather(city="Paris")]'


def _name_of_simple_call(func: ast.AST) -> str:
    return func.id  # the bug: ast.Attribute (a dotted name) has no .id


def _calls(text: str, name_of) -> list:
    source = bracketed(text)
    if source is None:
        return []
    tree = parse_python(source)
    if not isinstance(tree, ast.List):
        raise ParseError("pythonic calls must be a Python list")
    calls = []
    for node in tree.elts:
        if not isinstance(node, ast.Call):
            raise ParseError("each element of the list must be a call")
        calls.append(make_call(name_of(node.func), keyword_arguments(node)))
    return calls


def parse(text: str) -> list:
    return _calls(text, _name_of_simple_call)


def parse_fixed(text: str) -> list:
    return _calls(text, dotted_name)
