"""An OpenAI-compatible gateway's tool-call reader that repairs HTML-escaped arguments.

Some chat templates and web front ends HTML-escape the model's text, so ``function.arguments``
arrives as ``{&quot;city&quot;: &quot;Paris&quot;}``. This gateway "cleans" the call before handing it
to the agent: every string value is passed through ``html.unescape``.

The planted bug: the cleaning runs on every value, also the ones that were never escaped, so a
real ``&amp;`` in a company name, a URL query (``?a=1&lt=2``) or an HTML snippet the user asked
for comes back changed (``AT&amp;T`` becomes ``AT&T``). The fix unescapes only an ``arguments``
string that is not JSON as written and becomes JSON once unescaped.
"""

from __future__ import annotations

import html

from benchmarks.parsers._common import map_strings
from benchmarks.parsers.openai_message import decoded_arguments, read_calls

BUG = {
    "verdict": "corruption",
    "level": "parse",
    "formats": ["openai"],
    "description": "html.unescape() runs on every string argument, so a real '&amp;' loses its escape",
    "match": {"verdict": "corruption", "input": r"&(#\d+|#x[0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?"},
}
TRIGGER = ('{"tool_calls": [{"id": "call_1", "type": "function", "function": '
           '{"name": "get_stock_price", "arguments": "{\\"ticker\\": \\"T\\", \\"exchange\\": \\"NYSE&amp;\\"}"}}]}')
EXPECTED = [{"name": "get_stock_price", "arguments": {"ticker": "T", "exchange": "NYSE&amp;"}}]


def _unescaped_everywhere(arguments):
    return map_strings(decoded_arguments(arguments), html.unescape)


def _unescaped_if_escaped(arguments):
    try:
        return decoded_arguments(arguments)
    except ValueError:
        if isinstance(arguments, str) and "&quot;" in arguments:
            return decoded_arguments(html.unescape(arguments))
        raise


def parse(text: str) -> list:
    return read_calls(text, _unescaped_everywhere)


def parse_fixed(text: str) -> list:
    return read_calls(text, _unescaped_if_escaped)
