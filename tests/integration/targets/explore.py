"""Targets for the exploration oracles: each is the reference parser with one planted behaviour."""

from __future__ import annotations

import ast
import re

from fuzzer.targets.reference import parse as _reference


def eval_pythonic(text):
    """A pythonic-call parser that evaluates argument values (BFCL's decoder evaluates BinOps)."""
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]") and "(" in stripped:
        tree = ast.parse(stripped, mode="eval")
        calls = []
        for node in getattr(tree.body, "elts", []):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                arguments = {kw.arg: eval(compile(ast.Expression(kw.value), "<argument>", "eval"))  # noqa: S307
                             for kw in node.keywords if kw.arg}
                calls.append({"name": node.func.id, "arguments": arguments})
        return calls
    return _reference(text)


_TRAILING = re.compile(r"\s+$")


def quadratic_cleanup(text):
    """Strips trailing whitespace with a regex that is quadratic on a run of spaces followed by
    anything else (each start position scans the whole run)."""
    _TRAILING.search(text)
    return _reference(text)


END_OF_TEXT = "<|endoftext|>"


def special_token(text):
    """Crashes on a special token of its own vocabulary that no operator writes."""
    if END_OF_TEXT in text:
        raise RuntimeError("tokenizer state corrupted")
    return _reference(text)


def fence_stripper(text):
    """Strips Markdown fences one at a time: each pass scans and copies the whole text, so the time
    is quadratic in the number of fences (a run of backticks, a fence per call in a long output)."""
    t = text
    while "```" in t:
        t = t.replace("```", "", 1)
    t = t.strip()
    if t[:4].lower() == "json":
        t = t[4:]
    return _reference(t)
