"""The Jinja environment a chat template renders in: transformers' (``apply_chat_template``), so a
template writes here exactly what it writes for the model.

``ImmutableSandboxedEnvironment`` with ``trim_blocks``, ``lstrip_blocks``, the ``loopcontrols``
extension and the ``{% generation %}`` tag, ``raise_exception``, ``strftime_now`` and a ``tojson``
filter that is ``json.dumps`` with ``ensure_ascii=False`` (and ``indent``, ``separators``,
``sort_keys``; a string holding a lone surrogate is escaped, as every format here writes it, so the
text stays UTF-8). One departure, for reproducibility: ``strftime_now`` formats one fixed moment
(:data:`FIXED_NOW`), so a sample is a pure function of its recipe.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

#: The moment ``strftime_now`` formats (fixed: a sample must not depend on the day it is made).
FIXED_NOW = datetime(2025, 1, 15, 12, 0, 0)

_COMPILED: dict = {}
_ENV: list = []


def compile_template(text: str) -> Any:
    """The template compiled in transformers' sandbox, once per process per text. Raises what
    jinja2's parser raises (a ``TemplateSyntaxError`` with its ``lineno``, mostly)."""
    compiled = _COMPILED.get(text)
    if compiled is None:
        compiled = _COMPILED[text] = _environment().from_string(text)
    return compiled


def _environment() -> Any:
    if _ENV:
        return _ENV[0]
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generation(jinja2.ext.Extension):
        """``{% generation %}…{% endgeneration %}``: transformers marks the assistant's tokens with
        it; here it renders its body."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> str:
            return caller()

    def raise_exception(message: Any) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
               sort_keys: bool = False) -> str:
        text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: escaped, as every format here writes them
                text = json.dumps(value, ensure_ascii=True, indent=indent, separators=separators, sort_keys=sort_keys)
        return text

    def strftime_now(fmt: str) -> str:
        return FIXED_NOW.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    _ENV.append(env)
    return env


__all__ = ["FIXED_NOW", "compile_template"]
