"""Output formats (envelopes): how calls appear in raw model text, and the layouts they are written in.

One module per concept: :mod:`.core` (the registry, the capabilities a format declares, ``render``
and the API contract operators rely on), :mod:`.layouts` (the valid layouts of a rendering), and
the built-in formats by family: :mod:`.json_envelopes` (json, fenced, hermes, mistral, llama3,
llama_json), :mod:`.messages` (openai, anthropic, mcp), :mod:`.text` (react, pythonic) and
:mod:`.special_tokens` (llama_function, qwen3_xml, harmony, deepseek). Importing the package
registers them all.
"""

from strategies._internal.formats.core import (
    CHATTER_AFTER, CHATTER_BEFORE, FORMATS, THOUGHTS, CallObject, Context, Format, Piece, Rendered, Style,
    Unrepresentable, call_id, get_format, layouts_for, output_format, payload_spans, render, sentences,
    supports_name,
)
from strategies._internal.formats.layouts import LAYOUTS, USUAL, Layout, NamedLayout
from strategies._internal.formats import json_envelopes, messages, text, special_tokens, versioned  # noqa: F401,E402
from strategies._internal.formats.versions import Selection, families, resolve, select  # noqa: E402

__all__ = ["Selection", "families", "resolve", "select", "CHATTER_AFTER", "CHATTER_BEFORE", "FORMATS", "LAYOUTS", "THOUGHTS", "USUAL", "CallObject", "Context",
           "Format", "Layout", "NamedLayout", "Piece", "Rendered", "Style", "Unrepresentable", "call_id", "get_format",
           "layouts_for", "output_format", "payload_spans", "render", "sentences", "supports_name"]
