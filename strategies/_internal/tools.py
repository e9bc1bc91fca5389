"""Tools and registries: what the model may call.

A **tool** is a name, a description and the JSON Schema of its arguments. A **registry** is the set
of tools a campaign fuzzes, loaded from an OpenAI ``tools`` list, an Anthropic tools list, an MCP
``tools/list`` result, a plain ``{name: schema}`` mapping (JSON or YAML), or pydantic models.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

from strategies.errors import UnknownName


@dataclass(frozen=True)
class Tool:
    name: str
    schema: Mapping[str, Any]  # JSON Schema of the arguments object
    description: str = ""

    def __hash__(self) -> int:
        return hash(self.name)


@dataclass
class Registry:
    tools: dict[str, Tool] = field(default_factory=dict)
    source: str = "<built-in>"

    def __getitem__(self, name: str) -> Tool:
        try:
            return self.tools[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self.tools), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            known = f" (known: {', '.join(sorted(self.tools))})" if not close and len(self.tools) <= 12 else ""
            raise UnknownName(f"{self.source}: unknown tool {name!r}{hint}{known}") from None

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools.values())

    def __len__(self) -> int:
        return len(self.tools)

    def names(self) -> list[str]:
        return list(self.tools)
