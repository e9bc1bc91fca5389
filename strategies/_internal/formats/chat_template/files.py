"""Reading a chat template file as models publish it: a ``tokenizer_config.json`` (its
``chat_template``) or a ``.jinja`` file, with the special tokens transformers hands the template.

Why a module of its own: what a file holds (and every way it can be unusable: unreadable, not
UTF-8, not JSON, no ``chat_template`` field) is one concern, and each failure is one line naming the
file (:class:`TemplateFileError`), whatever renders the template afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from strategies.errors import ToolfuzzError

#: Special-token keys of a tokenizer_config.json that transformers hands the template.
TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


class TemplateFileError(ToolfuzzError):
    """A chat template file that cannot be used: the message names the file and says why."""


@dataclass(frozen=True)
class TemplateSource:
    """Everything a process needs to register a chat template format: its name, the template text,
    the special tokens it is rendered with, and where it came from (the absolute path of the file
    and the sha256 of its bytes, stored with corpus recipes so the template can be found again)."""

    name: str
    path: str
    sha256: str
    text: str
    tokens: tuple = ()  # ((key, value), ...) handed to the template as transformers does

    @property
    def origin(self) -> dict:
        return {"chat_template": self.path, "sha256": self.sha256}


def read_source(path: str) -> TemplateSource:
    """A chat template file: a ``tokenizer_config.json`` (its ``chat_template``, a string or a list of
    ``{name, template}`` — ``tool_use`` if present, else ``default``) or a Jinja file."""
    absolute = os.path.abspath(path)
    try:
        with open(absolute, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise TemplateFileError(f"{path}: cannot read the chat template ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TemplateFileError(f"{path}: not UTF-8 text ({exc})") from None
    if absolute.endswith(".json"):
        text, tokens = _from_tokenizer_config(path, text)
    else:
        tokens = _sibling_tokens(absolute)
    if not text.strip():
        raise TemplateFileError(f"{path}: the chat template is empty")
    return TemplateSource(name=format_name(absolute), path=absolute, sha256=hashlib.sha256(raw).hexdigest(),
                          text=text, tokens=tokens)


def _from_tokenizer_config(path: str, text: str) -> tuple:
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise TemplateFileError(f"{path}: not JSON ({exc})") from None
    if not isinstance(config, dict):
        raise TemplateFileError(f"{path}: a tokenizer_config.json must be a JSON object")
    template = config.get("chat_template")
    if template is None:
        raise TemplateFileError(f"{path}: no chat_template field (give the model's tokenizer_config.json, "
                                "or its .jinja chat template)")
    if isinstance(template, list):
        named = {item.get("name"): item.get("template") for item in template if isinstance(item, dict)}
        template = named.get("tool_use", named.get("default"))
        if template is None:
            raise TemplateFileError(f"{path}: chat_template lists no template named tool_use or default "
                                    f"(names: {', '.join(str(n) for n in named) or 'none'})")
    if not isinstance(template, str):
        raise TemplateFileError(f"{path}: chat_template must be a string or a list of {{name, template}}")
    return template, _special_tokens(config)


def _sibling_tokens(path: str) -> tuple:
    """The special tokens of the tokenizer_config.json beside a Jinja file (models now publish their
    template as chat_template.jinja next to it); without one, each renders as nothing."""
    config: Any = None
    try:
        with open(os.path.join(os.path.dirname(path), "tokenizer_config.json"), encoding="utf-8") as fh:
            config = json.load(fh)
    except (OSError, ValueError):
        pass
    found = dict(_special_tokens(config)) if isinstance(config, dict) else {}
    return tuple((key, found.get(key, "")) for key in TOKEN_KEYS) + tuple(
        (key, value) for key, value in found.items() if key not in TOKEN_KEYS)


def _special_tokens(config: dict) -> tuple:
    tokens = []
    for key in TOKEN_KEYS:
        value = config.get(key)
        if isinstance(value, dict):  # a serialized AddedToken
            value = value.get("content")
        if isinstance(value, str):
            tokens.append((key, value))
    extra = config.get("additional_special_tokens")
    if isinstance(extra, list):
        tokens.append(("additional_special_tokens",
                       tuple(t.get("content") if isinstance(t, dict) else t for t in extra)))
    return tuple(tokens)


def format_name(path: str) -> str:
    """``template:<stem>``; a ``tokenizer_config.json`` is named by its directory (the model's)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "tokenizer_config":
        stem = os.path.basename(os.path.dirname(path)) or stem
    stem = re.sub(r"[^A-Za-z0-9_.\-]+", "-", stem).strip("-.") or "custom"
    return f"template:{stem}"


__all__ = ["TOKEN_KEYS", "TemplateFileError", "TemplateSource", "format_name", "read_source"]
