"""A model's own chat template as a format: valid samples rendered by running the template itself.

Why: the families here are our reading of what models write. A model's chat template is what it was
trained to write, so a model with no family here — or a family version we lag behind — is still
covered exactly as it writes (``--chat-template FILE``).

One module per concept:

- :mod:`.files`: reading the file (a ``tokenizer_config.json`` or a ``.jinja`` file) and its special
  tokens; a file that cannot be used is one line naming it (:class:`TemplateFileError`).
- :mod:`.sandbox`: the Jinja environment, transformers' own (its sandbox and helpers).
- :mod:`.output`: the template as a writer of samples (what follows the generation prompt when it
  renders an assistant message carrying the calls) and reading each sample back into pieces.
- :mod:`.probe`: how a template writes calls, found once by rendering known messages.
- :mod:`.registration`: the format ``template:<stem>``, registered here or in a worker process.
"""

from strategies._internal.formats.chat_template.files import TemplateFileError, TemplateSource, format_name, read_source
from strategies._internal.formats.chat_template.output import ChatTemplate, Output, RenderError, find_json
from strategies._internal.formats.chat_template.registration import (
    SOURCES, build_format, ensure, origin_of, plain_name, register_template, sources, unregister,
)
from strategies._internal.formats.chat_template.sandbox import FIXED_NOW, compile_template

__all__ = ["ChatTemplate", "FIXED_NOW", "Output", "RenderError", "SOURCES", "TemplateFileError", "TemplateSource",
           "build_format", "compile_template", "ensure", "find_json", "format_name", "origin_of", "plain_name",
           "read_source", "register_template", "sources", "unregister"]
