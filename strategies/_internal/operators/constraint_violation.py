"""Operators of the ``constraint_violation`` class (semantic: the truth is the calls as written). Right type, wrong value: enum, pattern, format, range, length, natural-language dates.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

from strategies._internal.mutator import MutationContext
from strategies._internal.schemainfo import (
    FieldInfo, checkable_format, format_conforms, json_equal, search, violates_type,
)
from strategies.json_values import copy_json
from strategies._internal.operators.calls import _is_number, _unique, _value_operator
from strategies._internal.operators.words import _singular


#: Words that sit next to common enum values without being them (kelvin next to celsius...).
_RELATED_VALUES = {
    "celsius": ("kelvin", "centigrade", "C"), "fahrenheit": ("kelvin", "F"), "kelvin": ("rankine",),
    "metric": ("si", "standard"), "imperial": ("us", "standard"), "economy": ("premium_economy", "coach"),
    "business": ("business_plus", "premium"), "first": ("first_class", "premium"),
    "low": ("lowest", "minimal"), "medium": ("mid", "normal"), "high": ("highest", "urgent"),
    "asc": ("ascending",), "desc": ("descending",), "small": ("tiny",), "large": ("huge", "xl"),
    "true": ("yes",), "false": ("no",), "daily": ("everyday",), "weekly": ("biweekly",),
    "json": ("yaml", "JSON"), "text": ("plain", "txt"), "single": ("solo",), "double": ("twin",),
    "km": ("kilometers",), "mi": ("miles",), "usd": ("dollars", "US$"), "eur": ("euros", "€"),
}
_GENERIC_NEAR_MISSES = ("other", "default", "auto", "none", "any")


@_value_operator("enum_value_outside", anomaly_class="constraint_violation", wanted=lambda f: f.enum is not None)
def enum_value_outside(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """A value just outside the enum: another case ("Celsius"), a related word ("kelvin"), a near miss."""
    if f.enum is None:
        return []
    enum = f.enum
    options: list = []
    strings = [e for e in enum if isinstance(e, str)]
    if isinstance(value, str) or (strings and f.allows("string")):
        base = value if isinstance(value, str) else strings[0]
        options += [base.capitalize(), base.upper(), base.lower(), base.title()]
        options += list(_RELATED_VALUES.get(base.lower(), ()))
        if "_" in base:
            options += [base.replace("_", " "), base.replace("_", "-")]
        options += [_singular(base) or base + "s", base[:3] if len(base) > 4 else base + "_"]
        options += list(_GENERIC_NEAR_MISSES)
    numbers = [e for e in enum if _is_number(e)]
    if _is_number(value) or numbers:
        base = value if _is_number(value) else numbers[0]
        top = max(numbers) if numbers else base
        low = min(numbers) if numbers else base
        options += [top + 1, low - 1, -1, 0]
    if isinstance(value, bool):
        options.append(not value)
    out = []
    for v in _unique(options):
        if any(json_equal(v, e) for e in enum) or violates_type(v, f.types):
            continue
        out.append((v, "not in enum" if len(enum) > 1 else "not the const"))
    return out


def _string_check(f: FieldInfo) -> Callable[[str], bool]:
    """True when a string value violates the field's pattern or (checkable) format."""
    def violates(v: str) -> bool:
        if violates_type(v, f.types):
            return False  # right type, wrong value only
        if f.pattern is not None and search(f.pattern, v) is False:
            return True
        return f.format is not None and format_conforms(v, f.format) is False
    return violates


_DATE_WORDS = ("date", "day", "when", "deadline", "birthday", "dob", "check_in", "check_out",
               "checkin", "checkout", "departure", "arrival", "start", "end", "until", "since")
_DATE_PATTERN = re.compile(r"(\\d|\[0-9\])\{(4|2)\}")


def _date_like(f: FieldInfo) -> bool:
    if f.format in ("date", "date-time", "time") and checkable_format(f.format):
        return True
    if f.pattern is None or search(f.pattern, "") is None:
        return False
    name = f.name.lower()
    return bool(_DATE_PATTERN.search(f.pattern)) and (
        any(w in name for w in _DATE_WORDS) or f.format in ("date", "date-time", "time")
        or "-" in f.pattern)


