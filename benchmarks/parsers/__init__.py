"""Tool-call parsers written for the bug-finding benchmark, each with exactly one planted bug.

Each module is a realistic parser of the kind agent frameworks and serving stacks ship (Hermes tag
parsers, pythonic-call decoders, OpenAI message readers, ReAct parsers, validating parsers, ...)
and declares, as data:

* ``BUG``: ``{"verdict", "level", "formats", "description", "match"}`` — what a campaign should
  report, at which ``--level``, for which ``--format`` values (None: let the engine probe), in
  words, and how to recognize a finding of this bug in a campaign's JSON report (see
  :func:`benchmarks.parsers.matches`);
* ``parse``: the parser with the bug; ``parse_fixed``: the same parser with the bug removed (a
  finding that matches ``BUG["match"]`` must not occur on it);
* ``TRIGGER``: a hand-written input that shows the bug (``PRIMERS``: inputs to run first, for a
  bug that needs earlier inputs), and ``EXPECTED``: the calls ``TRIGGER`` denotes, where the
  verdict is about returning the wrong calls.

``benchmarks/bugfinding.py`` runs campaigns against them; ``tests/unit/test_bug_parsers.py``
checks every trigger.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

#: The verdicts a planted bug may declare (DESIGN.md "Vocabulary").
VERDICTS = ("crash", "hang", "corruption", "false_reject", "missed_anomaly", "unsafe", "slow")
#: Keys of ``BUG["match"]``: ``verdict`` (one name or a list), and regular expressions searched in
#: the finding's words (``text``: title, reason and exception), its input (``input``: the input
#: or the minimized input) and its ``operator`` / ``format``.
MATCH_KEYS = ("verdict", "text", "input", "operator", "format")


def names() -> list:
    """The benchmark parser modules, by name (helpers starting with ``_`` excluded)."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def load(name: str) -> Any:
    return importlib.import_module(f"{__name__}.{name}")


def _search(pattern: str, *values: Any) -> bool:
    return any(isinstance(v, str) and re.search(pattern, v, re.DOTALL) for v in values)


def matches(rule: dict, finding: dict) -> bool:
    """Does a campaign report's ``failures[*]`` entry look like the bug ``rule`` describes?"""
    verdicts = rule["verdict"] if isinstance(rule["verdict"], list) else [rule["verdict"]]
    if finding.get("verdict") not in verdicts:
        return False
    words = "\n".join(str(finding.get(k) or "") for k in ("title", "reason", "exception"))
    if "text" in rule and not _search(rule["text"], words):
        return False
    if "input" in rule and not _search(rule["input"], finding.get("input"), finding.get("minimized_input")):
        return False
    if "operator" in rule and not _search(rule["operator"], finding.get("operator") or ""):
        return False
    # a rejection seen in several formats for one reason lists them all (``formats``)
    if "format" in rule and not _search(rule["format"], finding.get("format") or "", *(finding.get("formats") or ())):
        return False
    return True
