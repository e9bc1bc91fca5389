"""Families and versions of formats, and the ``--format`` selectors that name them.

A model family changes its tool-call syntax between versions (Mistral's ``[TOOL_CALLS][{...}]``
became ``[TOOL_CALLS]NAME[ARGS]{...}`` in tokenizer v11; DeepSeek V3.1 dropped V3's fence; V3.2
writes DSML). Each version is a registered format whose ``family`` and ``version`` say where it
belongs. Today's format names stay what they were — reports and corpora name them — so the
version a name has always rendered keeps the name (``mistral`` is ``mistral:v3``, which is an
alias) and the new versions are named ``family:version``.

A **selector** (a ``--format`` value, a ``formats`` entry of the config file) names

* one format by its name or an alias (``mistral:v11``, ``qwen3:xml``, ``hermes``);
* a whole family by its name (``mistral``: every version; ``deepseek``: V3, V3.1 and V3.2);
* either, followed by restrictions of the variants the target does not support: ``:single`` (never
  several calls in one output), ``:no_prose`` (no content beside the calls), ``:no_reasoning``
  (no reasoning before them), e.g. ``hermes:single`` or ``mistral:v11:no_reasoning``.

A declared format is tested in every variant it has unless a restriction says otherwise: a
variant the target fails on is a finding, never silently skipped.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterable

from strategies.errors import UnknownName

#: Restriction words and the variant each turns off.
RESTRICTIONS = {"single": "several", "no_prose": "prose", "no_reasoning": "reasoning"}
#: The variants of a format beside its bare single call, as Variation labels name them.
VARIANTS = ("prose", "several", "reasoning")


@dataclass
class Selection:
    """What selectors chose: formats in order, and per format the variants the user turned off."""

    formats: list = field(default_factory=list)
    excluded: dict = field(default_factory=dict)  # format -> frozenset of variant names
    #: Formats a selector named by themselves (``deepseek:v3.1``), not as one of a family
    #: (``deepseek``): the target is declared to read them, so a version of a family it declines
    #: entirely is listed unsupported, while a format named alone is fuzzed whatever its probes say.
    named: set = field(default_factory=set)

    def allows(self, format: str, variant: str) -> bool:
        return variant not in self.excluded.get(format, frozenset())

    def assumptions(self) -> list[str]:
        """What the user declared unsupported, one line per format (for the summary)."""
        words = {"several": "several calls", "prose": "prose", "reasoning": "reasoning"}
        return [f"{name}: no {', no '.join(words[v] for v in sorted(off))} (declared)"
                for name, off in self.excluded.items() if off]


def families() -> dict[str, list[str]]:
    """Family name -> its registered formats, in registration order."""
    from strategies._internal.formats.core import FORMATS

    out: dict[str, list[str]] = {}
    for name, fmt in FORMATS.items():
        out.setdefault(fmt.family or name, []).append(name)
    return out


def _format_named(name: str) -> str | None:
    """The registered name of the format ``name`` or whose alias it is, else None."""
    from strategies._internal.formats.core import FORMATS

    if name in FORMATS:
        return name
    for registered, fmt in FORMATS.items():
        if name in fmt.aliases or name == fmt.full_name:
            return registered
    return None


def known_selectors() -> list[str]:
    """Every name a selector may start with: formats, aliases, families."""
    from strategies._internal.formats.core import FORMATS

    names = list(FORMATS)
    for fmt in FORMATS.values():
        names += [a for a in fmt.aliases if a not in names]
        if fmt.full_name not in names:
            names.append(fmt.full_name)
    names += [f for f in families() if f not in names]
    return names


def resolve(selector: str) -> tuple[list[str], frozenset]:
    """The formats one selector names and the variants it turns off; ``UnknownName`` with close matches."""
    text = str(selector).strip()
    parts = text.split(":")
    off: set = set()
    while len(parts) > 1 and parts[-1] in RESTRICTIONS:
        off.add(RESTRICTIONS[parts.pop()])
    head = ":".join(parts)
    exact = _format_named(head)
    if exact is not None and not (head in families() and len(families()[head]) > 1):
        return [exact], frozenset(off)
    members = families().get(head)
    if members:
        return list(members), frozenset(off)
    close = difflib.get_close_matches(head, known_selectors(), n=3)
    hint = f"did you mean {', '.join(close)}?" if close else "see `fuzz formats` for the names"
    raise UnknownName(f"unknown format {head!r}; {hint}")


def select(selectors: Iterable[str] | None) -> Selection:
    """Resolve ``--format`` values (None or empty: every registered format, every variant)."""
    from strategies._internal.formats.core import FORMATS

    selection = Selection()
    if not selectors:
        selection.formats = list(FORMATS)
        return selection
    for selector in selectors:
        names, off = resolve(selector)
        if len(names) == 1:
            selection.named.add(names[0])
        for name in names:
            if name not in selection.formats:
                selection.formats.append(name)
                selection.excluded[name] = off
            else:  # named twice: what either allows
                selection.excluded[name] = selection.excluded.get(name, frozenset()) & off
    return selection


__all__ = ["RESTRICTIONS", "Selection", "VARIANTS", "families", "known_selectors", "resolve", "select"]
