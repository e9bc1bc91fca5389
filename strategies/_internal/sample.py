"""The vocabulary of generated model outputs: calls, anomaly classes, samples and recipes.

A **sample** is one generated model output plus its ground truth: the calls the text denotes
(``None`` when it denotes no faithful call). Every sample the campaign generates also carries the
**recipe** that regenerates it: the tool, format, operator, forced variation and the choice sequence
the generators consumed. Replaying a shrunk choice sequence through the same recipe yields a new
sample whose truth is recomputed by construction — the reason shrinking can never turn a negative
case into a mislabelled positive one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from strategies.registry import Registry

Call = dict  # {"name": str, "arguments": dict}


@dataclass(frozen=True)
class AnomalyClass:
    """One anomaly class of DESIGN.md. ``semantic`` classes carry the calls *as written* as truth.

    ``one_bug``: a target that returns calls for this class's no-call outputs has one bug, whatever
    operator made the output (every truncation operator only moves the cut), so those findings share
    one signature instead of one per operator.
    """

    name: str
    semantic: bool
    description: str
    one_bug: bool = False


ANOMALY_CLASSES: Registry[AnomalyClass] = Registry("anomaly class")
for _cls in (
        AnomalyClass("malformed_json", False, "JSON that is not JSON: trailing commas, single quotes, "
                     "Python literals, comments, missing braces, NaN"),
        AnomalyClass("truncated_output", False, "the output stops mid-call (length limit, stop token)",
                     one_bug=True),
        AnomalyClass("envelope_error", False, "the wrapper around the call is wrong: unclosed or misspelled "
                     "tags, broken fences, double-encoded arguments"),
        AnomalyClass("encoding_error", False, "BOM, smart quotes, raw control characters, lone surrogates"),
        AnomalyClass("oversized_input", False, "huge strings, deep nesting, long runs of a structural fragment, "
                     "numbers out of range"),
        AnomalyClass("unknown_function", True, "a function name not in the registry: hallucinated, typo, "
                     "case change, namespace prefix"),
        AnomalyClass("invalid_argument_type", True, "an argument of the wrong JSON type: \"2\" for 2, "
                     "\"true\" for true, a scalar for an array"),
        AnomalyClass("missing_argument", True, "a required argument is absent"),
        AnomalyClass("unexpected_argument", True, "an argument the schema does not allow: extra or renamed"),
        AnomalyClass("constraint_violation", True, "right type, wrong value: enum, pattern, format, range, "
                     "length, natural-language dates"),
        AnomalyClass("duplicate_call", True, "the same call emitted more than once"),
        AnomalyClass("injection_payload", True, "SQL, shell, path-traversal or prompt-injection text inside a "
                     "string argument"),
        AnomalyClass("degenerate_output", False, "no call at all: empty or blank text, prose, null, {}, an empty "
                     "envelope or message, only reasoning"),
        AnomalyClass("stacked_anomalies", False, "two or three anomalies on one output (a fence without language, "
                     "a trailing comma, then a cut): the truth is their composition"),
):
    ANOMALY_CLASSES.register(_cls.name, _cls, module=__name__)


#: Where a format that is not built in came from, by format name: a chat template's file and hash
#: (filled when one is registered), stored with each recipe in that format so a corpus entry can
#: find the template again.
FORMAT_ORIGINS: dict = {}


@dataclass(slots=True)
class Recipe:
    """Everything needed to regenerate a sample: replay ``choices`` through :func:`build_sample`."""

    tool: str
    format: str
    operator: Optional[str]
    choices: tuple[int, ...]
    chatter: Optional[bool] = None  # forced variation, None = drawn from the choices
    multi: Optional[bool] = None
    layout: Optional[str] = None  # a forced layout (a name in LAYOUTS), None = drawn from the choices
    reasoning: Optional[bool] = None  # reasoning before the calls (None: none, as before it existed)
    #: The calls rendered instead of the ones the choices draw (values a shrink reduced one by
    #: one, which no choice sequence draws); None = drawn.
    calls: Optional[list] = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        data = {"tool": self.tool, "format": self.format, "operator": self.operator,
                "choices": list(self.choices), "chatter": self.chatter, "multi": self.multi,
                "layout": self.layout}
        if self.reasoning is not None:
            data["reasoning"] = self.reasoning
        if self.calls is not None:
            data["calls"] = self.calls
        origin = FORMAT_ORIGINS.get(self.format)
        if origin is not None:  # a chat template's format: where to find the template again
            data["format_origin"] = origin
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Recipe":
        calls = data.get("calls")
        return cls(tool=data["tool"], format=data["format"], operator=data.get("operator"),
                   choices=tuple(int(c) for c in data.get("choices", ())),
                   chatter=data.get("chatter"), multi=data.get("multi"), layout=data.get("layout"),
                   reasoning=data.get("reasoning"), calls=calls if isinstance(calls, list) else None)


@dataclass(slots=True)
class Sample:
    """One generated model output and its ground truth (DESIGN.md, "Sample")."""

    text: str
    format: str
    anomaly_class: Optional[str]
    operator: Optional[str]
    calls: Optional[list]  # the truth: list of Call, or None when no faithful call is denoted
    tool: str = ""
    recipe: Optional[Recipe] = field(default=None, compare=False)
    description: str = field(default="", compare=False)
    #: False when the text was reduced as text or captured raw: then only robustness is judged.
    truth_known: bool = field(default=True, compare=False)
    #: The Rendered of a valid sample (pieces, payload spans), when it was just built.
    rendered: Any = field(default=None, compare=False, repr=False)
    #: The layout a valid sample is written in ("usual", "compact JSON, CRLF", ...).
    layout: str = field(default="", compare=False)
    #: Beside the calls, the truth of a valid sample: its prose (the content a parser returns beside
    #: the calls) and its reasoning, None when it has none or when they are not known (anomalies).
    content: Optional[str] = field(default=None, compare=False)
    reasoning: Optional[str] = field(default=None, compare=False)

    @property
    def variant(self) -> str:
        """Which variant of its format a valid sample is: ``hermes``, ``hermes (several calls)``,
        ``hermes (prose, reasoning)`` — what a false_reject is keyed by (a parser that reads single
        calls but not several has one bug per variant)."""
        extras = []
        if self.content:
            extras.append("prose")
        if self.calls and len(self.calls) > 1:
            extras.append("several calls")
        if self.reasoning:
            extras.append("reasoning")
        return self.format + (f" ({', '.join(extras)})" if extras else "")

    def to_json(self) -> dict[str, Any]:
        """The public JSON-lines shape printed by ``fuzz samples``."""
        return {"text": self.text, "format": self.format, "anomaly_class": self.anomaly_class,
                "operator": self.operator, "calls": self.calls}


# JSON values: the one kernel (re-exported here, where the engine has always imported them from).
from strategies.json_values import copy_json, json_equal  # noqa: E402,F401