def _natural_dates(value: Any) -> list:
    out = ["tomorrow", "next Monday", "12/05/2024", "May 5th", "today", "next week", "in 3 days",
           "2024/05/12", "5 May 2024", "end of the month"]
    m = re.match(r"^(\d{4})-(\d{2})-(\d{2})", value) if isinstance(value, str) else None
    if m:  # the same date the way a person writes it
        y, mo, d = m.groups()
        out = [f"{mo}/{d}/{y}", f"{d}.{mo}.{y}", f"{d}/{mo}/{y}"] + out
    return out


@_value_operator("natural_language_date", anomaly_class="constraint_violation", wanted=_date_like)
def natural_language_date(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """A date in words or local notation ("next Monday", "12/05/2024") where ISO is required."""
    if not isinstance(value, str):
        return []
    bad = _string_check(f)
    return [(d, "") for d in _natural_dates(value) if d != value and bad(d)]


def _has_pattern(f: FieldInfo) -> bool:
    return f.pattern is not None and search(f.pattern, "") is not None and f.allows("string")


@_value_operator("pattern_mismatch", anomaly_class="constraint_violation", wanted=_has_pattern)
def pattern_mismatch(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """A string that misses the pattern by a little: case changed, separator swapped, a char dropped."""
    if not isinstance(value, str):
        return []
    options = [value.lower(), value.upper(), value + " ", " " + value, value[:-1], value + "!",
               value.replace("-", "/"), value.replace("-", " "), value.replace(".", ","),
               value[1:], value + value[-1:], "", "N/A", "unknown", "TBD", "?"]
    bad = _string_check(f)
    return [(v, "pattern") for v in _unique(options) if v != value and search(f.pattern, v) is False
            and bad(v)]


def _has_format(f: FieldInfo) -> bool:
    return checkable_format(f.format) and f.allows("string")


_FORMAT_MISSES = {
    "email": ("john.doe", "john.doe at example.com", "mailto-john", "not an email"),
    "idn-email": ("john.doe", "john.doe at example.com"),
    "date": ("tomorrow", "2024-13-45", "2024-02-30", "12/05/2024", "20240512"),
    "time": ("5pm", "25:00:00", "noon", "17:00"),
    "ipv4": ("256.1.1.1", "localhost", "192.168.1", "1.2.3.4.5"),
    "ipv6": ("::g", "12345::", "localhost"),
    "uuid": ("1234", "not-a-uuid", "123e4567-e89b-12d3-a456"),
    "regex": ("(unclosed", "[a-", "*"),
}


@_value_operator("format_mismatch", anomaly_class="constraint_violation", wanted=_has_format)
def format_mismatch(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """A string that is not of the declared format (an email without @, a time like "5pm")."""
    if not isinstance(value, str):
        return []
    options = []
    if "@" in value:
        options += [value.replace("@", " at "), value.split("@")[0]]
    options += list(_FORMAT_MISSES.get(f.format or "", ())) + [value + "!", value[:-1], "N/A", "unknown"]
    return [(v, f"format {f.format}") for v in _unique(options)
            if v != value and not violates_type(v, f.types) and format_conforms(v, f.format) is False]


def _numeric(f: FieldInfo) -> bool:
    return f.allows("integer") or f.allows("number")


def _as_field_number(f: FieldInfo, x: float) -> Any:
    """``x`` as an int when the field only takes integers (or when it is integral), else a float."""
    if not f.allows("number") or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return int(x)
    return x


def _beyond_bound(f: FieldInfo, value: Any, side: int) -> list:
    """Numbers just beyond a bound — at the boundary, and far beyond it — that still have the field's
    type: ``side`` -1 below the minimum, +1 above the maximum."""
    if not _is_number(value):
        return []
    inclusive, exclusive = (f.minimum, f.exclusive_minimum) if side < 0 else (f.maximum, f.exclusive_maximum)
    real = f.allows("number")
    if exclusive is not None:
        edge = exclusive if real else (math.floor(exclusive) if side < 0 else math.ceil(exclusive))
    else:
        edge = inclusive + side if real else (math.ceil(inclusive) - 1 if side < 0 else math.floor(inclusive) + 1)
    bounds = [b for b in (inclusive, exclusive) if b is not None]
    bound = max(bounds) if side < 0 else min(bounds)
    far = bound + side * (1000 + abs(bound) * 9)
    out = []
    for x, note in ((edge, "boundary"), (far, "far below" if side < 0 else "far above")):
        x = _as_field_number(f, x)
        beyond = (inclusive is not None and (x < inclusive if side < 0 else x > inclusive)) or (
            exclusive is not None and (x <= exclusive if side < 0 else x >= exclusive))
        if beyond and not violates_type(x, f.types):
            out.append((x, note))
    return out


def _has_minimum(f: FieldInfo) -> bool:
    return f.minimum is not None or f.exclusive_minimum is not None


def _has_maximum(f: FieldInfo) -> bool:
    return f.maximum is not None or f.exclusive_maximum is not None


@_value_operator("number_below_minimum", anomaly_class="constraint_violation", wanted=_has_minimum)
def number_below_minimum(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """A number under the minimum: off by one at the boundary, or far below (0 guests, -5 nights)."""
    return _beyond_bound(f, value, -1)


@_value_operator("number_above_maximum", anomaly_class="constraint_violation", wanted=_has_maximum)
def number_above_maximum(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """A number over the maximum: off by one at the boundary, or far above (10 passengers of 9, 1e6)."""
    return _beyond_bound(f, value, 1)


def is_multiple(value: float, step: float) -> bool:
    """Whether ``value`` is a multiple of ``step`` exactly as jsonschema's ``multipleOf`` decides it."""
    if isinstance(step, float):
        try:
            quotient = value / step
            return int(quotient) == quotient
        except (OverflowError, ValueError):
            return False
    return not (value % step)


@_value_operator("not_multiple_of", anomaly_class="constraint_violation", wanted=lambda f: f.multiple_of is not None)
def not_multiple_of(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """A number off the multipleOf grid (a price of 10.005 where cents are required)."""
    if not _is_number(value):
        return []
    step = f.multiple_of
    options = [value + step / 2, value + 1, value + step / 3]
    out = []
    for x in options:
        x = _as_field_number(f, x) if not f.allows("number") else x
        if isinstance(x, float) and not f.allows("number"):
            continue
        if not violates_type(x, f.types) and not is_multiple(x, step):
            out.append((x, f"multipleOf {step}"))
    return out


@_value_operator("string_too_short", anomaly_class="constraint_violation",
                 wanted=lambda f: (f.min_length or 0) > 0 and f.allows("string"))
def string_too_short(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """A string under minLength (usually the empty string)."""
    if not isinstance(value, str):
        return []
    options = ["", value[: f.min_length - 1], " "]
    return [(v, f"minLength {f.min_length}") for v in _unique(options)
            if len(v) < f.min_length and v != value]


@_value_operator("string_too_long", anomaly_class="constraint_violation",
                 wanted=lambda f: f.max_length is not None and f.allows("string"))
def string_too_long(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """A string over maxLength: one character too many, or a rambling value several times too long."""
    if not isinstance(value, str) or f.max_length > 100_000:
        return []
    seed = value or "lorem ipsum"
    filler = (seed + " ") * (f.max_length // max(1, len(seed) + 1) + 2)
    while len(filler) < 3 * f.max_length + 20:
        filler += seed + " "
    options = [filler[: f.max_length + 1], filler[: 3 * f.max_length + 20].rstrip()]
    return [(v, f"maxLength {f.max_length}") for v in _unique(options) if len(v) > f.max_length]


@_value_operator("array_too_short", anomaly_class="constraint_violation",
                 wanted=lambda f: (f.min_items or 0) > 0 and f.allows("array"))
def array_too_short(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """An array under minItems (usually empty: "recipients": [])."""
    if not isinstance(value, list):
        return []
    options = [[], value[: f.min_items - 1]]
    return [(v, f"minItems {f.min_items}") for v in _unique(options) if len(v) < f.min_items]


@_value_operator("array_too_long", anomaly_class="constraint_violation",
                 wanted=lambda f: f.max_items is not None and f.allows("array"))
def array_too_long(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """An array over maxItems (its elements repeated past the limit)."""
    if not isinstance(value, list) or not value or f.max_items > 10_000:
        return []
    need = f.max_items + 1
    grown = [copy_json(value[i % len(value)]) for i in range(need)]
    return [(grown, f"maxItems {f.max_items}")]


@_value_operator("duplicate_array_items", anomaly_class="constraint_violation",
                 wanted=lambda f: f.unique_items and f.allows("array"))
def duplicate_array_items(f: FieldInfo, value: Any, ctx: MutationContext) -> list:
    """An element repeated in an array that requires unique items."""
    if not isinstance(value, list) or not value:
        return []
    return [(value + [copy_json(value[0])], "uniqueItems"),
            ([value[0], copy_json(value[0])] + value[1:], "uniqueItems")]
